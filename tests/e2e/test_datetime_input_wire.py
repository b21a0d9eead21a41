"""PostgreSQL's date/time input spellings through the wire paths that do not go through a
constant (planner/datetime_input.py): COPY FROM STDIN (text and CSV, in UTC and in
another session zone) and text-format bind parameters, against PostgreSQL 15."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.adapt import Dumper

COLUMNS = "(id int4, d date, ts timestamp, tz timestamptz, t time, z timetz)"
SPELLINGS = ["2024-01-05", "Jan 5 2024", "5 Jan 2024 10:30 pm", "J2451187", "epoch",
             "infinity", "19990108T040506", "Friday, January 5, 2024 04:05:06 PST",
             "2024-01-05 10:00:00+05:30", "0044-03-15 BC", "20240105", "January 8, 99"]
TIMES = ["04:05", "4:05 pm", "040506", "allballs", "04:05:06.5 PST", "12:00 am"]
TIMETZ = ["04:05 +02", "4:05 pm PST", "040506-08", "allballs", "04:05:06.5 Etc/GMT+3",
          "2024-07-05 12:00 am America/New_York", "2024-07-05 10:00", "2024-01-05 10:00"]


def _rows():
    return [(i, s, s, s, TIMES[i % len(TIMES)], TIMETZ[i % len(TIMETZ)])
            for i, s in enumerate(SPELLINGS)]


def _load(c, table: str, fmt: str) -> None:
    sep = "\t" if fmt == "text" else ","
    with c.cursor().copy(f"COPY {table} FROM STDIN" + (" (FORMAT csv)" if fmt == "csv" else "")) as cp:
        for row in _rows():
            cp.write(sep.join(str(v) if fmt == "text" else f'"{v}"' for v in row) + "\n")


def _read(c, table: str):
    return c.execute(f"SELECT id, d::text, ts::text, tz::text, t::text, z::text FROM {table} "
                     "ORDER BY id").fetchall()


@pytest.mark.parametrize("fmt, zone", [("text", "UTC"), ("csv", "UTC"),
                                       ("text", "America/New_York")])
def test_copy_from_stdin_as_postgres(server, pg_oracle, table, fmt, zone):
    t = table()
    rp, pg = server.connect(autocommit=True), pg_oracle.connect()
    try:
        for c in (rp, pg):
            c.execute(f"SET TimeZone = '{zone}'")
            c.execute(f"DROP TABLE IF EXISTS {t}")
            c.execute(f"CREATE TABLE {t} {COLUMNS}")
            _load(c, t, fmt)
        assert _read(rp, t) == _read(pg, t)
    finally:
        pg.execute(f"DROP TABLE IF EXISTS {t}")
        rp.close()
        pg.close()


def test_copy_error_names_the_line(server, table):
    t = table()
    with server.connect(autocommit=True) as c:
        c.execute(f"CREATE TABLE {t} {COLUMNS}")
        with pytest.raises(psycopg.errors.DatetimeFieldOverflow) as e:
            with c.cursor().copy(f"COPY {t} (id, d) FROM STDIN") as cp:
                cp.write("1\tJan 5 2024\n2\t99-01-08\n")
        assert 'date/time field value out of range: "99-01-08"' in str(e.value)
        assert "line 2" in str(e.value.diag.context)


class _DateText(Dumper):
    """A str sent as a text-format date parameter (OID 1082)."""

    oid = 1082

    def dump(self, obj):
        return obj.encode()


def test_text_parameters_as_postgres(server, pg_oracle):
    rp, pg = server.connect(autocommit=True), pg_oracle.connect()
    try:
        for text in SPELLINGS[:5] + ["January 8, 99", "99-01-08", "garbage"]:
            got = []
            for c in (rp, pg):
                cur = c.cursor()
                cur.adapters.register_dumper(str, _DateText)
                try:
                    got.append(cur.execute("SELECT (%s + 1)::text", (text,)).fetchall())
                except psycopg.Error as e:
                    got.append(e.sqlstate)
            assert got[0] == got[1], text
    finally:
        rp.close()
        pg.close()


@pytest.mark.parametrize("style", ["ISO, DMY", "ISO, YMD"])
def test_datestyle_order_in_copy_and_parameters(server, pg_oracle, table, style):
    t = table()
    rp, pg = server.connect(autocommit=True), pg_oracle.connect()
    texts = ["01/02/03", "2003-01-02", "Jan 2 03", "02-Jan-03"] + (
        ["1.2.2003"] if style.endswith("DMY") else ["2003.1.2"])
    try:
        got = []
        for c in (rp, pg):
            c.execute(f"SET DateStyle = '{style}'")
            c.execute(f"DROP TABLE IF EXISTS {t}")
            c.execute(f"CREATE TABLE {t} (id int4, d date, ts timestamp)")
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                for i, s in enumerate(texts):
                    cp.write(f"{i}\t{s}\t{s} 10:00\n")
            cur = c.cursor()
            cur.adapters.register_dumper(str, _DateText)
            params = [cur.execute("SELECT %s::text", (s,)).fetchone()[0] for s in texts]
            got.append((_read_dates(c, t), params))
        assert got[0] == got[1]
    finally:
        pg.execute(f"DROP TABLE IF EXISTS {t}")
        rp.close()
        pg.close()


def _read_dates(c, table: str):
    return c.execute(f"SELECT id, d::text, ts::text FROM {table} ORDER BY id").fetchall()
