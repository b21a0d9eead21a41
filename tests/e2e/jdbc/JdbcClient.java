// Drives raympp through the PostgreSQL JDBC driver (tests/e2e/test_jdbc_client.py).
// Usage: java -cp postgresql.jar:. JdbcClient jdbc-url user table [table-suffix]
// (table-suffix: e.g. DISTRIBUTED BY (id), appended to the CREATE TABLE)
// Every step prints `STEP <name>` and then its rows as tab-separated lines, or
// `ERROR <sqlstate> <message>`; the test reads the output and checks every answer.
import java.math.BigDecimal;
import java.sql.*;
import java.util.ArrayList;
import java.util.List;

public class JdbcClient {
    interface Step { void run(Connection c) throws SQLException; }

    static void print(ResultSet rs, String... columns) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        while (rs.next()) {
            List<String> cells = new ArrayList<>();
            if (columns.length == 0) {
                for (int i = 1; i <= md.getColumnCount(); i++) cells.add(String.valueOf(rs.getString(i)));
            } else {
                for (String col : columns) cells.add(String.valueOf(rs.getString(col)));
            }
            System.out.println(String.join("\t", cells));
        }
        rs.close();
    }

    static void step(Connection c, String name, Step s) {
        System.out.println("STEP " + name);
        try {
            s.run(c);
        } catch (SQLException e) {
            System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
            try { if (!c.getAutoCommit()) c.rollback(); } catch (SQLException ignored) { }
        }
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String url = args[0], user = args[1], t = args[2];
        String suffix = args.length > 3 ? " " + args[3] : "";
        try (Connection c = DriverManager.getConnection(url, user, "")) {
            step(c, "connect", x -> {
                DatabaseMetaData md = x.getMetaData();
                System.out.println(md.getDatabaseProductName() + "\t" + md.getDriverName()
                        + "\t" + x.getCatalog() + "\t" + x.getSchema());
            });
            step(c, "create", x -> {
                try (Statement s = x.createStatement()) {
                    s.execute("CREATE TABLE " + t + " (id int NOT NULL, name text, amount numeric(12,2), day date)"
                            + suffix);
                    System.out.println(s.getUpdateCount());
                }
            });
            step(c, "insert_statement", x -> {
                try (Statement s = x.createStatement()) {
                    int n = s.executeUpdate("INSERT INTO " + t + " VALUES (1, 'one', 1.50, '2024-01-01'),"
                            + " (2, 'two', 2.25, '2024-02-29'), (3, NULL, NULL, NULL)");
                    System.out.println(n);
                }
            });
            step(c, "insert_prepared", x -> {
                try (PreparedStatement p = x.prepareStatement("INSERT INTO " + t + " VALUES (?,?,?,?)")) {
                    p.setInt(1, 4); p.setString(2, "four"); p.setBigDecimal(3, new BigDecimal("4.75"));
                    p.setDate(4, Date.valueOf("2024-12-31"));
                    System.out.println(p.executeUpdate());
                }
            });
            step(c, "insert_batch", x -> {
                try (PreparedStatement p = x.prepareStatement("INSERT INTO " + t + " VALUES (?,?,?,?)")) {
                    for (int i = 5; i <= 6; i++) {
                        p.setInt(1, i); p.setString(2, "n" + i); p.setBigDecimal(3, new BigDecimal(i + ".01"));
                        p.setDate(4, Date.valueOf("2025-01-0" + i));
                        p.addBatch();
                    }
                    int[] counts = p.executeBatch();
                    System.out.println(counts.length + "\t" + counts[0] + "\t" + counts[1]);
                }
            });
            step(c, "generated_keys", x -> {
                // RETURN_GENERATED_KEYS: the driver appends RETURNING * to the INSERT.
                try (PreparedStatement p = x.prepareStatement("INSERT INTO " + t + " (id, name) VALUES (?, ?)",
                        Statement.RETURN_GENERATED_KEYS)) {
                    p.setInt(1, 8); p.setString(2, "eight");
                    System.out.println(p.executeUpdate());
                    print(p.getGeneratedKeys(), "id", "name");
                }
            });
            step(c, "statement_query", x -> {
                try (Statement s = x.createStatement()) {
                    print(s.executeQuery("SELECT id, name, amount, day FROM " + t + " ORDER BY id"));
                }
            });
            step(c, "statement_types", x -> {
                try (Statement s = x.createStatement();
                     ResultSet rs = s.executeQuery("SELECT id, name, amount, day FROM " + t + " WHERE id = 1")) {
                    ResultSetMetaData md = rs.getMetaData();
                    for (int i = 1; i <= md.getColumnCount(); i++)
                        System.out.println(md.getColumnName(i) + "\t" + md.getColumnTypeName(i) + "\t"
                                + md.getColumnType(i));
                    rs.next();
                    System.out.println(rs.getInt(1) + "\t" + rs.getString(2) + "\t" + rs.getBigDecimal(3)
                            + "\t" + rs.getDate(4));
                }
            });
            step(c, "prepared_int", x -> {
                try (PreparedStatement p = x.prepareStatement("SELECT name FROM " + t + " WHERE id = ?")) {
                    p.setInt(1, 2);
                    print(p.executeQuery());
                }
            });
            step(c, "prepared_text", x -> {
                try (PreparedStatement p = x.prepareStatement("SELECT id FROM " + t + " WHERE name = ? OR name LIKE ? ORDER BY id")) {
                    p.setString(1, "one"); p.setString(2, "n%");
                    print(p.executeQuery());
                }
            });
            step(c, "prepared_numeric", x -> {
                try (PreparedStatement p = x.prepareStatement("SELECT id, amount * ? FROM " + t + " WHERE amount > ? ORDER BY id")) {
                    p.setBigDecimal(1, new BigDecimal("2")); p.setBigDecimal(2, new BigDecimal("2.00"));
                    print(p.executeQuery());
                }
            });
            step(c, "prepared_date", x -> {
                try (PreparedStatement p = x.prepareStatement("SELECT id, day FROM " + t + " WHERE day BETWEEN ? AND ? ORDER BY id")) {
                    p.setDate(1, Date.valueOf("2024-01-01")); p.setDate(2, Date.valueOf("2024-12-31"));
                    print(p.executeQuery());
                }
            });
            step(c, "prepared_more_types", x -> {
                try (PreparedStatement p = x.prepareStatement("SELECT CAST(? AS timestamp), CAST(? AS timestamptz),"
                        + " CAST(? AS boolean), CAST(? AS bigint), CAST(? AS float8), CAST(? AS smallint), ? || 'x'")) {
                    p.setTimestamp(1, Timestamp.valueOf("2024-01-02 03:04:05.6"));
                    p.setTimestamp(2, Timestamp.valueOf("2024-01-02 03:04:05"));
                    p.setBoolean(3, true); p.setLong(4, 1L << 40); p.setDouble(5, 0.25);
                    p.setShort(6, (short) -7); p.setString(7, "é");
                    try (ResultSet rs = p.executeQuery()) {
                        rs.next();
                        System.out.println(rs.getTimestamp(1) + "\t" + rs.getTimestamp(2).toInstant() + "\t"
                                + rs.getBoolean(3) + "\t" + rs.getLong(4) + "\t" + rs.getDouble(5) + "\t"
                                + rs.getShort(6) + "\t" + rs.getString(7));
                    }
                }
            });
            step(c, "prepared_reuse", x -> {
                // Past prepareThreshold (5) the driver switches to a named server-side statement.
                try (PreparedStatement p = x.prepareStatement("SELECT count(*) FROM " + t + " WHERE id <= ?")) {
                    StringBuilder out = new StringBuilder();
                    for (int i = 1; i <= 7; i++) {
                        p.setInt(1, i);
                        try (ResultSet rs = p.executeQuery()) { rs.next(); out.append(rs.getLong(1)).append(i < 7 ? "\t" : ""); }
                    }
                    System.out.println(out);
                }
            });
            step(c, "prepared_null", x -> {
                try (PreparedStatement p = x.prepareStatement("SELECT count(*) FROM " + t + " WHERE name IS NOT DISTINCT FROM ?")) {
                    p.setNull(1, Types.VARCHAR);
                    print(p.executeQuery());
                }
            });
            step(c, "transaction", x -> {
                x.setAutoCommit(false);
                try (Statement s = x.createStatement()) {
                    s.executeUpdate("INSERT INTO " + t + " VALUES (100, 'rolled back', 0, NULL)");
                    x.rollback();
                    s.executeUpdate("INSERT INTO " + t + " VALUES (7, 'seven', 7, '2025-07-07')");
                    x.commit();
                    print(s.executeQuery("SELECT count(*), max(id) FROM " + t));
                    x.commit();
                } finally {
                    x.setAutoCommit(true);
                }
            });
            step(c, "fetch_size", x -> {
                // A fetch size inside a transaction: a portal read in row-limited Executes.
                x.setAutoCommit(false);
                try (Statement s = x.createStatement()) {
                    s.setFetchSize(2);
                    print(s.executeQuery("SELECT id FROM " + t + " ORDER BY id"));
                    x.commit();
                } finally {
                    x.setAutoCommit(true);
                }
            });
            step(c, "error", x -> {
                try (Statement s = x.createStatement()) {
                    s.executeQuery("SELECT nosuchcolumn FROM " + t);
                }
            });
            step(c, "after_error", x -> {
                try (Statement s = x.createStatement()) { print(s.executeQuery("SELECT 1")); }
            });
            DatabaseMetaData md = c.getMetaData();
            step(c, "getSchemas", x -> print(md.getSchemas(), "TABLE_SCHEM", "TABLE_CATALOG"));
            step(c, "getSchemas_pattern", x -> print(md.getSchemas(null, "pub%"), "TABLE_SCHEM"));
            step(c, "getCatalogs", x -> print(md.getCatalogs(), "TABLE_CAT"));
            step(c, "getTableTypes", x -> print(md.getTableTypes(), "TABLE_TYPE"));
            step(c, "getTables", x -> print(md.getTables(null, "public", t, new String[]{"TABLE"}),
                    "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS"));
            step(c, "getTables_all", x -> {
                int n = 0, found = 0;
                try (ResultSet rs = md.getTables(null, null, "%", null)) {
                    while (rs.next()) { n++; if (t.equals(rs.getString("TABLE_NAME"))) found++; }
                }
                System.out.println((n > 0) + "\t" + found);
            });
            step(c, "getColumns", x -> print(md.getColumns(null, "public", t, null),
                    "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS", "NULLABLE",
                    "ORDINAL_POSITION", "IS_NULLABLE", "IS_AUTOINCREMENT"));
            step(c, "getPrimaryKeys", x -> print(md.getPrimaryKeys(null, "public", t)));
            step(c, "getIndexInfo", x -> print(md.getIndexInfo(null, "public", t, false, true)));
            step(c, "getTypeInfo", x -> {
                List<String> want = List.of("int4", "int8", "text", "numeric", "date", "bool", "float8", "timestamp");
                List<String> seen = new ArrayList<>();
                try (ResultSet rs = md.getTypeInfo()) {
                    while (rs.next()) {
                        String name = rs.getString("TYPE_NAME");
                        if (want.contains(name)) seen.add(name + "=" + rs.getInt("DATA_TYPE"));
                    }
                }
                java.util.Collections.sort(seen);
                System.out.println(String.join("\t", seen));
            });
            step(c, "getImportedKeys", x -> print(md.getImportedKeys(null, "public", t)));
            step(c, "getExportedKeys", x -> print(md.getExportedKeys(null, "public", t)));
            step(c, "getTablePrivileges", x -> {
                int n = 0;
                try (ResultSet rs = md.getTablePrivileges(null, "public", t)) {
                    while (rs.next()) n++;
                }
                System.out.println(n > 0);
            });
            step(c, "getFunctions", x -> print(md.getFunctions(null, "pg_catalog", "pg_typeof"),
                    "FUNCTION_SCHEM", "FUNCTION_NAME"));
            step(c, "getProcedures", x -> print(md.getProcedures(null, "pg_catalog", "pg_backend_pid"),
                    "PROCEDURE_SCHEM", "PROCEDURE_NAME"));
            step(c, "getUDTs", x -> print(md.getUDTs(null, "public", "%", null)));
            step(c, "getVersionColumns", x -> print(md.getVersionColumns(null, "public", t)));
            step(c, "drop", x -> {
                try (Statement s = x.createStatement()) { s.execute("DROP TABLE " + t); System.out.println("dropped"); }
            });
        }
        System.out.println("END");
    }
}
