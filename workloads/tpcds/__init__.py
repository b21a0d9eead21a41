"""TPC-DS: kit.py generates the data with DuckDB's dsdgen, loads raympp over pgwire and
compares the 99 queries' answers with DuckDB's (bench/tpcds.py, tests/e2e/test_tpcds.py)."""
