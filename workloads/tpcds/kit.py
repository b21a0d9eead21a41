"""TPC-DS kit: data and the 99 query texts from DuckDB's tpcds extension, loaded into raympp
over pgwire, answers checked against DuckDB on the same data. Used by bench/tpcds.py and
tests/e2e/test_tpcds.py; the server never imports it.

DuckDB is an oracle only (never in raympp's query path). It must be the version of the
`duckdb-extension-tpcds` PyPI package (1.5.5: the package pins duckdb==1.5.5), which ships
the extension file, so nothing is downloaded at run time.

Data: `CALL dsdgen(sf=N)` in a DuckDB database file <dir>/sf<N>/tpcds.duckdb, each table
exported as <dir>/sf<N>/csv/<table>.csv (CSV without header: NULL is an empty unquoted
field, an empty string is ""; the way PostgreSQL's and raympp's COPY ... (FORMAT csv) read
them). A marker file written last records the scale factor, DuckDB version and row counts;
a directory whose marker matches is reused.

raympp tables: the column types DuckDB reports (BIGINT, INTEGER, DECIMAL(p,s), VARCHAR,
DATE map to the same PostgreSQL names), distributed as below, loaded by
`COPY t FROM STDIN (FORMAT csv)` through psycopg, one transaction per table, then ANALYZE.

Oracle settings: PostgreSQL's NULL order (NULLS LAST ascending, FIRST descending) and
integer division (`int / int` truncates, as in PostgreSQL; TPC-DS q34/q73 divide
household counts), so the oracle answers with PostgreSQL's semantics.

Answers: rows in order when the query has an outer ORDER BY, as multisets otherwise,
numbers with workloads/tpch/compare.py's tolerance. Rows that differ only in the order of
rows with equal ORDER BY keys, or at a LIMIT cut inside a run of equal keys, are right
(the keys are found with sqlglot; when they cannot be mapped to output columns, a
different order is reported as wrong with that said).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workloads.tpch import compare
from workloads.tpch.queries import has_order_by
from workloads.tpch.loader import describe

EXTENSION_PACKAGE = "duckdb_extension_tpcds"
MARKER = ".raympp-tpcds.json"
NUMBERS = list(range(1, 100))
STATUSES = ("right", "wrong", "refused", "error", "timeout")

# Distribution: fact tables by their item key (sales and returns joined on (item, order)
# are co-located, and so are joins with item), the bigger dimensions by their surrogate
# key, the small dimensions replicated.
HASHED = {
    "store_sales": "ss_item_sk",
    "store_returns": "sr_item_sk",
    "catalog_sales": "cs_item_sk",
    "catalog_returns": "cr_item_sk",
    "web_sales": "ws_item_sk",
    "web_returns": "wr_item_sk",
    "inventory": "inv_item_sk",
    "item": "i_item_sk",
    "customer": "c_customer_sk",
    "customer_address": "ca_address_sk",
    "customer_demographics": "cd_demo_sk",
}
REPLICATED = (
    "call_center", "catalog_page", "date_dim", "household_demographics", "income_band",
    "promotion", "reason", "ship_mode", "store", "time_dim", "warehouse", "web_page",
    "web_site",
)
TABLES = tuple(sorted([*HASHED, *REPLICATED]))
assert len(TABLES) == 24


class KitError(RuntimeError):
    """The kit cannot run: DuckDB or the tpcds extension missing, generation failed."""


# --------------------------------------------------------------------------- DuckDB

def extension_file() -> Path:
    try:
        import duckdb
    except ImportError as e:
        raise KitError("duckdb is not installed: pip install duckdb-extension-tpcds==1.5.5 "
                       "(it pins duckdb==1.5.5)") from e
    try:
        import duckdb_extension_tpcds
    except ImportError as e:
        raise KitError("the duckdb-extension-tpcds package is not installed: pip install "
                       "duckdb-extension-tpcds==1.5.5 (in raympp's test extras)") from e
    path = (Path(duckdb_extension_tpcds.__file__).parent / "extensions"
            / f"v{duckdb.__version__}" / "tpcds.duckdb_extension")
    if not path.is_file():
        have = sorted(p.name for p in (Path(duckdb_extension_tpcds.__file__).parent
                                      / "extensions").glob("v*"))
        raise KitError(f"duckdb-extension-tpcds has no extension for duckdb "
                       f"{duckdb.__version__} (it has {', '.join(have) or 'none'}): install "
                       f"the duckdb version it pins")
    return path


def duck_connect(database: str | Path = ":memory:", read_only: bool = False,
                 threads: int | None = None):
    """A DuckDB connection with the tpcds extension loaded and PostgreSQL's NULL order and
    integer division."""
    import duckdb

    ext = extension_file()
    con = duckdb.connect(str(database), read_only=read_only,
                         config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
    con.execute("SET integer_division = true")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def duckdb_version() -> str:
    import duckdb
    return duckdb.__version__


def query_texts(con) -> dict[int, str]:
    """The 99 queries of DuckDB's tpcds_queries(), trailing semicolons removed."""
    rows = con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY 1").fetchall()
    return {int(n): q.strip().rstrip(";").strip() for n, q in rows}


def parse_selection(text: str | None) -> list[int]:
    """'1,3,5-7,q9' -> [1, 3, 5, 6, 7, 9]; None or 'all' -> 1..99."""
    if text is None or text.strip().lower() in ("", "all"):
        return list(NUMBERS)
    out: list[int] = []
    for part in text.split(","):
        part = part.strip().lower().lstrip("q")
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a.lstrip("q")), int(b.lstrip("q")) + 1))
        else:
            out.append(int(part))
    bad = [n for n in out if n not in NUMBERS]
    if bad:
        raise ValueError(f"no TPC-DS query {bad[0]} (1-99)")
    return sorted(set(out))


# --------------------------------------------------------------------------- data

def sf_text(sf: float) -> str:
    if sf <= 0:
        raise KitError(f"scale factor must be positive, got {sf}")
    return format(sf, "g")


@dataclass
class Dataset:
    dir: Path
    sf: float
    database: Path                      # the DuckDB file dsdgen wrote
    columns: dict[str, list[tuple[str, str]]]   # table -> [(column, SQL type)]
    rows: dict[str, int]

    def csv(self, table: str) -> Path:
        return self.dir / "csv" / f"{table}.csv"


def _marker(sf: float) -> dict:
    return {"sf": sf_text(sf), "duckdb": duckdb_version(), "format": "csv"}


def generate(base_dir: Path, sf: float, log: Callable[[str], None] = lambda m: None) -> Dataset:
    """dsdgen at `sf` into base_dir/sf<sf>/ (reused when its marker matches)."""
    out = Path(base_dir) / f"sf{sf_text(sf)}"
    marker = out / MARKER
    try:
        info = json.loads(marker.read_text())
        if {k: info.get(k) for k in _marker(sf)} == _marker(sf):
            ds = Dataset(out, sf, out / "tpcds.duckdb",
                         {t: [tuple(c) for c in cols] for t, cols in info["columns"].items()},
                         info["rows"])
            if all(ds.csv(t).is_file() for t in TABLES) and ds.database.is_file():
                return ds
    except (OSError, ValueError, KeyError):
        pass  # no or damaged metadata of an earlier run: generate the data afresh
    shutil.rmtree(out, ignore_errors=True)
    (out / "csv").mkdir(parents=True)
    t0 = time.perf_counter()
    con = duck_connect(out / "tpcds.duckdb")
    try:
        con.execute(f"CALL dsdgen(sf={sf_text(sf)})")
        log(f"[tpcds] dsdgen sf={sf_text(sf)}: {time.perf_counter() - t0:.1f}s")
        names = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables").fetchall()}
        missing = set(TABLES) - names
        if missing:
            raise KitError(f"dsdgen made no table(s) {', '.join(sorted(missing))}")
        columns, rows = {}, {}
        for t in TABLES:
            cols = con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = ? ORDER BY ordinal_position", [t]).fetchall()
            columns[t] = [(c, _pg_type(ty)) for c, ty in cols]
            rows[t] = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            path = out / "csv" / f"{t}.csv"
            con.execute(f"COPY {t} TO '{path}' (FORMAT csv, HEADER false)")
    finally:
        con.close()
    info = dict(_marker(sf), columns=columns, rows=rows)
    marker.write_text(json.dumps(info, indent=1))
    log(f"[tpcds] generated and exported sf={sf_text(sf)} in {time.perf_counter() - t0:.1f}s "
        f"({sum(rows.values()):,} rows) into {out}")
    return Dataset(out, sf, out / "tpcds.duckdb", columns, rows)


_TYPES = {"BIGINT": "bigint", "INTEGER": "integer", "VARCHAR": "varchar", "DATE": "date",
          "SMALLINT": "smallint", "DOUBLE": "double precision"}


def _pg_type(duck_type: str) -> str:
    m = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", duck_type)
    if m:
        return f"numeric({m.group(1)},{m.group(2)})"
    if duck_type in _TYPES:
        return _TYPES[duck_type]
    raise KitError(f"unexpected column type {duck_type} in the TPC-DS data")


def distribution(table: str) -> str:
    if table in HASHED:
        return f"DISTRIBUTED BY ({HASHED[table]})"
    return "DISTRIBUTED REPLICATED"


def create_sql(ds: Dataset, table: str, distributed: bool = True) -> str:
    cols = ",\n  ".join(f"{c} {ty}" for c, ty in ds.columns[table])
    tail = f" {distribution(table)}" if distributed else ""
    return f"CREATE TABLE {table} (\n  {cols}\n){tail}"


@dataclass
class TableLoad:
    table: str
    rows: int
    seconds: float


COPY_CHUNK = 1 << 20


def load(conn, ds: Dataset, replace: bool = True, analyze: bool = True,
         log: Callable[[str], None] = lambda m: None,
         distributed: bool = True) -> list[TableLoad]:
    """CREATE every table and COPY its CSV through COPY FROM STDIN, then ANALYZE. A table that
    fails to load is dropped and the error raised (KitError naming it). `distributed=False`
    leaves out the DISTRIBUTED clauses (for PostgreSQL)."""
    if replace:
        for t in TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {t}")
    done = []
    for t in TABLES:
        t0 = time.perf_counter()
        conn.execute(create_sql(ds, t, distributed))
        try:
            with conn.transaction():
                with conn.cursor() as cur:
                    with cur.copy(f"COPY {t} FROM STDIN (FORMAT csv)") as copy:
                        with open(ds.csv(t), "rb") as f:
                            while chunk := f.read(COPY_CHUNK):
                                copy.write(chunk)
                    rows = cur.rowcount
            if rows != ds.rows[t]:
                raise KitError(f"COPY {t} reported {rows} rows, the file holds {ds.rows[t]}")
        except Exception as e:
            try:
                conn.execute(f"DROP TABLE IF EXISTS {t}")
            except Exception:  # noqa: BLE001 - the load's own error is the one to report
                pass
            raise KitError(f"loading {t} failed: {describe(e)}") from e
        done.append(TableLoad(t, rows, time.perf_counter() - t0))
        log(f"[tpcds] loaded {t}: {rows:,} rows in {done[-1].seconds:.1f}s")
    if analyze:
        t0 = time.perf_counter()
        conn.execute("ANALYZE")
        log(f"[tpcds] ANALYZE: {time.perf_counter() - t0:.1f}s")
    return done


# --------------------------------------------------------------------------- running

@dataclass
class Outcome:
    status: str | None = None        # one of STATUSES once classified; None: rows came back
    seconds: float | None = None
    rows: list | None = None
    columns: list[str] | None = None
    sqlstate: str | None = None
    message: str | None = None


def run_raympp(connect: Callable[[], Any], conn, sql: str, timeout_s: float) -> tuple[Outcome, Any]:
    """Run sql on raympp (or PostgreSQL, the same way) with statement_timeout; returns
    (outcome, connection to go on with: a new one when the old had to be cancelled or
    broke)."""
    import psycopg

    box: dict[str, Any] = {}

    def work():
        try:
            t0 = time.perf_counter()
            with conn.cursor() as cur:
                cur.execute(sql)
                rows = cur.fetchall()
                cols = [d.name for d in cur.description or []]
            box["ok"] = (time.perf_counter() - t0, rows, cols)
        except BaseException as e:  # noqa: BLE001
            box["error"] = e

    t0 = time.perf_counter()
    th = threading.Thread(target=work, daemon=True)
    th.start()
    # statement_timeout ends the query on the server; the client waits a little longer and
    # then cancels and reconnects, so a server that ignores it cannot stall the run.
    th.join(timeout_s + 30)
    if th.is_alive():
        try:
            conn.cancel_safe()
        except Exception:  # noqa: BLE001 - the connection is abandoned either way
            pass
        th.join(10)
        close_quietly(conn)
        return (Outcome("timeout", time.perf_counter() - t0,
                        message=f"no answer after {timeout_s + 30:.0f}s (client deadline)"),
                connect_with_timeout(connect, timeout_s))
    if "ok" in box:
        secs, rows, cols = box["ok"]
        return Outcome(None, secs, rows, cols), conn
    e = box["error"]
    secs = time.perf_counter() - t0
    state = getattr(e, "sqlstate", None)
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if state == "57014":
        out = Outcome("timeout", secs, sqlstate=state, message=msg)
    elif state == "0A000":
        out = Outcome("refused", secs, sqlstate=state, message=msg)
    else:
        out = Outcome("error", secs, sqlstate=state, message=msg)
    if conn.closed or isinstance(e, psycopg.OperationalError) and state is None:
        close_quietly(conn)
        conn = connect_with_timeout(connect, timeout_s)
    return out, conn


def close_quietly(conn) -> None:
    """Close a connection (None: nothing) that may be broken already; closing such a
    connection may fail too, and its error is not the one to report."""
    if conn is None:
        return
    try:
        conn.close()
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def connect_with_timeout(connect, timeout_s: float):
    last = None
    for _ in range(30):
        try:
            conn = connect()
            set_timeout(conn, timeout_s)
            return conn
        except Exception as e:  # noqa: BLE001
            last = e
            time.sleep(2)
    raise KitError(f"cannot reconnect to raympp: {last}")


def set_timeout(conn, timeout_s: float) -> None:
    conn.execute(f"SET statement_timeout = '{int(timeout_s * 1000)}ms'")


def run_duckdb(con, sql: str) -> Outcome:
    t0 = time.perf_counter()
    try:
        cur = con.execute(sql)
        rows = cur.fetchall()
        cols = [d[0] for d in cur.description or []]
    except Exception as e:  # noqa: BLE001
        return Outcome("error", time.perf_counter() - t0, message=str(e).splitlines()[0])
    return Outcome(None, time.perf_counter() - t0, rows, cols)


# --------------------------------------------------------------------------- comparing

def order_info(sql: str, columns: list[str]) -> tuple[bool, bool, list[int] | None]:
    """(ordered, limited, key column indexes or None when they cannot be mapped) of the
    outermost query."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:  # noqa: BLE001 - a text sqlglot cannot read: judge it by its words
        return has_order_by(sql), bool(re.search(r"\blimit\s+\d+\s*$", sql, re.IGNORECASE)), None
    order = tree.args.get("order")
    limited = tree.args.get("limit") is not None
    if order is None:
        return False, limited, None
    names = [c.lower() for c in columns]
    selects = tree.selects if isinstance(tree, exp.Select) else []
    keys: list[int] = []
    for o in order.expressions:
        e = o.this
        idx = None
        if isinstance(e, exp.Literal) and e.is_int:
            idx = int(e.name) - 1
        elif isinstance(e, exp.Column) and e.name.lower() in names \
                and names.count(e.name.lower()) == 1:
            idx = names.index(e.name.lower())
        else:
            text = e.sql().lower()
            for i, s in enumerate(selects):
                inner = s.this if isinstance(s, exp.Alias) else s
                if inner.sql().lower() == text and i < len(names):
                    idx = i
                    break
        if idx is None or not 0 <= idx < len(names):
            return True, limited, None
        keys.append(idx)
    return True, limited, keys


def _key(row, keys):
    return tuple(row[i] for i in keys)


def _runs(rows, keys):
    """Consecutive runs of rows with equal key tuples: [(key, [rows])]."""
    out: list[tuple[tuple, list]] = []
    for r in rows:
        k = _key(r, keys)
        if out and compare.same_row(out[-1][0], k):
            out[-1][1].append(r)
        else:
            out.append((k, [r]))
    return out


def check(sql: str, got: Outcome, want: Outcome) -> tuple[bool, str | None]:
    """(right, note or difference)."""
    g, w = [tuple(r) for r in got.rows], [tuple(r) for r in want.rows]
    if len(got.columns or []) != len(want.columns or []):
        return False, f"{len(got.columns)} columns, expected {len(want.columns)}"
    ordered, limited, keys = order_info(sql, want.columns or got.columns or [])
    diff = compare.difference(g, w, ordered)
    if diff is None:
        return True, None
    if not ordered:
        return False, diff
    if len(g) != len(w):
        return False, diff
    if keys is None:
        if compare.difference(g, w, ordered=False) is None:
            return False, (diff + " (the ORDER BY keys could not be mapped to output columns "
                           "to tell ties from a wrong order)")
        return False, diff
    rg, rw = _runs(g, keys), _runs(w, keys)
    if len(rg) != len(rw):
        return False, diff
    for i, ((kg, xs), (kw, ys)) in enumerate(zip(rg, rw)):
        if not compare.same_row(kg, kw) or len(xs) != len(ys):
            return False, diff
        last = i == len(rg) - 1
        if compare.difference(xs, ys, ordered=False) is not None:
            if last and limited:
                return True, "rows tied on the ORDER BY keys differ at the LIMIT cut"
            return False, diff
    return True, "rows tied on the ORDER BY keys come in another order"


# --------------------------------------------------------------------------- the run

@dataclass
class QueryResult:
    number: int
    status: str
    raympp_s: float | None = None
    duckdb_s: float | None = None
    rows: int | None = None
    sqlstate: str | None = None
    message: str | None = None
    postgres_s: float | None = None     # when PostgreSQL ran it too, and answered
    postgres_status: str | None = None  # "ok", "timeout" or "error"

    @property
    def ratio(self) -> float | None:
        if self.status == "right" and self.raympp_s and self.duckdb_s:
            return self.raympp_s / max(self.duckdb_s, 1e-4)
        return None

    @property
    def postgres_ratio(self) -> float | None:
        """raympp / PostgreSQL; None unless both answered (raympp rightly)."""
        if self.status == "right" and self.raympp_s and self.postgres_s:
            return self.raympp_s / max(self.postgres_s, 1e-4)
        return None


def run_all(connect: Callable[[], Any], duck, texts: dict[int, str], numbers: list[int],
            timeout_s: float = 120.0,
            on_result: Callable[[QueryResult], None] = lambda r: None,
            postgres: Callable[[], Any] | None = None,
            postgres_timeout_s: float = 120.0,
            on_rows: Callable[[int, Outcome], None] | None = None) -> list[QueryResult]:
    """Each query on DuckDB, then on raympp, then (given `postgres`, a connect function)
    on PostgreSQL for its time; classified by raympp's answer against DuckDB's. Without
    `duck` nothing is checked: an answer is "ok". `on_rows(number, outcome)` sees each
    answer raympp gave."""
    conn = connect_with_timeout(connect, timeout_s)
    pg = connect_with_timeout(postgres, postgres_timeout_s) if postgres else None
    results = []
    try:
        for n in numbers:
            sql = texts[n]
            want = run_duckdb(duck, sql) if duck is not None else None
            got, conn = run_raympp(connect, conn, sql, timeout_s)
            r = QueryResult(n, got.status or "?", got.seconds,
                            want.seconds if want is not None else None,
                            sqlstate=got.sqlstate, message=got.message)
            if pg is not None:
                other, pg = run_raympp(postgres, pg, sql, postgres_timeout_s)
                r.postgres_status = other.status or "ok"
                r.postgres_s = other.seconds if other.status is None else None
            if got.status is None:
                r.rows = len(got.rows)
                if on_rows is not None:
                    on_rows(n, got)
                if want is None:
                    r.status = "ok"
                elif want.status is not None:
                    r.status, r.message = "error", f"the oracle failed: {want.message}"
                else:
                    ok, note = check(sql, got, want)
                    r.status, r.message = ("right" if ok else "wrong"), note
            results.append(r)
            on_result(r)
    finally:
        close_quietly(conn)
        close_quietly(pg)
    return results


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def counts(results: list[QueryResult]) -> dict[str, int]:
    return {s: sum(r.status == s for r in results) for s in STATUSES}


def grouped_messages(results: list[QueryResult], status: str) -> list[tuple[str, list[int]]]:
    groups: dict[str, list[int]] = {}
    for r in results:
        if r.status == status:
            key = f"[{r.sqlstate}] {r.message}" if r.sqlstate else (r.message or "")
            groups.setdefault(key, []).append(r.number)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def table_text(results: list[QueryResult]) -> str:
    with_pg = any(r.postgres_status for r in results)
    header = (f"{'query':<6}{'status':<9}{'raympp s':>10}{'duckdb s':>10}{'ratio':>9}"
              + (f"{'pg s':>10}{'vs pg':>9}" if with_pg else "") + f"{'rows':>7}  detail")
    lines = [header]
    for r in results:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        detail = (f"[{r.sqlstate}] " if r.sqlstate else "") + (r.message or "")
        if len(detail) > 160:
            detail = detail[:157] + "..."
        pg = ""
        if with_pg:
            pg_s = fmt_s(r.postgres_s) if r.postgres_status == "ok" else (r.postgres_status
                                                                          or "-")
            pr = "-" if r.postgres_ratio is None else f"{r.postgres_ratio:.2f}x"
            pg = f"{pg_s:>10}{pr:>9}"
        lines.append(f"q{r.number:02d}   {r.status:<9}{fmt_s(r.raympp_s):>10}"
                     f"{fmt_s(r.duckdb_s):>10}{ratio:>9}{pg}"
                     f"{'-' if r.rows is None else r.rows:>7}  {detail}")
    return "\n".join(lines)


def summary_line(results: list[QueryResult]) -> str:
    c = counts(results)
    g = geomean([r.ratio for r in results if r.ratio is not None])
    out = (f"TPC-DS {len(results)} queries: " + ", ".join(f"{c[s]} {s}" for s in STATUSES)
           + "; raympp/duckdb geometric mean over the right ones: "
           + ("NA" if g is None else f"{g:.2f}x"))
    if any(r.postgres_status for r in results):
        pg = geomean([r.postgres_ratio for r in results if r.postgres_ratio is not None])
        slower = [r.number for r in results if r.postgres_ratio and r.postgres_ratio > 1]
        unanswered = [r.number for r in results if r.postgres_status not in (None, "ok")]
        out += ("; raympp/postgres geometric mean over those both answered: "
                + ("NA" if pg is None else f"{pg:.2f}x")
                + f"; slower than PostgreSQL: {len(slower)}"
                + (f" (q{', q'.join(map(str, slower))})" if slower else "")
                + f"; PostgreSQL timed out or failed: {len(unanswered)}"
                + (f" (q{', q'.join(map(str, unanswered))})" if unanswered else ""))
    return out


def report_json(results: list[QueryResult], **meta) -> dict:
    g = geomean([r.ratio for r in results if r.ratio is not None])
    return {
        **meta,
        "counts": counts(results),
        "geomean_ratio_right": g,
        "geomean_ratio_postgres": geomean([r.postgres_ratio for r in results
                                           if r.postgres_ratio is not None]),
        "refusals": [{"message": m, "queries": qs}
                     for m, qs in grouped_messages(results, "refused")],
        "errors": [{"message": m, "queries": qs}
                   for m, qs in grouped_messages(results, "error")],
        "queries": [dict(dataclasses.asdict(r), ratio=r.ratio, postgres_ratio=r.postgres_ratio)
                    for r in results],
    }
