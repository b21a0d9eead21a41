"""Session settings (GUCs): a typed registry and one session's values, SET / SHOW / RESET.

Every setting raympp knows is a `Setting` in `REGISTRY`: its kind (bool, integer with an
optional unit, enum, string), default, bounds, whether it is reported to the client in
ParameterStatus (and under which name), and whether it is read-only. Values are parsed and
shown as PostgreSQL 15's guc.c does: integers take units ("1s", "500ms", "64MB"; unit names
are case-sensitive, a bare number is in the setting's base unit), are rounded to the base
unit and range-checked; bools take on/off/true/false/yes/no/1/0 and unique prefixes; SHOW
prints an integer in the largest unit that divides it ("1s", "1500ms", "64MB", "0").

Settings whose other values raympp does not implement accept only the values it does and
refuse the rest with 0A000 rather than accepting and ignoring them: TimeZone (no POSIX
rules of summer time),
DateStyle (ISO output; any field order of input), isolation levels (statements see the data committed when they start,
i.e. read committed; PostgreSQL runs read uncommitted as read committed too),
IntervalStyle, bytea_output, standard_conforming_strings, extra_float_digits <= 0 (floats
are always sent in their shortest exact form, PostgreSQL's output for values >= 1).

search_path takes any list of schema names, as in PostgreSQL (names of schemas that do not
exist are skipped when names are resolved: coordinator/catalog.py `SessionCatalog`).
Read-only transactions are enforced by the session (25006 for writes); a transaction block
starts with the default_transaction_* values of its start (`start_transaction`), and
switching it to read-write after its first statement fails with 25001, as in PostgreSQL.

A name with a dot (`myapp.x`) is a custom placeholder, as in PostgreSQL: any string value,
not listed by SHOW ALL. The `raympp.` prefix is reserved for raympp's own settings.

Settings and transactions, as PostgreSQL 15's guc.c: SET LOCAL (and SET TRANSACTION,
transaction_isolation ...) lasts until the end of the transaction block: the session
passes a callable giving its current transaction, and a local value is dropped as soon as
that transaction is no longer the current one (`end_transaction` drops it at once).
Outside a transaction block SET LOCAL has no effect (PostgreSQL warns). A SET LOCAL that
would change a reported setting is refused (0A000): the revert at the end of the
transaction would not reach the client as ParameterStatus. A session-level SET (RESET,
set_config(..., false), SET SESSION CHARACTERISTICS) inside a block lasts beyond it only
if the block commits: `start_transaction` keeps the values of the block's start and
`end_transaction(committed=False)` (ROLLBACK, a failed block's COMMIT, a COMMIT that
failed) puts them back; a savepoint keeps the values of its moment the same way
(`snapshot`/`restore`, used by ROLLBACK TO). A placeholder (`myapp.x`) first set inside
a rolled-back block stays defined, with the empty value, as in PostgreSQL.

work_mem is 64MB by default, not PostgreSQL's 4MB: in raympp it is one budget per segment
for a query's operators (a sort, a hash table) before they spill, and segments run few
queries at a time over large inputs, where PostgreSQL grants 4MB to every sort and hash
node of every backend.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Callable

from planner import errors
from planner.bind_expr import SERVER_VERSION
from planner import temporal, time_zones
from planner.catalog_names import quote_ident

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
CUSTOM_PREFIX_RESERVED = "raympp"


class Kind(enum.Enum):
    BOOL = "bool"
    INTEGER = "integer"
    ENUM = "enum"
    STRING = "string"


# PostgreSQL's unit conversion tables (guc.c), greatest unit first: the size of each unit in
# the smallest one (microseconds, bytes).
_TIME_UNITS = (("d", 86_400_000_000), ("h", 3_600_000_000), ("min", 60_000_000),
               ("s", 1_000_000), ("ms", 1_000), ("us", 1))
_MEMORY_UNITS = (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10), ("B", 1))
_TIME_HINT = 'Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".'
_MEMORY_HINT = 'Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".'
_MAX_UNIT_LEN = 3


def _unit_table(unit: str) -> tuple[tuple[str, int], ...]:
    return _TIME_UNITS if unit in dict(_TIME_UNITS) else _MEMORY_UNITS


def _invalid(name: str, value: str, hint: str | None = None, detail: str | None = None):
    return errors.InvalidParameterValue(f'invalid value for parameter "{name}": "{value}"',
                                        detail=detail, hint=hint)


def _unsupported(message: str, hint: str | None = None):
    return errors.FeatureNotSupported(message, hint=hint)


@dataclass(frozen=True)
class Setting:
    """One configuration parameter.

    `name` is its canonical spelling (SHOW ALL, messages: "DateStyle"); lookups ignore case.
    An integer's `unit` is its base unit (ms, s, min for time; kB, MB for memory): a value
    without a unit is in it, SHOW converts back. `check(text, settings)` validates and
    canonicalises a string (or restricts an enum/bool/integer to what raympp implements),
    raising 22023 for invalid and 0A000 for valid but unimplemented values.
    """

    name: str
    kind: Kind
    default: str
    description: str
    unit: str | None = None
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()
    hidden_choices: tuple[tuple[str, str], ...] = ()  # accepted spellings -> choice
    reported: str | None = None  # the ParameterStatus name, when reported
    read_only: bool = False
    check: Callable[[object, "Settings"], object] | None = None
    list_input: bool = False  # SET x = a, b gives "a, b" (else: one argument only)
    list_quote: bool = False  # ... with each element quoted as an identifier (search_path)
    reset_all: bool = True  # False: RESET ALL and DISCARD ALL leave it alone
    show_all: bool = True
    transactional: bool = False  # a SET lasts until the end of the transaction block

    @property
    def key(self) -> str:
        return self.name.lower()

    # --- parsing -------------------------------------------------------------------------
    def parse(self, text: str, given: str | None = None, settings: "Settings | None" = None,
              check: bool = True):
        """The typed value of `text` (bool, int in the base unit, or str), validated."""
        given = given or self.key
        if self.kind is Kind.BOOL:
            value = parse_bool(text)
            if value is None:
                raise errors.InvalidParameterValue(
                    f'parameter "{given}" requires a Boolean value')
        elif self.kind is Kind.INTEGER:
            value, hint = parse_int(text, self.unit)
            if value is None:
                raise _invalid(given, text, hint)
            if not self.min <= value <= self.max:
                unit = f" {self.unit}" if self.unit else ""
                raise errors.InvalidParameterValue(
                    f'{value}{unit} is outside the valid range for parameter "{given}" '
                    f"({self.min} .. {self.max})")
        elif self.kind is Kind.ENUM:
            lowered = text.lower()
            value = next((c for c in self.choices if c == lowered), None)
            if value is None:
                value = dict(self.hidden_choices).get(lowered)
            if value is None:
                raise _invalid(given, text, "Available values: " + ", ".join(self.choices) + ".")
        else:
            value = text
        if check and self.check is not None:
            value = self.check(value, settings)
        return value

    def format(self, value) -> str:
        """The value as SHOW and ParameterStatus print it."""
        if self.kind is Kind.BOOL:
            return "on" if value else "off"
        if self.kind is Kind.INTEGER:
            if self.unit and value > 0:
                return format_with_unit(value, self.unit)
            return str(value)
        return str(value)


# --- PostgreSQL's value syntax (guc.c parse_bool, parse_int, convert_*_base_unit) ---------
def parse_bool(text: str) -> bool | None:
    t = text.lower()
    if not t:
        return None
    if "true".startswith(t) or "yes".startswith(t) or t == "1" or t == "on":
        return True
    if "false".startswith(t) or "no".startswith(t) or t == "0" or (
            len(t) >= 2 and "off".startswith(t)):
        return False
    return None


_STRTOL = re.compile(r"[ \t\n\r\f\v]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_STRTOD = re.compile(r"[ \t\n\r\f\v]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SPACE = " \t\n\r\f\v"


def parse_int(text: str, unit: str | None) -> tuple[int | None, str | None]:
    """PostgreSQL's parse_int: (value in the base unit, None) or (None, hint)."""
    m = _STRTOL.match(text)
    val: float | None = None
    end = 0
    if m:
        digits = m.group(2)
        base = (16 if digits[:2].lower() == "0x"
                else 8 if len(digits) > 1 and digits[0] == "0" else 10)
        n = int(digits, base) * (-1 if m.group(1) == "-" else 1)
        end = m.end()
        if abs(n) < 2**63 and text[end:end + 1] not in (".", "e", "E"):
            val = float(n)
    if val is None:
        d = _STRTOD.match(text)
        if not d:
            return None, None
        try:
            val = float(d.group(0))
        except (ValueError, OverflowError):
            return None, None
        if math.isinf(val):
            return None, None
        end = d.end()
    rest = text[end:].lstrip(_SPACE)
    if rest:
        if unit is None:
            return None, None
        table = _unit_table(unit)
        hint = _TIME_HINT if table is _TIME_UNITS else _MEMORY_HINT
        word = rest.split(None, 1)
        if len(word) > 1 or len(word[0]) > _MAX_UNIT_LEN:
            return None, hint
        sizes = dict(table)
        if word[0] not in sizes:
            return None, hint
        base_size = sizes[unit]
        val = val * sizes[word[0]] / base_size
        # A fractional value rounds to the next smaller unit, as PostgreSQL does.
        names = [u for u, _ in table]
        i = names.index(word[0])
        if i + 1 < len(names):
            step = table[i + 1][1] / base_size
            val = round(val / step) * step
    val = round(val)  # rint: half to even
    if val > INT_MAX or val < INT_MIN:
        return None, "Value exceeds integer range."
    return int(val), None


def format_with_unit(value: int, unit: str) -> str:
    """PostgreSQL's convert_int_from_base_unit: the greatest unit that divides the value."""
    table = _unit_table(unit)
    base_size = dict(table)[unit]
    for name, size in table:
        if size <= base_size:
            return f"{round(value * base_size / size)}{name}"
        if (value * base_size) % size == 0:
            return f"{value * base_size // size}{name}"
    raise AssertionError(unit)


def split_identifiers(text: str, separator: str = ",") -> list[str] | None:
    """PostgreSQL's SplitIdentifierString: quoted elements keep their case, others are
    folded to lower case; None for a malformed list."""
    out, pos, n = [], 0, len(text)
    while pos < n and text[pos] in _SPACE:
        pos += 1
    if pos == n:
        return []
    while True:
        if pos < n and text[pos] == '"':
            end = pos + 1
            item = []
            while True:
                q = text.find('"', end)
                if q < 0:
                    return None
                if text[q + 1:q + 2] == '"':
                    item.append(text[end:q + 1])
                    end = q + 2
                    continue
                item.append(text[end:q])
                pos = q + 1
                break
            out.append("".join(item))
        else:
            start = pos
            while pos < n and text[pos] not in (separator, '"') and text[pos] not in _SPACE:
                pos += 1
            if pos == start:
                return None
            out.append(text[start:pos].lower())
        while pos < n and text[pos] in _SPACE:
            pos += 1
        if pos == n:
            return out
        if text[pos] != separator:
            return None
        pos += 1
        while pos < n and text[pos] in _SPACE:
            pos += 1


# --- checks of settings raympp implements partly --------------------------------------------
def _fixed_zone_name(seconds_east: int) -> str:
    """PostgreSQL's name of a zone set as a number or an interval: <+05:30>-05:30."""
    iso = time_zones.offset_text(seconds_east)
    posix = ("-" if seconds_east >= 0 else "+") + time_zones.offset_text(abs(seconds_east))[1:]
    return f"<{iso}>{posix}"


def _check_timezone(value: str, settings) -> str:
    """PostgreSQL's check_timezone: INTERVAL '...', a number of hours (east of UTC), a zone
    name of the tz database, or a POSIX spec (hours west); what SHOW prints then."""
    if value[:8].lower() == "interval":
        m = re.fullmatch(r"(?is)interval\s*'([^']*)'", value)
        if not m:
            raise _invalid("TimeZone", value)
        try:
            iv = temporal.parse_interval(m.group(1))
        except errors.QueryError:
            raise _invalid("TimeZone", value) from None
        if iv.months:
            raise _invalid("TimeZone", value, detail="Cannot specify months in time zone interval.")
        if iv.days:
            raise _invalid("TimeZone", value, detail="Cannot specify days in time zone interval.")
        if iv.micros % 60_000_000:
            raise _unsupported(f"SET TIME ZONE '{value}': offsets with seconds")
        return _fixed_zone_name(iv.micros // 1_000_000)
    if _STRTOD.fullmatch(value):
        seconds = round(float(value) * 3600)
        if abs(seconds) >= 7 * 24 * 3600:
            raise _invalid("TimeZone", value)
        if seconds % 60:
            raise _unsupported(f"SET TIME ZONE '{value}': offsets with seconds")
        return _fixed_zone_name(seconds)
    zone = time_zones.zone_names().get(value.lower())
    if zone is not None:
        return zone
    try:
        posix = time_zones.posix_zone(value)
    except errors.InvalidParameterValue:
        raise _invalid("TimeZone", value) from None
    except errors.FeatureNotSupported as e:
        raise _unsupported(str(e)) from None
    if posix is not None:
        return value
    raise _invalid("TimeZone", value)


def _check_datestyle(value: str, settings) -> str:
    items = split_identifiers(value)
    if items is None:
        raise _invalid("DateStyle", value, detail="List syntax is invalid.")
    style = order = None
    for item in items:
        word = item.lower()
        if word in ("iso", "sql", "postgres", "german"):
            if style is not None and style != word:
                raise _invalid("DateStyle", value, detail='Conflicting "datestyle" specifications.')
            style = word
            if word == "german" and order is None:
                order = "dmy"
        elif word in ("ymd", "dmy", "mdy", "us", "noneuro", "noneuropean", "euro", "european"):
            new = {"us": "mdy", "noneuro": "mdy", "noneuropean": "mdy", "euro": "dmy",
                   "european": "dmy"}.get(word, word)
            if order is not None and order != new:
                raise _invalid("DateStyle", value, detail='Conflicting "datestyle" specifications.')
            order = new
        elif word == "default":
            style, order = style or "iso", order or "mdy"
        else:
            raise _invalid("DateStyle", value, detail=f'Unrecognized key word: "{item}".')
    if (style or "iso") != "iso":  # output styles other than ISO are not written
        raise _unsupported(f'DateStyle "{value}" is not supported: only ISO output',
                           "SET DateStyle TO 'ISO, MDY'")
    # the field order of input (planner/datetime_input.py); output is ISO in every order
    current = settings.show("DateStyle") if settings is not None else "ISO, MDY"
    return f"ISO, {(order or current.split(', ')[-1]).upper()}"


def _check_search_path(value: str, settings) -> str:
    """PostgreSQL's check_search_path: only the list syntax (any schema names)."""
    if split_identifiers(value) is None:
        raise _invalid("search_path", value, detail="List syntax is invalid.")
    return value


# PostgreSQL's encoding names (pg_char_to_encoding ignores case and non-alphanumerics).
_ENCODINGS = frozenset(
    "sqlascii eucjp euccn euckr euctw eucjis2004 utf8 unicode mulecode latin1 latin2 latin3 "
    "latin4 latin5 latin6 latin7 latin8 latin9 latin10 iso88591 iso88592 iso88593 iso88594 "
    "iso88599 iso885910 iso885913 iso885914 iso885915 iso885916 win1256 win1258 win866 win874 "
    "koi8 koi8r koi8u win1251 win1252 iso88595 iso88596 iso88597 iso88598 win1250 win1253 "
    "win1254 win1255 win1257 sjis big5 gbk uhc gb18030 johab shiftjis2004 mskanji shiftjis "
    "win950 win936 tcvn tcvn5712 abc vscii alt win cp866 cp874 cp932 cp936 cp949 cp950 cp1250 "
    "cp1251 cp1252 cp1253 cp1254 cp1255 cp1256 cp1257 cp1258 windows1250 windows1251 "
    "windows1252 windows1253 windows1254 windows1255 windows1256 windows1257 windows1258 "
    "windows866 windows874 windows932 windows936 windows949 windows950 unicode".split())


def _check_client_encoding(value: str, settings) -> str:
    clean = re.sub(r"[^a-z0-9]", "", value.lower())
    if clean in ("utf8", "unicode"):
        return "UTF8"
    if clean == "sqlascii":
        # No conversion: the client gets the server's UTF-8 bytes, as in PostgreSQL.
        return "SQL_ASCII"
    if clean in _ENCODINGS:
        raise _unsupported(f'client encoding "{value}" is not supported: only UTF8',
                           "SET client_encoding TO 'UTF8'")
    raise _invalid("client_encoding", value)


def _check_application_name(value: str, settings) -> str:
    # PostgreSQL 15's pg_clean_ascii: every byte outside printable ASCII becomes '?'.
    return "".join(chr(b) if 32 <= b <= 126 else "?" for b in value.encode("utf-8"))


def _check_access_method(value: str, settings) -> str:
    if value != "heap":  # PostgreSQL: 22023 for an access method that does not exist
        raise _unsupported(f'table access method "{value}" is not supported: only heap')
    return value


def _check_lc_messages(value: str, settings) -> str:
    v = value.lower()
    if v in ("", "c", "posix") or v.startswith(("c.", "en_", "en.")) or v == "en":
        return value
    raise _unsupported(f'lc_messages "{value}" is not supported: messages are in English')


def _only(value_ok, message: str, hint: str | None = None):
    def check(value, settings):
        if not value_ok(value):
            raise _unsupported(message.format(value=value), hint)
        return value
    return check


_ISOLATION = _only(lambda v: v in ("read committed", "read uncommitted"),
                   'transaction isolation level "{value}" is not supported: every statement '
                   "sees the data committed when it starts (read committed)",
                   "Use READ COMMITTED.")
def _check_transaction_read_only(value: bool, settings) -> bool:
    """PostgreSQL's check_transaction_read_only: a block may become read-only at any time,
    read-write only before its first statement."""
    if not value and settings is not None:
        block = settings._current_block()
        if block is not None and getattr(block, "queried", False) and settings.get(
                "transaction_read_only"):
            raise errors.QueryError("transaction read-write mode must be set before any query",
                                    "25001")
    return value


def _check_role(value: str, settings) -> str:
    if value.lower() == "none" or (settings is not None and value == settings.user):
        return "none" if value.lower() == "none" else value
    raise _unsupported("SET ROLE is not supported: raympp has no roles")


def _check_session_authorization(value: str, settings) -> str:
    if settings is not None and value == settings.user:
        return value
    raise _unsupported("SET SESSION AUTHORIZATION is not supported: raympp has no roles")


def _time(name, default, description, unit="ms", minimum=0, maximum=INT_MAX, **kw):
    return Setting(name, Kind.INTEGER, default, description, unit=unit, min=minimum,
                   max=maximum, **kw)


_ISOLATION_CHOICES = ("serializable", "repeatable read", "read committed", "read uncommitted")

REGISTRY: dict[str, Setting] = {s.key: s for s in (
    # --- reported to the client (ParameterStatus), as PostgreSQL 15 reports them ----------
    Setting("application_name", Kind.STRING, "",
            "Sets the application name to be reported in statistics and logs.",
            reported="application_name", check=_check_application_name),
    Setting("client_encoding", Kind.STRING, "UTF8", "Sets the client's character set encoding.",
            reported="client_encoding", check=_check_client_encoding),
    Setting("DateStyle", Kind.STRING, "ISO, MDY",
            "Sets the display format for date and time values.", reported="DateStyle",
            check=_check_datestyle, list_input=True),
    Setting("default_transaction_read_only", Kind.BOOL, "off",
            "Sets the default read-only status of new transactions.",
            reported="default_transaction_read_only"),
    Setting("in_hot_standby", Kind.BOOL, "off", "Shows whether hot standby is currently active.",
            reported="in_hot_standby", read_only=True),
    Setting("integer_datetimes", Kind.BOOL, "on", "Shows whether datetimes are integer based.",
            reported="integer_datetimes", read_only=True),
    Setting("IntervalStyle", Kind.ENUM, "postgres", "Sets the display format for interval values.",
            choices=("postgres", "postgres_verbose", "sql_standard", "iso_8601"),
            reported="IntervalStyle",
            check=_only(lambda v: v == "postgres",
                        'IntervalStyle "{value}" is not supported: only postgres')),
    Setting("is_superuser", Kind.BOOL, "on", "Shows whether the current user is a superuser.",
            reported="is_superuser", read_only=True, show_all=False, reset_all=False),
    Setting("server_encoding", Kind.STRING, "UTF8",
            "Shows the server (database) character set encoding.", reported="server_encoding",
            read_only=True),
    Setting("server_version", Kind.STRING, SERVER_VERSION, "Shows the server version.",
            reported="server_version", read_only=True),
    Setting("session_authorization", Kind.STRING, "", "Sets the session user name.",
            reported="session_authorization", check=_check_session_authorization,
            show_all=False, reset_all=False),
    Setting("standard_conforming_strings", Kind.BOOL, "on",
            "Causes '...' strings to treat backslashes literally.",
            reported="standard_conforming_strings",
            check=_only(lambda v: v, "standard_conforming_strings = off is not supported")),
    Setting("TimeZone", Kind.STRING, "UTC",
            "Sets the time zone for displaying and interpreting time stamps.",
            reported="TimeZone", check=_check_timezone),
    # --- timeouts and resources --------------------------------------------------------
    _time("statement_timeout", "0", "Sets the maximum allowed duration of any statement."),
    _time("lock_timeout", "0", "Sets the maximum allowed duration of any wait for a lock."),
    _time("idle_in_transaction_session_timeout", "0",
          "Sets the maximum allowed idle time between queries, when in a transaction."),
    Setting("work_mem", Kind.INTEGER, "64MB",
            "Sets the maximum memory to be used for query workspaces (per segment).",
            unit="kB", min=64, max=INT_MAX),
    # PostgreSQL's jit: here the numba paths of the operators (segment/operators/
    # agg_table.py); off runs the general Arrow operators, which answer alike.
    Setting("jit", Kind.BOOL, "on", "Allow JIT compilation."),
    # PostgreSQL's cost threshold; raympp's cost here is rows: an operator compiles once
    # a batch of this many rows reaches it (-1: never), so small queries never compile.
    Setting("jit_above_cost", Kind.INTEGER, "100000",
            "Perform JIT compilation if query is more expensive.", min=-1, max=INT_MAX),
    # A recursive CTE is computed whole before its statement (planner/bind_recursive.py):
    # a recursion that never ends stops here with 54000 instead of filling memory.
    Setting("raympp.max_recursive_rows", Kind.INTEGER, "10000000",
            "Sets the most rows a recursive query may produce (0: no limit).",
            min=0, max=INT_MAX),
    _time("raympp.segment_wait_timeout", "30s",
          "Sets how long a query waits for a restarting segment before it fails."),
    # After a commit that deleted rows, the chunks it left more than half dead are
    # rewritten in the background (coordinator/compaction.py); VACUUM does it on demand.
    Setting("raympp.autocompact", Kind.BOOL, "on",
            "Compacts a table's mostly deleted chunks after a transaction deletes rows."),
    # --- statistics collected after loads (coordinator/autostats.py), as Greenplum's ---
    Setting("gp_autostats_mode", Kind.ENUM, "on_no_stats", "Sets the autostats mode.",
            choices=("none", "on_change", "on_no_stats")),
    Setting("gp_autostats_on_change_threshold", Kind.INTEGER, str(INT_MAX),
            "Threshold for number of tuples added to table by CTAS or Insert-to to trigger "
            "autostats in on_change mode. See gp_autostats_mode.", min=0, max=INT_MAX),
    # --- what drivers set and read ------------------------------------------------------
    Setting("bytea_output", Kind.ENUM, "hex", "Sets the output format for bytea.",
            choices=("escape", "hex"),
            check=_only(lambda v: v == "hex", 'bytea_output "{value}" is not supported: only hex')),
    Setting("client_min_messages", Kind.ENUM, "notice",
            "Sets the message levels that are sent to the client.",
            choices=("debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice",
                     "warning", "error"),
            hidden_choices=(("debug", "debug2"), ("info", "info"))),
    Setting("default_table_access_method", Kind.STRING, "heap",
            "Sets the default table access method for new tables.",
            check=_check_access_method),
    Setting("default_transaction_deferrable", Kind.BOOL, "off",
            "Sets the default deferrable status of new transactions."),
    Setting("default_transaction_isolation", Kind.ENUM, "read committed",
            "Sets the transaction isolation level of each new transaction.",
            choices=_ISOLATION_CHOICES, check=_ISOLATION),
    Setting("extra_float_digits", Kind.INTEGER, "1",
            "Sets the number of digits displayed for floating-point values.", min=-15, max=3,
            check=_only(lambda v: v > 0, "extra_float_digits = {value} is not supported: "
                        "floats are always sent in their shortest exact form",
                        "Use a value from 1 to 3.")),
    Setting("lc_messages", Kind.STRING, "C", "Sets the language in which messages are displayed.",
            check=_check_lc_messages),
    Setting("max_identifier_length", Kind.INTEGER, "63", "Shows the maximum identifier length.",
            min=63, max=63, read_only=True),
    # pgjdbc's getImportedKeys/getExportedKeys read it from pg_settings before anything else.
    Setting("max_index_keys", Kind.INTEGER, "32", "Shows the maximum number of index keys.",
            min=32, max=32, read_only=True),
    Setting("role", Kind.STRING, "none", "Sets the current role.", check=_check_role,
            show_all=False),
    Setting("search_path", Kind.STRING, '"$user", public',
            "Sets the schema search order for names that are not schema-qualified.",
            check=_check_search_path, list_input=True, list_quote=True),
    Setting("server_version_num", Kind.INTEGER,
            str(int(SERVER_VERSION.split(".")[0]) * 10000 + int(SERVER_VERSION.split(".")[1])),
            "Shows the server version as an integer.", min=0, max=INT_MAX, read_only=True),
    Setting("transaction_deferrable", Kind.BOOL, "off",
            "Whether to defer a read-only serializable transaction until it can be executed "
            "with no possible serialization failures.", transactional=True, reset_all=False),
    Setting("transaction_isolation", Kind.ENUM, "read committed",
            "Sets the current transaction's isolation level.", choices=_ISOLATION_CHOICES,
            check=_ISOLATION, transactional=True, reset_all=False),
    Setting("transaction_read_only", Kind.BOOL, "off",
            "Sets the current transaction's read-only status.",
            check=_check_transaction_read_only,
            transactional=True, reset_all=False),
)}

# The typed defaults ("boot values"), parsed once.
_BOOT = {k: s.parse(s.default, check=False) for k, s in REGISTRY.items()}
# A transaction setting starts every transaction at its default_* counterpart.
_TRANSACTION_DEFAULTS = {"transaction_isolation": "default_transaction_isolation",
                         "transaction_read_only": "default_transaction_read_only",
                         "transaction_deferrable": "default_transaction_deferrable"}
# The multi-word names SHOW and RESET take in PostgreSQL's grammar.
_ALIASES = {"time zone": "timezone", "transaction isolation level": "transaction_isolation",
            "session authorization": "session_authorization"}


def lookup(name: str) -> Setting | None:
    return REGISTRY.get(canonical_key(name))


def canonical_key(name: str) -> str:
    key = " ".join(name.strip().split()).lower()
    key = _ALIASES.get(key, key)
    return ".".join(p.strip().strip('"') for p in key.split(".")) if '"' in key else key


def _valid_custom_name(name: str) -> bool:
    """PostgreSQL's valid_custom_variable_name: two or more identifiers joined by dots."""
    return bool(re.fullmatch(r"[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*"
                             r"(\.[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)+", name))


def _custom_name_check(key: str) -> None:
    if not _valid_custom_name(key):
        raise errors.QueryError(f'invalid configuration parameter name "{key}"', "42602",
                                detail="Custom parameter names must be two or more simple "
                                       "identifiers separated by dots.")
    if key.split(".")[0] == CUSTOM_PREFIX_RESERVED:
        raise errors.QueryError(f'invalid configuration parameter name "{key}"', "42602",
                                detail=f'"{CUSTOM_PREFIX_RESERVED}" is a reserved prefix.')


def _unrecognized(name: str):
    return errors.UndefinedObject(f'unrecognized configuration parameter "{name}"')


def parse_options(options: str) -> list[tuple[str, str]]:
    """The settings of the startup packet's `options` (PGOPTIONS): `-c name=value` and
    `--name=value`, words split at spaces, a backslash escaping the next character."""
    words, word, escaped, has = [], [], False, False
    for ch in options:
        if escaped:
            word.append(ch)
            escaped = False
        elif ch == "\\":
            escaped, has = True, True
        elif ch in _SPACE:
            if word or has:
                words.append("".join(word))
            word, has = [], False
        else:
            word.append(ch)
            has = True
    if word or has:
        words.append("".join(word))
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w == "-c" and i + 1 < len(words):
            w, i = "--" + words[i + 1], i + 1
        elif w.startswith("-c") and len(w) > 2:
            w = "--" + w[2:]
        if not w.startswith("--") or "=" not in w:
            raise _unsupported(f'command-line option "{words[i]}" is not supported: use '
                               "-c name=value")
        name, value = w[2:].split("=", 1)
        out.append((name.replace("-", "_"), value))
        i += 1
    return out


@dataclass(frozen=True)
class Snapshot:
    """A session's settings at one moment (Settings.snapshot)."""

    values: dict
    local: dict
    custom: dict


class Settings:
    """One session's settings. Typed values: bool, int (in the setting's base unit), str."""

    def __init__(self, user: str, startup: dict[str, str]):
        self.user = user
        self._values: dict[str, object] = dict(_BOOT)
        self._values["session_authorization"] = user
        self._custom: dict[str, str] = {}  # placeholders (names with a dot): key -> value
        self._local: dict[str, object] = {}  # SET LOCAL values of the current transaction
        self._local_owner: object = None
        self._transaction: Callable[[], object] | None = None
        self._at_block_start: Snapshot | None = None  # what a ROLLBACK returns to
        pairs = [(k, v) for k, v in startup.items() if k != "options"]
        if startup.get("options"):
            pairs += parse_options(startup["options"])
        for name, value in pairs:
            self._assign(name, value)
        # RESET and SET ... TO DEFAULT return to the values the session started with.
        self._reset = dict(self._values)
        self._reset_custom = dict(self._custom)
        self._last_reported = self.reported()

    # --- reading ---------------------------------------------------------------------------
    def get(self, name: str):
        """The current typed value of a known setting (bool, int in its base unit, str)."""
        key = canonical_key(name)
        if key not in REGISTRY:
            if key in self._custom:
                return self._custom[key]
            raise _unrecognized(name)
        self._expire_local()
        if key in self._local:
            return self._local[key]
        if key in _TRANSACTION_DEFAULTS:
            return self._values[_TRANSACTION_DEFAULTS[key]]
        return self._values[key]

    def milliseconds(self, name: str) -> int:
        """A time setting in milliseconds (0 usually means: no limit)."""
        s = REGISTRY[canonical_key(name)]
        if s.kind is not Kind.INTEGER or _unit_table(s.unit or "B") is not _TIME_UNITS:
            raise TypeError(f"{s.name} is not a time setting")
        return self.get(name) * dict(_TIME_UNITS)[s.unit] // 1000

    def bytes(self, name: str) -> int:
        """A memory setting in bytes."""
        s = REGISTRY[canonical_key(name)]
        if s.kind is not Kind.INTEGER or s.unit not in dict(_MEMORY_UNITS):
            raise TypeError(f"{s.name} is not a memory setting")
        return self.get(name) * dict(_MEMORY_UNITS)[s.unit]

    def show(self, name: str) -> str:
        """The value as SHOW prints it."""
        key = canonical_key(name)
        if key == "all":
            raise errors.FeatureNotSupported("SHOW ALL returns several columns: use show_all()")
        setting = REGISTRY.get(key)
        if setting is None:
            if key in self._custom:
                return self._custom[key]
            raise _unrecognized(name.strip())
        return setting.format(self.get(key))

    def show_columns(self, name: str) -> list[str]:
        """The column names of SHOW name: the setting's own spelling ("DateStyle")."""
        key = canonical_key(name)
        if key == "all":
            return ["name", "setting", "description"]
        setting = REGISTRY.get(key)
        if setting is None:
            if key in self._custom:
                return [key]
            raise _unrecognized(name.strip())
        return [setting.name]

    def show_rows(self, name: str) -> list[tuple[str, ...]]:
        if canonical_key(name) == "all":
            return self.show_all()
        return [(self.show(name),)]

    def show_all(self) -> list[tuple[str, str, str]]:
        """(name, setting, description) of every setting, sorted by name, as SHOW ALL."""
        return [(s.name, s.format(self.get(s.key)), s.description)
                for s in sorted(REGISTRY.values(), key=lambda s: s.key) if s.show_all]

    def reported(self) -> dict[str, str]:
        """ParameterStatus values (the reported settings, by their wire names)."""
        return {s.reported: s.format(self.get(s.key)) for s in REGISTRY.values() if s.reported}

    # --- changing ------------------------------------------------------------------------
    def set(self, name: str, value: str | list[str] | tuple[str, ...] | None, *,
            local: bool = False, transaction: Callable[[], object] | None = None
            ) -> dict[str, str]:
        """SET name TO value (a string, the statement's argument list, or None for DEFAULT);
        `local` for SET LOCAL. `transaction()` gives the session's current transaction (an
        object with `explicit`), which bounds SET LOCAL. Returns the ParameterStatus
        messages the change causes."""
        if transaction is not None:
            self._transaction = transaction
        key = canonical_key(name)
        setting = REGISTRY.get(key)
        if setting is None:
            if "." not in key:
                raise _unrecognized(name.strip())
            _custom_name_check(key)
            if local:
                raise _unsupported(f'SET LOCAL of the custom parameter "{key}" is not supported',
                                   "Use SET.")
            if value is None:
                self._custom[key] = self._reset_custom.get(key, "")
            else:
                self._custom[key] = self._flatten(key, value, None)
            return {}
        if setting.read_only:
            raise errors.QueryError(f'parameter "{name.strip()}" cannot be changed', "55P02")
        if value is None:
            new = self._default_of(setting)
        else:
            new = setting.parse(self._flatten(name.strip(), value, setting), name.strip(), self)
        if local or setting.transactional:
            return self._set_local(setting, new)
        self._local.pop(key, None)
        self._values[key] = new
        return self._report()

    def set_transaction(self, modes, *, characteristics: bool = False,
                        transaction: Callable[[], object] | None = None) -> dict[str, str]:
        """SET TRANSACTION modes (for the current transaction block) or SET SESSION
        CHARACTERISTICS AS TRANSACTION modes (the default_* settings)."""
        changed: dict[str, str] = {}
        for name, value in modes:
            target = _TRANSACTION_DEFAULTS[name] if characteristics else name
            changed.update(self.set(target, value, transaction=transaction))
        return changed

    def start_transaction(self, transaction: Callable[[], object]) -> None:
        """A transaction block begins (`transaction()` is it now): its transaction_*
        settings start at the default_transaction_* values of this moment, and later
        changes of those defaults (SET SESSION CHARACTERISTICS ...) apply to the next
        block only, as in PostgreSQL."""
        self._transaction = transaction
        self._expire_local()
        block = self._current_block()
        if block is None:
            return
        self._at_block_start = self.snapshot()
        self._local_owner = block
        for key, default in _TRANSACTION_DEFAULTS.items():
            self._local.setdefault(key, self._values[default])

    def end_transaction(self, committed: bool) -> dict[str, str]:
        """The transaction block ended: its SET LOCAL values go, and unless it committed
        so do its session-level changes. Returns the ParameterStatus messages due."""
        start, self._at_block_start = self._at_block_start, None
        status = self.restore(start) if not committed and start is not None else {}
        self._local.clear()
        self._local_owner = None
        return {**status, **self._report()}

    def snapshot(self) -> "Snapshot":
        """The values of this moment (a savepoint's, a block start's)."""
        return Snapshot(dict(self._values), dict(self._local), dict(self._custom))

    def restore(self, snap: "Snapshot") -> dict[str, str]:
        """Back to the values of `snap`; the ParameterStatus messages that needs."""
        custom = dict(snap.custom)
        for key in self._custom:
            custom.setdefault(key, self._reset_custom.get(key, ""))  # stays defined
        self._values, self._local, self._custom = dict(snap.values), dict(snap.local), custom
        return self._report()

    def reset(self, name: str) -> dict[str, str]:
        """RESET name | RESET ALL: back to the value the session started with."""
        key = canonical_key(name)
        if key == "all":
            self._expire_local()
            for k, s in REGISTRY.items():
                if s.reset_all and not s.read_only:
                    self._values[k] = self._reset[k]
                    self._local.pop(k, None)
            self._custom = {k: self._reset_custom.get(k, "") for k in self._custom}
            return self._report()
        return self.set(name, None)

    # --- internals -------------------------------------------------------------------------
    def _assign(self, name: str, value: str) -> None:
        """A startup-packet setting (errors end the connection, as in PostgreSQL)."""
        key = canonical_key(name)
        setting = REGISTRY.get(key)
        if setting is None:
            if "." not in key:
                raise _unrecognized(name)
            _custom_name_check(key)
            self._custom[key] = value
            return
        if setting.read_only:
            raise errors.QueryError(f'parameter "{key}" cannot be changed', "55P02")
        if setting.transactional:
            key, setting = _TRANSACTION_DEFAULTS[key], REGISTRY[_TRANSACTION_DEFAULTS[key]]
        self._values[key] = setting.parse(value, key, self)

    def _default_of(self, setting: Setting):
        if setting.key in _TRANSACTION_DEFAULTS:
            return self._values[_TRANSACTION_DEFAULTS[setting.key]]
        return self._reset[setting.key]

    @staticmethod
    def _flatten(name: str, value, setting: Setting | None) -> str:
        """PostgreSQL's flatten_set_variable_args: one argument, or for list settings the
        arguments joined by ", " (quoted as identifiers for search_path)."""
        if isinstance(value, str):
            return value
        args = list(value)
        if not args:
            raise errors.SyntaxError_(f"SET {name} requires an argument")
        if len(args) > 1 and (setting is None or not setting.list_input):
            raise errors.SyntaxError_(f"SET {name} takes only one argument")
        if setting is not None and setting.list_quote:
            return ", ".join(quote_ident(a) for a in args)
        return ", ".join(args)

    def _current_block(self):
        t = self._transaction() if self._transaction is not None else None
        return t if t is not None and getattr(t, "explicit", False) else None

    def _expire_local(self) -> None:
        if self._local and self._current_block() is not self._local_owner:
            self._local.clear()
            self._local_owner = None

    def _set_local(self, setting: Setting, new) -> dict[str, str]:
        block = self._current_block()
        if block is None:
            return {}  # no transaction block: no effect (PostgreSQL warns)
        self._expire_local()
        if setting.reported and setting.format(new) != setting.format(self.get(setting.key)):
            raise _unsupported(f'SET LOCAL of "{setting.name}" is not supported', "Use SET.")
        self._local_owner = block
        self._local[setting.key] = new
        return {}

    def _report(self) -> dict[str, str]:
        now = self.reported()
        changed = {k: v for k, v in now.items() if self._last_reported.get(k) != v}
        self._last_reported = now
        return changed
