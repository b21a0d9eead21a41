"""The one exception type of the motion package, with the SQLSTATE a caller maps it to.

motion depends on nothing else of raympp, so it cannot raise planner.errors.QueryError; the
slice boundary (segment executor, coordinator dispatch) turns a MotionError into a
QueryError with the same `sqlstate`. Codes used here:

- IO_ERROR (58030): a peer vanished, a socket or spill file failed;
- QUERY_CANCELED (57014): the query was cancelled, or the service shut down under it;
- DISK_FULL (53100): no room left in the spill directory;
- INTERNAL (XX000): everything else (protocol violations, a sender's ERROR frame).
"""

from __future__ import annotations

IO_ERROR = "58030"
QUERY_CANCELED = "57014"
DISK_FULL = "53100"
INTERNAL = "XX000"


class MotionError(Exception):
    """A failure of a Motion channel; `sqlstate` is the PostgreSQL code for the client.
    `kind`: when a sender failed and said so in an ERROR frame, the name of its error's
    class (as the sender gave it; "" otherwise), so that the receiving side can raise the
    same kind of error (a caller that retries on one kind sees it however it came)."""

    def __init__(self, message: str, sqlstate: str = INTERNAL, kind: str = ""):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.kind = kind

    def __reduce__(self):
        # Errors cross process boundaries (Ray actors): keep the SQLSTATE when pickled.
        return (type(self), (self.message, self.sqlstate, self.kind))

    def __repr__(self) -> str:
        return (f"MotionError({self.message!r}, sqlstate={self.sqlstate!r}"
                + (f", kind={self.kind!r})" if self.kind else ")"))


def from_os_error(exc: OSError, what: str) -> MotionError:
    """A MotionError for an OSError met while doing `what` (ENOSPC becomes DISK_FULL)."""
    import errno

    state = DISK_FULL if exc.errno in (errno.ENOSPC, errno.EDQUOT) else IO_ERROR
    return MotionError(f"{what}: {exc.strerror or exc}", state)
