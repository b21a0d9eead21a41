"""Sequences as PostgreSQL 15 has them: their options, the statements that make and change
them, and the arithmetic of nextval/setval.

`SequenceOptions` are a sequence's parameters (AS type, INCREMENT, MINVALUE, MAXVALUE,
START, CACHE, CYCLE) after PostgreSQL's defaults and checks (sequence.c init_params, with
its SQLSTATEs and wording). `SequenceDef` is a sequence in the catalog: its id (oid 16384 +
id, from the tables' counter), name, options and the column that owns it (OWNED BY,
SERIAL, identity). `parse` reads CREATE/ALTER/DROP SEQUENCE (sqlglot drops some of their
clauses, so they are read here); `step` is the next value of nextval. Counters live on the
coordinator (coordinator/sequences.py); nothing here keeps state.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from planner import errors
from planner.schema import RelationName

_TYPES = {"smallint": ("smallint", -2**15, 2**15 - 1), "int2": ("smallint", -2**15, 2**15 - 1),
          "integer": ("integer", -2**31, 2**31 - 1), "int": ("integer", -2**31, 2**31 - 1),
          "int4": ("integer", -2**31, 2**31 - 1),
          "bigint": ("bigint", -2**63, 2**63 - 1), "int8": ("bigint", -2**63, 2**63 - 1)}
TYPE_OIDS = {"smallint": 21, "integer": 23, "bigint": 20}


@dataclass(frozen=True, slots=True)
class SequenceOptions:
    """A sequence's parameters, complete (PostgreSQL's defaults filled in)."""

    type: str = "bigint"  # smallint | integer | bigint
    increment: int = 1
    minvalue: int = 1
    maxvalue: int = 2**63 - 1
    start: int = 1
    cache: int = 1
    cycle: bool = False

    @property
    def type_oid(self) -> int:
        return TYPE_OIDS[self.type]


@dataclass(frozen=True, slots=True)
class Owner:
    """The column a sequence belongs to (dropped with its table)."""

    table_id: int
    column: str


@dataclass(frozen=True, slots=True)
class SequenceDef:
    """A sequence of the catalog. `identity`: made for an identity column (then it cannot
    be dropped on its own)."""

    id: int
    name: str
    options: SequenceOptions
    owner: Owner | None = None
    identity: bool = False
    comment: str | None = None  # COMMENT ON SEQUENCE


@dataclass(frozen=True, slots=True)
class OptionList:
    """Sequence options as written (None: not given). `no_min`/`no_max`: NO MINVALUE /
    NO MAXVALUE; `restart`: RESTART given (ALTER), `restart_with` its value if any."""

    type: str | None = None
    increment: int | None = None
    minvalue: int | None = None
    maxvalue: int | None = None
    no_min: bool = False
    no_max: bool = False
    start: int | None = None
    cache: int | None = None
    cycle: bool | None = None
    restart: bool = False
    restart_with: int | None = None
    owned_by: tuple[RelationName, str] | None = None
    owned_none: bool = False


def resolve(given: OptionList, base: SequenceOptions | None = None) -> SequenceOptions:
    """The options after `given` (over `base` for ALTER, else PostgreSQL's defaults), with
    PostgreSQL's checks (22023)."""
    type_name = given.type or (base.type if base is not None else "bigint")
    if type_name not in _TYPES:
        raise errors.QueryError("sequence type must be smallint, integer, or bigint", "22023")
    type_name, low, high = _TYPES[type_name]
    increment = given.increment if given.increment is not None else (
        base.increment if base is not None else 1)
    if increment == 0:
        raise errors.QueryError("INCREMENT must not be zero", "22023")
    type_changed = base is not None and given.type is not None and _TYPES[given.type][0] != base.type
    if given.maxvalue is not None:
        maxvalue = given.maxvalue
    elif base is None or given.no_max or (type_changed and base.maxvalue == _TYPES[base.type][2]):
        maxvalue = high if increment > 0 else -1
    else:
        maxvalue = base.maxvalue
    if given.minvalue is not None:
        minvalue = given.minvalue
    elif base is None or given.no_min or (type_changed and base.minvalue == _TYPES[base.type][1]):
        minvalue = 1 if increment > 0 else low
    else:
        minvalue = base.minvalue
    if maxvalue < low or maxvalue > high:
        raise errors.QueryError(f"MAXVALUE ({maxvalue}) is out of range for sequence data "
                                f"type {type_name}", "22023")
    if minvalue < low or minvalue > high:
        raise errors.QueryError(f"MINVALUE ({minvalue}) is out of range for sequence data "
                                f"type {type_name}", "22023")
    if minvalue >= maxvalue:
        raise errors.QueryError(f"MINVALUE ({minvalue}) must be less than MAXVALUE "
                                f"({maxvalue})", "22023")
    if given.start is not None:
        start = given.start
    elif base is not None:
        start = base.start
    else:
        start = minvalue if increment > 0 else maxvalue
    if start < minvalue:
        raise errors.QueryError(f"START value ({start}) cannot be less than MINVALUE "
                                f"({minvalue})", "22023")
    if start > maxvalue:
        raise errors.QueryError(f"START value ({start}) cannot be greater than MAXVALUE "
                                f"({maxvalue})", "22023")
    cache = given.cache if given.cache is not None else (base.cache if base is not None else 1)
    if cache <= 0:
        raise errors.QueryError(f"CACHE ({cache}) must be greater than zero", "22023")
    cycle = given.cycle if given.cycle is not None else (base.cycle if base is not None else False)
    return SequenceOptions(type_name, increment, minvalue, maxvalue, start, cache, cycle)


def restart_value(given: OptionList, options: SequenceOptions) -> int | None:
    """The value RESTART [WITH n] sets (checked against the bounds), None without RESTART."""
    if not given.restart:
        return None
    value = given.restart_with if given.restart_with is not None else options.start
    if value < options.minvalue:
        raise errors.QueryError(f"RESTART value ({value}) cannot be less than MINVALUE "
                                f"({options.minvalue})", "22023")
    if value > options.maxvalue:
        raise errors.QueryError(f"RESTART value ({value}) cannot be greater than MAXVALUE "
                                f"({options.maxvalue})", "22023")
    return value


def step(name: str, options: SequenceOptions, last: int, is_called: bool) -> int:
    """The value nextval returns after (last, is_called), or PostgreSQL's 2200H."""
    if not is_called:
        return last
    o = options
    if o.increment > 0:
        if last > o.maxvalue - o.increment:
            if not o.cycle:
                raise errors.QueryError(
                    f'nextval: reached maximum value of sequence "{name}" ({o.maxvalue})',
                    "2200H")
            return o.minvalue
        return last + o.increment
    if last < o.minvalue - o.increment:
        if not o.cycle:
            raise errors.QueryError(
                f'nextval: reached minimum value of sequence "{name}" ({o.minvalue})', "2200H")
        return o.maxvalue
    return last + o.increment


def check_setval(name: str, options: SequenceOptions, value: int) -> None:
    """22003 for a setval value outside the sequence's bounds."""
    if value < options.minvalue or value > options.maxvalue:
        raise errors.QueryError(
            f'setval: value {value} is out of bounds for sequence "{name}" '
            f"({options.minvalue}..{options.maxvalue})", "22003")


# --- statements -----------------------------------------------------------------------------
class Action(enum.Enum):
    CREATE = "CREATE SEQUENCE"
    ALTER = "ALTER SEQUENCE"
    DROP = "DROP SEQUENCE"


@dataclass(frozen=True, slots=True)
class SequenceStatement:
    """CREATE SEQUENCE [IF NOT EXISTS] name options, ALTER SEQUENCE [IF EXISTS] name
    options, DROP SEQUENCE [IF EXISTS] name [, ...] [CASCADE | RESTRICT]."""

    action: Action
    names: tuple[RelationName, ...]
    options: OptionList = OptionList()
    if_exists: bool = False  # IF NOT EXISTS for CREATE
    cascade: bool = False


_TOKEN = re.compile(r"""\s*(?:
      (?P<ident>"(?:[^"]|"")+")
    | (?P<number>[+-]?\d+)(?![A-Za-z0-9_$.])
    | (?P<word>[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)
    | (?P<punct>[.,()])
    )""", re.VERBOSE)


class _Tokens:
    def __init__(self, text: str):
        self.items: list[tuple[str, str]] = []
        pos, text = 0, text.rstrip().rstrip(";")
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise errors.SyntaxError_(f'syntax error at or near "{text[pos:].split()[0]}"')
            kind = m.lastgroup
            self.items.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self, *words: str) -> bool:
        if self.i + len(words) > len(self.items):
            return False
        return all(k == "word" and v.upper() == w
                   for (k, v), w in zip(self.items[self.i:self.i + len(words)], words))

    def take(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.take(*words):
            self.fail()

    def done(self) -> bool:
        return self.i >= len(self.items)

    def fail(self):
        if self.done():
            raise errors.SyntaxError_("syntax error at end of input")
        raise errors.SyntaxError_(f'syntax error at or near "{self.items[self.i][1]}"')

    def name_part(self) -> str:
        if self.done():
            self.fail()
        kind, v = self.items[self.i]
        if kind == "ident":
            self.i += 1
            return v[1:-1].replace('""', '"')
        if kind == "word":
            self.i += 1
            return v.lower()
        self.fail()

    def dotted(self) -> list[str]:
        parts = [self.name_part()]
        while not self.done() and self.items[self.i] == ("punct", "."):
            self.i += 1
            parts.append(self.name_part())
        return parts

    def relation(self) -> RelationName:
        parts = self.dotted()
        if len(parts) > 3:
            raise errors.SyntaxError_("improper qualified name (too many dotted names): "
                                      + ".".join(parts))
        parts = [None] * (3 - len(parts)) + parts
        return RelationName(parts[2], parts[1], parts[0])

    def number(self) -> int:
        if self.done() or self.items[self.i][0] != "number":
            self.fail()
        v = int(self.items[self.i][1])
        self.i += 1
        if not -2**63 <= v < 2**63:
            raise errors.QueryError(f'value "{v}" is out of range for type bigint', "22003")
        return v

    def punct(self, p: str) -> bool:
        if not self.done() and self.items[self.i] == ("punct", p):
            self.i += 1
            return True
        return False


def parse(text: str) -> SequenceStatement:
    """CREATE/ALTER/DROP SEQUENCE as PostgreSQL's grammar reads them."""
    t = _Tokens(text)
    if t.take("DROP", "SEQUENCE"):
        if_exists = t.take("IF", "EXISTS")
        names = [t.relation()]
        while t.punct(","):
            names.append(t.relation())
        cascade = t.take("CASCADE")
        if not cascade:
            t.take("RESTRICT")
        if not t.done():
            t.fail()
        return SequenceStatement(Action.DROP, tuple(names), if_exists=if_exists,
                                 cascade=cascade)
    if t.take("CREATE", "SEQUENCE"):
        action, if_exists = Action.CREATE, t.take("IF", "NOT", "EXISTS")
    elif t.take("ALTER", "SEQUENCE"):
        action, if_exists = Action.ALTER, t.take("IF", "EXISTS")
    else:
        t.fail()
    name = t.relation()
    options = option_list(t, alter=action is Action.ALTER, until_end=True)
    return SequenceStatement(action, (name,), options, if_exists)


def regclass_name(text: str) -> RelationName:
    """A regclass input ('s', 'public.s', '"S"') as a relation name: dotted, quoted parts
    kept as written, others folded to lower case."""
    return _Tokens(text).relation()


def parse_options(text: str) -> OptionList:
    """The options of an identity column's `(sequence options)`."""
    return option_list(_Tokens(text), alter=False, until_end=True)


def option_list(t: _Tokens, alter: bool, until_end: bool) -> OptionList:
    seen: dict = {}

    def put(key: str, **values):
        if key in seen:
            raise errors.QueryError("conflicting or redundant options", "42601")
        seen[key] = True
        given.update(values)

    given: dict = {}
    while not t.done():
        if t.take("AS"):
            parts = t.dotted()
            type_name = parts[-1]
            if t.punct("("):
                t.fail()
            if type_name not in _TYPES:
                if type_name in ("numeric", "text", "real", "float8", "float4", "boolean",
                                 "double", "varchar", "date", "timestamp"):
                    raise errors.QueryError(
                        "sequence type must be smallint, integer, or bigint", "22023")
                raise errors.QueryError(f'type "{type_name}" does not exist', "42704")
            put("as", type=type_name)
        elif t.take("INCREMENT"):
            t.take("BY")
            put("increment", increment=t.number())
        elif t.take("MINVALUE"):
            put("minvalue", minvalue=t.number())
        elif t.take("NO", "MINVALUE"):
            put("minvalue", no_min=True)
        elif t.take("MAXVALUE"):
            put("maxvalue", maxvalue=t.number())
        elif t.take("NO", "MAXVALUE"):
            put("maxvalue", no_max=True)
        elif t.take("START"):
            t.take("WITH")
            put("start", start=t.number())
        elif t.take("CACHE"):
            put("cache", cache=t.number())
        elif t.take("CYCLE"):
            put("cycle", cycle=True)
        elif t.take("NO", "CYCLE"):
            put("cycle", cycle=False)
        elif t.take("OWNED", "BY"):
            if t.take("NONE"):
                put("owned", owned_none=True)
            else:
                parts = t.dotted()
                if len(parts) < 2:
                    raise errors.QueryError("invalid OWNED BY option", "42601",
                                            hint="Specify OWNED BY table.column or OWNED BY NONE.")
                rel = RelationName(parts[-2], parts[-3] if len(parts) > 2 else None,
                                   parts[-4] if len(parts) > 3 else None)
                put("owned", owned_by=(rel, parts[-1]))
        elif t.peek("SEQUENCE", "NAME"):
            raise errors.FeatureNotSupported("the SEQUENCE NAME option (sequences are named "
                                             "table_column_seq)")
        elif alter and t.take("RESTART"):
            value = None
            if t.take("WITH") or (not t.done() and t.items[t.i][0] == "number"):
                value = t.number()
            put("restart", restart=True, restart_with=value)
        else:
            t.fail()
    return OptionList(**given)



@dataclass(frozen=True, slots=True)
class ColumnSequence:
    """The sequence CREATE TABLE makes for a SERIAL or identity column: its options as
    written (the type is the column's) and whether it serves an identity column."""

    column: str
    options: OptionList
    identity: bool
