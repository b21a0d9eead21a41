"""The CTEs of a correlated subquery that read the outer query's columns.

subquery_domain.py evaluates a correlated subquery once per distinct outer value, over
the domain D of those values. A CTE of the subquery whose body reads outer columns
(asyncpg's type introspection has one, recursive, in a scalar subquery) is evaluated for
every value of D at once: its rows carry D's columns as leading key columns "?k0", ...,
and the subquery reads each row of it only with the D row it was computed for.

    WITH [RECURSIVE] c(x, ...) AS (SELECT ... outer.a ... FROM r WHERE ...
                                   [UNION [ALL] SELECT ... FROM c, s WHERE ...])
    SELECT ... FROM c, ...

becomes, with D joined first in the non-recursive parts and the keys carried through the
recursive reference,

    WITH [RECURSIVE] c("?k0", x, ...) AS (SELECT D.k0, ... D.k0 ... FROM D, r WHERE ...
                                          [UNION [ALL] SELECT c."?k0", ... FROM c, s ...])
    SELECT ... FROM c, ... WHERE c."?k0" matches D.k0 (NULL matching NULL)

UNION's duplicate elimination then runs per key, as it would per outer row. What is
refused (0A000): aggregates, GROUP BY, ORDER BY or LIMIT in such a CTE, and reading it
anywhere but in the subquery's own FROM list (an inner join).
"""

from __future__ import annotations

from sqlglot import exp

from planner import errors, types
from planner import plan as pl
from planner.bind_expr import find_aggregate
from planner.bind_recursive import references
from planner.schema import identifier

KEY = "?k{}"


def with_of(select: exp.Expression) -> exp.With | None:
    return select.args.get("with_") or select.args.get("with")


def prepare(qb, select: exp.Select, outer, params, inner_scope, outer_references):
    """Register every CTE of `select` in the binder `qb` (as placeholders with the right
    column names) and find the outer references in their bodies. Returns {CTE name: [(
    part of its body, [(column, outer position)])]} for the CTEs that read outer columns.
    `inner_scope` / `outer_references` are subquery_domain's (passed in: it imports this
    module)."""
    with_ = with_of(select)
    found = {}
    if with_ is None:
        return found
    recursive = bool(with_.args.get("recursive"))
    for cte in with_.expressions:
        name = identifier(cte.args["alias"].this)
        body = cte.this
        parts = [body]
        if recursive and isinstance(body, exp.Union) and references(body.expression, name):
            parts = [body.this, body.expression]
        names = _column_names(cte, parts[0])
        placeholder = pl.Values(rows=(), fields=tuple(pl.Field(n, types.TEXT) for n in names))
        qb.with_relation(name, placeholder, tuple(names))  # the recursive term reads it
        refs = []
        for part in parts:
            if not isinstance(part, exp.Select):
                continue
            got = outer_references(part, inner_scope(qb, part, outer), outer, params)
            if got:
                refs.append((part, got))
        if refs:
            found[name] = refs
    return found


def _column_names(cte: exp.CTE, first: exp.Expression) -> list[str]:
    alias = cte.args.get("alias")
    cols = [c.name.lower() for c in alias.columns] if alias is not None else []
    if isinstance(first, exp.Select):
        outs = [e.alias_or_name.lower() if not isinstance(e, exp.Alias) else e.alias
                for e in first.expressions]
        cols += outs[len(cols):]
    return cols


def rewrite(select: exp.Select, found: dict, positions: list[int], domain: str,
            domain_column) -> None:
    """Rewrite `select`'s correlated CTEs (in place) to carry D's columns, and make the
    subquery read each of their rows with its own D row. `domain` is D's relation name,
    `domain_column(j)` its j-th column as a reference."""
    with_ = with_of(select)
    keys = range(len(positions))
    for cte in with_.expressions:
        name = identifier(cte.args["alias"].this)
        if name not in found:
            continue
        alias = cte.args["alias"]
        if alias.columns:
            alias.set("columns", [exp.to_identifier(KEY.format(j), quoted=True) for j in keys]
                      + list(alias.columns))
        body = cte.this
        parts = [body.this, body.expression] if isinstance(body, exp.Union) and references(
            body.expression, name) else [body]
        by_part = {id(p): refs for p, refs in found[name]}
        for k, part in enumerate(parts):
            if not isinstance(part, exp.Select):
                raise errors.FeatureNotSupported(
                    "set operations inside a CTE that reads the outer query's columns")
            _check(part)
            refs = by_part.get(id(part), [])
            if k == 1:  # the recursive term: the keys come with its working table's rows
                ref = references(part, name)[0]
                source = ref.alias_or_name
                for col, i in refs:
                    col.replace(exp.column(KEY.format(positions.index(i)), source, quoted=True))
                lead = [exp.alias_(exp.column(KEY.format(j), source, quoted=True),
                                   KEY.format(j), quoted=True) for j in keys]
            else:
                for col, i in refs:
                    col.replace(domain_column(positions.index(i)))
                _join_domain_first(part, domain)
                lead = [exp.alias_(domain_column(j), KEY.format(j), quoted=True) for j in keys]
            part.set("expressions", lead + list(part.expressions))
    _match_keys(select, set(found), keys, domain_column)


def _check(part: exp.Select) -> None:
    if part.args.get("group") or part.args.get("having") or any(
            find_aggregate(e) for e in part.expressions) or any(
            part.args.get(k) for k in ("order", "limit", "offset")):
        raise errors.FeatureNotSupported(
            "aggregates, GROUP BY, ORDER BY or LIMIT in a CTE that reads the outer query's "
            "columns")


def _join_domain_first(part: exp.Select, domain: str) -> None:
    from_key = "from_" if "from_" in part.arg_types else "from"
    from_ = part.args.get(from_key)
    table = exp.Table(this=exp.to_identifier(domain, quoted=True))
    joins = [exp.Join(this=from_.this)] + list(part.args.get("joins") or []) \
        if from_ is not None else []
    part.set(from_key, exp.From(this=table))
    part.set("joins", joins or None)


def _match_keys(select: exp.Select, names: set[str], keys, domain_column) -> None:
    """WHERE conditions pairing each FROM reference to a correlated CTE with D's row; any
    other reference to one is 0A000."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or []
        if not j.args.get("side") and (j.args.get("kind") or "").upper() in ("", "CROSS", "INNER")]
    direct = {id(t) for t in items if isinstance(t, exp.Table)}
    conds = []
    for t in list(select.find_all(exp.Table)):
        if not isinstance(t.this, exp.Identifier) or t.db or identifier(t.this) not in names:
            continue
        owner = _cte_of(t, select)
        if owner is not None and identifier(owner.args["alias"].this) == identifier(t.this):
            continue  # the CTE's own recursive reference: rewritten above
        if owner is not None or id(t) not in direct:
            raise errors.FeatureNotSupported(
                "a CTE that reads the outer query's columns, read other than in the "
                "subquery's FROM list")
        source = t.alias_or_name
        for j in keys:
            mine = exp.column(KEY.format(j), source, quoted=True)
            theirs = domain_column(j)
            conds.append(exp.EQ(this=exp.Is(this=mine.copy(), expression=exp.Null()),
                                expression=exp.Is(this=theirs.copy(), expression=exp.Null())))
            conds.append(exp.EQ(this=_text_or_empty(mine), expression=_text_or_empty(theirs)))
    where = select.args.get("where")
    if where is not None:
        conds.insert(0, where.this)
    select.set("where", exp.Where(this=exp.and_(*conds)))


def _text_or_empty(col: exp.Column) -> exp.Expression:
    """The key as text, '' for NULL (with the IS NULL pair above: NULL matching NULL). The
    carried key is D's own value, so equal text is equal value."""
    return exp.Coalesce(this=exp.Cast(this=col.copy(), to=exp.DataType.build("text")),
                        expressions=[exp.Literal.string("")])


def _cte_of(node: exp.Expression, select: exp.Select) -> exp.CTE | None:
    """The CTE of `select` whose body `node` is in, if any."""
    p = node.parent
    while p is not None and p is not select:
        if isinstance(p, exp.CTE):
            return p
        p = p.parent
    return None
