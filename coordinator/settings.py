"""Session settings (GUCs): defaults, which ones are reported to clients, SET/SHOW/RESET."""

from __future__ import annotations

from planner import errors
from planner.bind_expr import SERVER_VERSION

DEFAULTS = {
    "server_version": SERVER_VERSION,
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "datestyle": "ISO, MDY",
    "intervalstyle": "postgres",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "timezone": "UTC",
    "application_name": "",
    "is_superuser": "on",
    "session_authorization": "",
    "search_path": '"$user", public',
    "extra_float_digits": "1",
    "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed",
    "statement_timeout": "0",
    "lc_messages": "C",
    "max_identifier_length": "63",
}
# Reported in ParameterStatus at startup and whenever they change (as PostgreSQL does).
REPORTED = {"server_version": "server_version", "server_encoding": "server_encoding",
            "client_encoding": "client_encoding", "datestyle": "DateStyle",
            "intervalstyle": "IntervalStyle", "integer_datetimes": "integer_datetimes",
            "standard_conforming_strings": "standard_conforming_strings",
            "timezone": "TimeZone", "application_name": "application_name",
            "is_superuser": "is_superuser", "session_authorization": "session_authorization"}
READ_ONLY = {"server_version", "server_encoding", "integer_datetimes", "max_identifier_length"}


class Settings:
    def __init__(self, user: str, startup: dict[str, str]):
        self.values = dict(DEFAULTS)
        self.values["session_authorization"] = user
        for k, v in startup.items():
            if k.lower() in self.values and k.lower() not in READ_ONLY:
                self.values[k.lower()] = v

    def reported(self) -> dict[str, str]:
        return {wire: self.values[name] for name, wire in REPORTED.items()}

    def set(self, name: str, value: str) -> dict[str, str]:
        """Apply SET; returns the ParameterStatus messages it causes."""
        name = name.lower()
        if name in READ_ONLY:
            raise errors.QueryError(f'parameter "{name}" cannot be changed', "55P02")
        if name == "client_encoding" and value.upper().replace("-", "") not in ("UTF8", "UNICODE"):
            raise errors.FeatureNotSupported(f"client encoding {value}: only UTF8 is supported")
        if name == "client_encoding":
            value = "UTF8"
        if name == "datestyle":
            value = "ISO, MDY" if "iso" in value.lower() or value.lower() == "default" else value
            if value != "ISO, MDY":
                raise errors.FeatureNotSupported("DateStyle other than ISO")
        if name.lower() == "default":
            value = DEFAULTS.get(name, "")
        self.values[name] = value
        return {REPORTED[name]: value} if name in REPORTED else {}

    def milliseconds(self, name: str) -> int:
        """A time setting in milliseconds (plain numbers are milliseconds)."""
        v = self.values[name].strip().lower()
        for unit, f in (("ms", 1), ("s", 1000), ("min", 60000)):
            if v.endswith(unit) and v[:-len(unit)].strip().isdigit():
                return int(v[:-len(unit)]) * f
        return int(v) if v.isdigit() else 0

    def bytes(self, name: str) -> int:
        return 64 << 20

    def show(self, name: str) -> str:
        name = name.lower()
        if name == "all":
            raise errors.FeatureNotSupported("SHOW ALL")
        if name not in self.values:
            raise errors.UndefinedObject(f'unrecognized configuration parameter "{name}"')
        return self.values[name]

    def reset(self, name: str) -> dict[str, str]:
        name = name.lower()
        changed = {}
        names = list(self.values) if name == "all" else [name]
        for n in names:
            if n in READ_ONLY or n == "session_authorization":
                continue
            if n in DEFAULTS and self.values.get(n) != DEFAULTS[n]:
                self.values[n] = DEFAULTS[n]
                if n in REPORTED:
                    changed[REPORTED[n]] = DEFAULTS[n]
        return changed
