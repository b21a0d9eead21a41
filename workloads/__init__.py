"""Benchmark workloads: kits that drive a running raympp (or PostgreSQL, DuckDB) as clients.

- tpch/        `raympp tpch load|run`: tpchgen-cli data, the 22 queries, answer comparison
- clickbench/  `raympp clickbench load|run`: ClickBench's `hits` and 43 queries
- tpcds/       the TPC-DS kit of bench/tpcds.py and tests/e2e/test_tpcds.py (dsdgen, 99 queries)

The server packages (coordinator, planner, segment, motion) never import workloads; the
`raympp` command finds the kits' subcommands through the `raympp.commands` entry points
(pyproject.toml). The kits may import anything of the server (the ClickBench kit reads
the synthetic generator that segments run as the table function clickbench_hits).
"""
