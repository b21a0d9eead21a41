"""Create the TPC-H tables and load Parquet part files into them over pgwire.

Two ways in, both the server's ordinary COPY:
- "file":  `COPY t FROM '/abs/part.parquet' (FORMAT parquet)`. The server reads the file
           (on raympp every segment reads it and keeps its own rows), so the files must be
           readable at the same path where the server runs.
- "stdin": the client reads the Parquet file and streams it as CSV through
           `COPY t FROM STDIN (FORMAT csv)`; works against any PostgreSQL-protocol server.

Each table is created, then all its parts are copied inside one transaction. If anything
fails the transaction is rolled back and the table dropped (raympp's CREATE/DROP are not
transactional yet, so the drop is explicit), and LoadError says which table and file broke:
no table is ever left half loaded. Every COPY's row count is checked against the file's.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from workloads.tpch import schema

VIAS = ("file", "stdin")
STDIN_BATCH_ROWS = 64 * 1024

# on_part(table, file, rows) after each part is copied.
PartCallback = Callable[[str, Path, int], None]


class LoadError(RuntimeError):
    """A table could not be loaded (the message says which and why)."""


@dataclass
class TableLoad:
    table: str
    rows: int = 0
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)


def existing(conn, names=schema.NAMES) -> list[str]:
    """Which of `names` exist (asked the portable way: select nothing from each)."""
    import psycopg

    found = []
    for name in names:
        try:
            with conn.transaction():
                conn.execute(f"SELECT 1 FROM {name} LIMIT 0")
            found.append(name)
        except psycopg.errors.UndefinedTable:
            pass
    return found


def drop(conn, names=schema.NAMES) -> None:
    for name in names:
        conn.execute(f"DROP TABLE IF EXISTS {name}")


def prepare(conn, replace: bool, names=schema.NAMES) -> None:
    """Refuse to touch existing tables unless `replace`, then drop them."""
    there = existing(conn, names)
    if there and not replace:
        raise LoadError(f"table(s) {', '.join(there)} already exist; use --replace to drop "
                        f"and reload them")
    drop(conn, there)


def parquet_rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def copy_file(conn, table: str, path: Path) -> int:
    """COPY a server-side Parquet file; returns the rows the server reports."""
    path = Path(path).resolve()
    with conn.cursor() as cur:
        cur.execute(f"COPY {table} FROM {_sql_string(str(path))} (FORMAT parquet)")
        return cur.rowcount


def copy_stdin(conn, table: str, path: Path) -> int:
    """Stream a Parquet file as CSV through COPY FROM STDIN; returns the rows copied."""
    pf = pq.ParquetFile(path)
    options = pacsv.WriteOptions(include_header=False)
    with conn.cursor() as cur:
        with cur.copy(f"COPY {table} FROM STDIN (FORMAT csv)") as copy:
            for batch in pf.iter_batches(batch_size=STDIN_BATCH_ROWS):
                buf = io.BytesIO()
                pacsv.write_csv(_plain_strings(batch), buf, options)
                copy.write(buf.getbuffer())
        return cur.rowcount


def _plain_strings(batch: pa.RecordBatch) -> pa.RecordBatch:
    """string_view columns (as tpchgen writes them) to string, which the CSV writer takes."""
    arrays = [c.cast(pa.string()) if pa.types.is_string_view(c.type) else c
              for c in batch.columns]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def load_table(conn, table: schema.Table, files: list[Path], via: str = "file",
               distributed: bool = True, on_part: PartCallback | None = None) -> TableLoad:
    """CREATE the table and COPY every part in one transaction; drop it on failure."""
    if via not in VIAS:
        raise ValueError(f"via must be one of {VIAS}, got {via!r}")
    copy = copy_file if via == "file" else copy_stdin
    done = TableLoad(table.name, files=list(files))
    t0 = time.perf_counter()
    try:
        conn.execute(table.create_sql(distributed))
    except Exception as e:
        raise LoadError(f"CREATE TABLE {table.name} failed: {describe(e)}") from e
    current = None
    try:
        with conn.transaction():
            for current in files:
                rows = copy(conn, table.name, current)
                expected = parquet_rows(current)
                if rows != expected:
                    raise LoadError(f"COPY reported {rows} rows, the file holds {expected}")
                done.rows += rows
                if on_part is not None:
                    on_part(table.name, current, rows)
    except BaseException as e:
        dropped = _drop_quietly(conn, table.name)
        if not isinstance(e, Exception):  # Ctrl-C: still no half-loaded table
            raise
        where = f" at {current}" if current is not None else ""
        hint = ""
        if via == "file" and getattr(e, "sqlstate", None) in ("58P01", "42501"):
            hint = (" (with --via file the server reads the files itself: load on the "
                    "server's host, put --data-dir-for-files on a path the server shares, "
                    "or use --via stdin)")
        raise LoadError(f"loading {table.name} failed{where}: {describe(e)}; "
                        f"{'the table was dropped' if dropped else 'DROP TABLE also failed'}"
                        f"{hint}") from e
    done.seconds = time.perf_counter() - t0
    return done


def _drop_quietly(conn, name: str) -> bool:
    try:
        if not conn.closed:
            conn.execute(f"DROP TABLE IF EXISTS {name}")
            return True
    except Exception:  # the load error is what the user needs to see
        pass
    return False


def describe(e: BaseException) -> str:
    state = getattr(e, "sqlstate", None)
    text = str(e).strip().replace("\n", " | ")
    return f"{text} [{state}]" if state else text


def load_files(conn, files: dict[str, list[Path]], via: str = "file", distributed: bool = True,
               replace: bool = True, analyze: bool = True,
               on_part: PartCallback | None = None) -> dict[str, TableLoad]:
    """Load already generated files (tests, benchmark): every table in `files`, then ANALYZE."""
    prepare(conn, replace, list(files))
    loads = {}
    for name, paths in files.items():
        loads[name] = load_table(conn, schema.BY_NAME[name], paths, via, distributed, on_part)
    if analyze:
        conn.execute("ANALYZE")
    return loads
