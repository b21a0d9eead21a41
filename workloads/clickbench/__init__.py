"""ClickBench for raympp: `raympp clickbench load|run`, a client of a running server.

- sql.py        create.sql and the 43 queries, verbatim
- load.py       create the table; load synthetic blocks, the real hits.parquet or hits.tsv
- run.py        run the queries through pgwire and time them
- compare.py    check an answer against an oracle's under ORDER BY / LIMIT ties
- command.py    the subcommands' arguments and rich output

The synthetic `hits` rows are the table function clickbench_hits's: its columns and blocks
in planner/table_functions.py, its generator in segment/table_functions/clickbench_hits.py.
"""
