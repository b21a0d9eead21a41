"""Generators of the built-in table functions (planner/table_functions.py), run on the
segments by segment/operators/table_function.py.

- clickbench_hits  the synthetic ClickBench `hits` rows, block by block
"""
