"""PostgreSQL 15's date/time text input (datetime.c), the one reader of date, timestamp,
timestamptz, time and timetz text in raympp: constants, casts of text columns (their
rows that are not plain ISO, once per distinct value), COPY and bind parameters.

The input is split into fields as ParseDateTime splits it (numbers, times 'hh:mm:ss',
dates with '-' '/' '.' or a text month, words, signed offsets), then read field by
field as DecodeDateTime / DecodeTimeOnly read them: a field's meaning depends on what
came before it (DecodeNumber's field order, DateStyle's MDY / DMY / YMD for all-numeric
dates; run-together 'yyyymmdd' and 'hhmmss' as DecodeNumberField; 'J' Julian days; ISO
'T'; month and weekday names; AM/PM; AD/BC; the special words epoch, infinity,
-infinity, now, today, tomorrow, yesterday, allballs; numeric offsets, PostgreSQL's
"Default" zone abbreviations and tz database names). A field given twice is 22007,
as are unknown words; fields out of range are 22008 with PostgreSQL's message.

Values come out as integers so that every year PostgreSQL has is representable: days
since 1970-01-01 (date), microseconds since 1970-01-01 00:00 (timestamp; timestamptz
in UTC), microseconds since midnight (time), or `Infinite`. The statement's time
('now', 'today', ...) and the session's zone are the caller's (`Context`).
Abbreviations PostgreSQL resolves through a tz database zone (DYNAMIC ones, e.g. 'MSK')
are 0A000.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import re
from dataclasses import dataclass, field

from planner import errors, time_zones, zone_abbreviations
from planner.session_info import SESSION_INFO
from planner.format_input import date2j, j2date, strtol
from planner.temporal import INFINITY, NEG_INFINITY, USECS_PER_DAY, Infinite

# Field kinds of ParseDateTime.
_NUMBER, _STRING, _DATE, _TIME, _TZ, _SPECIAL = "number", "string", "date", "time", "tz", "special"
# Token types (DecodeSpecial) and the bits of the field masks, as datetime.h numbers them.
RESERV, MONTH, YEAR, DAY, JULIAN, TZ, DTZ, DYNTZ, IGNORE, AMPM = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, DOY, DOW, UNITS, ADBC = (
    10, 11, 12, 13, 14, 15, 16, 17, 18)
ISOTIME, DTZMOD, UNKNOWN = 23, 28, 31


def _m(t: int) -> int:
    return 1 << t


_ALL_SECS = _m(SECOND) | _m(MILLISECOND) | _m(MICROSECOND)
_DATE_M = _m(YEAR) | _m(MONTH) | _m(DAY)
_TIME_M = _m(HOUR) | _m(MINUTE) | _ALL_SECS
# Reserved words' values, and the units a following number belongs to ('y2001m02d04').
(_NOW, _TODAY, _TOMORROW, _YESTERDAY, _ZULU, _EPOCH, _LATE, _EARLY) = (
    "now", "today", "tomorrow", "yesterday", "zulu", "epoch", "late", "early")
(_U_YEAR, _U_MONTH, _U_DAY, _U_HOUR, _U_MINUTE, _U_SECOND, _U_JULIAN, _U_TIME, _U_OTHER) = (
    "year", "month", "day", "hour", "minute", "second", "julian", "time", "other")

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_KEYWORDS: dict[str, tuple[int, object]] = {
    "-infinity": (RESERV, _EARLY), "infinity": (RESERV, _LATE), "ad": (ADBC, False),
    "bc": (ADBC, True), "allballs": (RESERV, _ZULU), "am": (AMPM, "am"), "pm": (AMPM, "pm"),
    "at": (IGNORE, 0), "on": (IGNORE, 0), "dst": (DTZMOD, 3600), "epoch": (RESERV, _EPOCH),
    "now": (RESERV, _NOW), "today": (RESERV, _TODAY), "tomorrow": (RESERV, _TOMORROW),
    "yesterday": (RESERV, _YESTERDAY), "t": (ISOTIME, _U_TIME),
    "y": (UNITS, _U_YEAR), "m": (UNITS, _U_MONTH), "d": (UNITS, _U_DAY),
    "h": (UNITS, _U_HOUR), "mm": (UNITS, _U_MINUTE), "s": (UNITS, _U_SECOND),
    "j": (UNITS, _U_JULIAN), "jd": (UNITS, _U_JULIAN), "julian": (UNITS, _U_JULIAN),
    "dow": (UNITS, _U_OTHER), "doy": (UNITS, _U_OTHER), "isodow": (UNITS, _U_OTHER),
    "isoyear": (UNITS, _U_OTHER),
    **{m: (MONTH, i + 1) for i, m in enumerate(_MONTHS)},
    **{m: (MONTH, i + 1) for i, m in enumerate(
        ("january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"))},
    "sept": (MONTH, 9),
    **{d: (DOW, i) for i, names in enumerate((
        ("sun", "sunday"), ("mon", "monday"), ("tue", "tues", "tuesday"),
        ("wed", "weds", "wednesday"), ("thu", "thur", "thurs", "thursday"),
        ("fri", "friday"), ("sat", "saturday"))) for d in names},
}
_TOKMAXLEN = 10  # PostgreSQL compares keywords on their first 10 characters
_MAX_FIELDS = 25  # MAXDATEFIELDS
_MAX_TZDISP_HOUR = 15
_UNIX_EPOCH_JDATE = 2_440_588
# PostgreSQL's ranges: dates below JD 5874898-01-01, timestamps below 294277-01-01 (both
# from JD 0, 4714-11-24 BC), counted here from 1970-01-01.
_DATE_END = 2_147_483_494 - _UNIX_EPOCH_JDATE
_TS_MIN = -_UNIX_EPOCH_JDATE * USECS_PER_DAY
_TS_END = (109_203_528 - _UNIX_EPOCH_JDATE) * USECS_PER_DAY
_INT64_MAX = 2**63 - 1

# The statement's start time (aware, UTC), where the caller's Context has none: the
# segments set it while they evaluate (segment/expr.py), the coordinator lends it through
# SESSION_INFO["now"] while binding.
STATEMENT_NOW: contextvars.ContextVar[dt.datetime | None] = contextvars.ContextVar(
    "statement_now", default=None)


def statement_now() -> dt.datetime:
    """The statement's start time, what 'now' and 'today' read (aware, UTC)."""
    now = STATEMENT_NOW.get()
    if now is None:
        info = SESSION_INFO.get()
        now = info["now"] if "now" in info else None
    if now is None:  # outside a statement (COPY's conversion, unit tests): the clock's
        now = dt.datetime.now(dt.timezone.utc)
    return now if now.tzinfo is not None else now.replace(tzinfo=dt.timezone.utc)


def session_order() -> str:
    """DateStyle's field order of the statement's session ('mdy' outside a session). The
    coordinator lends it with SESSION_INFO and keys plans on it."""
    return getattr(SESSION_INFO.get(), "date_order", None) or "mdy"


@dataclass
class Context:
    """What input reads besides the text: the session's zone (a planner.time_zones.Zone;
    None is UTC), DateStyle's field order, and the statement's time (None: statement_now)."""

    zone: object = None
    order: str = "mdy"
    now: dt.datetime | None = None

    def current(self) -> tuple[dt.datetime, int]:
        """The statement's time as a local wall clock in the zone, and the zone's offset
        then (seconds west, as PostgreSQL's tz)."""
        now = self.now or statement_now()
        east = 0 if self.zone is None or self.zone.is_utc else _offset_at(now, self.zone)
        local = now.astimezone(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(seconds=east)
        return local, -east


class _Error(Exception):
    """A DTERR_* code of datetime.c, made into PostgreSQL's error by `_raise`."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


_BAD, _OVERFLOW, _MD_OVERFLOW, _TZDISP = "bad", "overflow", "md", "tzdisp"


def _raise(code: str, text: str, type_name: str):
    if code in (_OVERFLOW, _MD_OVERFLOW):
        hint = 'Perhaps you need a different "datestyle" setting.' if code == _MD_OVERFLOW \
            else None
        raise errors.QueryError(f'date/time field value out of range: "{text}"', "22008",
                                hint=hint)
    if code == _TZDISP:
        raise errors.QueryError(f'time zone displacement out of range: "{text}"', "22009")
    raise errors.InvalidDatetimeFormat(f'invalid input syntax for type {type_name}: "{text}"')


@dataclass
class _Tm:
    """struct pg_tm and fsec: the fields read so far."""

    year: int = 0
    mon: int = 0
    mday: int = 0
    hour: int = 0
    min: int = 0
    sec: int = 0
    fsec: int = 0
    yday: int = 0
    tz: int | None = None   # seconds west of UTC, when the text gave a zone
    zone: object = None     # a named zone, resolved once the date is known
    extra: dict = field(default_factory=dict)


# --- splitting (ParseDateTime) ----------------------------------------------------------
def _isdigit(c: str) -> bool:
    return "0" <= c <= "9"


def _isalpha(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _isalnum(c: str) -> bool:
    return _isdigit(c) or _isalpha(c)


_SPACE = " \t\n\r\v\f"
_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def split_fields(text: str) -> list[tuple[str, str]]:
    """ParseDateTime: the fields of `text` and their kinds (22007 for what fits none)."""
    out: list[tuple[str, str]] = []
    s, i, n = text, 0, len(text)

    def take(pred) -> str:
        nonlocal i
        start = i
        while i < n and pred(s[i]):
            i += 1
        return s[start:i]
    while i < n:
        c = s[i]
        if _isdigit(c):
            f = take(_isdigit)
            if i < n and s[i] == ":":
                f += take(lambda ch: _isdigit(ch) or ch in ":.")
                kind = _TIME
            elif i < n and s[i] in "-/.":
                delim = s[i]
                f += delim
                i += 1
                if i < n and _isdigit(s[i]):
                    kind = _NUMBER if delim == "." else _DATE
                    f += take(_isdigit)
                    if i < n and s[i] == delim:
                        kind = _DATE
                        f += take(lambda ch: _isdigit(ch) or ch == delim)
                else:
                    kind = _DATE
                    f += take(lambda ch: _isalnum(ch) or ch == delim).lower()
            else:
                kind = _NUMBER
        elif c == ".":
            i += 1
            f = "." + take(_isdigit)
            kind = _NUMBER
        elif _isalpha(c):
            f = take(_isalpha).lower()
            kind = _STRING
            is_date = False
            if i < n and s[i] in "-/.":
                is_date = True
            elif i < n and (s[i] == "+" or _isdigit(s[i])):
                is_date = f[:_TOKMAXLEN] not in _KEYWORDS
            if is_date:
                kind = _DATE
                f += s[i].lower()
                i += 1
                f += take(lambda ch: ch in "+-/_.:" or _isalnum(ch)).lower()
        elif c in _SPACE:
            i += 1
            continue
        elif c in "+-":
            i += 1
            f = c
            take(lambda ch: ch in _SPACE)
            if i < n and _isdigit(s[i]):
                f += take(lambda ch: _isdigit(ch) or ch in ":.-")
                kind = _TZ
            elif i < n and _isalpha(s[i]):
                f += take(_isalpha).lower()
                kind = _SPECIAL
            else:
                raise _Error(_BAD)
        elif c in _PUNCT:
            i += 1
            continue
        else:
            raise _Error(_BAD)
        if len(out) >= _MAX_FIELDS:
            raise _Error(_BAD)
        out.append((f, kind))
    return out


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


_DAYS_IN = ((31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31),
            (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31))


# --- numbers ----------------------------------------------------------------------------
def _strtoint(s: str, pos: int = 0) -> tuple[int, int]:
    """strtol: an optional sign and digits from pos -> (value, end); no digits: (0, pos).
    Values beyond int32 are DTERR_FIELD_OVERFLOW (strtoint's ERANGE)."""
    v, end = strtol(s, pos)
    if v is None:
        return 0, pos
    if not -2**31 <= v < 2**31:
        raise _Error(_OVERFLOW)
    return v, end


def _fraction(s: str) -> int:
    """ParseFractionalSecond: '.ddd' (all of s) as microseconds, rounded as rint."""
    if not all(_isdigit(c) for c in s[1:]):
        raise _Error(_BAD)
    return round(float("0" + s) * 1_000_000) if len(s) > 1 else 0  # '.' alone is 0


def _number_field(s: str, fmask: int, tm: _Tm, state: dict) -> tuple[int, str]:
    """DecodeNumberField: a run-together date 'yyyymmdd' / 'yymmdd' or time 'hhmmss',
    'hhmm' (with '.fff' seconds) -> (tmask, 'date' | 'time')."""
    if "." in s:
        cut = s.index(".")
        frac = s[cut:]
        if not all(_isdigit(c) for c in frac[1:]):
            raise _Error(_BAD)
        tm.fsec = round(float("0" + frac) * 1_000_000) if len(frac) > 1 else 0
        s = s[:cut]
    elif fmask & _DATE_M != _DATE_M and len(s) >= 6:
        tm.mday, tm.mon, tm.year = int(s[-2:]), int(s[-4:-2]), int(s[:-4])
        if len(s) - 4 == 2:
            state["is2digits"] = True
        return _DATE_M, _DATE
    if fmask & _TIME_M != _TIME_M:
        if len(s) == 6:
            tm.hour, tm.min, tm.sec = int(s[:2]), int(s[2:4]), int(s[4:])
            return _TIME_M, _TIME
        if len(s) == 4:
            tm.hour, tm.min, tm.sec = int(s[:2]), int(s[2:]), 0
            return _TIME_M, _TIME
    raise _Error(_BAD)


def _decode_number(s: str, text_month: bool, fmask: int, tm: _Tm, state: dict,
                   order: str) -> int:
    """DecodeNumber: one numeric field of a date (or a time once the date is complete),
    placed by what is known so far and DateStyle's order -> its tmask."""
    val, end = _strtoint(s)
    if end == 0:
        raise _Error(_BAD)
    flen = len(s)
    if end < len(s) and s[end] == ".":
        if end > 2:  # '2001.360', '20011225.5', '040506.789'
            return _number_field(s, fmask | _DATE_M, tm, state)[0]
        tm.fsec = _fraction(s[end:])
    elif end != len(s):
        raise _Error(_BAD)
    if flen == 3 and fmask & _DATE_M == _m(YEAR) and 1 <= val <= 366:
        tm.yday = val
        return _m(DOY) | _m(MONTH) | _m(DAY)
    have = fmask & _DATE_M
    if have == 0:
        if flen >= 3 or order == "ymd":
            tmask, tm.year = _m(YEAR), val
        elif order == "dmy":
            tmask, tm.mday = _m(DAY), val
        else:
            tmask, tm.mon = _m(MONTH), val
    elif have == _m(YEAR):
        tmask, tm.mon = _m(MONTH), val
    elif have == _m(MONTH):
        if text_month and (flen >= 3 or order == "ymd"):
            tmask, tm.year = _m(YEAR), val
        else:
            tmask, tm.mday = _m(DAY), val
    elif have == _m(YEAR) | _m(MONTH):
        if text_month and flen >= 3 and state.get("is2digits"):
            tm.mday, tm.year = tm.year, val  # the first number was the day after all
            state["is2digits"] = False
            return _m(DAY)
        tmask, tm.mday = _m(DAY), val
    elif have == _m(DAY):
        tmask, tm.mon = _m(MONTH), val
    elif have == _m(MONTH) | _m(DAY):
        tmask, tm.year = _m(YEAR), val
    elif have == _DATE_M:
        return _number_field(s, fmask, tm, state)[0]
    else:
        raise _Error(_BAD)
    if tmask == _m(YEAR):
        state["is2digits"] = flen <= 2
    return tmask


def _decode_date(s: str, fmask: int, tm: _Tm, state: dict, order: str) -> int:
    """DecodeDate: a date field 'yyyy-mm-dd', 'mm/dd/yy', 'jan-05-2024', '2024.01.05'."""
    parts, i = [], 0
    while i < len(s):
        while i < len(s) and not _isalnum(s[i]):
            i += 1
        if i >= len(s):
            raise _Error(_BAD)
        start = i
        pred = _isdigit if _isdigit(s[i]) else _isalpha
        while i < len(s) and pred(s[i]):
            i += 1
        parts.append(s[start:i])
        if i < len(s):
            i += 1  # the separator after the field
    tmask, text_month = 0, False
    rest = []
    for p in parts:
        if _isalpha(p[0]):
            kind, val = _KEYWORDS.get(p[:_TOKMAXLEN], (UNKNOWN, None))
            if kind == IGNORE:
                continue
            if kind != MONTH:
                raise _Error(_BAD)
            tm.mon, text_month = val, True
            if fmask & _m(MONTH):
                raise _Error(_BAD)
            fmask |= _m(MONTH)
            tmask |= _m(MONTH)
        else:
            rest.append(p)
    for p in rest:
        dmask = _decode_number(p, text_month, fmask, tm, state, order)
        if fmask & dmask:
            raise _Error(_BAD)
        fmask |= dmask
        tmask |= dmask
    if fmask & ~(_m(DOY) | _m(TZ)) != _DATE_M:
        raise _Error(_BAD)
    return tmask


def _decode_time(s: str, tm: _Tm) -> int:
    """DecodeTime: 'hh:mm', 'hh:mm:ss[.fff]', 'mm:ss.fff'."""
    tm.hour, end = _strtoint(s)
    if end >= len(s) or s[end] != ":":
        raise _Error(_BAD)
    tm.min, end = _strtoint(s, end + 1)
    tm.sec, tm.fsec = 0, 0
    if end < len(s):  # else 'hh:mm'
        if s[end] == ".":  # 'mm:ss.fff'
            tm.fsec = _fraction(s[end:])
            tm.hour, tm.min, tm.sec = 0, tm.hour, tm.min
        elif s[end] == ":":
            tm.sec, end = _strtoint(s, end + 1)
            if end < len(s):
                if s[end] != ".":
                    raise _Error(_BAD)
                tm.fsec = _fraction(s[end:])
        else:
            raise _Error(_BAD)
    if tm.hour < 0 or not 0 <= tm.min <= 59 or not 0 <= tm.sec <= 60 \
            or not 0 <= tm.fsec <= 1_000_000:
        raise _Error(_OVERFLOW)
    return _TIME_M


def _time_overflows(tm: _Tm) -> bool:
    if not 0 <= tm.hour <= 24 or not 0 <= tm.min <= 59 or not 0 <= tm.sec <= 60 \
            or not 0 <= tm.fsec <= 1_000_000:
        return True
    return ((tm.hour * 60 + tm.min) * 60 + tm.sec) * 1_000_000 + tm.fsec > USECS_PER_DAY


def decode_timezone(s: str) -> int:
    """DecodeTimezone: '+hh', '-hh:mm[:ss]', '+hhmm' -> seconds west (PostgreSQL's tz)."""
    if not s or s[0] not in "+-":
        raise _Error(_BAD)
    hr, end = _digits(s, 1)
    mn = sec = 0
    if end < len(s) and s[end] == ":":
        mn, end = _digits(s, end + 1)
        if end < len(s) and s[end] == ":":
            sec, end = _digits(s, end + 1)
    elif end == len(s) and len(s) > 3:
        hr, mn = hr // 100, hr % 100
    if not 0 <= hr <= _MAX_TZDISP_HOUR or not 0 <= mn < 60 or not 0 <= sec < 60:
        raise _Error(_TZDISP)
    tz = (hr * 60 + mn) * 60 + sec
    if end != len(s):
        raise _Error(_BAD)
    return tz if s[0] == "-" else -tz


def _digits(s: str, pos: int) -> tuple[int, int]:
    try:
        return _strtoint(s, pos)
    except _Error:
        raise _Error(_TZDISP)


# --- zones -------------------------------------------------------------------------------
def _abbreviation(word: str):
    """DecodeTimezoneAbbrev: (TZ or DTZ, seconds east) of a fixed abbreviation, None
    when `word` is none; dynamic ones are 0A000."""
    fixed = zone_abbreviations.FIXED.get(word)
    if fixed is not None:
        return (DTZ if fixed[1] else TZ), fixed[0]
    if word in zone_abbreviations.DYNAMIC:
        raise errors.FeatureNotSupported(
            f'time zone abbreviation "{word}" (PostgreSQL reads it through the zone '
            f'{zone_abbreviations.DYNAMIC[word]})')
    return None


def _named_zone(name: str):
    """pg_tzset: a tz database zone by name (any case) or a POSIX spec ('utc+2'), None
    when there is none."""
    try:
        return time_zones.named_zone(name) or time_zones.posix_zone(name)
    except errors.FeatureNotSupported:  # a POSIX spec with daylight saving
        return _DST_POSIX if _posix_dst_spec(name) else None
    except errors.QueryError:
        return None


def _posix_dst_spec(spec: str) -> bool:
    """Whether tzparse (PostgreSQL's localtime.c) reads `spec` as a POSIX zone with a
    daylight-saving part: STD offset DST [offset] [,rule,rule]; names are any run of
    characters but digits, ',', '-' and '+' (or <...>), rules Jn, n or Mm.w.d [/time]."""
    pos = [0]

    def name() -> int:
        start = pos[0]
        if spec.startswith("<", start):
            end = spec.find(">", start)
            if end < 0:
                raise ValueError
            pos[0] = end + 1
            return end - start - 1
        while pos[0] < len(spec) and not _isdigit(spec[pos[0]]) and spec[pos[0]] not in ",-+":
            pos[0] += 1
        return pos[0] - start

    def number(lo: int, hi: int) -> None:
        start = pos[0]
        while pos[0] < len(spec) and _isdigit(spec[pos[0]]):
            pos[0] += 1
        if pos[0] == start or not lo <= int(spec[start:pos[0]]) <= hi:
            raise ValueError

    def offset() -> None:
        if pos[0] < len(spec) and spec[pos[0]] in "+-":
            pos[0] += 1
        number(0, 167)
        for hi in (59, 60):
            if pos[0] < len(spec) and spec[pos[0]] == ":":
                pos[0] += 1
                number(0, hi)

    def rule() -> None:
        c = spec[pos[0]:pos[0] + 1]
        if c in ("J", "j"):
            pos[0] += 1
            number(1, 365)
        elif c in ("M", "m"):
            for i, (lo, hi) in enumerate(((1, 12), (1, 5), (0, 6))):
                if i:
                    if spec[pos[0]:pos[0] + 1] != ".":
                        raise ValueError
                pos[0] += 1
                number(lo, hi)
        else:
            number(0, 365)
        if spec[pos[0]:pos[0] + 1] == "/":
            pos[0] += 1
            offset()
    try:
        name()
        if pos[0] >= len(spec):
            return False
        offset()
        if pos[0] >= len(spec) or not name():
            return False
        if pos[0] < len(spec) and spec[pos[0]] not in ",;":
            offset()
        if pos[0] < len(spec) and spec[pos[0]] in ",;":
            pos[0] += 1
            rule()
            if spec[pos[0]:pos[0] + 1] != ",":
                return False
            pos[0] += 1
            rule()
        return pos[0] == len(spec)
    except (ValueError, IndexError):
        return False


class _DstPosix:
    """A POSIX zone spec with daylight-saving rules ('EST5EDT4'): a zone PostgreSQL
    reads (so a time without a date is 22007 there), whose offsets raympp does not
    compute (0A000 where they are needed)."""

    fixed = None
    name = ""

    def refused(self) -> errors.QueryError:
        return errors.FeatureNotSupported(
            "POSIX time zone specifications with daylight-saving rules in date/time input")


_DST_POSIX = _DstPosix()


def _fixed_offset(zone) -> int | None:
    """Seconds east of a zone that never changes its offset (pg_get_timezone_offset):
    fixed offsets and the tz database's Etc/ zones; None for others."""
    if zone.fixed is not None or zone is _DST_POSIX:
        return zone.fixed
    if zone.name.lower().startswith("etc/"):
        return _offset_at(dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc), zone)
    return None


def _offset_at(instant: dt.datetime, zone) -> int:
    return time_zones.offset_at(instant, zone)


def _local_offset(tm: _Tm, zone) -> int:
    """DetermineTimeZoneOffset: seconds west of the wall clock tm in zone. Years beyond
    Python's are read in a year of the same 400-year cycle (the calendar repeats), years
    before 2 in year 2 (local mean time, which zones keep for old dates)."""
    if zone is _DST_POSIX:
        raise zone.refused()
    if zone.fixed is not None:
        return -zone.fixed
    y = tm.year
    if y < 2:  # a day either side must stay in Python's years
        y = 2
    elif y > 9998:
        y = 9000 + (y - 9000) % 400
    days = _DAYS_IN[_leap(y)][tm.mon - 1]
    local = dt.datetime(y, tm.mon, min(tm.mday, days)) + dt.timedelta(
        hours=tm.hour, minutes=tm.min, seconds=tm.sec)
    return -time_zones.local_offset(local, zone)


# --- DecodeDateTime / DecodeTimeOnly ----------------------------------------------------
def _validate_date(fmask: int, tm: _Tm, state: dict) -> None:
    """ValidateDate: years (2-digit ones as 1970..2069, BC), day of year, month and day."""
    if fmask & _m(YEAR) and not state.get("julian"):  # a Julian day's year is as it is
        if state.get("bc"):
            if tm.year <= 0:
                raise _Error(_OVERFLOW)
            tm.year = -(tm.year - 1)
        elif state.get("is2digits"):
            if tm.year < 0:
                raise _Error(_OVERFLOW)
            tm.year += 2000 if tm.year < 70 else 1900 if tm.year < 100 else 0
        elif tm.year <= 0:
            raise _Error(_OVERFLOW)
    if fmask & _m(DOY):
        tm.year, tm.mon, tm.mday = j2date(date2j(tm.year, 1, 1) + tm.yday - 1)
    if fmask & _m(MONTH) and not 1 <= tm.mon <= 12:
        raise _Error(_MD_OVERFLOW)
    if fmask & _m(DAY) and not 1 <= tm.mday <= 31:
        raise _Error(_MD_OVERFLOW)
    if fmask & _DATE_M == _DATE_M and tm.mday > _DAYS_IN[_leap(tm.year)][tm.mon - 1]:
        raise _Error(_OVERFLOW)


def _set_date(tm: _Tm, jd: int) -> None:
    tm.year, tm.mon, tm.mday = j2date(jd)


def _ampm(mer, tm: _Tm) -> None:
    if mer is not None and tm.hour > 12:
        raise _Error(_OVERFLOW)
    if mer == "am" and tm.hour == 12:
        tm.hour = 0
    elif mer == "pm" and tm.hour != 12:
        tm.hour += 12


_UNIT_FIELDS = {_U_YEAR: ("year", YEAR), _U_MONTH: ("mon", MONTH), _U_DAY: ("mday", DAY),
                _U_HOUR: ("hour", HOUR), _U_MINUTE: ("min", MINUTE)}


def _unit_number(s: str, ptype: str, fmask: int, tm: _Tm, state: dict) -> int:
    """A number after a unit letter ('y2001', 'J2451187', 'T040506') -> its tmask."""
    val, end = _strtoint(s)
    if end < len(s) and s[end] == ".":
        if ptype not in (_U_JULIAN, _U_TIME, _U_SECOND):
            raise _Error(_BAD)
    elif end != len(s):
        raise _Error(_BAD)
    if ptype == _U_MONTH and fmask & _m(MONTH) and fmask & _m(HOUR):
        ptype = _U_MINUTE  # 'm' after a month and an hour is minutes
    if ptype in _UNIT_FIELDS:
        attr, bit = _UNIT_FIELDS[ptype]
        setattr(tm, attr, val)
        return _m(bit)
    if ptype == _U_SECOND:
        tm.sec = val
        if end < len(s):
            tm.fsec = _fraction(s[end:])
            return _ALL_SECS
        return _m(SECOND)
    if ptype == _U_JULIAN:
        if val < 0:
            raise _Error(_OVERFLOW)
        _set_date(tm, val)
        state["julian"] = True
        tmask = _DATE_M
        if end < len(s):  # a fraction of a day
            frac = s[end:]
            if not all(_isdigit(c) for c in frac[1:]):
                raise _Error(_BAD)
            us = round(float("0" + frac) * USECS_PER_DAY) if len(frac) > 1 else 0
            tm.hour, us = divmod(us, 3_600_000_000)
            tm.min, us = divmod(us, 60_000_000)
            tm.sec, tm.fsec = divmod(us, 1_000_000)
            tmask |= _TIME_M
        return tmask
    if ptype == _U_TIME:
        tmask, _ = _number_field(s, fmask | _DATE_M, tm, state)
        if tmask != _TIME_M:
            raise _Error(_BAD)
        return tmask
    raise _Error(_BAD)


def _word(word: str, i: int, fields, time_only: bool, fmask: int, tm: _Tm, state: dict,
          ctx: Context) -> int | None:
    """A word field (DTK_STRING / DTK_SPECIAL) -> its tmask; None when it is ignored."""
    abbrev = _abbreviation(word)
    if abbrev is not None:
        kind, east = abbrev
    else:
        kind, east = _KEYWORDS.get(word[:_TOKMAXLEN], (UNKNOWN, None))
    if kind == IGNORE:
        return None
    tmask = _m(kind)
    if time_only and kind in (MONTH, DOW):
        raise _Error(_BAD)  # DecodeTimeOnly has no month or weekday names
    if kind == RESERV:
        val = east
        if time_only:
            if val == _NOW:
                local, _ = ctx.current()
                tm.hour, tm.min, tm.sec, tm.fsec = (local.hour, local.minute, local.second,
                                                    local.microsecond)
                return _TIME_M
            if val == _ZULU:
                tm.hour = tm.min = tm.sec = 0
                tm.tz = 0
                return _TIME_M | _m(TZ)
            raise _Error(_BAD)
        if val == _NOW:
            local, west = ctx.current()
            tm.year, tm.mon, tm.mday = local.year, local.month, local.day
            tm.hour, tm.min, tm.sec, tm.fsec = (local.hour, local.minute, local.second,
                                                local.microsecond)
            tm.tz = west
            state["dtype"] = _DATE
            return _DATE_M | _TIME_M | _m(TZ)
        if val in (_TODAY, _TOMORROW, _YESTERDAY):
            local, _ = ctx.current()
            shift = {_TODAY: 0, _TOMORROW: 1, _YESTERDAY: -1}[val]
            _set_date(tm, date2j(local.year, local.month, local.day) + shift)
            state["dtype"] = _DATE
            return _DATE_M
        if val == _ZULU:
            tm.hour = tm.min = tm.sec = 0
            tm.tz = 0
            return _TIME_M | _m(TZ)
        # epoch, infinity, -infinity: the caller ignores tm. PostgreSQL 15 marks only the
        # reserved word's bit (so '2024-01-05 epoch' is the epoch); later versions refuse.
        state["dtype"] = val
        return tmask
    if kind == MONTH:
        if fmask & _m(MONTH) and not state.get("text_month") and not fmask & _m(DAY) \
                and 1 <= tm.mon <= 31:
            tm.mday = tm.mon  # '5 jan': the number read as a month was the day
            tmask = _m(DAY)
        state["text_month"] = True
        tm.mon = east
        return tmask
    if kind == DTZMOD:
        tm.tz = (tm.tz or 0) - east
        return tmask | _m(DTZ)
    if kind in (DTZ, TZ):
        tm.tz = -east
        return tmask | (_m(TZ) if kind == DTZ else 0)
    if kind == AMPM:
        state["mer"] = east
        return tmask
    if kind == ADBC:
        state["bc"] = east
        return tmask
    if kind == DOW:
        return tmask
    if kind == UNITS:  # PostgreSQL 15 lets a later unit replace an earlier one
        state["ptype"] = east
        return 0
    if kind == ISOTIME:
        if not time_only and fmask & _DATE_M != _DATE_M:
            raise _Error(_BAD)
        if i >= len(fields) - 1 or fields[i + 1][1] not in (_NUMBER, _TIME, _DATE):
            raise _Error(_BAD)
        state["ptype"] = east
        return 0
    zone = _named_zone(word)  # an all-letters zone name ('utc', 'japan')
    if zone is None:
        raise _Error(_BAD)
    tm.zone = zone
    return _m(TZ)


def _time_and_offset(f: str, fmask: int, tm: _Tm, state: dict) -> int:
    """A run-together time with an offset, 'hhmmss-zz'."""
    if fmask & _TIME_M == _TIME_M or "-" not in f:
        raise _Error(_BAD)
    cut = f.index("-")
    tm.tz = decode_timezone(f[cut:])
    return _number_field(f[:cut], fmask, tm, state)[0] | _m(TZ)


def _zone_field(f: str, fmask: int, tm: _Tm, state: dict) -> int:
    """A date-like field once the date is known: a run-together time with an offset
    ('040506-08') or a zone name with punctuation ('america/new_york')."""
    if _isdigit(f[0]) or state.get("ptype"):
        if state.get("ptype"):
            if state["ptype"] != _U_TIME:
                raise _Error(_BAD)
            state["ptype"] = None
        return _time_and_offset(f, fmask, tm, state)
    zone = _named_zone(f)
    if zone is None:
        raise errors.InvalidParameterValue(f'time zone "{f}" not recognized')
    tm.zone = zone
    return _m(TZ)


def _decode(text: str, ctx: Context, field_mask) -> tuple[int, _Tm, dict]:
    """The loop of DecodeDateTime / DecodeTimeOnly: each field's mask from `field_mask`
    (None: a word to ignore), none given twice; then the date checks and AM/PM."""
    fields = split_fields(text)
    tm, state, fmask = _Tm(), {"dtype": _DATE}, 0
    for i, (f, kind) in enumerate(fields):
        if kind == _TZ:
            tm.tz, tmask = decode_timezone(f), _m(TZ)
        elif kind == _NUMBER and state.get("ptype"):  # 'y2001', 'J2451187', 'T040506'
            tmask = _unit_number(f, state["ptype"], fmask, tm, state)
            state["ptype"], state["dtype"] = None, _DATE
        else:
            tmask = field_mask(i, f, kind, fields, fmask, tm, state, ctx)
        if tmask is None:
            continue
        if tmask & fmask:
            raise _Error(_BAD)
        fmask |= tmask
    _validate_date(fmask, tm, state)
    _ampm(state.get("mer"), tm)
    return fmask, tm, state


def _datetime_field(i, f, kind, fields, fmask, tm, state, ctx) -> int | None:
    """One field of date / timestamp text (DecodeDateTime's switch)."""
    if kind == _DATE:
        if state.get("ptype") == _U_JULIAN:  # 'J2451187-08': a day and a zone
            val, end = _strtoint(f)
            if val < 0:
                raise _Error(_OVERFLOW)
            _set_date(tm, val)
            state["julian"] = True
            tm.tz = decode_timezone(f[end:])
            state["ptype"] = None
            return _DATE_M | _TIME_M | _m(TZ)
        if state.get("ptype") or fmask & (_m(MONTH) | _m(DAY)) == _m(MONTH) | _m(DAY):
            return _zone_field(f, fmask, tm, state)
        return _decode_date(f, fmask, tm, state, ctx.order)
    if kind == _TIME:
        if state.get("ptype"):
            if state["ptype"] != _U_TIME:
                raise _Error(_BAD)
            state["ptype"] = None
        tmask = _decode_time(f, tm)
        if _time_overflows(tm):
            raise _Error(_OVERFLOW)
        return tmask
    if kind == _NUMBER:
        dot = f.find(".")
        if dot >= 0 and not fmask & _DATE_M:
            return _decode_date(f, fmask, tm, state, ctx.order)
        if dot > 2 or (dot < 0 and len(f) >= 6 and (not fmask & _DATE_M
                                                     or not fmask & _TIME_M)):
            return _number_field(f, fmask, tm, state)[0]
        return _decode_number(f, bool(state.get("text_month")), fmask, tm, state, ctx.order)
    return _word(f, i, fields, False, fmask, tm, state, ctx)


def decode_datetime(text: str, ctx: Context) -> tuple[str, _Tm]:
    """DecodeDateTime: (dtype, fields) of date/timestamp text; dtype 'date' (tm holds the
    fields; tm.tz the zone given, seconds west, or None) or epoch / late / early."""
    fmask, tm, state = _decode(text, ctx, _datetime_field)
    if state["dtype"] == _DATE:
        if fmask & _DATE_M != _DATE_M:
            raise _Error(_BAD)
        if tm.zone is not None:
            if fmask & _m(DTZMOD):
                raise _Error(_BAD)
            tm.tz = _local_offset(tm, tm.zone)
        elif not fmask & _m(TZ):
            if fmask & _m(DTZMOD):
                raise _Error(_BAD)
            tm.tz = None  # the session's zone: the caller's
    return state["dtype"], tm


def _time_field(i, f, kind, fields, fmask, tm, state, ctx) -> int | None:
    """One field of time / timetz text (DecodeTimeOnly's switch)."""
    if kind == _DATE:
        if i == 0 and len(fields) >= 2 and (fields[-1][1] == _DATE or fields[1][1] == _TIME):
            return _decode_date(f, fmask, tm, state, ctx.order)
        if not _isdigit(f[0]):
            zone = _named_zone(f)
            if zone is None:
                raise errors.InvalidParameterValue(f'time zone "{f}" not recognized')
            tm.zone = zone
            return _m(TZ)
        return _time_and_offset(f, fmask | _DATE_M, tm, state)
    if kind == _TIME:
        return _decode_time(f, tm)
    if kind == _NUMBER:
        dot = f.find(".")
        if dot >= 0 and i == 0 and len(fields) >= 2 and fields[-1][1] == _DATE:
            return _decode_date(f, fmask, tm, state, ctx.order)
        if dot > 2 or (dot < 0 and len(f) > 4):
            return _number_field(f, fmask | _DATE_M, tm, state)[0]
        if dot >= 0:
            raise _Error(_BAD)
        return _decode_number(f, False, fmask | _DATE_M, tm, state, ctx.order)
    return _word(f, i, fields, True, fmask, tm, state, ctx)


def decode_time_only(text: str, ctx: Context) -> _Tm:
    """DecodeTimeOnly: the fields of time / timetz text (a date may come first; tm.tz the
    zone given, seconds west, or None)."""
    fmask, tm, state = _decode(text, ctx, _time_field)
    if _time_overflows(tm):
        raise _Error(_OVERFLOW)
    if fmask & _TIME_M != _TIME_M:
        raise _Error(_BAD)
    if tm.zone is not None:
        if fmask & _m(DTZMOD):
            raise _Error(_BAD)
        fixed = _fixed_offset(tm.zone)
        if fixed is not None:
            tm.tz = -fixed
        else:
            if fmask & _DATE_M != _DATE_M:
                raise _Error(_BAD)
            tm.tz = _local_offset(tm, tm.zone)
    elif not fmask & _m(TZ):
        if fmask & _m(DTZMOD):
            raise _Error(_BAD)
        if fmask & _DATE_M and fmask & _DATE_M != _DATE_M:
            raise _Error(_BAD)
        tm.tz = None
    tm.extra["date"] = fmask & _DATE_M == _DATE_M
    return tm


# --- the input functions ----------------------------------------------------------------
_SPECIAL_VALUES = {_LATE: INFINITY, _EARLY: NEG_INFINITY}


def _valid_julian(tm: _Tm) -> bool:
    """IS_VALID_JULIAN: from 4714-11-01 BC up to 5874898-06-01."""
    return (tm.year > -4713 or (tm.year == -4713 and tm.mon >= 11)) and (
        tm.year < 5874898 or (tm.year == 5874898 and tm.mon < 6))


# Plain ISO text, which most input is: read without splitting it into fields (the same
# answer; anything out of range goes the long way, for its error).
_ISO = re.compile(r"[ \t\n\r\v\f]*([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[ T]([0-9]{2}):([0-9]{2})"
                  r"(?::([0-9]{2})(?:\.([0-9]{1,6}))?)?)?[ \t\n\r\v\f]*")


def _iso_fields(text: str) -> _Tm | None:
    m = _ISO.fullmatch(text)
    if m is None:
        return None
    y, mo, d, h, mi, sec, frac = m.groups()
    tm = _Tm(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(sec or 0),
             int(frac.ljust(6, "0")) if frac else 0)
    if tm.year < 1 or not 1 <= tm.mon <= 12 or not 1 <= tm.mday <= _DAYS_IN[_leap(tm.year)][
            tm.mon - 1] or tm.hour > 23 or tm.min > 59 or tm.sec > 59:
        return None
    return tm


def _dated(text: str, ctx: Context | None, name: str, with_zone: bool = False):
    """(epoch, +/-infinity or None, the fields, their day since 1970) of date /
    timestamp text; a timestamptz without a zone is read in ctx.zone."""
    ctx = ctx or Context()
    tm = _iso_fields(text)
    if tm is not None:
        if with_zone:
            tm.tz = 0 if ctx.zone is None or ctx.zone.is_utc else _local_offset(tm, ctx.zone)
        return None, tm, date2j(tm.year, tm.mon, tm.mday) - _UNIX_EPOCH_JDATE
    try:
        dtype, tm = decode_datetime(text, ctx)
        if dtype == _DATE and with_zone and tm.tz is None:
            tm.tz = 0 if ctx.zone is None or ctx.zone.is_utc else _local_offset(tm, ctx.zone)
    except _Error as e:
        _raise(e.code, text, name)
    if dtype != _DATE:
        return _SPECIAL_VALUES.get(dtype, 0), tm, 0
    if not _valid_julian(tm):
        raise errors.QueryError(f'{name.split(" ")[0]} out of range: "{text}"', "22008")
    return None, tm, date2j(tm.year, tm.mon, tm.mday) - _UNIX_EPOCH_JDATE


def date_in(text: str, ctx: Context | None = None) -> int | Infinite:
    """date_in: days since 1970-01-01, or +/-infinity."""
    special, _, days = _dated(text, ctx, "date")
    if special is not None:
        return special
    if not -_UNIX_EPOCH_JDATE <= days < _DATE_END:
        raise errors.QueryError(f'date out of range: "{text}"', "22008")
    return days


def timestamp_in(text: str, with_zone: bool, ctx: Context | None = None) -> int | Infinite:
    """timestamp_in / timestamptz_in: microseconds since 1970-01-01 00:00 (a timestamptz's
    in UTC: text without a zone is a wall clock in ctx.zone), or +/-infinity."""
    name = "timestamp with time zone" if with_zone else "timestamp"
    special, tm, days = _dated(text, ctx, name, with_zone)
    if special is not None:
        return special
    us = days * USECS_PER_DAY + ((tm.hour * 60 + tm.min) * 60 + tm.sec) * 1_000_000 + tm.fsec
    if with_zone:
        us += tm.tz * 1_000_000
    if not _TS_MIN <= us < _TS_END:
        raise errors.QueryError(f'timestamp out of range: "{text}"', "22008")
    if us >= _INT64_MAX:
        raise errors.FeatureNotSupported(
            "timestamps after 294246-12-31 (raympp holds microseconds since 1970 in 64 bits)")
    return us


def has_zone(text: str, ctx: Context | None = None) -> bool:
    """Whether date/time text names its own zone (an offset, abbreviation or zone name;
    'now', 'epoch' and the infinities are instants too)."""
    try:
        dtype, tm = decode_datetime(text, ctx or Context())
    except _Error:
        return False
    return dtype != _DATE or tm.tz is not None


def time_in(text: str, ctx: Context | None = None) -> int:
    """time_in: microseconds since midnight (a date or zone in the text is read and
    ignored); 24:00:00 is 0A000, raympp's times end before it."""
    try:
        tm = decode_time_only(text, ctx or Context())
    except _Error as e:
        _raise(e.code, text, "time")
    us = ((tm.hour * 60 + tm.min) * 60 + tm.sec) * 1_000_000 + tm.fsec
    if us >= USECS_PER_DAY:
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    return us


def timetz_in(text: str, ctx: Context | None = None) -> tuple[int, int]:
    """timetz_in: (microseconds since local midnight, zone in seconds west); text without
    a zone is in ctx.zone (at the statement's date for a zone with daylight saving)."""
    ctx = ctx or Context()
    try:
        tm = decode_time_only(text, ctx)
        if tm.tz is None:
            if ctx.zone is None or ctx.zone.is_utc:
                tm.tz = 0
            elif ctx.zone.fixed is not None:
                tm.tz = -ctx.zone.fixed
            else:
                if not tm.extra["date"]:
                    local, _ = ctx.current()
                    tm.year, tm.mon, tm.mday = local.year, local.month, local.day
                tm.tz = _local_offset(tm, ctx.zone)
    except _Error as e:
        _raise(e.code, text, "time with time zone")
    us = ((tm.hour * 60 + tm.min) * 60 + tm.sec) * 1_000_000 + tm.fsec
    if us >= USECS_PER_DAY:
        raise errors.FeatureNotSupported("time 24:00:00 is not supported")
    return us, tm.tz
