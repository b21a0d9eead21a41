"""ClickBench for raympp: `raympp clickbench load|run`, a client of a running server.

- sql.py        create.sql and the 43 queries, verbatim
- synthetic.py  a deterministic synthetic `hits` with realistic shapes, block by block
- load.py       create the table; load synthetic blocks, the real hits.parquet or hits.tsv
- run.py        run the queries through pgwire and time them
- compare.py    check an answer against an oracle's under ORDER BY / LIMIT ties
- command.py    the subcommands' arguments and rich output
"""
