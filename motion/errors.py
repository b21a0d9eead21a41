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
    """A failure of a Motion channel; `sqlstate` is the PostgreSQL code for the client."""

    def __init__(self, message: str, sqlstate: str = INTERNAL):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate

    def __reduce__(self):
        # Errors cross process boundaries (Ray actors): keep the SQLSTATE when pickled.
        return (type(self), (self.message, self.sqlstate))

    def __repr__(self) -> str:
        return f"MotionError({self.message!r}, sqlstate={self.sqlstate!r})"


def from_os_error(exc: OSError, what: str) -> MotionError:
    """A MotionError for an OSError met while doing `what` (ENOSPC becomes DISK_FULL)."""
    import errno

    state = DISK_FULL if exc.errno in (errno.ENOSPC, errno.EDQUOT) else IO_ERROR
    return MotionError(f"{what}: {exc.strerror or exc}", state)
