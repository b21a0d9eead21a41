"""The SQL dialect raympp parses with: sqlglot's PostgreSQL, minus rewrites that lose text.

sqlglot reads to_char, to_date, to_timestamp and to_number as its own nodes and turns a
constant template ('YYYY-MM-DD') into strftime's ('%Y-%m-%d'), which cannot be turned
back. Here they stay plain function calls with their arguments as written, for
planner/format_rules.py to bind with PostgreSQL's templates. date_part(f, x) likewise:
sqlglot reads it as EXTRACT(f FROM x), but date_part returns double precision where
EXTRACT returns numeric.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

_AS_WRITTEN = ("to_char", "to_date", "to_timestamp", "to_number")


def _call(name: str):
    return lambda args: exp.Anonymous(this=name, expressions=args)


class RaymppPostgres(Postgres):
    """PostgreSQL as sqlglot reads it, with the formatting functions kept as written."""

    class Parser(Postgres.Parser):
        FUNCTIONS = {**Postgres.Parser.FUNCTIONS,
                     **{name.upper(): _call(name) for name in _AS_WRITTEN}}
        FUNCTION_PARSERS = {k: v for k, v in Postgres.Parser.FUNCTION_PARSERS.items()
                            if k != "DATE_PART"}
