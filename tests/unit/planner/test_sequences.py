"""Sequence options, statements and nextval's arithmetic (planner/sequences.py), and the
pretty and plain forms of stored expressions (planner/pretty_expr.py)."""

import pytest

from planner import errors, pretty_expr, sequences as sq
from planner.schema import RelationName


def _opts(text: str, base=None) -> sq.SequenceOptions:
    st = sq.parse(text)
    return sq.resolve(st.options, base)


def test_defaults_as_postgresql():
    assert _opts("CREATE SEQUENCE s") == sq.SequenceOptions()
    o = _opts("CREATE SEQUENCE s INCREMENT -1")
    assert (o.minvalue, o.maxvalue, o.start) == (-2**63, -1, -1)
    o = _opts("CREATE SEQUENCE s AS smallint")
    assert (o.type, o.maxvalue, o.type_oid) == ("smallint", 32767, 21)
    o = _opts("CREATE SEQUENCE s AS int4 INCREMENT BY 5 MINVALUE 10 NO MAXVALUE CACHE 3 CYCLE")
    assert o == sq.SequenceOptions("integer", 5, 10, 2**31 - 1, 10, 3, True)


@pytest.mark.parametrize(("text", "sqlstate", "message"), [
    ("CREATE SEQUENCE s INCREMENT 0", "22023", "INCREMENT must not be zero"),
    ("CREATE SEQUENCE s MINVALUE 5 MAXVALUE 5", "22023", "MINVALUE (5) must be less than MAXVALUE (5)"),
    ("CREATE SEQUENCE s START 0", "22023", "START value (0) cannot be less than MINVALUE (1)"),
    ("CREATE SEQUENCE s AS smallint MINVALUE -40000", "22023",
     "MINVALUE (-40000) is out of range for sequence data type smallint"),
    ("CREATE SEQUENCE s CACHE -1", "22023", "CACHE (-1) must be greater than zero"),
    ("CREATE SEQUENCE s CYCLE NO CYCLE", "42601", "conflicting or redundant options"),
    ("CREATE SEQUENCE s AS text", "22023", "sequence type must be smallint, integer, or bigint"),
])
def test_option_errors(text, sqlstate, message):
    with pytest.raises(errors.QueryError) as e:
        _opts(text)
    assert (e.value.sqlstate, e.value.message) == (sqlstate, message)


def test_statements():
    st = sq.parse('CREATE SEQUENCE IF NOT EXISTS public."S" OWNED BY t.c')
    assert st.action is sq.Action.CREATE and st.if_exists
    assert st.names == (RelationName("S", "public"),)
    assert st.options.owned_by == (RelationName("t"), "c")
    st = sq.parse("ALTER SEQUENCE s RESTART WITH 7 OWNED BY NONE")
    assert (st.options.restart, st.options.restart_with, st.options.owned_none) == (True, 7, True)
    st = sq.parse("DROP SEQUENCE IF EXISTS a, b CASCADE")
    assert st.names == (RelationName("a"), RelationName("b")) and st.cascade and st.if_exists
    with pytest.raises(errors.SyntaxError_):
        sq.parse("CREATE SEQUENCE s RESTART")  # RESTART belongs to ALTER
    with pytest.raises(errors.SyntaxError_):
        sq.parse("DROP SEQUENCE s junk")


def test_alter_keeps_what_it_does_not_name():
    base = _opts("CREATE SEQUENCE s AS integer MAXVALUE 100 START 10")
    o = _opts("ALTER SEQUENCE s INCREMENT 3", base)
    assert (o.increment, o.maxvalue, o.start, o.type) == (3, 100, 10, "integer")
    o = _opts("ALTER SEQUENCE s NO MAXVALUE", base)
    assert o.maxvalue == 2**31 - 1
    st = sq.parse("ALTER SEQUENCE s RESTART")
    assert sq.restart_value(st.options, base) == 10
    with pytest.raises(errors.QueryError, match="RESTART value"):
        sq.restart_value(sq.parse("ALTER SEQUENCE s RESTART 101").options, base)


def test_step_bounds_and_cycle():
    o = sq.SequenceOptions("integer", 2, 1, 5, 1, 1, False)
    assert sq.step("s", o, 1, False) == 1
    assert sq.step("s", o, 1, True) == 3
    with pytest.raises(errors.QueryError) as e:
        sq.step("s", o, 5, True)
    assert e.value.sqlstate == "2200H"
    cyc = sq.SequenceOptions("integer", 2, 1, 5, 1, 1, True)
    assert sq.step("s", cyc, 5, True) == 1
    down = sq.SequenceOptions("bigint", -3, -7, -1, -1, 1, True)
    assert sq.step("s", down, -7, True) == -1
    big = sq.SequenceOptions()
    with pytest.raises(errors.QueryError, match=r"\(9223372036854775807\)"):
        sq.step("s", big, 2**63 - 1, True)  # no overflow past the type's end


def test_setval_bounds():
    with pytest.raises(errors.QueryError) as e:
        sq.check_setval("s", sq.SequenceOptions(maxvalue=10), 11)
    assert e.value.sqlstate == "22003"
    assert e.value.message == 'setval: value 11 is out of bounds for sequence "s" (1..10)'


@pytest.mark.parametrize(("stored", "pretty"), [
    ("(b > 0)", "b > 0"),
    ("(((a > 0) AND (b < 10)) OR (c IS NULL))", "a > 0 AND b < 10 OR c IS NULL"),
    ("((a + b) < 500)", "(a + b) < 500"),
    ("(((a * b) + 1) - (a - b))", "a * b + 1 - (a - b)"),
    ("(NOT ((a > b) OR c))", "NOT (a > b OR c)"),
    ("(c <> ''::text)", "c <> ''::text"),
    ("nextval('t_a_seq'::regclass)", "nextval('t_a_seq'::regclass)"),
    ("now()", "now()"),
    ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
    ("'-5'::integer", "'-5'::integer"),
])
def test_pretty_forms(stored, pretty):
    assert pretty_expr.pretty(stored) == pretty


def test_plain_form_parenthesizes_every_operator():
    import sqlglot
    tree = sqlglot.parse_one("SELECT (2 + 3) * 4").expressions[0]
    assert pretty_expr.parenthesized(tree) == "((2 + 3) * 4)"
