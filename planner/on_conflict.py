"""INSERT ... ON CONFLICT as the MERGE it means (planner/merge.py runs it).

    INSERT INTO t [AS a] (cols) <rows> ON CONFLICT (key) DO UPDATE SET ... [WHERE c]
    = MERGE INTO t [AS a] USING (<rows>) AS excluded(cols) ON <key columns equal>
      WHEN MATCHED [AND c] THEN UPDATE SET ...
      WHEN NOT MATCHED THEN INSERT (cols) VALUES (excluded.cols)

DO NOTHING has no WHEN MATCHED clause, and its rows are first reduced to one per key
(the first in their order: a later row with the key of an earlier one conflicts with it,
as in PostgreSQL, and is skipped). The conflict target must be a PRIMARY KEY or UNIQUE
constraint of the table (by its columns or ON CONSTRAINT name; DO NOTHING without one
means the table's only key), else 42P10 as in PostgreSQL. Rows with a NULL in the key
never conflict. Not done (0A000): RETURNING, a target with an index expression or WHERE,
DO NOTHING without a target on a table with several keys. Two proposed rows with one key
under DO UPDATE fail with 23505 (PostgreSQL: 21000).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from planner import errors
from planner.schema import TableDef, UniqueKey, identifier
from planner.sql_dialect import RaymppPostgres

_ROW = "\x00position"  # the rows' order, for DO NOTHING's first row per key


def as_merge(tree: exp.Insert, table: TableDef, columns: list[int]) -> exp.Merge:
    """The MERGE that does what `tree` (an INSERT ... ON CONFLICT) does."""
    conflict = tree.args["conflict"]
    if tree.args.get("returning"):
        raise errors.FeatureNotSupported("INSERT ... ON CONFLICT ... RETURNING")
    action = conflict.args["action"].name.upper()
    key = _key(conflict, table, action)
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    names = [table.columns[i].name for i in columns]
    source = tree.expression
    if isinstance(source, exp.Values):
        values = source.copy()
        values.set("alias", exp.TableAlias(this=exp.to_identifier("v")))
        source = exp.select("*").from_(values)
    source = source.copy()
    key_names = [table.columns[i].name for i in key.columns]
    if action == "DO NOTHING":
        source = _first_per_key(source, names, key_names)
    src = exp.Subquery(this=source, alias=exp.TableAlias(
        this=exp.to_identifier("excluded"),
        columns=[exp.to_identifier(n, quoted=True) for n in names]))
    qual = target.alias_or_name
    on = exp.and_(*[exp.EQ(this=exp.column(n, table=qual, quoted=True),
                           expression=exp.column(n, table="excluded", quoted=True))
                    for n in key_names])
    whens = []
    if action == "DO UPDATE":
        cond = conflict.args.get("where")
        update = exp.Update(expressions=[e.copy() for e in conflict.expressions])
        whens.append(exp.When(matched=True, source=False, then=update,
                              condition=cond.this.copy() if cond is not None else None))
    insert = exp.Insert(
        this=exp.Tuple(expressions=[exp.column(n, quoted=True) for n in names]),
        expression=exp.Tuple(expressions=[exp.column(n, table="excluded", quoted=True)
                                          for n in names]))
    whens.append(exp.When(matched=False, source=False, then=insert))
    return exp.Merge(this=target.copy(), using=src, on=on, whens=exp.Whens(expressions=whens))


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
        if not table.unique:
            # Nothing can conflict: every row is inserted (a key-less table has no
            # constraint that could reject one).
            raise errors.FeatureNotSupported(
                "ON CONFLICT DO NOTHING on a table without PRIMARY KEY or UNIQUE constraints")
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


def _first_per_key(source: exp.Expression, names: list[str], keys: list[str]) -> exp.Select:
    """The proposed rows, one per key: the first of each (rows with a NULL in the key all
    stay: they conflict with nothing)."""
    numbered = exp.select(
        exp.Star(), _window("row_number() over ()").as_(_ROW, quoted=True)).from_(
        exp.Subquery(this=source, alias=exp.TableAlias(
            this=exp.to_identifier("p"),
            columns=[exp.to_identifier(n, quoted=True) for n in names])))
    part = [exp.column(k, quoted=True) for k in keys]
    ranked = exp.select(
        *[exp.column(n, quoted=True) for n in names],
        _window("row_number() over (partition by {} order by {})".format(
            ", ".join(p.sql(dialect="postgres") for p in part),
            exp.column(_ROW, quoted=True).sql(dialect="postgres"))).as_("\x00rank", quoted=True)
    ).from_(
        exp.Subquery(this=numbered, alias=exp.TableAlias(this=exp.to_identifier("n"))))
    nulls = [exp.Is(this=exp.column(k, quoted=True), expression=exp.Null()) for k in keys]
    keep = exp.or_(exp.EQ(this=exp.column("\x00rank", quoted=True),
                          expression=exp.Literal.number(1)), *nulls)
    return exp.select(*[exp.column(n, quoted=True) for n in names]).from_(
        exp.Subquery(this=ranked, alias=exp.TableAlias(this=exp.to_identifier("r")))
    ).where(keep)


def _window(text: str) -> exp.Expression:
    return sqlglot.parse_one(text, dialect=RaymppPostgres)
