"""Prepared statements and portals of one session, and the row stream behind a portal.

A `Statement` is what Parse made: the engine's PreparedStatement (None for empty text) and
the parameter types clients must encode for. A `Portal` is what Bind made: a statement,
decoded parameters and result formats; Execute starts it once and may resume it. Its
`RowStream` pulls Arrow batches and frames DataRows; its methods block (they call into the
engine) and run on the session's worker thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from coordinator.pgwire import backend, params, values
from coordinator.pgwire.boundary import (CancelToken, PreparedStatement, QueryResult,
                                         ResultColumn, ResultKind)
from planner import errors, types
from planner.types import SqlType

_TRAILING_COUNT = re.compile(r"\d+$")
# A fetch takes further batches while its DataRows are smaller than this: a small result
# and its CommandComplete then cost one hand-off to the session's worker thread, not two.
AHEAD_BYTES = 1 << 16


@dataclass
class Statement:
    prepared: PreparedStatement | None
    param_types: list[SqlType]
    param_oids: list[int]  # for ParameterDescription: the client's own where it gave one

    @classmethod
    def create(cls, prepared: PreparedStatement | None, declared: tuple[int, ...]) -> "Statement":
        inferred = prepared.param_types if prepared is not None else []
        param_types, oids = [], []
        for i in range(max(len(declared), len(inferred))):
            oid = declared[i] if i < len(declared) else 0
            if oid:  # a declared type is authoritative: the client encodes for it
                param_types.append(types.from_oid(oid))
                oids.append(oid)
            else:
                t = inferred[i] if i < len(inferred) else types.UNKNOWN
                param_types.append(t)
                oids.append(t.oid)
        return cls(prepared, param_types, oids)

    @property
    def columns(self) -> list[ResultColumn] | None:
        return self.prepared.columns if self.prepared is not None else None


def row_description(columns: list[ResultColumn], formats: list[int]) -> backend.RowDescription:
    return backend.RowDescription(tuple(
        backend.FieldDescription(c.name, c.type.oid, c.type.typlen, c.type.typmod, f)
        for c, f in zip(columns, formats)))


def with_count(tag: str, count: int | None) -> str:
    """The tag with its row count replaced (after a row-limited Execute PostgreSQL reports
    the rows of the last Execute, not of the whole portal); None keeps the engine's."""
    if count is None:
        return tag
    return _TRAILING_COUNT.sub(str(count), tag) if tag else f"SELECT {count}"


class RowStream:
    """DataRows of a ROWS result, fetched in pieces of whole batches."""

    def __init__(self, result: QueryResult, columns: list[ResultColumn], formats: list[int],
                 cancel: CancelToken):
        self._result = result
        self._batches: Iterator[pa.RecordBatch] = iter(result.batches or ())
        self._types = [c.type for c in columns]
        self._formats = formats
        self._cancel = cancel
        self._pending: pa.RecordBatch | None = None
        self._error: Exception | None = None  # raised by the next fetch
        self.engine_tag: str | None = None

    def fetch(self, limit: int | None) -> tuple[bytes, int, str | None]:
        """(DataRow bytes, row count, tag) for up to `limit` rows (None: no limit); the tag
        is the engine's once the batches are exhausted, else None.

        Batches are taken while their DataRows come to less than AHEAD_BYTES, so a small
        result and its end cost one call. Like PostgreSQL's output buffer, this holds a
        few rows of a slow query back until more come; rows taken before an error are
        returned, and the error is raised by the next fetch (the client sees them first,
        as from PostgreSQL)."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        parts, count, size = [], 0, 0
        while True:
            try:
                data, n, tag = self._fetch_batch(None if limit is None else limit - count)
            except Exception as e:
                if not parts:
                    raise
                self._error = e
                return b"".join(parts), count, None
            parts.append(data)
            count += n
            size += len(data)
            if tag is not None or size >= AHEAD_BYTES or (limit is not None and count >= limit):
                return b"".join(parts), count, tag

    def _fetch_batch(self, limit: int | None) -> tuple[bytes, int, str | None]:
        while self._pending is None or self._pending.num_rows == 0:
            if self._cancel.cancelled:
                raise errors.QueryCanceled(self._cancel.message)
            batch = next(self._batches, None)
            if batch is None:
                self.engine_tag = self._result.tag()  # valid only now, per the boundary
                return b"", 0, self.engine_tag
            self._pending = batch
        batch = self._pending
        if limit is not None and batch.num_rows > limit:
            batch, self._pending = batch.slice(0, limit), batch.slice(limit)
        else:
            self._pending = None
        with values.text_zone(self._result.time_zone):
            rows = values.encode_data_rows(batch, self._types, self._formats)
        return rows, batch.num_rows, None

    def take(self, limit: int | None) -> tuple[list[pa.RecordBatch], int]:
        """Up to `limit` rows (None: all the rest) as Arrow batches, for SQL FETCH/MOVE
        on this portal; the next Execute goes on after them."""
        out, got = [], 0
        while limit is None or got < limit:
            while self._pending is None or self._pending.num_rows == 0:
                if self._cancel.cancelled:
                    raise errors.QueryCanceled(self._cancel.message)
                batch = next(self._batches, None)
                if batch is None:
                    return out, got
                self._pending = batch
            n = self._pending.num_rows if limit is None else min(limit - got,
                                                                  self._pending.num_rows)
            out.append(self._pending.slice(0, n))
            self._pending = self._pending.slice(n)
            got += n
        return out, got

    def close(self) -> None:
        """Stop the engine's batch generator early (client closed a suspended portal)."""
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()


@dataclass
class Portal:
    statement: Statement
    params: list[object]
    format_codes: tuple[int, ...] = ()  # Bind's result format codes: none, one, or per column
    result: QueryResult | None = None
    rows: RowStream | None = None
    ahead: tuple[bytes, int, str | None] | None = None  # a fetch made with the start
    error: BaseException | None = None  # what starting it raised, reported when it runs
    done: bool = False
    limited: bool = False          # an Execute with max_rows > 0 ran on it

    def columns(self) -> list[ResultColumn] | None:
        if self.result is not None and self.result.columns is not None:
            return self.result.columns
        return self.statement.columns

    def formats(self) -> list[int]:
        columns = self.columns()
        return params.resolve_formats(self.format_codes, len(columns or ()), "result")

    def describe(self):
        """RowDescription with this portal's formats, or NoData."""
        columns = self.columns()
        return backend.NoData() if columns is None else row_description(columns, self.formats())

    def start(self, result: QueryResult, cancel: CancelToken) -> None:
        self.result = result
        if result.kind is ResultKind.ROWS:
            columns = self.columns()
            if columns is None:
                raise errors.InternalError("the engine returned rows without result columns")
            self.rows = RowStream(result, columns, self.formats(), cancel)

    def close(self) -> None:
        if self.rows is not None and not self.done:
            self.rows.close()
        self.done = True
