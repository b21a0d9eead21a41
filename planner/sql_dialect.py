"""The SQL dialect raympp parses with: sqlglot's PostgreSQL, minus rewrites that lose text.

sqlglot reads to_char, to_date, to_timestamp and to_number as its own nodes and turns a
constant template ('YYYY-MM-DD') into strftime's ('%Y-%m-%d'), which cannot be turned
back. Here they stay plain function calls with their arguments as written, for
planner/format_rules.py to bind with PostgreSQL's templates. date_part(f, x) likewise:
sqlglot reads it as EXTRACT(f FROM x), but date_part returns double precision where
EXTRACT returns numeric. generate_series's builder asserts on a step of several units
('1 mon 1 day'): such a step is left as written, for the binder to read.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

_AS_WRITTEN = ("to_char", "to_date", "to_timestamp", "to_number")


def _call(name: str):
    return lambda args: exp.Anonymous(this=name, expressions=args)


_SQLGLOT_GENERATE_SERIES = Postgres.Parser.FUNCTIONS["GENERATE_SERIES"]


def _generate_series(args: list) -> exp.ExplodingGenerateSeries:
    """sqlglot's generate_series builder (it rewrites a step '1 day' as INTERVAL '1' DAY),
    except for the steps it asserts on."""
    try:
        return _SQLGLOT_GENERATE_SERIES(list(args))
    except AssertionError:
        return exp.ExplodingGenerateSeries.from_arg_list(args)


class RaymppPostgres(Postgres):
    """PostgreSQL as sqlglot reads it, with the formatting functions kept as written."""

    class Parser(Postgres.Parser):
        FUNCTIONS = {**Postgres.Parser.FUNCTIONS,
                     **{name.upper(): _call(name) for name in _AS_WRITTEN},
                     "GENERATE_SERIES": _generate_series}
        FUNCTION_PARSERS = {k: v for k, v in Postgres.Parser.FUNCTION_PARSERS.items()
                            if k != "DATE_PART"}
