"""Time zones: the session's TimeZone and AT TIME ZONE's zones, as PostgreSQL 15 reads them.

A timestamptz is a UTC instant everywhere in raympp (batches, chunks, the binary wire
format). A zone matters only where PostgreSQL converts between an instant and a local wall
clock: text input without an offset, text output, casts to and from timestamp and date,
date_trunc, EXTRACT, adding days or months, AT TIME ZONE. The binder writes each of those as
explicit conversions that carry the zone (Func.TO_LOCAL / Func.FROM_LOCAL, see
planner/zone_rules.py), so plans hold their zone and segments need no session state.

`Zone` is a tz-database zone (with its daylight-saving rules) or a fixed offset. A local
time that does not exist (the hour skipped in spring) or exists twice (the hour repeated in
autumn) resolves as PostgreSQL's DetermineTimeZoneOffset does: with the UTC offset in force
before a skipped hour and after a repeated one, which is in both cases the smaller of the
two offsets around the transition (`from_local`).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import zoneinfo
from dataclasses import dataclass

from planner import errors, types
from planner.session_info import SESSION_INFO
from planner.temporal import Infinite, Interval, add_interval

UTC = dt.timezone.utc
_DAY = dt.timedelta(days=1)
# POSIX zone specs: STD offset [DST ...]; the offset counts hours WEST of Greenwich.
_POSIX_TZ = re.compile(r"(<[^>]*>|[^\d,+-]*)([+-]?)(\d{1,3})(?::(\d{1,2})(?::(\d{1,2}))?)?(.*)",
                       re.DOTALL)
_UTC_NAMES = ("UTC", "UCT", "Universal", "Zulu", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich",
              "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "Etc/GMT", "Etc/GMT0",
              "Etc/GMT+0", "Etc/GMT-0", "Etc/Greenwich")
# PostgreSQL's "Default" time zone abbreviations that AT TIME ZONE looks up before the tz
# database (so 'CET' there is a fixed +01, not the zone with summer time), seconds east.
ABBREVIATIONS = {
    "utc": 0, "ut": 0, "z": 0, "zulu": 0, "gmt": 0, "wet": 0, "west": 3600, "bst": 3600,
    "cet": 3600, "cest": 7200, "met": 3600, "mest": 7200, "eet": 7200, "eest": 10800,
    "msk": 10800, "ist": 7200, "est": -18000, "edt": -14400, "cst": -21600, "cdt": -18000,
    "mst": -25200, "mdt": -21600, "pst": -28800, "pdt": -25200, "akst": -32400,
    "akdt": -28800, "hst": -36000, "nzst": 43200, "nzdt": 46800, "jst": 32400,
    "aest": 36000, "aedt": 39600, "acst": 34200, "awst": 28800,
}


@dataclass(frozen=True)
class Zone:
    """A time zone: `name` of the tz database, or `fixed` seconds east of UTC."""

    name: str | None = None
    fixed: int | None = None

    @property
    def is_utc(self) -> bool:
        return self.fixed == 0 or self.name in _UTC_NAMES

    @property
    def arrow(self) -> str:
        """The zone as Arrow's timestamp type names it."""
        if self.name is not None:
            return self.name
        sign, secs = ("-" if self.fixed < 0 else "+"), abs(self.fixed)
        return f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}"

    @property
    def spec(self) -> str:
        """The zone as one text value (what plans carry): its name, or `fixed:<seconds>`."""
        return self.name if self.name is not None else f"fixed:{self.fixed}"

    @staticmethod
    def from_spec(spec: str) -> "Zone":
        if spec.startswith("fixed:"):
            return Zone(fixed=int(spec[6:]))
        return Zone(name=spec)

    @property
    def tzinfo(self) -> dt.tzinfo:
        if self.name is not None:
            return _zoneinfo(self.name)
        return dt.timezone(dt.timedelta(seconds=self.fixed))


UTC_ZONE = Zone(fixed=0)


@functools.lru_cache(maxsize=256)
def _zoneinfo(name: str) -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo(name)


@functools.lru_cache(maxsize=1)
def zone_names() -> dict[str, str]:
    """The tz database's zone names, lower-cased (PostgreSQL's lookup ignores case) -> as
    spelled."""
    try:
        names = set(zoneinfo.available_timezones())
    except Exception:  # no tz database on this machine: the UTC names still work
        names = set()
    names.update(_UTC_NAMES)
    return {n.lower(): n for n in names}


def _not_recognized(text: str) -> errors.QueryError:
    return errors.InvalidParameterValue(f'time zone "{text}" not recognized')


def _fixed(seconds: int, text: str) -> Zone:
    if seconds % 60:
        # Arrow's zones are whole minutes; PostgreSQL's may have seconds.
        raise errors.FeatureNotSupported(f'time zone "{text}": offsets with seconds')
    return Zone(fixed=seconds)


def posix_zone(text: str) -> Zone | None:
    """A POSIX spec such as 'UTC+3' or '+3' (hours WEST, as POSIX counts them), None when
    `text` is none; 0A000 for specs with daylight-saving rules."""
    m = _POSIX_TZ.fullmatch(text.upper())
    if not (m and text and text[0] != ":" and m.group(3) is not None):
        return None
    hours, minutes, seconds = int(m.group(3)), int(m.group(4) or 0), int(m.group(5) or 0)
    if hours > 24 * 7 or minutes > 59 or seconds > 59:
        raise _not_recognized(text)
    if m.group(6):
        raise errors.FeatureNotSupported(
            f'time zone "{text}": POSIX time zone specifications with daylight-saving rules')
    west = (hours * 3600 + minutes * 60 + seconds) * (-1 if m.group(2) == "-" else 1)
    return _fixed(-west, text)


def named_zone(text: str) -> Zone | None:
    """A tz database zone by name (any case), None when there is none of that name."""
    name = zone_names().get(text.lower())
    if name is None:
        return None
    return UTC_ZONE if name in _UTC_NAMES else Zone(name=name)


def parse_at_zone(text: str) -> Zone:
    """The zone of AT TIME ZONE / timezone(zone, x) as timestamptz_zone reads it: an
    abbreviation, a zone name, then a POSIX spec; 22023 otherwise."""
    abbrev = ABBREVIATIONS.get(text.lower())
    if abbrev is not None:
        return _fixed(abbrev, text)
    zone = named_zone(text) or posix_zone(text)
    if zone is None:
        if re.fullmatch(r"[A-Za-z]{2,6}", text):
            raise errors.FeatureNotSupported(f'time zone abbreviation "{text}"')
        raise _not_recognized(text)
    return zone


def interval_zone(months: int, days: int, micros: int, text: str) -> Zone:
    """AT TIME ZONE INTERVAL '...': its hours east; months or days are 22023."""
    if months or days:
        raise errors.InvalidParameterValue(
            f'interval time zone "{text}" must not include months or days')
    if micros % 1_000_000:
        raise errors.FeatureNotSupported(f'time zone "{text}": fractional seconds')
    return _fixed(micros // 1_000_000, text)


def session_zone() -> Zone:
    """The statement's session TimeZone (UTC outside a session). The coordinator puts it
    in SESSION_INFO and in the plan cache's key, so reading it does not count as a read
    of the session."""
    info = SESSION_INFO.get()
    zone = info.zone if hasattr(info, "zone") else None
    return zone if zone is not None else UTC_ZONE


# --- one value ------------------------------------------------------------------------
def offset_at(instant: dt.datetime, zone: Zone) -> int:
    """Seconds east of UTC in `zone` at a UTC instant (naive or aware)."""
    if zone.fixed is not None:
        return zone.fixed
    u = instant.replace(tzinfo=UTC)
    return int(u.astimezone(zone.tzinfo).utcoffset().total_seconds())


def to_local(instant: dt.datetime, zone: Zone) -> dt.datetime:
    """The wall-clock time (naive) of a UTC instant in `zone` (+/-infinity stays)."""
    if isinstance(instant, Infinite):
        return instant
    return instant.replace(tzinfo=None) + dt.timedelta(seconds=offset_at(instant, zone))


def from_local(local: dt.datetime, zone: Zone) -> dt.datetime:
    """The UTC instant (aware) of a wall-clock time in `zone`, PostgreSQL's choice for
    skipped and repeated local times (see the module docstring)."""
    if isinstance(local, Infinite):
        return local
    local = local.replace(tzinfo=None)
    return (local - dt.timedelta(seconds=local_offset(local, zone))).replace(tzinfo=UTC)


def local_offset(local: dt.datetime, zone: Zone) -> int:
    """The UTC offset a wall-clock time is read with: of the offsets in force a day before
    and a day after it, the smaller of those that map it back to itself (both, in a
    repeated hour), or the smaller of the two when none does (a skipped hour)."""
    if zone.fixed is not None:
        return zone.fixed
    candidates = {offset_at(local - _DAY, zone), offset_at(local + _DAY, zone)}
    valid = [o for o in candidates
             if offset_at(local - dt.timedelta(seconds=o), zone) == o]
    return min(valid or candidates)


def offset_text(seconds: int) -> str:
    """A UTC offset as PostgreSQL prints it: +05, -04, +05:30, +00:53:28."""
    sign, s = ("-" if seconds < 0 else "+"), abs(seconds)
    out = f"{sign}{s // 3600:02d}"
    if s % 3600:
        out += f":{s % 3600 // 60:02d}"
        if s % 60:
            out += f":{s % 60:02d}"
    return out


def text_in_zone(instant: dt.datetime, zone: Zone) -> str:
    """timestamptz_out in `zone`: the wall clock there and the offset in force."""
    if isinstance(instant, Infinite):
        return str(instant)
    offset = offset_at(instant, zone)
    local = instant.replace(tzinfo=None) + dt.timedelta(seconds=offset)
    s = f"{local.date().isoformat()} {local.hour:02d}:{local.minute:02d}:{local.second:02d}"
    s += f".{local.microsecond:06d}".rstrip("0") if local.microsecond else ""
    return s + offset_text(offset)


def add_in_zone(instant: dt.datetime, iv: Interval, zone: Zone, sign: int = 1) -> dt.datetime:
    """timestamptz_pl_interval in `zone`: months, then days, on the wall clock (each read
    back in the zone), then the time part on the instant."""
    for part in (Interval(months=iv.months), Interval(days=iv.days)):
        if part != Interval():
            instant = from_local(add_interval(to_local(instant, zone), part, sign), zone)
    return instant + dt.timedelta(microseconds=sign * iv.micros)
