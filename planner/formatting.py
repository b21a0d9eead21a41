"""PostgreSQL's formatting templates: parsing them, and to_char of dates, times and intervals.

A template is parsed once into nodes as PostgreSQL's formatting.c parses it: keywords are
matched longest first at each position (`HH24` before `HH`), an `FM` or `TM` prefix and a
`TH`, `th` or `SP` suffix attach to the keyword they touch, double-quoted text is copied
(a backslash quoting the next character) and anything else is a literal character.

Dates and times (`dch_pieces`): the nodes become *pieces*, each a literal or one field of
the value printed one way (zero-padded to a width, a name from a table, ...). The pieces
are interpreted here over one value (`format_datetime`, constant folding) and by
segment/kernels/expr_format.py over Arrow arrays, both computing the fields with the same
formulas (`derived_field`), written against a small set of integer operations (`Ops`) that
Python ints and numpy arrays both provide.

Number templates are planner/number_format.py's; planner/format_input.py and
planner/number_input.py read text with the templates (to_timestamp, to_date, to_number).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from planner import errors

# --- template parsing ------------------------------------------------------------------------
# (name, id, is_digit): PostgreSQL's DCH_keywords in their order (longest first per letter);
# lower-case spellings print like their upper-case keyword unless their case shows.
DCH_KEYWORDS = (
    ("A.D.", "A.D.", False), ("A.M.", "A.M.", False), ("AD", "AD", False), ("AM", "AM", False),
    ("B.C.", "A.D.", False), ("BC", "AD", False), ("CC", "CC", True), ("DAY", "DAY", False),
    ("DDD", "DDD", True), ("DD", "DD", True), ("DY", "DY", False), ("Day", "Day", False),
    ("Dy", "Dy", False), ("D", "D", True), ("FF1", "FF1", True), ("FF2", "FF2", True),
    ("FF3", "FF3", True), ("FF4", "FF4", True), ("FF5", "FF5", True), ("FF6", "FF6", True),
    ("FX", "FX", False), ("HH24", "HH24", True), ("HH12", "HH12", True), ("HH", "HH", True),
    ("IDDD", "IDDD", True), ("ID", "ID", True), ("IW", "IW", True), ("IYYY", "IYYY", True),
    ("IYY", "IYY", True), ("IY", "IY", True), ("I", "I", True), ("J", "J", True),
    ("MI", "MI", True), ("MM", "MM", True), ("MONTH", "MONTH", False), ("MON", "MON", False),
    ("MS", "MS", True), ("Month", "Month", False), ("Mon", "Mon", False), ("OF", "OF", False),
    ("P.M.", "A.M.", False), ("PM", "AM", False), ("Q", "Q", True), ("RM", "RM", False),
    ("SSSSS", "SSSS", True), ("SSSS", "SSSS", True), ("SS", "SS", True), ("TZH", "TZH", False),
    ("TZM", "TZM", True), ("TZ", "TZ", False), ("US", "US", True), ("WW", "WW", True),
    ("W", "W", True), ("Y,YYY", "Y,YYY", True), ("YYYY", "YYYY", True), ("YYY", "YYY", True),
    ("YY", "YY", True), ("Y", "Y", True),
    ("a.d.", "a.d.", False), ("a.m.", "a.m.", False), ("ad", "ad", False), ("am", "am", False),
    ("b.c.", "a.d.", False), ("bc", "ad", False), ("cc", "CC", True), ("day", "day", False),
    ("ddd", "DDD", True), ("dd", "DD", True), ("dy", "dy", False), ("d", "D", True),
    ("ff1", "FF1", True), ("ff2", "FF2", True), ("ff3", "FF3", True), ("ff4", "FF4", True),
    ("ff5", "FF5", True), ("ff6", "FF6", True), ("fx", "FX", False), ("hh24", "HH24", True),
    ("hh12", "HH12", True), ("hh", "HH", True), ("iddd", "IDDD", True), ("id", "ID", True),
    ("iw", "IW", True), ("iyyy", "IYYY", True), ("iyy", "IYY", True), ("iy", "IY", True),
    ("i", "I", True), ("j", "J", True), ("mi", "MI", True), ("mm", "MM", True),
    ("month", "month", False), ("mon", "mon", False), ("ms", "MS", True), ("of", "OF", False),
    ("p.m.", "a.m.", False), ("pm", "am", False), ("q", "Q", True), ("rm", "rm", False),
    ("sssss", "SSSS", True), ("ssss", "SSSS", True), ("ss", "SS", True), ("tzh", "TZH", False),
    ("tzm", "TZM", True), ("tz", "tz", False), ("us", "US", True), ("ww", "WW", True),
    ("w", "W", True), ("y,yyy", "Y,YYY", True), ("yyyy", "YYYY", True), ("yyy", "YYY", True),
    ("yy", "YY", True), ("y", "Y", True),
)
_PREFIXES = (("FM", "FM"), ("fm", "FM"), ("TM", "TM"), ("tm", "TM"))
_POSTFIXES = (("TH", "TH"), ("th", "th"), ("SP", "SP"))


@dataclass(frozen=True, slots=True)
class Node:
    """A keyword (`key` its id, `name` as PostgreSQL names it in errors, `suffix` the set
    of FM/TM/TH/th/SP) or one literal character (`key` None; `kind` 'char', 'space' or
    'separator', which only reading text distinguishes)."""

    key: str | None
    text: str                      # the keyword's spelling, or the character
    suffix: frozenset = frozenset()
    is_digit: bool = False
    kind: str = "action"


def keyword_index(table) -> dict:
    """Keywords by their first letter, in table order (longest first)."""
    index: dict[str, list] = {}
    for entry in table:
        index.setdefault(entry[0][0], []).append(entry)
    return index


_DCH_INDEX = keyword_index(DCH_KEYWORDS)


def is_separator(c: str) -> bool:
    """ASCII punctuation: what to_timestamp lets stand for any separator."""
    return 0x20 < ord(c) < 0x7F and not c.isalnum()


def parse_nodes(fmt: str, index: dict, datetime: bool) -> list[Node]:
    """The nodes of a template: keywords of `index` and literal characters; prefixes and
    suffixes, and the kinds of literal characters, only for date/time templates."""
    nodes, i, n = [], 0, len(fmt)
    while i < n:
        suffix = set()
        if datetime:
            for spelling, sid in _PREFIXES:
                if fmt.startswith(spelling, i):
                    suffix.add(sid)
                    i += 2
                    break
        key = None
        if i < n:
            key = next((k for k in index.get(fmt[i], ()) if fmt.startswith(k[0], i)), None)
        if key is not None:
            i += len(key[0])
            if datetime and i < n:
                for spelling, sid in _POSTFIXES:
                    if fmt.startswith(spelling, i):
                        suffix.add(sid)
                        i += 2
                        break
            nodes.append(Node(key[1], key[0], frozenset(suffix),
                              key[2] if datetime else False))
        elif i < n:
            if fmt[i] == '"':  # quoted text; a backslash quotes the next character
                i += 1
                while i < n and fmt[i] != '"':
                    if fmt[i] == "\\" and i + 1 < n:
                        i += 1
                    nodes.append(Node(None, fmt[i], kind="char"))
                    i += 1
                i += 1
                continue
            if fmt[i] == "\\" and i + 1 < n and fmt[i + 1] == '"':
                i += 1
            c = fmt[i]
            kind = "separator" if datetime and is_separator(c) else (
                "space" if c in " \t\n\r\v\f" else "char")
            nodes.append(Node(None, c, kind=kind))
            i += 1
    return nodes


@functools.lru_cache(maxsize=256)
def parse_datetime_template(fmt: str) -> tuple[Node, ...]:
    """The nodes of a date/time template (to_char, to_timestamp, to_date)."""
    return tuple(parse_nodes(fmt, _DCH_INDEX, True))


# --- date/time output --------------------------------------------------------------------------
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
ROMAN_MONTHS = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
_INVALID_FOR_INTERVAL = frozenset({
    "A.D.", "AD", "a.d.", "ad", "MONTH", "Month", "month", "MON", "Mon", "mon", "DAY", "Day",
    "day", "DY", "Dy", "dy", "D", "ID", "TZ", "tz", "TZH", "TZM", "OF"})


class Ops:
    """Integer operations with C's truncating division, over Python ints (this class) or
    numpy arrays (segment/kernels/expr_format.py's subclass)."""

    @staticmethod
    def where(cond, a, b):
        return a if cond else b

    @staticmethod
    def cdiv(a, b: int):
        q = abs(a) // b
        return q if a >= 0 else -q

    def cmod(self, a, b: int):
        return a - b * self.cdiv(a, b)


def derived_field(name: str, f: dict, ops: Ops):
    """Field `name` of a value whose base fields are `f` (year as PostgreSQL keeps it,
    0 = 1 BC; mon, mday, hour, min, sec, fsec, yday; wday 0 = Sunday, isoyear, isoweek,
    isodow and j for dates; `interval` says whether it is an interval)."""
    w, cdiv, cmod = ops.where, ops.cdiv, ops.cmod
    y = f["year"]
    if name == "yadj":  # ADJUST_YEAR: BC years count from 1 backwards
        return y if f["interval"] else w(y <= 0, 1 - y, y)
    if f["interval"] and name in ("j", "isoyear", "isoweek", "iddd"):
        return _interval_iso(name, f, ops)
    if name == "iyadj":
        iy = derived_field("isoyear", f, ops)
        return iy if f["interval"] else w(iy <= 0, 1 - iy, iy)
    if name == "hour12":
        h = cmod(f["hour"], 12)
        return w(h == 0, 12, h)
    if name.startswith("ff"):
        return cdiv(f["fsec"], 10 ** (6 - int(name[2:])))
    if name == "ssss":
        return f["hour"] * 3600 + f["min"] * 60 + f["sec"]
    if name == "d":
        return f["wday"] + 1
    if name == "id":
        return w(f["wday"] == 0, 7, f["wday"])
    if name == "ww":
        return cdiv(f["yday"] - 1, 7) + 1
    if name == "w":
        return cdiv(f["mday"] - 1, 7) + 1
    if name == "q":
        return cdiv(f["mon"] - 1, 3) + 1
    if name == "iddd":
        return (f["isoweek"] - 1) * 7 + f["isodow"]
    if name == "cc":
        if f["interval"]:
            return cdiv(y, 100)
        return w(y > 0, cdiv(y - 1, 100) + 1, cdiv(y, 100) - 1)
    if name.startswith("mod"):  # mod<k><field>: the field modulo 10^k, C's remainder
        k = int(name[3])
        return cmod(derived_field(name[4:], f, ops), 10 ** k)
    if name == "pm":
        return cmod(f["hour"], 24) >= 12
    if name == "bc":
        return y <= 0
    return f[name]


# --- an interval's "date" fields, as PostgreSQL computes them from its parts -------------------
def _date2j(y, m, d, ops: Ops):
    """PostgreSQL's date2j with C's division (an interval's parts may be negative)."""
    late = m > 2
    m2, y2 = ops.where(late, m + 1, m + 13), ops.where(late, y + 4800, y + 4799)
    century = ops.cdiv(y2, 100)
    return (y2 * 365 - 32167 + ops.cdiv(y2, 4) - century + ops.cdiv(century, 4)
            + ops.cdiv(7834 * m2, 256) + d)


def _week1(year, ops: Ops):
    """The Julian day of the Monday starting ISO week 1 of `year` (isoweek2j(year, 1))."""
    day4 = _date2j(year, 1, 4, ops)
    r = ops.cmod(day4, 7)  # j2day(day4 - 1): 0 is Sunday
    return day4 - ops.where(r < 0, r + 7, r)


def _interval_iso(name: str, f: dict, ops: Ops):
    """J, ISO year, ISO week and ISO day of year of an interval's (year, month, day), by
    PostgreSQL's date2j / date2isoyear / date2isoweek / date2isoyearday, their one-year
    corrections included."""
    y, dayn = f["year"], _date2j(f["year"], f["mon"], f["mday"], ops)
    if name == "j":
        return dayn
    start = _week1(y, ops)
    before = dayn < start
    start1 = ops.where(before, _week1(y - 1, ops), start)
    week = ops.cdiv(dayn - start1, 7) + 1
    if name == "isoweek":
        nxt = _week1(y + 1, ops)
        later = (week >= 52) & (dayn >= nxt)
        return ops.where(later, ops.cdiv(dayn - nxt, 7) + 1, week)
    y1 = ops.where(before, y - 1, y)
    isoyear = ops.where((week >= 52) & (dayn >= _week1(y1 + 1, ops)), y1 + 1, y1)
    if name == "isoyear":
        return isoyear
    return dayn - _week1(isoyear, ops) + 1  # iddd


@dataclass(frozen=True, slots=True)
class Piece:
    """One part of a to_char result. kind:
    'lit'   text
    'int'   field printed as C's "%0*d" with `width` (`neg_width` when `sign_field` < 0)
    'sep'   the thousands of field yadj as "%d,%03d" (Y,YYY)
    'name'  table[field - offset] left-justified to `width` (month and day names, RM)
    'q'     the quarter, nothing for an interval without months
    'pick'  table[1] where the boolean field holds, else table[0] (AM/PM, AD/BC)
    'rm'    an interval's month in Roman numerals (`table` upper or lower case)
    `th` is 'TH' or 'th' to append an ordinal suffix to a number."""

    kind: str
    text: str = ""
    field: str = ""
    width: int = 0
    neg_width: int = 0
    sign_field: str = ""
    th: str = ""
    table: tuple = ()
    offset: int = 0


def _th(node: Node) -> str:
    return "TH" if "TH" in node.suffix else ("th" if "th" in node.suffix else "")


def _int(fld: str, width: int, node: Node, sign_field: str = "", neg_extra: int = 1) -> Piece:
    """A number printed "%0*d" (FM: unpadded); a negative value gets neg_extra more width."""
    fm = "FM" in node.suffix
    return Piece("int", field=fld, width=0 if fm else width,
                 neg_width=0 if fm else width + neg_extra, sign_field=sign_field or fld,
                 th=_th(node))


# keyword: (field, width, whether a negative value (of an interval) widens it by its sign)
_NUMBERS = {
    "HH24": ("hour", 2, True), "MI": ("min", 2, True), "SS": ("sec", 2, True),
    "MM": ("mon", 2, True), "DD": ("mday", 2, False), "DDD": ("yday", 3, False),
    "IDDD": ("iddd", 3, False), "D": ("d", 0, False), "ID": ("id", 0, False),
    "WW": ("ww", 2, False), "IW": ("isoweek", 2, False), "W": ("w", 0, False),
    "J": ("j", 0, False), "SSSS": ("ssss", 0, False), "Y": ("mod1yadj", 1, False),
    "I": ("mod1iyadj", 1, False), "CC": ("cc", 2, True), "YYYY": ("yadj", 4, True),
}
# keyword: (its other spelling, the boolean field choosing it)
_PICKS = {"AM": ("PM", "pm"), "am": ("pm", "pm"), "A.M.": ("P.M.", "pm"),
          "a.m.": ("p.m.", "pm"), "AD": ("BC", "bc"), "ad": ("bc", "bc"),
          "A.D.": ("B.C.", "bc"), "a.d.": ("b.c.", "bc")}


def _case(names, key: str) -> tuple:
    if key.isupper():
        return tuple(n.upper() for n in names)
    if key.islower():
        return tuple(n.lower() for n in names)
    return tuple(names)


@functools.lru_cache(maxsize=256)
def dch_pieces(fmt: str, is_interval: bool, tz_name: str | None) -> tuple[Piece, ...]:
    """The pieces of to_char(value, fmt) for a timestamp (tz_name: the zone abbreviation
    of a timestamptz, None for a timestamp) or an interval, with PostgreSQL's refusals."""
    out: list[Piece] = []
    for node in parse_datetime_template(fmt):
        if node.key is None:
            out.append(Piece("lit", node.text))
            continue
        k = node.key
        if is_interval and k in _INVALID_FOR_INTERVAL:
            raise errors.QueryError("invalid format specification for an interval value",
                                    "22007", hint="Intervals are not tied to specific "
                                    "calendar dates.")
        fm = "FM" in node.suffix
        pad9 = 0 if fm or "TM" in node.suffix else 9
        if k in ("HH", "HH12"):
            out.append(_int("hour12", 2, node, sign_field="hour"))
        elif k in _NUMBERS:
            fld, width, signed = _NUMBERS[k]
            out.append(_int(fld, width, node, neg_extra=1 if signed else 0))
        elif k.startswith("FF") or k in ("MS", "US"):  # fixed width, even with FM
            digits = {"MS": 3, "US": 6}.get(k) or int(k[2])
            out.append(Piece("int", field=f"ff{digits}", width=digits, neg_width=digits,
                             sign_field=f"ff{digits}", th=_th(node)))
        elif k in ("IYYY", "YYY", "IYY", "YY", "IY"):  # the (last) digits; the sign of
            base = "yadj" if k[0] == "Y" else "iyadj"  # the calendar year widens them
            digits = {"IYYY": 4, "YYY": 3, "IYY": 3}.get(k, 2)
            fld = base if k == "IYYY" else f"mod{digits}{base}"
            out.append(_int(fld, digits, node, sign_field="yadj"))
        elif k == "Y,YYY":
            out.append(Piece("sep", field="yadj", th=_th(node)))
        elif k == "Q":
            out.append(Piece("q", field="q", th=_th(node)))
        elif k in _PICKS:
            other, fld = _PICKS[k]
            out.append(Piece("pick", field=fld, table=(k, other)))
        elif k in ("MONTH", "Month", "month"):
            out.append(Piece("name", field="mon", width=pad9, table=_case(MONTHS, k), offset=1))
        elif k in ("MON", "Mon", "mon"):
            out.append(Piece("name", field="mon", table=_case([m[:3] for m in MONTHS], k),
                             offset=1))
        elif k in ("DAY", "Day", "day"):
            out.append(Piece("name", field="wday", width=pad9, table=_case(DAYS, k)))
        elif k in ("DY", "Dy", "dy"):
            out.append(Piece("name", field="wday", table=_case([d[:3] for d in DAYS], k)))
        elif k in ("RM", "rm"):
            table = _case(ROMAN_MONTHS, k)
            if is_interval:
                out.append(Piece("rm", width=0 if fm else 4, table=table))
            else:
                out.append(Piece("name", field="mon", width=0 if fm else 4, table=table,
                                 offset=1))
        elif k in ("TZ", "tz"):
            name = tz_name or ""
            out.append(Piece("lit", name.lower() if k == "tz" else name))
        elif k == "TZH":
            out.append(Piece("lit", "+00"))  # the session zone is UTC
        elif k == "TZM":
            out.append(Piece("lit", "00"))
        elif k == "OF":
            out.append(Piece("lit", "+0" if fm else "+00"))
        # FX does nothing in to_char
    return tuple(out)


def ordinal(value: int, upper: bool) -> str:
    """The suffix PostgreSQL's get_th gives the printed number `value`."""
    v = abs(value)
    last, tens = v % 10, (v // 10) % 10
    suffix = "th" if tens == 1 or last not in (1, 2, 3) else ("st", "nd", "rd")[last - 1]
    return suffix.upper() if upper else suffix


def datetime_fields(v, is_interval: bool) -> dict:
    """The base fields of one value: a datetime (date or timestamp) or an Interval."""
    if is_interval:
        months, days, micros = v.months, v.days, v.micros
        ops = Ops()
        year, mon = ops.cdiv(months, 12), ops.cmod(months, 12)
        hour = ops.cdiv(micros, 3_600_000_000)
        rest = micros - hour * 3_600_000_000
        minute = ops.cdiv(rest, 60_000_000)
        rest -= minute * 60_000_000
        sec = ops.cdiv(rest, 1_000_000)
        return {"interval": True, "year": year, "mon": mon, "mday": days, "hour": hour,
                "min": minute, "sec": sec, "fsec": rest - sec * 1_000_000,
                "yday": (year * 12 + mon) * 30 + days}
    iso = v.isocalendar()
    wday = (v.weekday() + 1) % 7
    return {"interval": False, "year": v.year, "mon": v.month, "mday": v.day,
            "hour": getattr(v, "hour", 0), "min": getattr(v, "minute", 0),
            "sec": getattr(v, "second", 0), "fsec": getattr(v, "microsecond", 0),
            "yday": v.timetuple().tm_yday, "wday": wday, "isoyear": iso[0],
            "isoweek": iso[1], "isodow": iso[2], "j": v.toordinal() + 1721425}


def format_datetime(pieces: tuple[Piece, ...], f: dict) -> str:
    """One value's to_char text from its pieces and base fields."""
    ops = Ops()
    out = []
    for p in pieces:
        if p.kind == "lit":
            out.append(p.text)
            continue
        if p.kind == "rm":
            out.append(_interval_roman(f["mon"], f["year"], p.table).ljust(p.width)
                       if f["mon"] or f["year"] else "")
            continue
        value = derived_field(p.field, f, ops)
        if p.kind == "pick":
            out.append(p.table[1] if value else p.table[0])
            continue
        if p.kind == "name":
            out.append(p.table[value - p.offset].ljust(p.width))
            continue
        if p.kind == "q" and not f["mon"]:
            continue  # an interval without months has no quarter
        if p.kind == "sep":
            i = ops.cdiv(value, 1000)
            s = "%d,%03d" % (i, value - i * 1000)
        elif p.kind == "q":
            s = "%d" % value
        else:
            sign = derived_field(p.sign_field, f, ops)
            s = "%0*d" % (p.width if sign >= 0 else p.neg_width, value)
        if p.th:
            s += ordinal(int(s[-1]) + 10 * (len(s) > 1 and s[-2] == "1"), p.th == "TH")
        out.append(s)
    return "".join(out)


def _interval_roman(mon: int, year: int, table: tuple) -> str:
    """RM of an interval: its month part, counted back from December when negative."""
    if mon == 0:
        return table[11] if year >= 0 else table[0]
    return table[mon - 1] if mon > 0 else table[12 + mon]
