"""The SQL dialect raympp parses with: sqlglot's PostgreSQL, minus rewrites that lose text.

sqlglot reads to_char, to_date, to_timestamp and to_number as its own nodes and turns a
constant template ('YYYY-MM-DD') into strftime's ('%Y-%m-%d'), which cannot be turned
back. Here they stay plain function calls with their arguments as written, for
planner/format_rules.py to bind with PostgreSQL's templates. date_part(f, x) likewise:
sqlglot reads it as EXTRACT(f FROM x), but date_part returns double precision where
EXTRACT returns numeric. generate_series's builder asserts on a step of several units
('1 mon 1 day'): such a step is left as written, for the binder to read. to_hex stays
to_hex: sqlglot reads it as its HEX, which would make an error name a function the user
did not write; json_strip_nulls stays a plain call too (sqlglot's own node of it is
another dialect's).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType
from sqlglot.dialects.postgres import Postgres

from planner import errors

_AS_WRITTEN = ("to_char", "to_date", "to_timestamp", "to_number", "to_hex", "json_strip_nulls")


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


# The interval fields PostgreSQL's grammar takes after INTERVAL 'text' (opt_interval).
# An INTERVAL literal is read as PostgreSQL's grammar reads it: exp.Interval with the text
# whole and `unit` the qualifier as written (a Var, or an IntervalSpan for X TO Y; SECOND
# carries its precision as 'SECOND(p)'). sqlglot's own reading splits '1.5 years' into a
# number and a unit, takes any word after the text for a unit ('2' days, which PostgreSQL
# reads as an alias), drops a qualifier after a text with units in it, and adds a
# following string or number to the interval: each changes what the statement means.
INTERVAL_FIELDS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")


def _date_trunc(args: list) -> exp.Expression:
    """date_trunc(unit, x [, zone]). sqlglot's TimestampTrunc reads a bare name or a
    number as a unit name (date_trunc(u, ts) truncated to the unit "u"); in PostgreSQL
    they are a column and an integer, so anything but a quoted unit is kept inside
    parentheses, where it stays what it is."""
    unit = args[0] if args else None
    if unit is not None and not (isinstance(unit, exp.Literal) and unit.is_string):
        unit = exp.Paren(this=unit)
    return exp.TimestampTrunc(this=args[1] if len(args) > 1 else None, unit=unit,
                              zone=args[2] if len(args) > 2 else None)


class RaymppPostgres(Postgres):
    """PostgreSQL as sqlglot reads it, with the formatting functions kept as written."""

    class Tokenizer(Postgres.Tokenizer):
        # In an E'...' string a backslash escapes the quote too: E'O\'Reilly' is one
        # string (sqlglot ends it at the escaped quote).
        BYTE_STRING_ESCAPES = ["'", "\\"]

        def tokenize(self, sql: str) -> list:
            """sqlglot's tokens, except that a keyword after @ stays a keyword: sqlglot
            reads @name as a parameter, where PostgreSQL's @ is absolute value (@ NULL).
            A zero-length quoted identifier is 42601, as PostgreSQL's scanner has it."""
            tokens = super().tokenize(sql)
            if any(t.token_type is TokenType.IDENTIFIER and t.text == "" for t in tokens):
                raise errors.SyntaxError_('zero-length delimited identifier at or near """"')
            for prev, tok in zip(tokens, tokens[1:]):
                if prev.token_type is TokenType.PARAMETER and prev.text == "@" \
                        and tok.token_type is TokenType.VAR \
                        and tok.text.upper() in self.KEYWORDS:
                    tok.token_type = self.KEYWORDS[tok.text.upper()]
            return tokens

    class Parser(Postgres.Parser):
        FUNCTIONS = {**Postgres.Parser.FUNCTIONS,
                     **{name.upper(): _call(name) for name in _AS_WRITTEN},
                     "GENERATE_SERIES": _generate_series, "DATE_TRUNC": _date_trunc}
        FUNCTION_PARSERS = {k: v for k, v in Postgres.Parser.FUNCTION_PARSERS.items()
                            if k != "DATE_PART"}
        # ~, |/, ||/ and @ (absolute value; PostgreSQL has no @name parameters) are
        # generic prefix operators, which bind looser than + - * / ^: |/ 16 + 9 is the
        # root of 25 (sqlglot bound them as tightly as unary minus: 13).
        UNARY_PARSERS = {
            **Postgres.Parser.UNARY_PARSERS,
            TokenType.TILDE: lambda self: self.expression(exp.BitwiseNot(this=self._parse_term())),
            TokenType.RLIKE: lambda self: self.expression(exp.BitwiseNot(this=self._parse_term())),
            TokenType.PIPE_SLASH: lambda self: self.expression(exp.Sqrt(this=self._parse_term())),
            TokenType.DPIPE_SLASH: lambda self: self.expression(exp.Cbrt(this=self._parse_term())),
            TokenType.PARAMETER: lambda self: self._parse_absolute(),
        }

        def _parse_absolute(self):
            """@ x; a PARAMETER token is also the $ of $1, which stays a parameter."""
            if self._prev.text != "@":
                self._retreat(self._index - 1)
                return self._parse_type()
            return self.expression(exp.Abs(this=self._parse_term()))

        def _parse_interval(self, require_interval: bool = True,
                            parse_function_unit: bool = True):
            if not require_interval:  # sqlglot's own uses (function arguments)
                return super()._parse_interval(require_interval, parse_function_unit)
            index = self._index
            if not self._match(TokenType.INTERVAL):
                return None
            precision = self._parse_precision()
            if not self._match(TokenType.STRING, advance=False):
                self._retreat(index)  # not an interval literal: a name, or another dialect's
                return None
            text = self._parse_primary()
            unit = last = self._parse_interval_field()
            if unit is not None and self._match_text_seq("TO"):
                last = self._parse_interval_field()
                if last is None:
                    self.raise_error("Expected an interval field after TO")
                unit = exp.IntervalSpan(this=unit, expression=last)
            if last is not None and last.name.upper() == "SECOND":
                second = self._parse_precision()
                if second is not None:
                    last.set("this", f"{last.name}({second})")
            elif precision is not None:
                if unit is not None:
                    self.raise_error("interval precision specified twice")
                # INTERVAL(p) 'text' is INTERVAL 'text' SECOND(p): the range SECOND cuts
                # nothing, and a bare number is seconds either way.
                unit = exp.Var(this=f"SECOND({precision})")
            return exp.Interval(this=text, unit=unit)

        def _parse_interval_field(self) -> exp.Var | None:
            if self._curr is not None and self._curr.token_type != TokenType.STRING \
                    and self._curr.text.upper() in INTERVAL_FIELDS:
                self._advance()
                return exp.Var(this=self._prev.text)  # as written, for error messages
            return None

        def _parse_precision(self) -> str | None:
            """'(' integer ')' at this point (the integer's text), else nothing consumed."""
            index = self._index
            if self._match(TokenType.L_PAREN) and self._match(TokenType.NUMBER):
                number = self._prev.text
                if self._match(TokenType.R_PAREN):
                    return number
            self._retreat(index)
            return None


    class Generator(Postgres.Generator):
        def interval_sql(self, expression: exp.Interval) -> str:
            """An INTERVAL literal as PostgreSQL reads it back (view texts): a field
            qualifier after the text, not inside it ('1 day 2 hours' DAY is 1 day)."""
            unit = expression.args.get("unit")
            last = unit.expression if isinstance(unit, exp.IntervalSpan) else unit
            if not isinstance(last, exp.Var) or expression.args.get("fraction_in_string") \
                    or last.name.split("(")[0].upper() not in INTERVAL_FIELDS:
                return super().interval_sql(expression)  # sqlglot's split text: one string
            return f"INTERVAL {self.sql(expression, 'this')} {self.sql(unit).upper()}"
