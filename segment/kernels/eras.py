"""Dates and timestamps outside the years 1..9999 in text, in bulk: PostgreSQL's spelling.

PostgreSQL writes a year before 1 AD as its BC year with ' BC' at the very end ('0044-03-15
BC', '0001-12-31 23:00:00+00 BC'; year 0 is 1 BC) and years after 9999 with all their
digits ('294276-12-31'); it reads both back. Arrow's formatting and parsing know only
four-digit years from 0 (astronomical), and print '<value out of range>' far out. The
Gregorian calendar repeats every 400 years (146097 days), so rows outside 1..9999 are
moved by whole 400-year cycles into 2000..2399, formatted or parsed by Arrow there, and
given back their year (text) or their cycles (values): numpy and Arrow string kernels
over the column, never per row in Python. Rows in 1..9999 take Arrow's path untouched.

Ranges (PostgreSQL 15's): dates from 4714-11-24 BC to 5874897-12-31, timestamps from
4714-11-24 00:00 BC to 294276-12-31 23:59:59.999999. raympp's timestamps are int64
microseconds since 1970, which end in 294247: later ones are 0A000 (timestamps_fit).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner import errors
from segment.kernels import expr_arrays as xa

CYCLE_DAYS = 146_097                    # days of 400 Gregorian years
US_PER_DAY = 86_400_000_000
FIRST_DAY, LAST_DAY = -719_162, 2_932_896     # 0001-01-01 and 9999-12-31, days since 1970
DAY_2000 = 10_957                       # 2000-01-01, days since 1970
# PostgreSQL's limits, days since 1970: JD 0 (4714-11-24 BC) and the day after 5874897-12-31;
PG_FIRST_DAY, PG_END_DAY = -2_440_588, 2_145_042_906
_INT64_MAX = 2**63 - 1
# Text with a year outside 1..9999: five or more digits, or BC after the date (at the end,
# or right after the date, as PostgreSQL also reads '0044-03-15 BC 12:00').
_ODD_YEAR = (r"(?i)^[ \t\n\r\v\f]*(?:[0-9]{5,}-|[0-9]+-[0-9]+-[0-9]+[ \t\n\r\v\f]+BC\b|"
             r".*[0-9][ \t\n\r\v\f]*BC[ \t\n\r\v\f]*$)")
_PARTS = (r"(?i)^[ \t\n\r\v\f]*(?P<year>[0-9]+)(?P<date>-[0-9]+-[0-9]+)"
          r"(?P<bc1>[ \t\n\r\v\f]+BC\b)?(?P<rest>.*?)"
          r"(?P<bc>[ \t\n\r\v\f]*BC)?[ \t\n\r\v\f]*$")


def _days(ints: np.ndarray, per_day: int) -> np.ndarray:
    return ints if per_day == 1 else np.floor_divide(ints, per_day)


def text(arr: pa.Array, per_day: int, iso, suffix=None) -> pa.Array:
    """The text of finite date32 (per_day 1) or timestamp[us] (US_PER_DAY) values:
    `iso(values)` is Arrow's ISO text of values in 1..9999, `suffix` (a string or string
    array, e.g. the zone offset) follows the value and comes before ' BC'."""
    ints = xa.np_view(arr, np.int32 if per_day == 1 else np.int64).astype(np.int64)
    valid = xa.valid_mask(arr)
    days = _days(ints, per_day)
    odd = (days < FIRST_DAY) | (days > LAST_DAY)
    if valid is not None:
        odd &= valid
    if not odd.any():
        out = iso(arr)
        return out if suffix is None else pc.binary_join_element_wise(out, suffix, "")
    cycles = np.where(odd, np.floor_divide(days - DAY_2000, CYCLE_DAYS), 0)
    shifted = xa.from_numpy((ints - cycles * (CYCLE_DAYS * per_day)).astype(
        np.int32 if per_day == 1 else np.int64), arr.type, valid)
    moved = iso(shifted)
    year = np.asarray(pc.cast(pc.utf8_slice_codeunits(moved, 0, 4), pa.int64()).fill_null(0),
                      dtype=np.int64) + 400 * cycles
    bc = year <= 0
    shown = pc.utf8_lpad(pc.cast(pa.array(np.where(bc, 1 - year, year)), pa.string()),
                         width=4, padding="0")
    era = pc.if_else(pa.array(bc), " BC", "")
    parts = [shown, pc.utf8_slice_codeunits(moved, 4)] + ([] if suffix is None else [suffix])
    fixed = pc.binary_join_element_wise(*parts, era, "")
    out = iso(arr.filter(pa.array(~odd))) if (~odd).any() else None
    if suffix is not None and out is not None:
        kept = suffix if isinstance(suffix, str) else pc.filter(suffix, pa.array(~odd))
        out = pc.binary_join_element_wise(out, kept, "")
    if out is None:
        return fixed
    return pc.replace_with_mask(fixed, pa.array(~odd), out)


def parsing(parse, per_day: int):
    """A text parser (Arrow array of text -> date32 / timestamp array, or None when some
    value does not parse) that also reads years outside 1..9999 ('0044-03-15 BC',
    '10000-01-01 10:00'), as PostgreSQL does: where `parse` fails, the rows with such
    years are moved into 2000..2399, parsed, and moved back."""
    def run(arr: pa.Array) -> pa.Array | None:
        try:  # the common case costs nothing more: Arrow reads no odd year
            plain = parse(arr)
        except (pa.ArrowInvalid, errors.QueryError):  # an inner parser's range error
            plain = None                              # comes again below if it holds
        if plain is not None:
            return plain
        odd = pc.fill_null(pc.match_substring_regex(arr, _ODD_YEAR), False)
        if not pc.any(odd).as_py():
            return parse(arr)
        parts = pc.extract_regex(pc.if_else(odd, arr, pa.scalar(None, pa.string())), _PARTS)
        year_text = pc.struct_field(parts, "year")
        if pc.any(pc.and_(odd, pc.is_null(year_text))).as_py():
            return None  # a BC suffix on something that is not a date: the parser decides
        year = np.asarray(pc.cast(year_text, pa.int64()).fill_null(0), dtype=np.int64)
        # RE2 gives an optional group that did not match as ''
        bc1, bc2 = (np.asarray(pc.greater(pc.binary_length(pc.struct_field(parts, g)), 0)
                               .fill_null(False), dtype=bool) for g in ("bc1", "bc"))
        if (bc1 & bc2).any():
            return None  # BC twice
        bc = bc1 | bc2
        if (bc & (year == 0)).any():
            return None  # there is no year 0 BC
        astronomical = np.where(bc, 1 - year, year)
        mask = np.asarray(odd, dtype=bool)
        cycles = np.where(mask, np.floor_divide(astronomical - 2000, 400), 0)
        moved_year = pc.utf8_lpad(pc.cast(pa.array(astronomical - 400 * cycles), pa.string()),
                                  width=4, padding="0")
        moved = pc.binary_join_element_wise(moved_year, pc.struct_field(parts, "date"),
                                            pc.struct_field(parts, "rest"), "")
        values = parse(pc.if_else(odd, moved, arr))
        if values is None:
            return None
        ints = xa.np_view(values, np.int32 if per_day == 1 else np.int64).astype(np.int64)
        step = CYCLE_DAYS * per_day
        if per_day != 1 and (mask & (astronomical > 294_276)).any():
            row = int(np.flatnonzero(mask & (astronomical > 294_276))[0])
            e = errors.QueryError(f'timestamp out of range: "{arr[row].as_py()}"', "22008")
            e.row = row
            raise e
        if per_day != 1 and (mask & (cycles > 0)).any():
            room = np.floor_divide(_INT64_MAX - 1 - ints, step)
            if (mask & (cycles > room)).any():
                row = int(np.flatnonzero(mask & (cycles > room))[0])
                e = beyond_int64()
                e.row = row
                raise e
        out = ints + np.where(mask, cycles, 0) * step
        if per_day == 1:
            out = out.astype(np.int32)
        return xa.from_numpy(out, values.type, xa.valid_mask(values))
    return run


def beyond_int64() -> errors.QueryError:
    """A timestamp PostgreSQL has that raympp's int64 microseconds since 1970 cannot hold."""
    return errors.FeatureNotSupported(
        "timestamps after 294246-12-31 (raympp holds microseconds since 1970 in 64 bits)")


def check_range(values: pa.Array, per_day: int, text: pa.Array | None = None) -> None:
    """PostgreSQL's range of finite dates (22008 `date out of range`) and timestamps
    (`timestamp out of range`); infinite values are the caller's. An error names its row."""
    ints = xa.np_view(values, np.int32 if per_day == 1 else np.int64).astype(np.int64)
    days = _days(ints, per_day)
    bad = days < PG_FIRST_DAY
    if per_day == 1:  # a timestamp past PostgreSQL's end is past raympp's (beyond_int64)
        bad |= days >= PG_END_DAY
    valid = xa.valid_mask(values)
    if valid is not None:
        bad &= valid
    if not bad.any():
        return
    row = int(np.flatnonzero(bad)[0])
    what = "date" if per_day == 1 else "timestamp"
    shown = f': "{text[row].as_py()}"' if text is not None else ""
    e = errors.QueryError(f"{what} out of range{shown}", "22008")
    e.row = row
    raise e
