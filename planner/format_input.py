"""Reading dates and times with PostgreSQL's formatting templates: to_timestamp, to_date.

The templates are parsed by planner/formatting.py. `parse_datetime` is PostgreSQL's
DCH_from_char and do_to_timestamp for one string: fields are read where the template
puts them (spaces and separators matched loosely unless FX), then combined into a date
and time with PostgreSQL's rules (2-digit years toward 2020, CC with YY, ISO week dates,
day of year, the 12-hour clock) and range checks, with its errors (22007 for input that
does not fit the template, 22008 for values out of range). raympp's dates run from year
1 to 9999: a result outside them is refused (0A000). Segments apply it once per distinct
string (planner/number_input.py reads numbers).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from planner import errors
from planner.formatting import DAYS, MONTHS, Node, is_separator, parse_datetime_template

_SPACE = " \t\n\r\v\f"
_DATE_MODE = {  # keyword -> 'greg' or 'iso' (PostgreSQL's FromCharDateMode)
    **{k: "greg" for k in ("DDD", "DD", "D", "MM", "MONTH", "Month", "month", "MON", "Mon",
                           "mon", "RM", "rm", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y")},
    **{k: "iso" for k in ("IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I")},
}
# (keyword, field width): numbers read from the text, their width without FM
_WIDTH = {"HH": 2, "HH12": 2, "HH24": 2, "MI": 2, "SS": 2, "MS": 3, "US": 6, "SSSS": None,
          "MM": 2, "DDD": 3, "IDDD": 3, "DD": 2, "D": 1, "ID": 1, "WW": 2, "IW": 2, "Q": 1,
          "CC": 2, "YYYY": 4, "IYYY": 4, "YYY": 3, "IYY": 3, "YY": 2, "IY": 2, "Y": 1, "I": 1,
          "W": 1, "J": 1, "TZH": 2, "TZM": 2, **{f"FF{i}": i for i in range(1, 7)}}


def _bad_format(msg: str, **kw) -> errors.QueryError:
    return errors.QueryError(msg, "22007", **kw)


@dataclass
class _Fields:
    """What the text said (PostgreSQL's TmFromChar); 0 is 'not given'."""

    mode: str = ""
    hh: int = 0
    pm: int = 0
    clock12: bool = False
    mi: int = 0
    ss: int = 0
    ssss: int = 0
    d: int = 0
    dd: int = 0
    ddd: int = 0
    mm: int = 0
    ms: int = 0
    year: int = 0
    bc: int = 0
    ww: int = 0
    w: int = 0
    cc: int = 0
    j: int = 0
    us: int = 0
    yysz: int = 0
    tzsign: int = 0
    tzh: int = 0
    tzm: int = 0
    ff: int = 0      # FF1..FF6: the fractional digits the result is rounded to


def _set(f: _Fields, attr: str, value: int, node: Node) -> None:
    old = getattr(f, attr)
    if old != 0 and old != value:
        raise _bad_format(f'conflicting values for "{node.text}" field in formatting string',
                          detail="This value contradicts a previous setting for the same "
                          "field type.")
    setattr(f, attr, value)


def _next_is_separator(nodes, i: int) -> bool:
    """Whether the field at nodes[i] ends where its digits end (PostgreSQL's
    is_next_separator): a TH suffix, the end of the template, a non-digit node next."""
    n = nodes[i]
    if n.key is not None and n.suffix & {"TH", "th"}:
        return True
    if i + 1 >= len(nodes):
        return True
    nxt = nodes[i + 1]
    if nxt.key is not None:
        return not nxt.is_digit
    return not nxt.text.isdigit() or not nxt.text.isascii()


def strtol(s: str, pos: int) -> tuple[int | None, int]:
    """C's strtol from pos: (value or None when no digits, end position)."""
    i = pos
    while i < len(s) and s[i] in _SPACE:
        i += 1
    j = i
    if j < len(s) and s[j] in "+-":
        j += 1
    k = j
    while k < len(s) and "0" <= s[k] <= "9":
        k += 1
    if k == j:
        return None, pos
    return int(s[i:k]), k


def _parse_int(s: str, pos: int, width: int, nodes, i: int) -> tuple[int, int, int]:
    """(value, new position, characters used) of one number field: as many digits as
    there are when FM or a separator follows, exactly `width` characters otherwise."""
    node = nodes[i]
    init = pos
    while pos < len(s) and s[pos] in _SPACE:
        pos += 1
    raw = s[pos:].encode()[:width]  # PostgreSQL counts the width in bytes
    copy = raw.decode(errors="replace")
    if "FM" in node.suffix or _next_is_separator(nodes, i):
        value, end = strtol(s, init)
        new = end
    else:
        if len(raw) < width:
            raise _bad_format(f'source string too short for "{node.text}" formatting field',
                              detail=f"Field requires {width} characters, but only "
                              f"{len(raw)} remain.",
                              hint='If your source string is not fixed-width, try using the '
                              '"FM" modifier.')
        value, used = strtol(copy, 0)
        used = used if value is not None else 0
        if 0 < used < width:
            raise _bad_format(f'invalid value "{copy}" for "{node.text}"',
                              detail=f"Field requires {width} characters, but only {used} "
                              "could be parsed.",
                              hint='If your source string is not fixed-width, try using the '
                              '"FM" modifier.')
        new = pos + used
    if new == init:
        raise _bad_format(f'invalid value "{copy}" for "{node.text}"',
                          detail="Value must be an integer.")
    value = value or 0
    if not -2**31 <= value < 2**31:
        raise errors.QueryError(f'value for "{node.text}" in source string is out of range',
                                "22008", detail="Value must be in the range -2147483648 to "
                                "2147483647.")
    return value, new, new - init


def _search(s: str, pos: int, words, node: Node) -> tuple[int, int]:
    """(index of the first word the text starts with, case-insensitively; new position)."""
    low = s[pos:].lower()
    for idx, w in enumerate(words):
        if low.startswith(w.lower()) and low:
            return idx, pos + len(w)
    rest = s[pos:]
    cut = next((k for k, c in enumerate(rest) if c in _SPACE), len(rest))
    raise _bad_format(f'invalid value "{rest[:cut]}" for "{node.text}"',
                      detail="The given value did not match any of the allowed values for "
                      "this field.")


def _from_char(nodes, s: str) -> _Fields:
    """PostgreSQL's DCH_from_char (not the standard mode of jsonpath)."""
    f = _Fields()
    pos, fx, extra = 0, False, 0
    for i, n in enumerate(nodes):
        if pos >= len(s):
            break
        if not fx and n.key != "FX" and (n.key is not None or i == 0):
            while pos < len(s) and s[pos] in _SPACE:
                pos += 1
                extra += 1
        c = s[pos] if pos < len(s) else ""  # C's string ends in a NUL
        if n.key is None:
            if n.kind in ("space", "separator"):
                if not fx:
                    extra -= 1
                    if c and (c in _SPACE or is_separator(c)):
                        pos += 1
                        extra += 1
                else:
                    pos = min(pos + 1, len(s))
            elif not fx and extra > 0:
                extra -= 1
            else:
                pos = min(pos + 1, len(s))
            continue
        k = n.key
        mode = _DATE_MODE.get(k)
        if mode:
            if not f.mode:
                f.mode = mode
            elif f.mode != mode:
                raise _bad_format("invalid combination of date conventions",
                                  hint="Do not mix Gregorian and ISO week date conventions in "
                                  "a formatting template.")
        if k == "FX":
            fx = True
        elif k in ("A.M.", "a.m."):
            v, pos = _search(s, pos, ("a.m.", "p.m.", "A.M.", "P.M."), n)
            _set(f, "pm", v % 2, n)
            f.clock12 = True
        elif k in ("AM", "am"):
            v, pos = _search(s, pos, ("am", "pm", "AM", "PM"), n)
            _set(f, "pm", v % 2, n)
            f.clock12 = True
        elif k in ("A.D.", "a.d."):
            v, pos = _search(s, pos, ("a.d.", "b.c.", "A.D.", "B.C."), n)
            _set(f, "bc", v % 2, n)
        elif k in ("AD", "ad"):
            v, pos = _search(s, pos, ("ad", "bc", "AD", "BC"), n)
            _set(f, "bc", v % 2, n)
        elif k in ("MONTH", "Month", "month"):
            v, pos = _search(s, pos, MONTHS, n)
            _set(f, "mm", v + 1, n)
        elif k in ("MON", "Mon", "mon"):
            v, pos = _search(s, pos, [m[:3] for m in MONTHS], n)
            _set(f, "mm", v + 1, n)
        elif k in ("DAY", "Day", "day"):
            v, pos = _search(s, pos, DAYS, n)
            _set(f, "d", v, n)
            f.d += 1
        elif k in ("DY", "Dy", "dy"):
            v, pos = _search(s, pos, [d[:3] for d in DAYS], n)
            _set(f, "d", v, n)
            f.d += 1
        elif k in ("RM", "rm"):
            v, pos = _search(s, pos, ("xii", "xi", "x", "ix", "viii", "vii", "vi", "v", "iv",
                                      "iii", "ii", "i"), n)
            _set(f, "mm", 12 - v, n)
        elif k in ("TZ", "tz", "OF"):
            raise errors.FeatureNotSupported(
                f'formatting field "{n.text}" is only supported in to_char')
        elif k == "Y,YYY":
            pos = _read_y_yyy(f, s, pos, n)
        elif k in ("TZH", "TZM"):
            if k == "TZH":
                if c and c in "+- ":
                    f.tzsign = -1 if c == "-" else 1
                    pos += 1
                else:
                    f.tzsign = -1 if extra > 0 and pos > 0 and s[pos - 1] == "-" else 1
            elif not f.tzsign:
                f.tzsign = 1
            v, pos, _ = _parse_int(s, pos, 2, nodes, i)
            _set(f, "tzh" if k == "TZH" else "tzm", v, n)
        else:
            pos = _read_number(f, k, s, pos, nodes, i)
        if not fx:
            extra = 0
            while pos < len(s) and s[pos] in _SPACE:
                pos += 1
                extra += 1
    return f


def _read_y_yyy(f: _Fields, s: str, pos: int, n: Node) -> int:
    """Y,YYY: sscanf's "%d,%03d" — thousands, a comma, up to three digits."""
    a, p = strtol(s, pos)
    if a is None or p >= len(s) or s[p] != ",":
        raise _bad_format('invalid input string for "Y,YYY"')
    q = p + 1
    while q < len(s) and s[q] in _SPACE:
        q += 1
    end = q + (1 if q < len(s) and s[q] in "+-" else 0)
    digits_end = end
    while digits_end < len(s) and digits_end - q < 3 and "0" <= s[digits_end] <= "9":
        digits_end += 1
    if digits_end == end:
        raise _bad_format('invalid input string for "Y,YYY"')
    _set(f, "year", int(s[q:digits_end]) + a * 1000, n)
    f.yysz = 4
    return _skip_th(s, digits_end, n)


def _skip_th(s: str, pos: int, n: Node) -> int:
    if n.suffix & {"TH", "th"}:
        pos = min(pos + 2, len(s))
    return pos


def _adjust_year(year: int) -> int:
    """A year of fewer than four digits, toward 2020 (70 is 1970, 69 is 2069)."""
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    if year < 520:
        return year + 2000
    if year < 1000:
        return year + 1000
    return year


_FIELD_OF = {"HH": "hh", "HH12": "hh", "HH24": "hh", "MI": "mi", "SS": "ss", "SSSS": "ssss",
             "MM": "mm", "DDD": "ddd", "IDDD": "ddd", "DD": "dd", "D": "d", "ID": "d",
             "WW": "ww", "IW": "ww", "CC": "cc", "W": "w", "J": "j"}


def _read_number(f: _Fields, k: str, s: str, pos: int, nodes, i: int) -> int:
    n = nodes[i]
    width = _WIDTH[k] or len(n.text)
    if k in ("YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I"):
        v, pos, used = _parse_int(s, pos, len(n.text), nodes, i)
        _set(f, "year", v, n)
        if len(k) < 4 and used < 4:
            f.year = _adjust_year(f.year)
        f.yysz = {"YYYY": 4, "IYYY": 4, "YYY": 3, "IYY": 3, "YY": 2, "IY": 2}.get(k, 1)
    elif k == "MS" or k == "US" or k.startswith("FF"):
        v, pos, used = _parse_int(s, pos, width, nodes, i)
        if k == "MS":
            _set(f, "ms", v, n)
            f.ms *= {1: 100, 2: 10}.get(used, 1)
        else:
            if k != "US":
                f.ff = int(k[2])
            _set(f, "us", v, n)
            f.us *= 10 ** (6 - used) if 1 <= used <= 5 else 1
    elif k == "Q":  # read but ignored, as PostgreSQL: the month decides
        _, pos, _ = _parse_int(s, pos, width, nodes, i)
    else:
        v, pos, _ = _parse_int(s, pos, width, nodes, i)
        if k == "ID":
            _set(f, "d", v, n)
            f.d = 1 if f.d + 1 > 7 else f.d + 1
        else:
            _set(f, _FIELD_OF[k], v, n)
        if k in ("HH", "HH12"):
            f.clock12 = True
    return _skip_th(s, pos, n)


# --- Julian days (PostgreSQL's date2j / j2date) -------------------------------------------------
def date2j(y: int, m: int, d: int) -> int:
    """The Julian day of a proleptic Gregorian date (year 0 = 1 BC)."""
    if m > 2:
        m, y = m + 1, y + 4800
    else:
        m, y = m + 13, y + 4799
    century = y // 100
    return y * 365 - 32167 + y // 4 - century + century // 4 + 7834 * m // 256 + d


def j2date(jd: int) -> tuple[int, int, int]:
    julian = jd + 32044
    quad = julian // 146097
    extra = (julian - quad * 146097) * 4 + 3
    julian += 60 + quad * 3 + extra // 146097
    quad = julian // 1461
    julian -= quad * 1461
    y = julian * 4 // 1461
    julian = ((julian + 305) % 365 if y != 0 else (julian + 306) % 366) + 123
    y += quad * 4
    quad = julian * 2141 // 65536
    return y - 4800, (quad + 10) % 12 + 1, julian - 7834 * quad // 256


def _isoweek2j(year: int, week: int) -> int:
    day4 = date2j(year, 1, 4)
    day0 = (day4 - 1 + 1) % 7  # j2day(day4 - 1): 0 = Sunday
    return (week - 1) * 7 + (day4 - day0)


def _is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parse_datetime(text: str, fmt: str) -> tuple[int, ...]:
    """(year, month, day, hour, minute, second, microsecond, offset seconds east of UTC,
    fractional digits to round to or 0) that to_timestamp(text, fmt) reads, PostgreSQL's
    year numbering (0 = 1 BC)."""
    f = _from_char(parse_datetime_template(fmt), text) if fmt else _Fields()
    year, mon, mday, hour, minute, sec = 0, 1, 1, 0, 0, 0
    fmask = set()
    if f.ssss:
        hour, rest = divmod(f.ssss, 3600)  # ssss is never negative here in practice
        minute, sec = divmod(rest, 60)
    if f.ss:
        sec = f.ss
    if f.mi:
        minute = f.mi
    if f.hh:
        hour = f.hh
    if f.clock12:
        if hour < 1 or hour > 12:
            raise _bad_format(f'hour "{hour}" is invalid for the 12-hour clock',
                              hint="Use the 24-hour clock, or give an hour between 1 and 12.")
        if f.pm and hour < 12:
            hour += 12
        elif not f.pm and hour == 12:
            hour = 0
    cc = f.cc
    if f.year:
        if cc and f.yysz <= 2:
            if f.bc:
                cc = -cc
            year = _cmod(f.year, 100)
            if year:
                year = year + (cc - 1) * 100 if cc >= 0 else (cc + 1) * 100 - year + 1
            else:
                year = cc * 100 + (0 if cc >= 0 else 1)
        else:
            year = -f.year if f.bc else f.year
            if year < 0:
                year += 1
        fmask.add("year")
    elif cc:
        if f.bc:
            cc = -cc
        year = (cc - 1) * 100 + 1 if cc >= 0 else cc * 100 + 1
        fmask.add("year")
    if f.j:
        year, mon, mday = j2date(f.j)
        fmask |= {"year", "month", "day"}
    ddd = f.ddd
    dd = f.dd
    if f.ww:
        if f.mode == "iso":
            jd = _isoweek2j(year, f.ww)
            if f.d:
                jd += f.d - 2 if f.d > 1 else 6
            year, mon, mday = j2date(jd)
            fmask |= {"year", "month", "day"}
        else:
            ddd = (f.ww - 1) * 7 + 1
    if f.w:
        dd = (f.w - 1) * 7 + 1
    if dd:
        mday = dd
        fmask.add("day")
    if f.mm:
        mon = f.mm
        fmask.add("month")
    if ddd and (mon <= 1 or mday <= 1):
        if not year and not f.bc:
            raise _bad_format("cannot calculate day of year without year information")
        if f.mode == "iso":
            year, mon, mday = j2date(_isoweek2j(year, 1) - 1 + ddd)
            fmask |= {"year", "month", "day"}
        else:
            sums = [0]
            for i, days in enumerate(_MONTH_DAYS):
                sums.append(sums[-1] + days + (1 if i == 1 and _is_leap(year) else 0))
            i = next((m for m in range(1, 13) if ddd <= sums[m]), 13)
            if mon <= 1:
                mon = i
            if mday <= 1:
                mday = ddd - sums[i - 1]
            fmask |= {"month", "day"}
    fsec = f.ms * 1000 + f.us
    out_of_range = errors.QueryError(f'date/time field value out of range: "{text}"', "22008")
    if "month" in fmask and not 1 <= mon <= 12:
        raise out_of_range
    if "day" in fmask and not 1 <= mday <= 31:
        raise out_of_range
    if fmask >= {"year", "month", "day"}:
        if mday > _MONTH_DAYS[mon - 1] + (1 if mon == 2 and _is_leap(year) else 0):
            raise out_of_range
    if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= sec < 60 and 0 <= fsec < 10**6):
        raise out_of_range
    offset = 0
    if f.tzsign:
        if not (0 <= f.tzh <= 15 and 0 <= f.tzm < 60):
            raise errors.QueryError(f'time zone displacement out of range: "{text}"', "22009")
        offset = (f.tzh * 60 + f.tzm) * 60 * (1 if f.tzsign > 0 else -1)
    return year, mon, mday, hour, minute, sec, fsec, offset, f.ff


def _cmod(a: int, b: int) -> int:
    q = abs(a) // b
    return a - b * (q if a >= 0 else -q)


_REFUSED = "raympp's dates and timestamps run from year 1 to 9999"
_MIN_TIMESTAMP = -211813488000000000      # 4714-11-24 BC, from PostgreSQL's 2000 epoch
_END_TIMESTAMP = 9223371331200000000      # 294277-01-01


def _valid_julian(y: int, m: int) -> bool:
    """PostgreSQL's IS_VALID_JULIAN: dates its Julian-day arithmetic takes."""
    return (y > -4713 or (y == -4713 and m >= 11)) and (y < 5874898 or (y == 5874898 and m < 6))


def to_timestamp(text: str, fmt: str) -> dt.datetime:
    """to_timestamp(text, fmt): a timestamptz (UTC, the session zone)."""
    y, mo, d, h, mi, s, us, offset, fprec = parse_datetime(text, fmt)
    if not _valid_julian(y, mo):
        raise errors.QueryError("timestamp out of range", "22008")
    days = date2j(y, mo, d) - 2451545  # days since 2000-01-01; mday may run past the month
    micros = ((days * 86400 + h * 3600 + mi * 60 + s - offset) * 10**6) + us
    if fprec:  # FFn rounds to n digits, half away from zero from PostgreSQL's 2000 epoch
        scale = 10 ** (6 - fprec)
        rounded = (abs(micros) + scale // 2) // scale * scale
        micros = rounded if micros >= 0 else -rounded
    if not _MIN_TIMESTAMP <= micros < _END_TIMESTAMP:
        raise errors.QueryError("timestamp out of range", "22008")
    return _timestamp_of(micros + 946684800 * 10**6)


def _timestamp_of(micros: int) -> dt.datetime:
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    low = -62135596800 * 10**6                 # 0001-01-01 00:00 UTC
    high = 253402300800 * 10**6                # 10000-01-01 00:00 UTC
    if not low <= micros < high:
        raise errors.FeatureNotSupported(f"to_timestamp() result outside years 1 to 9999 "
                                         f"({_REFUSED})")
    return epoch + dt.timedelta(microseconds=micros)


def to_date(text: str, fmt: str) -> dt.date:
    """to_date(text, fmt): the date part of what to_timestamp reads."""
    y, mo, d, *_ = parse_datetime(text, fmt)
    jd = date2j(y, mo, d) if _valid_julian(y, mo) else -1
    if not date2j(1, 1, 1) <= jd <= date2j(9999, 12, 31):
        if not 0 <= jd < 2147483494:  # PostgreSQL's own range of dates
            raise errors.QueryError(f'date out of range: "{text}"', "22008")
        raise errors.FeatureNotSupported(f"to_date() result outside years 1 to 9999 ({_REFUSED})")
    return dt.date.fromordinal(jd - 1721425)


def epoch_to_timestamp(seconds: float) -> dt.datetime:
    """to_timestamp(double precision): seconds since 1970-01-01 00:00 UTC."""
    import math
    if math.isnan(seconds):
        raise errors.QueryError("timestamp cannot be NaN", "22008")
    if math.isinf(seconds):
        raise errors.FeatureNotSupported("to_timestamp() of an infinite value (raympp has no "
                                         "infinite timestamps)")
    if not -210866803200.0 <= seconds < 9224318016000.0:
        raise errors.QueryError(f'timestamp out of range: "{_g(seconds)}"', "22008")
    shifted = round((seconds - 946684800.0) * 1e6)  # rint after the shift to 2000-01-01
    return _timestamp_of(int(shifted) + 946684800 * 10**6)


def _g(x: float) -> str:
    """C's %g."""
    return "%g" % x
