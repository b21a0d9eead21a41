"""Result column names as PostgreSQL 15's FigureColname gives them (drivers such as pg8000
and pandas key rows by them): a cast keeps a column's or function's name, else takes the
type's internal name."""

import pytest

from test_system_tables import _bind


@pytest.mark.parametrize("sql, name", [
    ("SELECT NULL::int", "int4"), ("SELECT 1::integer", "int4"), ("SELECT 1::smallint", "int2"),
    ("SELECT (1 + 2)::bigint", "int8"), ("SELECT 1::real", "float4"),
    ("SELECT 2.5::double precision", "float8"), ("SELECT 1::numeric(10, 2)", "numeric"),
    ("SELECT 'a'::varchar(3)", "varchar"), ("SELECT 'x'::char(2)", "bpchar"),
    ("SELECT 'a'::text", "text"), ("SELECT DATE '2020-01-01'", "date"),
    ("SELECT INTERVAL '1 day'", "interval"), ("SELECT '1 day'::interval", "interval"),
    ("SELECT true::int", "int4"), ("SELECT CASE WHEN true THEN 1 END::text", "text"),
    ("SELECT true", "?column?"), ("SELECT count(*)::int FROM pg_class", "count"),
    ("SELECT relname::text FROM pg_class", "relname"),
    # an aggregate keeps its name under WITHIN GROUP and FILTER
    ("SELECT mode() WITHIN GROUP (ORDER BY oid) FROM pg_class", "mode"),
    ("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY oid) FROM pg_class", "percentile_disc"),
    ("SELECT count(*) FILTER (WHERE oid > 1) FROM pg_class", "count"),
    ("SELECT string_agg(relname::text, ',' ORDER BY relname DESC) FILTER (WHERE oid > 1) "
     "FROM pg_class", "string_agg"),
    ("SELECT string_agg(relname::text, ',') FROM pg_class", "string_agg"),
    ("SELECT every(oid > 1) FROM pg_class", "every"),
    ("SELECT bool_and(oid > 1) FROM pg_class", "bool_and"),
    ("SELECT stddev(relnatts::float8) FROM pg_class", "stddev"),
    ("SELECT array_agg(oid) FILTER (WHERE oid > 1) FROM pg_class", "array_agg"),
    ("SELECT percentile_cont(array[0.5]) WITHIN GROUP (ORDER BY relnatts) FROM pg_class",
     "percentile_cont"),
    *[(f"SELECT {f}(1) WITHIN GROUP (ORDER BY oid) FROM pg_class", f)
      for f in ("rank", "dense_rank", "percent_rank", "cume_dist")],
    *[(f"SELECT {f}(oid::int, relnatts) FROM pg_class", f)
      for f in ("regr_count", "regr_sxx", "regr_syy", "regr_sxy", "regr_avgx", "regr_avgy",
                "regr_slope", "regr_intercept", "regr_r2", "corr", "covar_pop", "covar_samp")],
    *[(f"SELECT {f}(relnatts) FILTER (WHERE oid > 1) FROM pg_class", f)
      for f in ("bit_and", "bit_or", "bit_xor")],
])
def test_names(sql, name):
    assert _bind(sql).names[0] == name
