"""Role statements as PostgreSQL 15's grammar reads them: CREATE/ALTER/DROP ROLE (USER, GROUP).

    CREATE ROLE|USER|GROUP name [[WITH] option ...]        (USER: LOGIN unless NOLOGIN)
    ALTER ROLE|USER role_spec [[WITH] option ...]          (no SYSID, IN ROLE, ROLE, ADMIN)
    ALTER ROLE|USER|GROUP name RENAME TO new_name
    DROP ROLE|USER|GROUP [IF EXISTS] role_spec [, ...]

`parse` returns a RoleStatement; coordinator/roles.py checks privileges and applies it.
Errors are PostgreSQL's: syntax errors and `unrecognized role option "x"` (42601), an
option given twice (42601 "conflicting or redundant options"), reserved names (42939:
public, none, CURRENT_USER ... where a name is created), UNENCRYPTED PASSWORD (0A000).

Options raympp does not implement are refused with 0A000 naming them (CREATEDB,
REPLICATION, BYPASSRLS, CONNECTION LIMIT n, VALID UNTIL, IN ROLE / IN GROUP / ROLE /
USER / ADMIN, MD5 password hashes, ALTER ROLE ... SET, ALTER GROUP ... ADD/DROP USER).
Accepted because they change nothing here: NOCREATEDB, NOREPLICATION, NOBYPASSRLS and
CONNECTION LIMIT -1 (what every role has), SYSID (PostgreSQL ignores it too), INHERIT and
NOINHERIT (kept for pg_roles; without role membership there is nothing to inherit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planner import errors

# PostgreSQL 15's reserved key words (not role names, not role options).
RESERVED = frozenset("""
    all analyse analyze and any array as asc asymmetric both case cast check collate column
    constraint create current_catalog current_date current_role current_time
    current_timestamp current_user default deferrable desc distinct do else end except false
    fetch for foreign from grant group having in initially intersect into lateral leading
    limit localtime localtimestamp not null offset on only or order placing primary
    references returning select session_user some symmetric table then to trailing true
    union unique user using variadic when where window with""".split())
SPECIAL_ROLES = {"current_user": "CURRENT_USER", "current_role": "CURRENT_ROLE",
                 "session_user": "SESSION_USER"}
NAMEDATALEN = 64

# The options PostgreSQL's grammar reads from an identifier (quoted or not).
_IDENT_OPTIONS = {
    "superuser": ("superuser", True), "nosuperuser": ("superuser", False),
    "createrole": ("createrole", True), "nocreaterole": ("createrole", False),
    "replication": ("replication", True), "noreplication": ("replication", False),
    "createdb": ("createdb", True), "nocreatedb": ("createdb", False),
    "login": ("canlogin", True), "nologin": ("canlogin", False),
    "bypassrls": ("bypassrls", True), "nobypassrls": ("bypassrls", False),
    "noinherit": ("inherit", False),
}
_MEMBERSHIP = ("rolemembers", "adminmembers", "addroleto")  # values: (keyword, roles)
_MD5 = re.compile(r"md5[0-9a-f]{32}")

_SPACE = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)
_TOKEN = re.compile(r"""
      (?P<string>'(?:[^']|'')*')
    | [Ee](?P<escape>'(?:[^'\\]|\\.|'')*')
    | (?P<dollar>\$(?:[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*)?\$)
    | (?P<ident>"(?:[^"]|"")*")
    | (?P<number>\d+)(?![A-Za-z0-9_$])
    | (?P<word>[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*)
    | (?P<other>\S)
    """, re.VERBOSE | re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


@dataclass(frozen=True)
class RoleSpec:
    """A role as a statement names it: `name`, or `special` (CURRENT_USER, CURRENT_ROLE,
    SESSION_USER, or PUBLIC)."""

    name: str | None = None
    special: str | None = None


@dataclass(frozen=True)
class RoleStatement:
    command: str                     # the command tag: CREATE ROLE, ALTER ROLE, DROP ROLE
    role: RoleSpec | None = None     # CREATE (a plain name) and ALTER
    # The options written, by PostgreSQL's DefElem name: superuser, createrole, canlogin,
    # inherit, password (a str, None for PASSWORD NULL), connectionlimit, sysid, and the
    # no-op forms of createdb, replication, bypassrls (False).
    options: dict = field(default_factory=dict)
    login_default: bool = False      # CREATE USER: LOGIN unless NOLOGIN
    new_name: str | None = None      # ALTER ... RENAME TO
    drop: tuple[RoleSpec, ...] = ()  # DROP
    if_exists: bool = False          # DROP IF EXISTS


@dataclass(frozen=True)
class _Tok:
    kind: str   # word (unquoted), ident (quoted), string, number, other, end
    value: str  # words folded to lower case, identifiers and strings unquoted
    text: str   # as written


def _truncate(name: str) -> str:
    """PostgreSQL truncates identifiers to NAMEDATALEN - 1 bytes (on a character boundary)."""
    raw = name.encode()
    if len(raw) < NAMEDATALEN:
        return name
    return raw[:NAMEDATALEN - 1].decode(errors="ignore")


def _fold(word: str) -> str:
    """Unquoted identifiers: ASCII letters to lower case, as PostgreSQL's downcase_identifier."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in word)


def escape_string(body: str) -> str:
    """The value of an E'...' string constant's body (backslash escapes, doubled quotes)."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
            continue
        if c == "'" and body[i + 1:i + 2] == "'":
            i += 1
        out.append(c)
        i += 1
    return "".join(out)


def _tokens(text: str) -> list[_Tok]:
    out, pos = [], 0
    while True:
        pos = _SPACE.match(text, pos).end()
        if pos == len(text):
            break
        m = _TOKEN.match(text, pos)
        written = m.group(0)
        if m.group("string") is not None:
            out.append(_Tok("string", m.group("string")[1:-1].replace("''", "'"), written))
        elif m.group("escape") is not None:
            out.append(_Tok("string", escape_string(m.group("escape")[1:-1]), written))
        elif m.group("dollar") is not None:
            close = text.find(written, m.end())
            if close < 0:
                raise errors.SyntaxError_(
                    f'unterminated dollar-quoted string at or near "{text[pos:]}"')
            out.append(_Tok("string", text[m.end():close], text[pos:close + len(written)]))
            pos = close + len(written)
            continue
        elif m.group("ident") is not None:
            name = m.group("ident")[1:-1].replace('""', '"')
            if not name:
                raise errors.SyntaxError_('zero-length delimited identifier at or near """"')
            out.append(_Tok("ident", _truncate(name), written))
        elif m.group("number") is not None:
            out.append(_Tok("number", m.group("number"), written))
        elif m.group("word") is not None:
            out.append(_Tok("word", _truncate(_fold(m.group("word"))), written))
        elif written in ("'", '"'):
            kind = "quoted string" if written == "'" else "quoted identifier"
            raise errors.SyntaxError_(f'unterminated {kind} at or near "{text[pos:]}"')
        else:
            out.append(_Tok("other", written, written))
        pos = m.end()
    out.append(_Tok("end", "", ""))
    return out


def _syntax_error(t: _Tok) -> errors.QueryError:
    if t.kind == "end":
        return errors.SyntaxError_("syntax error at end of input")
    return errors.SyntaxError_(f'syntax error at or near "{t.text}"')


def _reserved_name(name: str) -> errors.QueryError:
    return errors.QueryError(f'role name "{name}" is reserved', "42939")


def _unsupported(what: str, why: str) -> errors.QueryError:
    return errors.FeatureNotSupported(f"{what} is not supported: {why}")


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, ahead: int = 0) -> _Tok:
        return self.toks[min(self.i + ahead, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.peek()
        self.i += 1
        return t

    def is_word(self, *words: str, ahead: int = 0) -> bool:
        t = self.peek(ahead)
        return t.kind == "word" and t.value in words

    def expect_word(self, *words: str) -> str:
        t = self.next()
        if t.kind != "word" or t.value not in words:
            raise _syntax_error(t)
        return t.value

    def end(self) -> None:
        t = self.peek()
        if t.kind == "other" and t.value == ";" and self.peek(1).kind == "end":
            return
        if t.kind != "end":
            raise _syntax_error(t)

    def string(self) -> str:
        t = self.next()
        if t.kind != "string":
            raise _syntax_error(t)
        return t.value

    def role_spec(self) -> RoleSpec:
        """PostgreSQL's RoleSpec: a name, CURRENT_USER/CURRENT_ROLE/SESSION_USER, public;
        "none" is reserved."""
        t = self.next()
        if t.kind == "word" and t.value in SPECIAL_ROLES:
            return RoleSpec(special=SPECIAL_ROLES[t.value])
        if t.kind not in ("word", "ident") or (t.kind == "word" and t.value in RESERVED):
            raise _syntax_error(t)
        if t.value == "public":
            return RoleSpec(special="PUBLIC")
        if t.value == "none":
            raise _reserved_name("none")
        return RoleSpec(t.value)

    def role_id(self) -> str:
        """PostgreSQL's RoleId: a RoleSpec that names a role to create or rename to."""
        spec = self.role_spec()
        if spec.special == "PUBLIC":
            raise _reserved_name("public")
        if spec.special is not None:
            raise errors.QueryError(f"{spec.special} cannot be used as a role name here",
                                    "42939")
        return spec.name

    def role_list(self) -> tuple[RoleSpec, ...]:
        specs = [self.role_spec()]
        while self.peek().kind == "other" and self.peek().value == ",":
            self.next()
            specs.append(self.role_spec())
        return tuple(specs)

    def signed_int(self) -> int:
        sign = 1
        t = self.peek()
        if t.kind == "other" and t.value in "+-":
            self.next()
            sign = -1 if t.value == "-" else 1
        t = self.next()
        if t.kind != "number" or int(t.value) >= 2**31:
            raise _syntax_error(t)
        return sign * int(t.value)

    def options(self, create: bool) -> list[tuple[str, object]]:
        """OptRoleList (create) or AlterOptRoleList: (DefElem name, value) as written."""
        out: list[tuple[str, object]] = []
        while True:
            t = self.peek()
            if t.kind == "end" or (t.kind == "other" and t.value == ";"):
                return out
            self.next()
            v = t.value
            if t.kind == "ident" or (t.kind == "word" and v not in RESERVED and v not in (
                    "password", "encrypted", "unencrypted", "inherit", "connection", "valid",
                    "sysid", "admin", "role")):
                if v not in _IDENT_OPTIONS:
                    raise errors.SyntaxError_(f'unrecognized role option "{v}"')
                out.append(_IDENT_OPTIONS[v])
            elif t.kind != "word":
                raise _syntax_error(t)
            elif v == "password":
                if self.is_word("null"):
                    self.next()
                    out.append(("password", None))
                else:
                    out.append(("password", self.string()))
            elif v == "encrypted":
                self.expect_word("password")
                out.append(("password", self.string()))
            elif v == "unencrypted":
                self.expect_word("password")
                self.string()
                raise errors.FeatureNotSupported(
                    "UNENCRYPTED PASSWORD is no longer supported",
                    hint="Remove UNENCRYPTED to store the password in encrypted form instead.")
            elif v == "inherit":
                out.append(("inherit", True))
            elif v == "connection":
                self.expect_word("limit")
                out.append(("connectionlimit", self.signed_int()))
            elif v == "valid":
                self.expect_word("until")
                out.append(("validUntil", self.string()))
            elif v == "user":
                out.append(("rolemembers", ("USER", self.role_list())))
            elif create and v == "sysid":
                n = self.next()
                if n.kind != "number":
                    raise _syntax_error(n)
                out.append(("sysid", int(n.value)))
            elif create and v == "admin":
                out.append(("adminmembers", ("ADMIN", self.role_list())))
            elif create and v == "role":
                out.append(("rolemembers", ("ROLE", self.role_list())))
            elif create and v == "in":
                what = "IN " + self.expect_word("role", "group").upper()
                out.append(("addroleto", (what, self.role_list())))
            else:
                raise _syntax_error(t)


def _checked(written: list[tuple[str, object]]) -> dict:
    """The options as CreateRole/AlterRole check them: each at most once, a valid
    connection limit; then what raympp does not implement is refused."""
    options: dict = {}
    for name, value in written:
        if name in options:
            raise errors.SyntaxError_("conflicting or redundant options")
        options[name] = value
    limit = options.get("connectionlimit")
    if limit is not None and limit < -1:
        raise errors.InvalidParameterValue(f"invalid connection limit: {limit}")
    for name, why in (("createdb", "raympp has one database and no CREATE DATABASE"),
                      ("replication", "raympp has no replication"),
                      ("bypassrls", "raympp has no row-level security")):
        if options.get(name):
            raise _unsupported(f"role option {name.upper()}", why)
    if limit is not None and limit != -1:
        raise _unsupported("role option CONNECTION LIMIT",
                           "connections are not limited per role (only -1 is accepted)")
    if "validUntil" in options:
        raise _unsupported("role option VALID UNTIL", "passwords do not expire")
    for name in _MEMBERSHIP:
        if name in options:
            raise _unsupported(f"role option {options[name][0]}",
                               "roles cannot be members of roles")
    password = options.get("password")
    if password is not None and _MD5.fullmatch(password):
        raise _unsupported("an MD5 password hash",
                           "raympp authenticates with SCRAM-SHA-256 only")
    return options


def parse(text: str) -> RoleStatement:
    p = _Parser(text)
    verb = p.expect_word("create", "alter", "drop")
    kind = p.expect_word("role", "user", "group")
    if kind == "user" and p.is_word("mapping") and (p.is_word("for", ahead=1) or
                                                    p.is_word("if", ahead=1)):
        raise _unsupported(f"{verb.upper()} USER MAPPING", "raympp has no foreign servers")
    if verb == "create":
        name = p.role_id()
        if p.is_word("with"):
            p.next()
        options = _checked(p.options(create=True))
        p.end()
        return RoleStatement("CREATE ROLE", RoleSpec(name), options,
                             login_default=kind == "user")
    if verb == "drop":
        if_exists = p.is_word("if") and p.is_word("exists", ahead=1)
        if if_exists:
            p.next()
            p.next()
        specs = p.role_list()
        p.end()
        return RoleStatement("DROP ROLE", drop=specs, if_exists=if_exists)
    # ALTER
    if p.is_word("all") and kind != "group":
        p.next()
        if p.is_word("set", "reset", "in"):
            raise _unsupported("ALTER ROLE ... SET", "raympp has no per-role settings")
        raise _syntax_error(p.peek())
    start = p.i
    spec = p.role_spec()
    if p.is_word("rename"):
        p.i = start
        old = p.role_id()
        p.next()
        p.expect_word("to")
        new = p.role_id()
        p.end()
        return RoleStatement("ALTER ROLE", RoleSpec(old), new_name=new)
    if kind == "group":
        if p.is_word("add", "drop"):
            raise _unsupported(f"ALTER GROUP ... {p.peek().value.upper()} USER",
                               "roles cannot be members of roles")
        raise _syntax_error(p.peek())
    if p.is_word("in"):
        p.next()
        if not p.is_word("database"):
            raise _syntax_error(p.peek())
        raise _unsupported("ALTER ROLE ... SET", "raympp has no per-role settings")
    if p.is_word("set", "reset"):
        raise _unsupported("ALTER ROLE ... SET", "raympp has no per-role settings")
    if p.is_word("with"):
        p.next()
    options = _checked(p.options(create=False))
    p.end()
    return RoleStatement("ALTER ROLE", spec, options)
