"""TPC-H tooling: `raympp tpch load` and `raympp tpch run`, also used by bench/tpch.py and
tests/e2e/test_tpch.py.

- schema:  the eight tables, their PostgreSQL types and raympp distribution policies.
- datagen: runs the tpchgen-cli generator into Parquet files, table by table, in parts.
- loader:  creates the tables and loads them over pgwire (COPY of server-side files or
           COPY FROM STDIN), one transaction per table; a table that fails is dropped.
- queries: finds and reads the 22 queries of ../shared/tpch/queries.
- compare: compares two engines' answers (ORDER BY respected, numeric tolerance).
- cli:     the `tpch` subcommand.

Everything here talks to raympp only as a PostgreSQL client; nothing reaches into the
engine, so the same code loads PostgreSQL in the benchmark.
"""
