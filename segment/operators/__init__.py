"""Vectorized operators: one module per operator, each registering a builder for its plan
node type in base's registry (importing this package registers them all)."""

from segment.operators import (  # noqa: F401
    append,
    delete_rows,
    expand,
    fetch,
    filter,
    generate_series,
    hash_agg,
    hash_join,
    insert,
    limit,
    materialized,
    motion_recv,
    project,
    project_set,
    rehome,
    scan,
    sort,
    stats_scan,
    table_function,
    values,
    window,
)
