"""COPY's vocabulary: its data formats (CopyFormat) and WITH options, parsed and checked as
PostgreSQL does, for every format and direction. The one module the planner (COPY
statements), the coordinator (pgwire's CopyIn/CopyOut, COPY TO, the load path) and the
segments (segment/ingest/: COPY parsers, server files) all read COPY's terms from.

`parse_copy_options` turns the option list of COPY (names lower case, values as given) into
a frozen CopyOptions with PostgreSQL's defaults per format and its errors (42601, 22023,
0A000). `force_columns` resolves a FORCE_QUOTE / FORCE_NOT_NULL / FORCE_NULL column list
against the columns COPY reads or writes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from planner import errors


class CopyFormat(enum.Enum):
    """COPY's data formats, by the names FORMAT takes. PARQUET is for server-side files
    only (COPY FROM 'file'); STDIN/STDOUT speak the other three."""

    TEXT = "text"
    CSV = "csv"
    BINARY = "binary"
    PARQUET = "parquet"


@dataclass(frozen=True, slots=True)
class CopyOptions:
    """COPY's WITH options after validation, the format among them."""

    format: CopyFormat = CopyFormat.TEXT
    delimiter: str = "\t"
    null: str = "\\N"
    header: bool = False
    header_match: bool = False
    quote: str = '"'
    escape: str = '"'
    encoding: str = "UTF8"
    # CSV only; column names, or ("*",) for all columns
    force_quote: tuple[str, ...] = ()      # COPY TO: quote every non-null value
    force_not_null: tuple[str, ...] = ()   # COPY FROM: the null string is a value
    force_null: tuple[str, ...] = ()       # COPY FROM: the quoted null string is NULL
    # COPY FROM: the zone timestamptz text without an offset is read in (the session's
    # TimeZone, a planner.time_zones.Zone spec, which the coordinator fills in)
    time_zone: str | None = None
    # COPY FROM: DateStyle's field order of date input ('mdy', 'dmy', 'ymd'; the session's)
    date_order: str = "mdy"


def _boolean(name: str, value: str | None, allow_match: bool = False) -> bool | str:
    v = "true" if value is None else value.strip().lower()
    if v in ("true", "on", "1", "yes"):
        return True
    if v in ("false", "off", "0", "no"):
        return False
    if allow_match and v == "match":
        return "match"
    also = ' or "match"' if allow_match else ""
    raise errors.InvalidParameterValue(f"{name} requires a Boolean value{also}")


def _column_list(name: str, value) -> tuple[str, ...]:
    """A FORCE_* option's columns: '*', 'a, "B"', or a list of names."""
    if value is None or value == "":
        raise errors.SyntaxError_(f"option {name} requires a column list")
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    text = value.strip()
    if text == "*":
        return ("*",)
    text = text[1:-1] if text.startswith("(") and text.endswith(")") else text
    names = []
    for part in text.split(","):
        part = part.strip()
        names.append(part[1:-1].replace('""', '"') if part.startswith('"') else part.lower())
    return tuple(names)


def force_columns(option: str, names: tuple[str, ...], columns: list[str]) -> list[int]:
    """Positions of a FORCE_* option's columns among the columns COPY reads or writes."""
    if names == ("*",):
        return list(range(len(columns)))
    out = []
    for name in names:
        if name not in columns:
            raise errors.QueryError(f'{option} column "{name}" not referenced by COPY', "42P10")
        out.append(columns.index(name))
    return out


def parse_copy_options(params: dict[str, str | None]) -> CopyOptions:
    """CopyOptions from COPY's option list (PostgreSQL names, lower case), with its checks."""
    p = {k.lower(): v for k, v in params.items()}
    name = (p.pop("format", None) or "text").lower()
    try:
        fmt = CopyFormat(name)
    except ValueError:
        raise errors.InvalidParameterValue(f'COPY format "{name}" not recognized') from None
    csv_mode = fmt is CopyFormat.CSV
    binary = fmt in (CopyFormat.BINARY, CopyFormat.PARQUET)
    header = _boolean("header", p.pop("header"), allow_match=True) if "header" in p else False
    encoding = p.pop("encoding", None) or "UTF8"
    if encoding.upper().replace("-", "").replace("_", "") not in ("UTF8", "UNICODE"):
        raise errors.FeatureNotSupported(f'COPY encoding "{encoding}" is not supported '
                                         f'(only UTF8)')
    if "freeze" in p:
        _boolean("freeze", p.pop("freeze"))
    delim, null = p.pop("delimiter", None), p.pop("null", None)
    quote, escape = p.pop("quote", None), p.pop("escape", None)
    force = {}
    for key in ("force_quote", "force_not_null", "force_null"):
        if key in p:
            force[key] = _column_list(key.upper(), p.pop(key))
            if force[key] == ("*",) and key != "force_quote":  # '*' came in PostgreSQL 17
                raise errors.InvalidParameterValue(
                    f'argument to option "{key}" must be a list of column names')
            if not csv_mode:
                raise errors.FeatureNotSupported(
                    f"COPY {key.replace('_', ' ')} available only in CSV mode")
    if p:
        raise errors.SyntaxError_(f'option "{next(iter(p))}" not recognized')
    if binary:
        for name, given in (("DELIMITER", delim), ("NULL", null), ("HEADER", header or None)):
            if given is not None:
                raise errors.SyntaxError_(f"cannot specify {name} in BINARY mode")
    if not csv_mode and (quote is not None or escape is not None):
        which = "quote" if quote is not None else "escape"
        raise errors.FeatureNotSupported(f"COPY {which} available only in CSV mode")
    delim = delim if delim is not None else ("," if csv_mode else "\t")
    null = null if null is not None else ("" if csv_mode else "\\N")
    quote = quote if quote is not None else '"'
    escape = escape if escape is not None else quote
    for name, v in (("delimiter", delim), ("quote", quote), ("escape", escape)):
        if len(v.encode()) != 1:
            raise errors.FeatureNotSupported(f"COPY {name} must be a single one-byte character")
    if delim in "\r\n":
        raise errors.InvalidParameterValue("COPY delimiter cannot be newline or carriage return")
    if "\r" in null or "\n" in null:
        raise errors.InvalidParameterValue(
            "COPY null representation cannot use newline or carriage return")
    if not csv_mode and not binary and delim in "\\.abcdefghijklmnopqrstuvwxyz0123456789":
        raise errors.InvalidParameterValue(f'COPY delimiter cannot be "{delim}"')
    if csv_mode:
        if delim == quote:
            raise errors.InvalidParameterValue("COPY delimiter and quote must be different")
        if delim in null:
            raise errors.InvalidParameterValue(
                "COPY delimiter must not appear in the NULL specification")
        if quote in null:
            raise errors.InvalidParameterValue(
                "CSV quote character must not appear in the NULL specification")
    return CopyOptions(fmt, delim, null, bool(header), header == "match", quote, escape, "UTF8",
                       **force)
