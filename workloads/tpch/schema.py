"""The eight TPC-H tables: columns with PostgreSQL types, distribution, and their DDL.

Types follow the specification's column kinds in PostgreSQL terms: numeric(15,2) for money,
quantities, discounts and taxes; date for dates; char(1) for the one-letter flags; integer
keys except the order key, which is bigint because it outgrows integer above SF ~350;
varchar(N) with the specification's widths for every other string (not char(N): blank
padding would change what the queries print and compare). Every column is NOT NULL, as
generated.

Distribution: lineitem and orders on the order key (so their join is co-located), part and
partsupp on the part key, customer on the customer key, supplier on the supplier key;
nation and region are tiny and replicated to every segment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]   # (name, SQL type)
    distributed_by: tuple[str, ...]        # () = DISTRIBUTED REPLICATED
    rows_per_sf: int                       # approximate rows at SF 1 (exact but lineitem)
    fixed_rows: bool = False               # nation and region do not scale

    def rows(self, sf: float) -> int:
        return self.rows_per_sf if self.fixed_rows else max(1, int(self.rows_per_sf * sf))

    @property
    def column_names(self) -> list[str]:
        return [c for c, _ in self.columns]

    def distribution_sql(self) -> str:
        if not self.distributed_by:
            return "DISTRIBUTED REPLICATED"
        return f"DISTRIBUTED BY ({', '.join(self.distributed_by)})"

    def create_sql(self, distributed: bool = True) -> str:
        """CREATE TABLE; with `distributed` False, plain PostgreSQL/DuckDB DDL."""
        cols = ",\n".join(f"    {c} {t} NOT NULL" for c, t in self.columns)
        tail = f" {self.distribution_sql()}" if distributed else ""
        return f"CREATE TABLE {self.name} (\n{cols}\n){tail}"


MONEY = "numeric(15,2)"

# Small tables first: a load that breaks on a type problem breaks quickly.
TABLES: tuple[Table, ...] = (
    Table("region", (
        ("r_regionkey", "integer"), ("r_name", "varchar(25)"), ("r_comment", "varchar(152)"),
    ), (), 5, fixed_rows=True),
    Table("nation", (
        ("n_nationkey", "integer"), ("n_name", "varchar(25)"), ("n_regionkey", "integer"),
        ("n_comment", "varchar(152)"),
    ), (), 25, fixed_rows=True),
    Table("supplier", (
        ("s_suppkey", "integer"), ("s_name", "varchar(25)"), ("s_address", "varchar(40)"),
        ("s_nationkey", "integer"), ("s_phone", "varchar(15)"), ("s_acctbal", MONEY),
        ("s_comment", "varchar(101)"),
    ), ("s_suppkey",), 10_000),
    Table("customer", (
        ("c_custkey", "integer"), ("c_name", "varchar(25)"), ("c_address", "varchar(40)"),
        ("c_nationkey", "integer"), ("c_phone", "varchar(15)"), ("c_acctbal", MONEY),
        ("c_mktsegment", "varchar(10)"), ("c_comment", "varchar(117)"),
    ), ("c_custkey",), 150_000),
    Table("part", (
        ("p_partkey", "integer"), ("p_name", "varchar(55)"), ("p_mfgr", "varchar(25)"),
        ("p_brand", "varchar(10)"), ("p_type", "varchar(25)"), ("p_size", "integer"),
        ("p_container", "varchar(10)"), ("p_retailprice", MONEY), ("p_comment", "varchar(23)"),
    ), ("p_partkey",), 200_000),
    Table("partsupp", (
        ("ps_partkey", "integer"), ("ps_suppkey", "integer"), ("ps_availqty", "integer"),
        ("ps_supplycost", MONEY), ("ps_comment", "varchar(199)"),
    ), ("ps_partkey",), 800_000),
    Table("orders", (
        ("o_orderkey", "bigint"), ("o_custkey", "integer"), ("o_orderstatus", "char(1)"),
        ("o_totalprice", MONEY), ("o_orderdate", "date"), ("o_orderpriority", "varchar(15)"),
        ("o_clerk", "varchar(15)"), ("o_shippriority", "integer"), ("o_comment", "varchar(79)"),
    ), ("o_orderkey",), 1_500_000),
    Table("lineitem", (
        ("l_orderkey", "bigint"), ("l_partkey", "integer"), ("l_suppkey", "integer"),
        ("l_linenumber", "integer"), ("l_quantity", MONEY), ("l_extendedprice", MONEY),
        ("l_discount", MONEY), ("l_tax", MONEY), ("l_returnflag", "char(1)"),
        ("l_linestatus", "char(1)"), ("l_shipdate", "date"), ("l_commitdate", "date"),
        ("l_receiptdate", "date"), ("l_shipinstruct", "varchar(25)"),
        ("l_shipmode", "varchar(10)"), ("l_comment", "varchar(44)"),
    ), ("l_orderkey",), 6_001_215),
)

BY_NAME = {t.name: t for t in TABLES}
NAMES = tuple(t.name for t in TABLES)

# Primary keys, for engines that can use indexes (the benchmark's PostgreSQL).
PRIMARY_KEYS = {
    "region": ("r_regionkey",), "nation": ("n_nationkey",), "supplier": ("s_suppkey",),
    "customer": ("c_custkey",), "part": ("p_partkey",), "partsupp": ("ps_partkey", "ps_suppkey"),
    "orders": ("o_orderkey",), "lineitem": ("l_orderkey", "l_linenumber"),
}
# Foreign-key columns the correlated subqueries (Q2, Q17, Q20, Q21, Q22) look rows up by.
FOREIGN_KEY_INDEXES = {
    "lineitem": (("l_partkey", "l_suppkey"), ("l_suppkey",)),
    "orders": (("o_custkey",),), "partsupp": (("ps_suppkey",),),
    "customer": (("c_nationkey",),), "supplier": (("s_nationkey",),),
}


def index_sql(table: str) -> list[str]:
    """PRIMARY KEY and foreign-key index statements for `table` (plain PostgreSQL)."""
    out = [f"ALTER TABLE {table} ADD PRIMARY KEY ({', '.join(PRIMARY_KEYS[table])})"]
    for i, cols in enumerate(FOREIGN_KEY_INDEXES.get(table, ())):
        out.append(f"CREATE INDEX {table}_fk{i} ON {table} ({', '.join(cols)})")
    return out
