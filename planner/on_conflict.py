"""INSERT ... ON CONFLICT as the MERGE it means (planner/merge.py runs it).

    INSERT INTO t [AS a] (cols) <rows> ON CONFLICT (key) DO UPDATE SET ... [WHERE c]
    = MERGE INTO t [AS a] USING (<rows>) AS excluded(cols) ON <key columns equal>
      WHEN MATCHED [AND c] THEN UPDATE SET ...
      WHEN NOT MATCHED THEN INSERT (cols) VALUES (excluded.cols)

PostgreSQL takes the proposed rows one at a time, so two of them with one key meet: DO
NOTHING inserts the first and skips the others (here its rows are first reduced to the
first per key, in their order). DO UPDATE fails (21000, "cannot affect row a second
time") when a proposed row conflicts with a row this command inserted or updated: that
is, when a row that is not its key's last one finds no row of the key in the table, or
one it updates (WHERE c holds). `OnConflict.guard` is the query that finds such a row,
run before anything is written. Once it finds none, a key missing from the table was
proposed once, and of the rows proposed for a key in the table at most one acts (WHERE
holds): the MERGE's matched rows are those that act, so it does what PostgreSQL does,
whichever order a second reading of the rows has. Rows with a NULL in the key never
conflict.

The conflict target must be a PRIMARY KEY or UNIQUE constraint of the table (by its
columns or ON CONSTRAINT name; DO NOTHING without one means the table's only key), else
42P10 as in PostgreSQL; DO NOTHING without a target on a table without keys is the plain
INSERT (`conflicts_impossible`). RETURNING is computed over the rows inserted and the new versions
of the rows updated (planner/merge.py). Not done (0A000): a target with an index
expression or WHERE, DO NOTHING without a target on a table with several keys, and what
needs the proposed row's defaults first: a key column left out of the column list,
EXCLUDED.c of a left-out column, DEFAULT in VALUES.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from planner import default_values as dv
from planner import errors
from planner.schema import TableDef, UniqueKey, identifier
from planner.sql_dialect import RaymppPostgres

_ROW = "\x00position"  # the rows' order: DO NOTHING's first row per key, the guard's last
_RANK = "\x00rank"


@dataclass(frozen=True)
class OnConflict:
    """`merge` does the statement once `guard` (DO UPDATE only) yields no row; a row
    from it is 21000. `returning` is the RETURNING list, over the target as `merge`
    names it."""

    merge: exp.Merge
    guard: exp.Select | None
    returning: list[exp.Expression] | None


def cardinality_violation() -> errors.QueryError:
    return errors.QueryError(
        "ON CONFLICT DO UPDATE command cannot affect row a second time", "21000",
        hint="Ensure that no rows proposed for insertion within the same command have "
             "duplicate constrained values.")


def conflicts_impossible(tree: exp.Insert, table: TableDef) -> bool:
    """ON CONFLICT DO NOTHING without a target on a table without keys: nothing can
    conflict, so PostgreSQL inserts every row; the statement is the plain INSERT."""
    conflict = tree.args["conflict"]
    return (conflict.args["action"].name.upper() == "DO NOTHING" and not table.unique
            and conflict.args.get("constraint") is None
            and not conflict.args.get("conflict_keys"))


def as_merge(tree: exp.Insert, table: TableDef, columns: list[int]) -> OnConflict:
    """The MERGE that does what `tree` (an INSERT ... ON CONFLICT) does."""
    conflict = tree.args["conflict"]
    returning = tree.args.get("returning")
    action = conflict.args["action"].name.upper()
    key = _key(conflict, table, action)
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    source = tree.expression
    if not isinstance(tree.this, exp.Schema):
        # No column list: the values fill the first columns, the rest take their defaults
        columns = columns[:_width(source) or len(columns)]
    names = [table.columns[i].name for i in columns]
    _refuse_defaults(conflict, table, columns, key, source)
    if isinstance(source, exp.Values):
        values = _typed_nulls(source.copy(), [table.columns[i] for i in columns])
        # PostgreSQL's name of a VALUES list; no user's column or table is called so
        values.set("alias", exp.TableAlias(this=exp.to_identifier("*VALUES*", quoted=True)))
        source = exp.select("*").from_(values)
    source = source.copy()
    key_names = [table.columns[i].name for i in key.columns]
    qual = target.alias_or_name
    on = exp.and_(*[exp.EQ(this=exp.column(n, table=qual, quoted=True),
                           expression=exp.column(n, table="excluded", quoted=True))
                    for n in key_names])
    cond = conflict.args.get("where")
    guard = None
    if action == "DO NOTHING":
        source = _first_per_key(source, names, key_names)
    else:
        guard = _guard(source, names, key_names, target, on,
                       cond.this if cond is not None else None)
    src = exp.Subquery(this=source, alias=_excluded(names))
    whens = []
    if action == "DO UPDATE":
        update = exp.Update(expressions=[e.copy() for e in conflict.expressions])
        whens.append(exp.When(matched=True, source=False, then=update,
                              condition=cond.this.copy() if cond is not None else None))
    insert = exp.Insert(
        this=exp.Tuple(expressions=[exp.column(n, quoted=True) for n in names]),
        expression=exp.Tuple(expressions=[exp.column(n, table="excluded", quoted=True)
                                          for n in names]))
    whens.append(exp.When(matched=False, source=False, then=insert))
    merge = exp.Merge(this=target.copy(), using=src, on=on, whens=exp.Whens(expressions=whens))
    return OnConflict(merge, guard, list(returning.expressions) if returning else None)


def _width(source: exp.Expression) -> int | None:
    """How many columns the INSERT's rows have, where the text says (None: a SELECT *)."""
    if isinstance(source, exp.Values):
        row = source.expressions[0]
        return len(row.expressions) if isinstance(row, exp.Tuple) else 1
    if isinstance(source, exp.Select) and not any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in source.expressions):
        return len(source.expressions)
    return None


def _key(conflict: exp.OnConflict, table: TableDef, action: str) -> UniqueKey:
    by_name = conflict.args.get("constraint")
    cols = conflict.args.get("conflict_keys") or []
    if by_name is not None:
        name = identifier(by_name)
        for k in table.unique:
            if k.name == name:
                return k
        raise errors.QueryError(
            f'constraint "{name}" for table "{table.name}" does not exist', "42704")
    if not cols:
        if action == "DO UPDATE":
            raise errors.SyntaxError_(
                "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                hint="For example, ON CONFLICT (column_name).")
        if len(table.unique) == 1:
            return table.unique[0]
        if not table.unique:  # `conflicts_impossible`: run as a plain INSERT
            raise errors.InternalError("ON CONFLICT DO NOTHING on a table without keys")
        raise errors.FeatureNotSupported(
            "ON CONFLICT DO NOTHING without a conflict target on a table with several keys")
    wanted = set()
    for c in cols:
        e = c.this if isinstance(c, exp.Ordered) else c
        if not isinstance(e, exp.Column) or e.table:
            raise errors.FeatureNotSupported(
                f"ON CONFLICT target {c.sql(dialect='postgres')} (only column names)")
        wanted.add(identifier(e.this))
    for k in table.unique:
        if {table.columns[i].name for i in k.columns} == wanted:
            return k
    raise errors.QueryError("there is no unique or exclusion constraint matching the ON "
                            "CONFLICT specification", "42P10")


def _refuse_defaults(conflict: exp.OnConflict, table: TableDef, columns: list[int],
                     key: UniqueKey, source: exp.Expression) -> None:
    """0A000 where the proposed row would need a column's default before the MERGE:
    `excluded` here holds the listed columns only, as written."""
    left_out = [c.name for i, c in enumerate(table.columns) if i not in columns]
    for i in key.columns:
        if i not in columns:
            raise errors.FeatureNotSupported(
                f'INSERT ... ON CONFLICT leaving key column "{table.columns[i].name}" to '
                "its default")
    for col in conflict.find_all(exp.Column):
        if col.table and identifier(col.args["table"]) == "excluded" and \
                identifier(col.this) in left_out:
            raise errors.FeatureNotSupported(
                f'EXCLUDED.{identifier(col.this)} in INSERT ... ON CONFLICT, a column the '
                "INSERT leaves to its default")
    if isinstance(source, exp.Values) and any(
            dv.is_default(e) for row in source.expressions for e in
            (row.expressions if isinstance(row, exp.Tuple) else [row])):
        raise errors.FeatureNotSupported("DEFAULT in the VALUES of INSERT ... ON CONFLICT")


def _typed_nulls(values: exp.Values, columns) -> exp.Values:
    """VALUES with each bare NULL cast to its column's type, as INSERT types it (a column
    of NULLs would otherwise be text, and `key = excluded.key` would not bind)."""
    for row in values.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else []
        for item, col in zip(items, columns):
            if isinstance(item, exp.Null):
                item.replace(exp.Cast(this=exp.Null(), to=exp.DataType.build(
                    col.type.sql(), dialect="postgres")))
    return values


def _excluded(names: list[str], extra: tuple[str, ...] = ()) -> exp.TableAlias:
    return exp.TableAlias(this=exp.to_identifier("excluded"),
                          columns=[exp.to_identifier(n, quoted=True)
                                   for n in list(names) + list(extra)])


def _ranked(source: exp.Expression, names: list[str], keys: list[str],
            last: bool) -> exp.Select:
    """The proposed rows and their rank among the rows of their key: 1 for the first (or
    last) in their order."""
    numbered = exp.select(
        exp.Star(), _window("row_number() over ()").as_(_ROW, quoted=True)).from_(
        exp.Subquery(this=source, alias=exp.TableAlias(
            this=exp.to_identifier("p"),
            columns=[exp.to_identifier(n, quoted=True) for n in names])))
    part = [exp.column(k, quoted=True) for k in keys]
    return exp.select(
        *[exp.column(n, quoted=True) for n in names],
        _window("row_number() over (partition by {} order by {}{})".format(
            ", ".join(p.sql(dialect="postgres") for p in part),
            exp.column(_ROW, quoted=True).sql(dialect="postgres"),
            " desc" if last else "")).as_(_RANK, quoted=True)
    ).from_(
        exp.Subquery(this=numbered, alias=exp.TableAlias(this=exp.to_identifier("n"))))


def _first_per_key(source: exp.Expression, names: list[str], keys: list[str]) -> exp.Select:
    """The proposed rows, one per key: the first of each (rows with a NULL in the key all
    stay: they conflict with nothing)."""
    ranked = _ranked(source, names, keys, last=False)
    nulls = [exp.Is(this=exp.column(k, quoted=True), expression=exp.Null()) for k in keys]
    keep = exp.or_(exp.EQ(this=exp.column(_RANK, quoted=True),
                          expression=exp.Literal.number(1)), *nulls)
    return exp.select(*[exp.column(n, quoted=True) for n in names]).from_(
        exp.Subquery(this=ranked, alias=exp.TableAlias(this=exp.to_identifier("r")))
    ).where(keep)


def _guard(source: exp.Expression, names: list[str], keys: list[str], target: exp.Table,
           on: exp.Expression, cond: exp.Expression | None) -> exp.Select:
    """A row of it: a proposed row, not its key's last, that inserts (no row of its key
    in the table) or updates (WHERE holds), so that a later one meets its new row.
    Without WHERE every such row acts: a key proposed twice is enough (a GROUP BY, which
    needs neither the rows' order nor the table)."""
    known = [exp.Not(this=exp.Is(this=exp.column(k, table="excluded", quoted=True),
                                 expression=exp.Null())) for k in keys]
    if cond is None:
        proposed = exp.Subquery(this=source.copy(), alias=_excluded(names))
        twice = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1))
        return exp.select(exp.Literal.number(1)).from_(proposed).where(
            exp.and_(*known)).group_by(
            *[exp.column(k, table="excluded", quoted=True) for k in keys]).having(
            twice).limit(1)
    ranked = exp.Subquery(this=_ranked(source.copy(), names, keys, last=True),
                          alias=_excluded(names, (_RANK,)))
    first_key = exp.column(keys[0], table=target.alias_or_name, quoted=True)
    acts = exp.or_(exp.Is(this=first_key, expression=exp.Null()), exp.Paren(this=cond.copy()))
    later = exp.GT(this=exp.column(_RANK, table="excluded", quoted=True),
                   expression=exp.Literal.number(1))
    return exp.select(exp.Literal.number(1)).from_(ranked).join(
        target.copy(), on=on.copy(), join_type="left").where(
        exp.and_(later, *known, exp.Paren(this=acts))).limit(1)


def _window(text: str) -> exp.Expression:
    return sqlglot.parse_one(text, dialect=RaymppPostgres)
