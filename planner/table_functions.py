"""Built-in table functions: generators of rows that run on the segments.

`clickbench_hits(seed, rows [, first_block, blocks])` yields the synthetic ClickBench
`hits` rows (deterministic by seed and row count, in blocks of BLOCK_ROWS; optionally only
blocks [first_block, first_block + blocks)). `raympp clickbench load` fills `hits` with
`INSERT INTO hits SELECT * FROM clickbench_hits(...)`: every segment generates its share of
the blocks in parallel and the rows move to their segments by the table's distribution, so
no file is needed on any host.

Here are what planning needs: the functions' signatures, their columns (HITS_COLUMNS, the
columns of ClickBench's create.sql) and the block arithmetic that sizes a call. The rows
themselves are made on the segments (segment/table_functions/clickbench_hits.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sqlglot.expressions as exp

from planner import errors
from planner import plan as pl
from planner.type_names import sql_type

# Rows per block of clickbench_hits: the unit of work one segment generates at a time.
BLOCK_ROWS = 1 << 19

# (lower-case name, SQL type) of each column of ClickBench's `hits` (create.sql, all NOT
# NULL), in table order; workloads/clickbench/sql.py's CREATE_SQL declares the same.
HITS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("watchid", "BIGINT"), ("javaenable", "SMALLINT"), ("title", "TEXT"),
    ("goodevent", "SMALLINT"), ("eventtime", "TIMESTAMP"), ("eventdate", "DATE"),
    ("counterid", "INTEGER"), ("clientip", "INTEGER"), ("regionid", "INTEGER"),
    ("userid", "BIGINT"), ("counterclass", "SMALLINT"), ("os", "SMALLINT"),
    ("useragent", "SMALLINT"), ("url", "TEXT"), ("referer", "TEXT"), ("isrefresh", "SMALLINT"),
    ("referercategoryid", "SMALLINT"), ("refererregionid", "INTEGER"),
    ("urlcategoryid", "SMALLINT"), ("urlregionid", "INTEGER"), ("resolutionwidth", "SMALLINT"),
    ("resolutionheight", "SMALLINT"), ("resolutiondepth", "SMALLINT"),
    ("flashmajor", "SMALLINT"), ("flashminor", "SMALLINT"), ("flashminor2", "TEXT"),
    ("netmajor", "SMALLINT"), ("netminor", "SMALLINT"), ("useragentmajor", "SMALLINT"),
    ("useragentminor", "VARCHAR(255)"), ("cookieenable", "SMALLINT"),
    ("javascriptenable", "SMALLINT"), ("ismobile", "SMALLINT"), ("mobilephone", "SMALLINT"),
    ("mobilephonemodel", "TEXT"), ("params", "TEXT"), ("ipnetworkid", "INTEGER"),
    ("traficsourceid", "SMALLINT"), ("searchengineid", "SMALLINT"), ("searchphrase", "TEXT"),
    ("advengineid", "SMALLINT"), ("isartifical", "SMALLINT"),
    ("windowclientwidth", "SMALLINT"), ("windowclientheight", "SMALLINT"),
    ("clienttimezone", "SMALLINT"), ("clienteventtime", "TIMESTAMP"),
    ("silverlightversion1", "SMALLINT"), ("silverlightversion2", "SMALLINT"),
    ("silverlightversion3", "INTEGER"), ("silverlightversion4", "SMALLINT"),
    ("pagecharset", "TEXT"), ("codeversion", "INTEGER"), ("islink", "SMALLINT"),
    ("isdownload", "SMALLINT"), ("isnotbounce", "SMALLINT"), ("funiqid", "BIGINT"),
    ("originalurl", "TEXT"), ("hid", "INTEGER"), ("isoldcounter", "SMALLINT"),
    ("isevent", "SMALLINT"), ("isparameter", "SMALLINT"), ("dontcounthits", "SMALLINT"),
    ("withhash", "SMALLINT"), ("hitcolor", "CHAR"), ("localeventtime", "TIMESTAMP"),
    ("age", "SMALLINT"), ("sex", "SMALLINT"), ("income", "SMALLINT"),
    ("interests", "SMALLINT"), ("robotness", "SMALLINT"), ("remoteip", "INTEGER"),
    ("windowname", "INTEGER"), ("openername", "INTEGER"), ("historylength", "SMALLINT"),
    ("browserlanguage", "TEXT"), ("browsercountry", "TEXT"), ("socialnetwork", "TEXT"),
    ("socialaction", "TEXT"), ("httperror", "SMALLINT"), ("sendtiming", "INTEGER"),
    ("dnstiming", "INTEGER"), ("connecttiming", "INTEGER"), ("responsestarttiming", "INTEGER"),
    ("responseendtiming", "INTEGER"), ("fetchtiming", "INTEGER"),
    ("socialsourcenetworkid", "SMALLINT"), ("socialsourcepage", "TEXT"),
    ("paramprice", "BIGINT"), ("paramorderid", "TEXT"), ("paramcurrency", "TEXT"),
    ("paramcurrencyid", "SMALLINT"), ("openstatservicename", "TEXT"),
    ("openstatcampaignid", "TEXT"), ("openstatadid", "TEXT"), ("openstatsourceid", "TEXT"),
    ("utmsource", "TEXT"), ("utmmedium", "TEXT"), ("utmcampaign", "TEXT"),
    ("utmcontent", "TEXT"), ("utmterm", "TEXT"), ("fromtag", "TEXT"), ("hasgclid", "SMALLINT"),
    ("refererhash", "BIGINT"), ("urlhash", "BIGINT"), ("clid", "INTEGER"),
)


@dataclass(frozen=True)
class Signature:
    min_args: int
    max_args: int
    usage: str


FUNCTIONS = {
    "clickbench_hits": Signature(2, 4, "clickbench_hits(seed, rows [, first_block, blocks])"),
}


def n_blocks(rows: int, size: int = BLOCK_ROWS) -> int:
    """Blocks of a table of `rows` rows (at least one)."""
    return max(1, -(-rows // size))


def block_rows(rows: int, i: int, size: int = BLOCK_ROWS) -> int:
    """Rows of block i (BLOCK_ROWS but for the last one, which may be shorter)."""
    return max(0, min(size, rows - i * size))


def exists(name: str) -> bool:
    return name in FUNCTIONS


def bind(name: str, args: list[int | None]) -> pl.TableFunction:
    """The plan node of a call with constant integer arguments (checked here)."""
    sig = FUNCTIONS[name]
    if not sig.min_args <= len(args) <= sig.max_args:
        raise errors.UndefinedFunction(f"function {name} takes {sig.usage}")
    if any(a is None or a < 0 for a in args):
        raise errors.InvalidParameterValue(f"{sig.usage}: arguments must be non-negative")
    seed, rows = args[0], args[1]
    blocks = n_blocks(rows) if rows else 0
    first = args[2] if len(args) > 2 else 0
    count = args[3] if len(args) > 3 else blocks - first
    return pl.TableFunction(name, (seed, rows, first, max(0, min(count, blocks - first))),
                            _hits_fields())


def estimate_rows(node: pl.TableFunction) -> float:
    seed, rows, first, count = node.args
    return float(sum(block_rows(rows, i) for i in range(first, first + count)))


@functools.lru_cache(maxsize=1)
def _hits_fields() -> tuple[pl.Field, ...]:
    return tuple(pl.Field(name, sql_type(exp.DataType.build(t, dialect="postgres")))
                 for name, t in HITS_COLUMNS)
