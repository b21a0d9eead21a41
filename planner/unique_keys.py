"""PRIMARY KEY and UNIQUE constraints of CREATE TABLE: read, named and checked against the
table's distribution, as Greenplum does.

A key is enforced by the segments (segment/storage/unique_check.py): every key holds the
distribution key's columns, so rows of equal keys are stored on one segment, which alone
can tell whether a new row's key is there already. A table with keys and no DISTRIBUTED
clause is distributed by the columns its keys share (Greenplum: its primary key); a key without all of the distribution key's columns, or a randomly
distributed table with a key, is 42P16 with Greenplum's words. Replicated tables hold
every row on every segment and check there. Names follow PostgreSQL: t_pkey, t_a_b_key.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass

from sqlglot import exp

from planner import errors
from planner.types import Kind
from planner.schema import ColumnDef, DistKind, DistPolicy, UniqueKey, identifier


@dataclass(frozen=True)
class KeySpec:
    """A key as CREATE TABLE writes it: its name if given, column names, primary or not."""

    name: str | None
    columns: tuple[str, ...]
    primary: bool


def extract(schema: exp.Schema) -> list[KeySpec]:
    """Take the PRIMARY KEY and UNIQUE constraints out of a CREATE TABLE's column list
    (so that what is left is columns and the constraints other code reads)."""
    specs: list[KeySpec] = []
    kept = []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            constraints = []
            for c in item.constraints:
                kind = c.kind
                name = identifier(c.this) if c.this is not None else None
                if isinstance(kind, exp.PrimaryKeyColumnConstraint):
                    specs.append(KeySpec(name, (identifier(item.this),), True))
                elif isinstance(kind, exp.UniqueColumnConstraint) and kind.this is None:
                    _plain_unique(kind)
                    specs.append(KeySpec(name, (identifier(item.this),), False))
                else:
                    constraints.append(c)
            item.set("constraints", constraints)
            kept.append(item)
            continue
        name = None
        body = item
        if isinstance(item, exp.Constraint) and len(item.expressions) == 1:
            name = identifier(item.this)
            body = item.expressions[0]
        if isinstance(body, exp.PrimaryKey):
            specs.append(KeySpec(name, tuple(identifier(e.this if isinstance(e, exp.Column)
                                                        else e) for e in body.expressions),
                                 True))
        elif isinstance(body, exp.UniqueColumnConstraint) and isinstance(body.this, exp.Schema):
            _plain_unique(body)
            specs.append(KeySpec(name, tuple(identifier(e) for e in body.this.expressions),
                                 False))
        else:
            kept.append(item)
    schema.set("expressions", kept)
    return specs


def _plain_unique(c: exp.UniqueColumnConstraint) -> None:
    if c.args.get("nulls"):
        raise errors.FeatureNotSupported("UNIQUE NULLS NOT DISTINCT")


def resolve(table: str, specs: list[KeySpec], columns: list[ColumnDef]
            ) -> tuple[tuple[UniqueKey, ...], list[ColumnDef]]:
    """The keys by column position, named as PostgreSQL names them, and the columns with
    the primary key's made NOT NULL."""
    if sum(s.primary for s in specs) > 1:
        raise errors.QueryError(f'multiple primary keys for table "{table}" are not allowed',
                                "42P16")
    names = {c.name: i for i, c in enumerate(columns)}
    taken: set[str] = set()
    keys = []
    for s in specs:
        for col in s.columns:
            if col not in names:
                raise errors.UndefinedColumn(f'column "{col}" named in key does not exist')
        if len(set(s.columns)) != len(s.columns):
            dup = next(c for c in s.columns if s.columns.count(c) > 1)
            raise errors.QueryError(f'column "{dup}" appears twice in '
                                    f'{"primary key" if s.primary else "unique"} constraint',
                                    "42701")
        positions = tuple(names[c] for c in s.columns)
        if any(columns[p].type.is_array or columns[p].type.kind in (Kind.JSON, Kind.JSONB)
               for p in positions):
            raise errors.FeatureNotSupported("PRIMARY KEY or UNIQUE over array or json columns")
        if any(k.columns == positions for k in keys):
            continue  # PostgreSQL makes one index for a key written twice
        name = s.name or _default_name(table, s, taken)
        if name in taken:
            raise errors.QueryError(f'relation "{name}" already exists', "42P07")
        taken.add(name)
        keys.append(UniqueKey(name, positions, s.primary))
    pk = {p for k in keys if k.primary for p in k.columns}
    cols = [c if i not in pk or c.not_null else dataclasses.replace(c, not_null=True)
            for i, c in enumerate(columns)]
    keys.sort(key=lambda k: not k.primary)
    return tuple(keys), cols


def default_base(table: str, primary: bool, columns) -> str:
    """The name PostgreSQL gives a key before suffixes: t_pkey, t_a_b_key."""
    return f"{table}_pkey" if primary else f"{table}_{'_'.join(columns)}_key"


def _default_name(table: str, s: KeySpec, taken: set[str]) -> str:
    base = default_base(table, s.primary, s.columns)
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name


def default_policy(keys: tuple[UniqueKey, ...]) -> DistPolicy | None:
    """The distribution of a table with keys and no DISTRIBUTED clause: the columns of its
    primary key (else of its first UNIQUE key) that every key has, so that each key is
    checked on one segment (Greenplum takes the primary key); None without keys, or when
    the keys share no column (then check_policy refuses the first-column default)."""
    if not keys:
        return None
    common = [c for c in keys[0].columns if all(c in k.columns for k in keys)]
    return DistPolicy(DistKind.HASHED, tuple(common)) if common else None


def check_policy(table: str, policy: DistPolicy, keys: tuple[UniqueKey, ...],
                 columns: list[ColumnDef]) -> None:
    """42P16 unless every key can be checked on one segment (Greenplum's rule)."""
    for k in keys:
        what = "PRIMARY KEY" if k.primary else "UNIQUE constraint"
        if policy.kind is DistKind.RANDOM:
            raise errors.QueryError(f"{what} and DISTRIBUTED RANDOMLY are incompatible",
                                    "42P16")
        if policy.kind is DistKind.HASHED and not set(policy.keys) <= set(k.columns):
            raise errors.QueryError(
                f"{what} and DISTRIBUTED BY definitions are incompatible", "42P16",
                hint=f"When there is both a {what} and a DISTRIBUTED BY clause, the "
                     f"DISTRIBUTED BY clause must be a subset of the {what}.")
