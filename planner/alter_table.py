"""ALTER TABLE: its actions, and the table they make (coordinator/alter.py runs them).

Each action changes the table's definition; together they also say how each column of
the new table is computed from the old row (`Change.exprs`, expressions over the old
table's columns), which the segments apply when they rewrite the table's chunks
(ShardStore.rewrite): ADD COLUMN (its DEFAULT, evaluated per row, else NULL for the rows
there are), DROP COLUMN (with the CHECK constraints that read it, as PostgreSQL drops
them), RENAME COLUMN, ALTER COLUMN TYPE (an assignment cast, or USING), SET/DROP NOT
NULL. RENAME TO and ALTER COLUMN SET/DROP DEFAULT change only the catalog. PostgreSQL's
messages and SQLSTATEs; what raympp does not do (constraints added, SERIAL or identity
columns added, a default calling a sequence function for the rows there are, renaming or
retyping a column a CHECK reads or that has a default or owns a sequence, SET SCHEMA,
changing a distribution key column's type) is 0A000 before anything changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

import re

from planner import catalog_names as cn
from planner import constraints, errors, types
from planner import expr as ex
from planner.bind_expr import ExprBinder
from planner.coercion import bind_assign
from planner.schema import (CheckDef, ColumnDef, DistKind, DistPolicy, Identity, TableDef,
                            TableStats, identifier)
from planner.scope import Scope, ScopeColumn
from planner.type_names import sql_type


@dataclass
class Change:
    """The table an ALTER TABLE makes from `old`, and its rows from the old ones."""

    old: TableDef
    new: TableDef
    exprs: list[ex.Expr]          # per new column, over the old table's columns
    not_null_checks: list[str] = field(default_factory=list)  # columns that must hold no NULL
    rename: str | None = None     # RENAME TO

    @property
    def rewrites(self) -> bool:
        """Whether the chunks change (anything but RENAME TO)."""
        old = self.old
        same = [ex.ColumnRef(i, c.type, c.name) for i, c in enumerate(old.columns)]
        # A default is the catalog's only (the rows stay): ALTER COLUMN SET DEFAULT.
        shape = [replace(c, default=None) for c in self.new.columns]
        return self.exprs != same or shape != [replace(c, default=None) for c in old.columns]


def plan(old: TableDef, tree: exp.Alter, owns_sequence=lambda column: False) -> Change:
    """Apply `tree`'s actions in order to `old` (errors before anything changes).
    `owns_sequence(column name)`: whether a sequence is owned by that column of `old`."""
    change = Change(old, old, [ex.ColumnRef(i, c.type, c.name)
                               for i, c in enumerate(old.columns)])
    actions = tree.args.get("actions") or []
    if not actions:
        raise errors.SyntaxError_("ALTER TABLE needs an action")
    if len(actions) > 1 and any(isinstance(a, (exp.RenameColumn, exp.AlterRename))
                                for a in actions):
        # PostgreSQL's grammar: RENAME is a statement of its own, not a list item.
        raise errors.SyntaxError_('syntax error at or near "RENAME"')
    for action in actions:
        _refuse_dependents(change, action, owns_sequence)
        _apply(change, action)
    if not change.new.columns:
        raise errors.FeatureNotSupported("tables without columns (ALTER TABLE dropping the "
                                         "last column)")
    stats = {c.name: old.stats.columns[o.name] for c, o in _kept_pairs(change)
             if o.name in old.stats.columns}
    change.new = replace(change.new, stats=TableStats(old.stats.rows, stats))
    if any(ex.calls_sequence(e) for e in change.exprs):
        raise errors.FeatureNotSupported(
            "ALTER TABLE ... USING a sequence function (the rows are rewritten on the "
            "segments)")
    if change.new.columns != old.columns:  # the CHECKs read the columns by position
        new = change.new
        change.new = replace(new, checks=tuple(
            CheckDef(k.name, k.sql, constraints.stored_check(k.sql, new.columns, new.name))
            for k in new.checks))
    return change


def reads(sql: str, column: str) -> bool:
    """Whether a stored CHECK text names `column`."""
    return re.search(rf'(?<![\w"]){re.escape(cn.quote_ident(column))}(?![\w"])', sql) \
        is not None


def _refuse_dependents(change: Change, action: exp.Expression, owns_sequence) -> None:
    """0A000 for what would have to follow a column's new name or type and does not here:
    the CHECKs that read it, its default (for a new type), the sequence it owns; and for
    dropping a column
    that owns a sequence (PostgreSQL drops the sequence with it)."""
    table = change.new
    if isinstance(action, exp.RenameColumn):
        name, what = identifier(action.this.this), "renaming"
    elif isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
        name, what = identifier(action.this), "changing the type of"
    elif isinstance(action, exp.Drop) and (action.args.get("kind") or "").upper() == "COLUMN":
        for col in action.args.get("tables") or []:
            name = identifier(col.this)
            if table.column_index(name) is not None and owns_sequence(name):
                raise errors.FeatureNotSupported(
                    f'ALTER TABLE dropping column "{name}", which owns a sequence')
        return
    else:
        return
    i = table.column_index(name)
    if i is None:
        return  # its own error follows
    col = table.columns[i]
    # A default reads no column, so it keeps its meaning under a new name; under a new
    # type it would have to be converted, which is not done here.
    has_default = col.default is not None and what != "renaming"
    if any(reads(k.sql, name) for k in table.checks) or has_default \
            or col.identity is not Identity.NONE or owns_sequence(name):
        raise errors.FeatureNotSupported(
            f'ALTER TABLE {what} column "{name}", which has a default, owns a sequence or '
            "is read by a CHECK constraint")


def _kept_pairs(change: Change):
    """(new column, old column) for each new column that is an old one unchanged in type."""
    for c, e in zip(change.new.columns, change.exprs):
        if isinstance(e, ex.ColumnRef) and change.old.columns[e.index].type == c.type:
            yield c, change.old.columns[e.index]


def _apply(change: Change, action: exp.Expression) -> None:
    table = change.new
    _refuse_key_change(change, action)
    if isinstance(action, exp.ColumnDef):
        _add_column(change, action)
    elif isinstance(action, exp.Drop) and (action.args.get("kind") or "").upper() == "COLUMN":
        for col in action.args.get("tables") or []:
            _drop_column(change, identifier(col.this), bool(action.args.get("exists")))
    elif isinstance(action, exp.RenameColumn):
        old_name, new_name = identifier(action.this.this), identifier(action.args["to"].this)
        i = _column(table, old_name)
        if table.column_index(new_name) is not None:
            raise errors.QueryError(
                f'column "{new_name}" of relation "{table.name}" already exists', "42701")
        _set_column(change, i, replace(table.columns[i], name=new_name))
    elif isinstance(action, exp.AlterRename):
        target = action.this
        if isinstance(target, exp.Table) and target.args.get("db") is not None:
            raise errors.SyntaxError_('syntax error at or near "."')
        change.rename = identifier(target.this if isinstance(target, exp.Table) else target)
        change.new = replace(change.new, name=change.rename)
    elif isinstance(action, exp.AlterColumn):
        _alter_column(change, action)
    else:
        raise errors.FeatureNotSupported(
            f"ALTER TABLE {action.sql(dialect='postgres')}")


def _refuse_key_change(change: Change, action: exp.Expression) -> None:
    """Columns of a PRIMARY KEY or UNIQUE constraint keep their name and type (the
    segments check the keys by column name): 0A000 for changing them."""
    table = change.new
    keyed = {table.columns[i].name for k in table.unique for i in k.columns}
    if isinstance(action, exp.Drop):
        names = [identifier(c.this) for c in action.args.get("tables") or []]
    elif isinstance(action, (exp.RenameColumn, exp.AlterColumn)):
        names = [identifier(action.this.this if isinstance(action, exp.RenameColumn)
                            else action.this)]
        if isinstance(action, exp.AlterColumn) and action.args.get("dtype") is None:
            names = []  # SET/DROP NOT NULL
    else:
        names = []
    hit = [n for n in names if n in keyed]
    if hit:
        raise errors.FeatureNotSupported(
            f'ALTER TABLE changing column "{hit[0]}" of a PRIMARY KEY or UNIQUE constraint')


def _add_column(change: Change, c: exp.ColumnDef) -> None:
    table = change.new
    name = identifier(c.this)
    if table.column_index(name) is not None:
        if c.args.get("exists"):
            return  # PostgreSQL: NOTICE column ... already exists, skipping
        raise errors.QueryError(f'column "{name}" of relation "{table.name}" already exists',
                                "42701")
    if c.args.get("kind") is None:
        raise errors.SyntaxError_(f'column "{name}" needs a type')
    not_null, default = False, None
    for k in c.constraints:
        if isinstance(k.kind, exp.NotNullColumnConstraint):
            not_null = not k.kind.args.get("allow_null")
        elif isinstance(k.kind, exp.DefaultColumnConstraint) and default is None:
            default = k.kind.this
        else:
            raise errors.FeatureNotSupported(
                f"column option {k.sql(dialect='postgres')!r} in ALTER TABLE ADD COLUMN "
                "(constraints, SERIAL and identity columns are not implemented there)")
    if getattr(c.args["kind"].this, "name", None) in ("SERIAL", "BIGSERIAL", "SMALLSERIAL") \
            and not c.args["kind"].expressions:
        raise errors.FeatureNotSupported("ALTER TABLE ADD COLUMN of a serial type")
    t = sql_type(c.args["kind"])
    if t.is_numeric and t.precision is None:
        t = types.UNCONSTRAINED  # as CREATE TABLE gives it
    if t.is_array and t.elem.is_numeric and t.elem.precision is None:
        t = types.array_of(types.UNCONSTRAINED)
    col = ColumnDef(name, t, not_null)
    value: ex.Expr = ex.Literal(None, t)
    if default is not None:
        col = replace(col, default=constraints.default_text(default, col))
        if col.default is not None:
            value = constraints.bind_default(col.default, col)
            if ex.calls_sequence(value):
                # The rows there are get it on the segments, which have no counters.
                raise errors.FeatureNotSupported(
                    "ALTER TABLE ADD COLUMN with a default that calls a sequence function")
    change.new = replace(table, columns=table.columns + (col,))
    change.exprs.append(value)
    if not_null:
        change.not_null_checks.append(name)


def _drop_column(change: Change, name: str, if_exists: bool) -> None:
    table = change.new
    i = table.column_index(name)
    if i is None:
        if if_exists:
            return  # PostgreSQL: NOTICE column ... does not exist, skipping
        raise errors.UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
    if i in table.policy.keys:
        # As Greenplum: the rows stay where they are, and the table is distributed
        # randomly from now on (its NOTICE: "dropping a column that is part of the
        # distribution policy forces a random distribution policy").
        policy = DistPolicy(DistKind.RANDOM, ())
    else:
        policy = replace(table.policy, keys=tuple(k - (k > i) for k in table.policy.keys))
    unique = tuple(replace(k, columns=tuple(c - (c > i) for c in k.columns))
                   for k in table.unique)
    # PostgreSQL drops the CHECK constraints that read a dropped column with it.
    checks = tuple(k for k in table.checks if not reads(k.sql, name))
    # ... and the indexes over it (CREATE INDEX's: key columns are not dropped here).
    indexes = tuple(replace(x, columns=tuple(c - (c > i) for c in x.columns))
                    for x in table.indexes if i not in x.columns)
    change.new = replace(table, columns=table.columns[:i] + table.columns[i + 1:],
                         policy=policy, unique=unique, checks=checks, indexes=indexes)
    del change.exprs[i]


def _alter_column(change: Change, action: exp.AlterColumn) -> None:
    table = change.new
    name = identifier(action.this)
    i = _column(table, name)
    col = table.columns[i]
    if action.args.get("dtype") is not None:
        _alter_type(change, i, sql_type(action.args["dtype"]), action.args.get("using") or None)
    elif action.args.get("allow_null") is not None:
        not_null = not action.args["allow_null"]
        if not not_null and any(k.primary and i in k.columns for k in table.unique):
            raise errors.QueryError(f'column "{name}" is in a primary key', "42P16")
        _set_column(change, i, replace(col, not_null=not_null))
        if not_null:
            change.not_null_checks.append(name)
    elif action.args.get("default") is not None or action.args.get("drop"):
        _set_default(change, i, action.args.get("default"))
    else:
        raise errors.FeatureNotSupported(f"ALTER TABLE {action.sql(dialect='postgres')}")


def _set_default(change: Change, i: int, default: exp.Expression | None) -> None:
    """ALTER COLUMN SET DEFAULT / DROP DEFAULT: the catalog only (the rows stay)."""
    table = change.new
    col = table.columns[i]
    if col.identity is not Identity.NONE:
        raise errors.QueryError(
            f'column "{col.name}" of relation "{table.name}" is an identity column', "42601",
            hint=None if default is not None else
            "Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead.")
    text = constraints.default_text(default, col) if default is not None else None
    _set_column(change, i, replace(col, default=text))


def _alter_type(change: Change, i: int, t: types.SqlType, using: exp.Expression | None):
    table = change.new
    col = table.columns[i]
    if i in table.policy.keys:
        raise errors.FeatureNotSupported(
            f'changing the type of column "{col.name}": it is in the distribution key of '
            f'"{table.name}"')
    if t.is_numeric and t.precision is None:
        t = types.UNCONSTRAINED
    if using is not None:
        # USING reads the row as it is before this statement (PostgreSQL's semantics).
        scope = Scope([ScopeColumn(change.old.name, c.name, c.type)
                       for c in change.old.columns])
        value = bind_assign(ExprBinder(scope).bind(using), t, col.name)
    else:
        try:
            value = bind_assign(change.exprs[i], t, col.name)
        except errors.QueryError as e:
            if e.sqlstate != "42804":
                raise
            raise errors.QueryError(
                f'column "{col.name}" cannot be cast automatically to type {t}', "42804",
                hint=f'You might need to specify "USING {col.name}::{t}".') from None
    change.exprs[i] = value
    _set_column(change, i, replace(col, type=t))


def _set_column(change: Change, i: int, col: ColumnDef) -> None:
    table = change.new
    change.new = replace(table, columns=table.columns[:i] + (col,) + table.columns[i + 1:])


def _column(table: TableDef, name: str) -> int:
    i = table.column_index(name)
    if i is None:
        raise errors.UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
    return i
