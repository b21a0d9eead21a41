"""The one error hierarchy of raympp: every error a client can see carries a SQLSTATE.

Errors are raised anywhere (planner, segments, coordinator) and travel unchanged to the
pgwire session, which turns them into ErrorResponse messages. They live in planner/ because
every other package may depend on planner, and planner depends on nothing of ours.
"""

from __future__ import annotations


class QueryError(Exception):
    """Base of all errors reported to clients. `sqlstate` is the PostgreSQL code."""

    sqlstate = "XX000"

    def __init__(self, message: str, sqlstate: str | None = None, detail: str | None = None,
                 hint: str | None = None, context: str | None = None):
        super().__init__(message)
        self.message = message
        if sqlstate is not None:
            self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint
        # Where it happened (ErrorResponse field W, psql's CONTEXT line), innermost
        # first: the message itself stays PostgreSQL's.
        self.context = context

    def __reduce__(self):
        # Errors cross Ray actor boundaries: keep the SQLSTATE when pickled.
        return (_rebuild, (type(self), self.message, self.sqlstate, self.detail, self.hint,
                           self.context))

    def with_context(self, context: str) -> "QueryError":
        """A copy that also says where it happened (e.g. 'segment 1', 'COPY t, line 3')."""
        where = context if self.context is None else f"{self.context}\n{context}"
        return type(self)(self.message, self.sqlstate, self.detail, self.hint, where)

    @property
    def located(self) -> str:
        """The message behind its contexts, outermost first ('COPY t, line 2: ...')."""
        if self.context is None:
            return self.message
        return ": ".join(reversed(self.context.split("\n"))) + ": " + self.message

    def __str__(self) -> str:
        return self.located


def _rebuild(cls, message, sqlstate, detail, hint, context=None):
    return cls(message, sqlstate, detail, hint, context)


def kind_of(error: BaseException) -> str:
    """What a slice tells its Motion's receivers its error was (see `relayed`): the class
    of a QueryError, the kind a MotionError was relayed with, else nothing."""
    if isinstance(error, QueryError):
        return type(error).__name__
    return getattr(error, "kind", "") or ""


def relayed(message: str, sqlstate: str, kind: str) -> QueryError:
    """The error for a failure a slice learned of through a Motion (a sender's ERROR
    frame, `kind` as `kind_of` gave it there): of the sender's error class, so that a
    caller handling one kind of error (a SELECT planned again on PlacementChanged) sees
    it whichever slice's report reaches it first."""
    kinds, todo = {}, [QueryError]
    while todo:
        cls = todo.pop()
        kinds.setdefault(cls.__name__, cls)
        todo.extend(cls.__subclasses__())
    return kinds.get(kind, QueryError)(message, sqlstate)


class SyntaxError_(QueryError):
    sqlstate = "42601"


class UndefinedTable(QueryError):
    sqlstate = "42P01"


class UndefinedColumn(QueryError):
    sqlstate = "42703"


class UndefinedFunction(QueryError):
    sqlstate = "42883"


class DuplicateTable(QueryError):
    sqlstate = "42P07"


class AmbiguousColumn(QueryError):
    sqlstate = "42702"


class GroupingError(QueryError):
    sqlstate = "42803"


class DatatypeMismatch(QueryError):
    sqlstate = "42804"


class InvalidParameterValue(QueryError):
    sqlstate = "22023"


class DivisionByZero(QueryError):
    sqlstate = "22012"


class NumericOutOfRange(QueryError):
    sqlstate = "22003"


class InvalidTextRepresentation(QueryError):
    sqlstate = "22P02"


class InvalidDatetimeFormat(QueryError):
    sqlstate = "22007"


class NotNullViolation(QueryError):
    sqlstate = "23502"


class FeatureNotSupported(QueryError):
    sqlstate = "0A000"


class UndefinedObject(QueryError):
    sqlstate = "42704"


class InvalidTransactionState(QueryError):
    sqlstate = "25000"


class InFailedTransaction(QueryError):
    sqlstate = "25P02"


class IdleInTransactionSessionTimeout(QueryError):
    sqlstate = "25P03"


class QueryCanceled(QueryError):
    sqlstate = "57014"


class LockNotAvailable(QueryError):
    sqlstate = "55P03"


# The messages of a QueryCanceled, as PostgreSQL words them.
USER_CANCEL = "canceling statement due to user request"
STATEMENT_TIMEOUT = "canceling statement due to statement timeout"


class BadCopyFileFormat(QueryError):
    sqlstate = "22P04"


class UndefinedFile(QueryError):
    sqlstate = "58P01"


class InvalidPassword(QueryError):
    sqlstate = "28P01"


class ProtocolViolation(QueryError):
    sqlstate = "08P01"


class SegmentFailure(QueryError):
    """A segment actor died or could not be reached."""

    sqlstate = "58000"


class SegmentRestarted(SegmentFailure):
    """A call meant for one incarnation of a segment reached another: the process that
    held the caller's work (pending writes, Motion addresses) is gone."""


class TransactionLost(QueryError):
    """A transaction's writes were on a segment process that died: it cannot commit.

    40001 (serialization_failure): the transaction did nothing and may be retried, which
    is what drivers and ORMs do on this SQLSTATE."""

    sqlstate = "40001"


class PlacementChanged(QueryError):
    """A scan found its table on another number of segments than its plan expected: an
    expansion moved the table after the statement was planned (or has committed the
    move and not yet published it on this segment). Nothing was returned from the
    scan; a query is planned again (coordinator/query.py), other statements fail
    with 40001 and may be retried."""

    sqlstate = "40001"


def lost_transaction(cause: BaseException) -> TransactionLost:
    """The error of a transaction whose segment process died under it."""
    return TransactionLost(
        "could not complete the transaction: a segment it wrote to restarted "
        f"({getattr(cause, 'message', cause)}); none of its changes were kept",
        hint="Run the transaction again.")


class InternalError(QueryError):
    sqlstate = "XX000"
