"""The settings registry: PostgreSQL 15's value syntax (units, bounds, booleans, enums), its
messages and SQLSTATEs, SHOW formatting, RESET / DEFAULT, custom placeholders, SET LOCAL,
and the settings raympp implements only partly (refused with 0A000)."""

from __future__ import annotations

import pytest

from coordinator import settings as st
from coordinator.settings import REGISTRY, Kind, Settings
from planner import errors, statements


class Txn:
    def __init__(self, explicit=True, queried=False):
        self.explicit = explicit
        self.queried = queried  # whether a statement has run in the block


@pytest.fixture
def s():
    return Settings("alice", {})


def error(fn, *args, **kw) -> errors.QueryError:
    with pytest.raises(errors.QueryError) as e:
        fn(*args, **kw)
    return e.value


def run_set(settings: Settings, sql: str, txn=None):
    """SET as the session routes it (through the statement classifier)."""
    stmt = statements.classify(sql)
    current = lambda: txn  # noqa: E731
    if stmt.name in ("transaction", "session characteristics"):
        return settings.set_transaction(stmt.modes, characteristics=stmt.name != "transaction",
                                        transaction=current)
    return settings.set(stmt.name, None if stmt.default else stmt.args, local=stmt.local,
                        transaction=current)


# --- the registry -------------------------------------------------------------------------
def test_registry_entries_are_typed_and_defaults_valid():
    for key, setting in REGISTRY.items():
        assert key == setting.name.lower()
        if setting.kind is Kind.INTEGER:
            assert setting.min <= st._BOOT[key] <= setting.max, key
        if setting.kind is Kind.ENUM:
            assert setting.default in setting.choices
    for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout",
                 "raympp.segment_wait_timeout"):
        assert REGISTRY[name].unit == "ms"
    assert REGISTRY["work_mem"].unit == "kB"
    with pytest.raises(Exception):
        REGISTRY["work_mem"].default = "1MB"  # frozen


def test_defaults_and_typed_accessors(s):
    assert s.show("statement_timeout") == "0"
    assert s.show("work_mem") == "64MB"
    assert s.bytes("work_mem") == 64 << 20
    assert s.show("raympp.segment_wait_timeout") == "30s"
    assert s.milliseconds("raympp.segment_wait_timeout") == 30_000
    assert s.milliseconds("lock_timeout") == 0
    assert s.get("standard_conforming_strings") is True
    assert s.get("extra_float_digits") == 1
    with pytest.raises(TypeError):
        s.milliseconds("work_mem")
    with pytest.raises(TypeError):
        s.bytes("statement_timeout")


# --- units ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value, ms, shown", [
    ("0", 0, "0"), ("1000", 1000, "1s"), ("1500", 1500, "1500ms"), ("1s", 1000, "1s"),
    ("1 s", 1000, "1s"), ("1.5s", 1500, "1500ms"), ("2min", 120_000, "2min"),
    ("1.5min", 90_000, "90s"), ("1h", 3_600_000, "1h"), ("1d", 86_400_000, "1d"),
    ("48h", 172_800_000, "2d"), ("500ms", 500, "500ms"), ("1.5", 2, "2ms"),
    ("2.5", 2, "2ms"), ("1500us", 2, "2ms"), ("0x10", 16, "16ms"), ("010", 8, "8ms"),
    (" 7 ", 7, "7ms"), ("1e3", 1000, "1s"), ("60000", 60_000, "1min"),
])
def test_time_units(s, value, ms, shown):
    s.set("statement_timeout", value)
    assert s.milliseconds("statement_timeout") == ms
    assert s.show("statement_timeout") == shown


@pytest.mark.parametrize("value, kb, shown", [
    ("4MB", 4096, "4MB"), ("4096", 4096, "4MB"), ("100kB", 100, "100kB"), ("1GB", 1 << 20, "1GB"),
    ("1.5MB", 1536, "1536kB"), ("1TB", 1 << 30, "1TB"), ("65536B", 64, "64kB"),
])
def test_memory_units(s, value, kb, shown):
    s.set("work_mem", value)
    assert s.bytes("work_mem") == kb * 1024
    assert s.show("work_mem") == shown


@pytest.mark.parametrize("value, hint", [
    ("1S", st._TIME_HINT), ("1 sec", st._TIME_HINT), ("1mins", st._TIME_HINT),
    ("1 s x", st._TIME_HINT), ("abc", None), ("", None), ("s", None),
    ("3000000000", "Value exceeds integer range."), ("nan", None), ("inf", None),
])
def test_bad_integers(s, value, hint):
    e = error(s.set, "statement_timeout", value)
    assert e.sqlstate == "22023"
    assert e.message == f'invalid value for parameter "statement_timeout": "{value}"'
    assert e.hint == hint


def test_memory_unit_hint(s):
    e = error(s.set, "work_mem", "4mb")
    assert (e.sqlstate, e.hint) == ("22023", st._MEMORY_HINT)


def test_unit_on_a_setting_without_units(s):
    e = error(s.set, "extra_float_digits", "2ms")
    assert e.message == 'invalid value for parameter "extra_float_digits": "2ms"'
    assert e.hint is None


@pytest.mark.parametrize("name, value, message", [
    ("statement_timeout", "-1",
     '-1 ms is outside the valid range for parameter "statement_timeout" (0 .. 2147483647)'),
    ("work_mem", "10kB",
     '10 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)'),
    ("extra_float_digits", "4",
     '4 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)'),
    ("extra_float_digits", "-16",
     '-16 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)'),
])
def test_out_of_range(s, name, value, message):
    e = error(s.set, name, value)
    assert (e.sqlstate, e.message) == ("22023", message)


# --- booleans and enums ---------------------------------------------------------------------
@pytest.mark.parametrize("value, expected", [
    ("on", True), ("ON", True), ("true", True), ("t", True), ("tr", True), ("yes", True),
    ("y", True), ("1", True), ("off", False), ("of", False), ("false", False), ("f", False),
    ("no", False), ("n", False), ("0", False),
])
def test_booleans(s, value, expected):
    s.set("default_transaction_deferrable", value)
    assert s.get("default_transaction_deferrable") is expected
    assert s.show("default_transaction_deferrable") == ("on" if expected else "off")


@pytest.mark.parametrize("value", ["o", "maybe", "", "2", "yess", " on"])
def test_bad_booleans(s, value):
    e = error(s.set, "default_transaction_deferrable", value)
    assert (e.sqlstate, e.message) == (
        "22023", 'parameter "default_transaction_deferrable" requires a Boolean value')


def test_enums(s):
    s.set("client_min_messages", "WARNING")
    assert s.show("client_min_messages") == "warning"
    s.set("client_min_messages", "debug")
    assert s.show("client_min_messages") == "debug2"
    e = error(s.set, "client_min_messages", "loud")
    assert e.sqlstate == "22023"
    assert e.message == 'invalid value for parameter "client_min_messages": "loud"'
    assert e.hint == ("Available values: debug5, debug4, debug3, debug2, debug1, log, notice, "
                      "warning, error.")


# --- names ----------------------------------------------------------------------------------
def test_unknown_names(s):
    for fn in (lambda: s.set("no_such_setting", "1"), lambda: s.show("no_such_setting"),
               lambda: s.reset("no_such_setting"), lambda: s.show_columns("no_such_setting")):
        e = error(fn)
        assert (e.sqlstate, e.message) == (
            "42704", 'unrecognized configuration parameter "no_such_setting"')


def test_names_ignore_case_and_show_their_own_spelling(s):
    assert s.show("TIMEZONE") == s.show("timezone") == "UTC"
    assert s.show_columns("timezone") == ["TimeZone"]
    assert s.show_columns("datestyle") == ["DateStyle"]
    assert s.show_columns("time zone") == ["TimeZone"]
    assert s.show("transaction isolation level") == "read committed"
    assert s.show("session authorization") == "alice"


def test_custom_placeholders(s):
    e = error(s.show, "myapp.x")
    assert e.sqlstate == "42704"
    assert s.set("myapp.x", ("Hello World",)) == {}
    assert s.show("myapp.x") == "Hello World"
    assert s.get("MyApp.X") == "Hello World"
    assert s.show_columns("myapp.x") == ["myapp.x"]
    assert "myapp.x" not in [r[0] for r in s.show_all()]  # placeholders are not listed
    s.set("myapp.x", None)
    assert s.show("myapp.x") == ""
    s.set("myapp.y", "2")
    s.reset("all")
    assert s.show("myapp.y") == ""
    s.reset("other.z")  # RESET of a valid custom name creates it, as in PostgreSQL
    assert s.show("other.z") == ""
    e = error(s.set, "myapp.x", ("a", "b"))
    assert (e.sqlstate, e.message) == ("42601", "SET myapp.x takes only one argument")


@pytest.mark.parametrize("name, detail", [
    ("myapp..x", "Custom parameter names must be two or more simple identifiers separated "
                 "by dots."),
    ("myapp.1x", "Custom parameter names must be two or more simple identifiers separated "
                 "by dots."),
    ("raympp.no_such", '"raympp" is a reserved prefix.'),
])
def test_bad_custom_names(s, name, detail):
    e = error(s.set, name, "1")
    assert (e.sqlstate, e.message, e.detail) == (
        "42602", f'invalid configuration parameter name "{name}"', detail)


@pytest.mark.parametrize("name", ["server_version", "server_version_num", "server_encoding",
                                  "integer_datetimes", "max_identifier_length", "is_superuser",
                                  "in_hot_standby"])
def test_read_only(s, name):
    before = s.show(name)
    for fn in (lambda: s.set(name, "1"), lambda: s.reset(name)):
        e = error(fn)
        assert (e.sqlstate, e.message) == ("55P02", f'parameter "{name}" cannot be changed')
    assert s.show(name) == before


# --- RESET, DEFAULT and startup values ----------------------------------------------------
def test_reset_returns_to_the_startup_value():
    s = Settings("alice", {"application_name": "psql", "statement_timeout": "5s",
                           "options": "-c work_mem=8MB --lock_timeout=2s -c myapp.x=a\\ b"})
    assert s.show("statement_timeout") == "5s"
    assert (s.show("work_mem"), s.show("lock_timeout"), s.show("myapp.x")) == ("8MB", "2s", "a b")
    s.set("application_name", "other")
    s.set("statement_timeout", "1min")
    s.set("work_mem", "1GB")
    s.reset("statement_timeout")
    assert s.show("statement_timeout") == "5s"
    s.set("work_mem", None)  # SET work_mem TO DEFAULT
    assert s.show("work_mem") == "8MB"
    assert s.reset("all") == {"application_name": "psql"}
    assert s.show("application_name") == "psql"
    assert s.show("session_authorization") == "alice"


@pytest.mark.parametrize("startup, code", [
    ({"no_such": "1"}, "42704"), ({"TimeZone": "Mars/Olympus"}, "22023"),
    ({"statement_timeout": "abc"}, "22023"), ({"server_version": "9"}, "55P02"),
    ({"options": "-d 5"}, "0A000"),
])
def test_bad_startup_settings(startup, code):
    assert error(Settings, "alice", startup).sqlstate == code


def test_startup_names_ignore_case():
    s = Settings("alice", {"DateStyle": "ISO", "TimeZone": "Etc/UTC", "client_encoding": "utf-8",
                           "extra_float_digits": "3"})
    assert s.reported()["TimeZone"] == "Etc/UTC"
    assert (s.show("datestyle"), s.show("client_encoding"), s.show("extra_float_digits")) == (
        "ISO, MDY", "UTF8", "3")


# --- ParameterStatus ------------------------------------------------------------------------
def test_reported_changes_only(s):
    assert s.reported()["TimeZone"] == "UTC" and s.reported()["DateStyle"] == "ISO, MDY"
    assert s.set("application_name", "x") == {"application_name": "x"}
    assert s.set("application_name", "x") == {}
    assert s.set("timezone", "Etc/UTC") == {"TimeZone": "Etc/UTC"}
    assert s.set("statement_timeout", "1s") == {}
    assert s.reset("all") == {"application_name": "", "TimeZone": "UTC"}


def test_application_name_is_cleaned_like_postgresql_15(s):
    s.set("application_name", "caf\u00e9\tx")
    assert s.show("application_name") == "caf???x"


# --- SHOW ALL -------------------------------------------------------------------------------
def test_show_all(s):
    rows = s.show_all()
    assert s.show_columns("all") == ["name", "setting", "description"]
    names = [r[0] for r in rows]
    assert names == sorted(names, key=str.lower)
    by_name = {r[0]: r for r in rows}
    assert by_name["work_mem"][1] == "64MB"
    assert by_name["DateStyle"][1:] == ("ISO, MDY",
                                        "Sets the display format for date and time values.")
    assert "session_authorization" not in by_name and "is_superuser" not in by_name
    assert all(r[2] for r in rows)
    assert s.show_rows("all") == rows


# --- what raympp implements only partly ------------------------------------------------------
@pytest.mark.parametrize("value, shown", [
    ("UTC", "UTC"), ("utc", "UTC"), ("GMT", "GMT"), ("Etc/UTC", "Etc/UTC"), ("Zulu", "Zulu"),
    ("0", "<+00>-00"), ("0.0", "<+00>-00"), ("+00:00", "+00:00"), ("UTC0", "UTC0"),
    ("<+00>-00", "<+00>-00"), ("INTERVAL '+00:00'", "<+00>-00"),
    ("INTERVAL '0 hours'", "<+00>-00"),
])
def test_utc_time_zones(s, value, shown):
    s.set("timezone", value)
    assert s.show("TimeZone") == shown


@pytest.mark.parametrize("value, shown", [
    ("Europe/Berlin", "Europe/Berlin"), ("america/new_york", "America/New_York"),
    ("EST5EDT", "EST5EDT"), ("-8", "<-08>+08"), ("5.5", "<+05:30>-05:30"),
    ("+03:00", "+03:00"), ("UTC+3", "UTC+3"), ("INTERVAL '+01:00'", "<+01>-01"),
])
def test_other_time_zones(s, value, shown):
    s.set("timezone", value)
    assert s.show("TimeZone") == shown


@pytest.mark.parametrize("value, code", [
    ("XST5XDT4,M3.2.0,M11.1.0", "0A000"), ("INTERVAL '00:00:30'", "0A000"),
    ("no/such_zone", "22023"), ("Z", "22023"), ("", "22023"),
    ("INTERVAL '1 month'", "22023"),
])
def test_time_zones_refused(s, value, code):
    e = error(s.set, "timezone", value)
    assert e.sqlstate == code
    if code == "22023":
        assert e.message == f'invalid value for parameter "TimeZone": "{value}"'
    assert s.show("timezone") == "UTC"


def test_set_time_zone_statement_forms(s):
    run_set(s, "SET TIME ZONE 'UTC'")
    run_set(s, "SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE")
    assert s.show("timezone") == "<+00>-00"
    run_set(s, "SET TIME ZONE LOCAL")
    assert s.show("timezone") == "UTC"
    run_set(s, "SET TIME ZONE 0")
    run_set(s, "SET TIME ZONE DEFAULT")
    assert s.show("timezone") == "UTC"
    run_set(s, "SET TIME ZONE 'Asia/Tokyo'")
    assert s.show("timezone") == "Asia/Tokyo"


@pytest.mark.parametrize("sql", [
    "SET datestyle = 'ISO, MDY'", "SET DateStyle TO ISO", "SET datestyle = MDY",
    "SET datestyle = iso, us", "SET datestyle TO DEFAULT",
])
def test_datestyle_iso(s, sql):
    run_set(s, sql)
    assert s.show("DateStyle") == "ISO, MDY"


@pytest.mark.parametrize("sql, shown", [
    ("SET datestyle = 'ISO, DMY'", "ISO, DMY"), ("SET datestyle = 'ISO, YMD'", "ISO, YMD"),
    ("SET datestyle = european", "ISO, DMY"), ("SET datestyle = 'YMD, ISO'", "ISO, YMD"),
])
def test_datestyle_input_orders(s, sql, shown):
    """ISO output with any field order of input (planner/datetime_input.py); a style
    alone keeps the order, an order alone the style, as PostgreSQL's."""
    run_set(s, sql)
    assert s.show("DateStyle") == shown
    run_set(s, "SET datestyle = ISO")
    assert s.show("DateStyle") == shown


@pytest.mark.parametrize("sql, code", [
    ("SET datestyle = 'SQL, DMY'", "0A000"), ("SET datestyle = German", "0A000"),
    ("SET datestyle = 'foo'", "22023"), ("SET datestyle = 'ISO, SQL'", "22023"),
])
def test_datestyle_others(s, sql, code):
    assert error(run_set, s, sql).sqlstate == code


def test_search_path(s):
    assert s.show("search_path") == '"$user", public'
    run_set(s, "SET search_path = public")
    assert s.show("search_path") == "public"
    run_set(s, 'SET search_path TO "$user", public, pg_catalog')
    assert s.show("search_path") == '"$user", public, pg_catalog'
    run_set(s, "SET SCHEMA 'public'")
    assert s.show("search_path") == "public"
    # Any schema names, as in PostgreSQL (what does not exist is skipped when resolving).
    for sql, shown in (("SET search_path = foo", "foo"), ("SET search_path = ''", '""'),
                       ("SET search_path = 'public, foo'", '"public, foo"'),
                       ('SET search_path = "Public"', '"Public"'),
                       ('SET search_path = "A", b', '"A", b'),
                       ("SET search_path TO 'a,b'", '"a,b"')):
        run_set(s, sql)
        assert s.show("search_path") == shown, sql
        assert st.split_identifiers(s.show("search_path")) is not None
    e = error(s.set, "search_path", 'a, "b')
    assert (e.sqlstate, e.detail) == ("22023", "List syntax is invalid.")


@pytest.mark.parametrize("name, ok, refused", [
    ("default_transaction_isolation", ["read committed", "READ UNCOMMITTED"],
     ["serializable", "repeatable read"]),
    ("standard_conforming_strings", ["on"], ["off"]),
    ("IntervalStyle", ["postgres"], ["iso_8601", "sql_standard", "postgres_verbose"]),
    ("bytea_output", ["hex"], ["escape"]),
    ("extra_float_digits", ["1", "2", "3"], ["0", "-15"]),
    ("client_encoding", ["UTF8", "utf-8", "unicode", "SQL_ASCII"], ["LATIN1", "win1252"]),
    ("role", ["none", "alice"], ["bob"]),
    ("session_authorization", ["alice"], ["bob"]),
])
def test_partly_implemented(s, name, ok, refused):
    for v in ok:
        s.set(name, v)
    for v in refused:
        e = error(s.set, name, v)
        assert e.sqlstate == "0A000", (name, v)


def test_unknown_client_encoding(s):
    e = error(s.set, "client_encoding", "klingon")
    assert (e.sqlstate, e.message) == ("22023",
                                       'invalid value for parameter "client_encoding": "klingon"')


# --- SET LOCAL and transaction settings --------------------------------------------------------
def test_set_local_lasts_until_the_transaction_ends(s):
    block = Txn()
    run_set(s, "SET statement_timeout = '10s'")
    run_set(s, "SET LOCAL statement_timeout = '1s'", block)
    assert s.milliseconds("statement_timeout") == 1000
    s._transaction = lambda: None  # COMMIT or ROLLBACK: the block is over
    assert s.milliseconds("statement_timeout") == 10_000
    assert s.show("statement_timeout") == "10s"


def test_set_local_outside_a_block_has_no_effect(s):
    run_set(s, "SET LOCAL work_mem = '1MB'", None)
    assert s.show("work_mem") == "64MB"
    run_set(s, "SET LOCAL work_mem = '1MB'", Txn(explicit=False))
    assert s.show("work_mem") == "64MB"
    assert error(run_set, s, "SET LOCAL work_mem = 'lots'", None).sqlstate == "22023"


def test_set_local_then_set_session_in_the_same_block(s):
    block = Txn()
    run_set(s, "SET LOCAL lock_timeout = 100", block)
    run_set(s, "SET SESSION lock_timeout = 200", block)
    assert s.milliseconds("lock_timeout") == 200
    s._transaction = lambda: Txn()  # a later block
    assert s.milliseconds("lock_timeout") == 200


def test_set_local_of_a_reported_setting_is_refused_when_it_changes_it(s):
    block = Txn()
    run_set(s, "SET LOCAL TIME ZONE 'UTC'", block)  # no change: nothing to report
    e = error(run_set, s, "SET LOCAL application_name = 'x'", block)
    assert e.sqlstate == "0A000"


def test_set_transaction(s):
    block = Txn()
    run_set(s, "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", block)
    assert s.show("transaction_isolation") == "read uncommitted"
    s._transaction = lambda: None
    assert s.show("transaction_isolation") == "read committed"
    for sql in ("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
                "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                "SET transaction_isolation = 'serializable'",
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"):
        assert error(run_set, s, sql, block).sqlstate == "0A000", sql
    run_set(s, "SET TRANSACTION READ WRITE, NOT DEFERRABLE", block)
    run_set(s, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
    assert s.show("default_transaction_isolation") == "read uncommitted"
    assert s.show("transaction_isolation") == "read uncommitted"


def test_read_only_transactions(s):
    """BEGIN READ ONLY, SET TRANSACTION READ ONLY, default_transaction_read_only: the block
    keeps the default of its start; read-write only before its first statement (25001)."""
    assert s.show("transaction_read_only") == "off"
    run_set(s, "SET default_transaction_read_only = on")
    assert s.show("transaction_read_only") == "on"  # outside a block: the default
    block = Txn()
    s.start_transaction(lambda: block)
    run_set(s, "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", block)
    assert s.show("default_transaction_read_only") == "off"
    assert s.show("transaction_read_only") == "on"  # the block started read-only
    run_set(s, "SET TRANSACTION READ WRITE", block)  # before any statement: allowed
    assert s.show("transaction_read_only") == "off"
    block.queried = True
    run_set(s, "SET TRANSACTION READ ONLY", block)  # read-only: any time
    e = error(run_set, s, "SET TRANSACTION READ WRITE", block)
    assert (e.sqlstate, e.message) == ("25001", "transaction read-write mode must be set "
                                                "before any query")
    e = error(run_set, s, "SET transaction_read_only = off", block)
    assert e.sqlstate == "25001"
    assert s.show("transaction_read_only") == "on"
    s._transaction = lambda: None  # the block ended
    assert s.show("transaction_read_only") == "off"
    later = Txn()
    s.start_transaction(lambda: later)
    run_set(s, "SET TRANSACTION READ ONLY", later)
    assert s.show("transaction_read_only") == "on"
    run_set(s, "SET TRANSACTION READ ONLY", None)  # outside a block: no effect
    s._transaction = lambda: None
    assert s.show("transaction_read_only") == "off"


# --- the statement forms ----------------------------------------------------------------------
def test_set_argument_lists(s):
    run_set(s, "SET client_min_messages = WARNING")
    assert s.show("client_min_messages") == "warning"
    run_set(s, 'SET application_name = "MixedCase"')
    assert s.show("application_name") == "MixedCase"
    run_set(s, "SET application_name = Folded")
    assert s.show("application_name") == "folded"
    run_set(s, "SET application_name = 'it''s'")
    assert s.show("application_name") == "it's"
    run_set(s, "SET extra_float_digits = 3")
    e = error(run_set, s, "SET statement_timeout = 1, 2")
    assert (e.sqlstate, e.message) == ("42601", "SET statement_timeout takes only one argument")
    assert error(run_set, s, "SET statement_timeout =").sqlstate == "42601"
    assert error(run_set, s, "SET statement_timeout 5").sqlstate == "42601"
