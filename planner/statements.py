"""Split SQL text into statements and classify each: what kind it is and its parsed parts.

sqlglot parses queries and most DDL; the Greenplum clauses it does not know
(`DISTRIBUTED BY/RANDOMLY/REPLICATED`) and the session commands drivers send (SHOW, RESET,
DISCARD, DEALLOCATE, CLOSE, EXPLAIN options) are recognized here first.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot import tokens as sqltokens

from planner import (analyze_statement, bind_json, clause_guard, comment_statement,
                     constraints, copy_statement, errors, index_statement, regex_rules, role_statement, schema_statement, sequences, types,
                     unique_keys, view_statement, volatile_calls)
from planner.bind_array import catalog_array_names
from planner.type_names import sql_type
from planner.schema import (ColumnDef, DistKind, DistPolicy, Identity, RelationName,
                            relation_name)
from planner.sql_dialect import RaymppPostgres
from planner.bind_array import mark_subscripts


class Kind(enum.Enum):
    QUERY = "SELECT"
    EXPLAIN = "EXPLAIN"
    CREATE_TABLE = "CREATE TABLE"
    CREATE_TABLE_AS = "CREATE TABLE AS"
    DROP_TABLE = "DROP TABLE"
    CREATE_VIEW = "CREATE VIEW"
    DROP_VIEW = "DROP VIEW"
    SEQUENCE = "SEQUENCE"  # CREATE/ALTER/DROP SEQUENCE (planner/sequences.py)
    INSERT = "INSERT"
    ALTER_TABLE = "ALTER TABLE"
    DELETE = "DELETE"
    MERGE = "MERGE"
    UPDATE = "UPDATE"
    COPY = "COPY"
    TRUNCATE = "TRUNCATE"
    ANALYZE = "ANALYZE"
    BEGIN = "BEGIN"
    COMMIT = "COMMIT"
    ROLLBACK = "ROLLBACK"
    SET = "SET"
    SHOW = "SHOW"
    RESET = "RESET"
    DEALLOCATE = "DEALLOCATE"
    DISCARD = "DISCARD"
    CLOSE = "CLOSE"
    SAVEPOINT = "SAVEPOINT"
    RELEASE = "RELEASE"
    ROLLBACK_TO = "ROLLBACK TO SAVEPOINT"
    DECLARE = "DECLARE"
    FETCH = "FETCH"
    MOVE = "MOVE"
    LISTEN = "LISTEN"
    UNLISTEN = "UNLISTEN"
    NOTIFY = "NOTIFY"
    PREPARE = "PREPARE"
    EXECUTE = "EXECUTE"
    UNLOCK_ALL = "SELECT pg_advisory_unlock_all()"
    ROLE = "ROLE"  # CREATE/ALTER/DROP ROLE, USER, GROUP (planner/role_statement.py)
    SCHEMA = "SCHEMA"  # CREATE/ALTER/DROP SCHEMA (planner/schema_statement.py)
    INDEX = "INDEX"  # CREATE/DROP INDEX (planner/index_statement.py)
    COMMENT = "COMMENT"  # COMMENT ON (planner/comment_statement.py)
    EXPAND = "ALTER SYSTEM"  # ALTER SYSTEM EXPAND SEGMENTS [TO n] (coordinator/expansion.py)
    EMPTY = "EMPTY"


@dataclass
class Statement:
    kind: Kind
    text: str
    tree: exp.Expression | None = None
    # CREATE TABLE: columns, CHECK constraints (name as written or None, expression),
    # the sequences of SERIAL and identity columns
    columns: list[ColumnDef] = field(default_factory=list)
    temporary: bool = False  # CREATE TEMP TABLE: in the session's temporary schema
    unique: tuple = ()  # its PRIMARY KEY and UNIQUE constraints (planner/unique_keys.py)
    checks: list[tuple[str | None, exp.Expression]] = field(default_factory=list)
    column_sequences: list[sequences.ColumnSequence] = field(default_factory=list)
    # CREATE/ALTER/DROP SEQUENCE
    sequence: sequences.SequenceStatement | None = None
    # DISTRIBUTED BY (cols) | RANDOMLY | REPLICATED: (DistKind.HASHED, cols), (RANDOM, ()), ...
    policy_clause: tuple[DistKind, tuple[str, ...]] | None = None
    if_not_exists: bool = False
    # EXPLAIN
    analyze: bool = False
    inner: "Statement | None" = None
    # SET / SHOW / RESET / DEALLOCATE / CLOSE
    name: str = ""
    value: str | None = None  # SET: the arguments joined by ", "; None for SET x TO DEFAULT
    # SET: the arguments as PostgreSQL's grammar gives them (string constants unquoted,
    # unquoted identifiers folded to lower case), `default` for TO DEFAULT, `local` for
    # SET LOCAL, and for SET TRANSACTION / SESSION CHARACTERISTICS the transaction modes
    # as (setting, value) pairs.
    args: tuple[str, ...] = ()
    default: bool = False
    local: bool = False
    modes: tuple[tuple[str, str], ...] = ()
    # COPY
    copy: copy_statement.CopySpec | None = None
    # ANALYZE / VACUUM: the tables named (none: every table)
    relations: tuple[RelationName, ...] = ()
    # CREATE/ALTER/DROP ROLE
    role: role_statement.RoleStatement | None = None
    # CREATE/ALTER/DROP SCHEMA
    schema: schema_statement.SchemaStatement | None = None
    # CREATE [OR REPLACE] VIEW
    view: view_statement.ViewStatement | None = None
    # CREATE/DROP INDEX
    index: index_statement.CreateIndex | index_statement.DropIndex | None = None
    # COMMENT ON
    comment: comment_statement.Comment | None = None
    # DECLARE: binary, scroll (True/False/None), hold; FETCH/MOVE: direction, count (None:
    # ALL); NOTIFY: payload; PREPARE: types (SqlType per declared parameter); EXECUTE:
    # args (sqlglot expressions)
    options: dict = field(default_factory=dict)


class _StatementTokenizer(sqltokens.Tokenizer):
    """sqlglot's generic tokenizer, which reads `$1,$2` as placeholders (its PostgreSQL
    one takes `$1,$` for the start of a dollar-quoted string), plus E'...' strings, whose
    backslash escapes a quote (E'O\\'Reilly'; RaymppPostgres reads them alike)."""

    BYTE_STRINGS = [("e'", "'"), ("E'", "'")]
    BYTE_STRING_ESCAPES = ["'", "\\"]


def split(sql: str) -> list[str]:
    """Statement texts of a simple-query string (semicolons outside quotes)."""
    try:
        toks = _StatementTokenizer().tokenize(sql)
    except Exception as e:  # the tokenizer's own error type varies by version
        raise errors.SyntaxError_(f"syntax error: {e}")
    # A part with no token is whitespace and comments: no statement (`SELECT 1; -- done`
    # is one statement, as in PostgreSQL).
    out, start, tokens = [], 0, False
    for t in toks:
        if t.token_type == sqltokens.TokenType.SEMICOLON:
            if tokens:
                out.append(sql[start:t.start])
            start, tokens = t.end + 1, False
        else:
            tokens = True
    if tokens:
        out.append(sql[start:])
    return [s.strip() for s in out if s.strip()]


_DIST = re.compile(r"\s+DISTRIBUTED\s+(?:BY\s*\(([^)]*)\)|(RANDOMLY)|(REPLICATED))\s*$",
                   re.IGNORECASE)
_FIRST = re.compile(r"^\s*([A-Za-z]+)(?:\s+([A-Za-z_]+))?", re.DOTALL)
# INSERT's OVERRIDING {SYSTEM | USER} VALUE (sqlglot has no such clause): between the
# target's column list and the rows.
_OVERRIDING = re.compile(r"(?is)(?<=[\s)])OVERRIDING\s+(SYSTEM|USER)\s+VALUE\b")
# An identity column's `(sequence options)`, which sqlglot reads only in part.
_IDENTITY = re.compile(r"(?is)\bGENERATED\s+(ALWAYS|BY\s+DEFAULT)\s+AS\s+IDENTITY\s*"
                       r"(?:\(([^()]*)\))?")
_NOW = re.compile(r"(?i)(?<![.\w\"])now\s*\(\s*\)")
_SERIALS = {"SERIAL": types.INT4, "BIGSERIAL": types.INT8, "SMALLSERIAL": types.INT2}
_TEMP = re.compile(r"(?is)^\s*CREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP|TEMPORARY)\b")
_ON_COMMIT = re.compile(r"(?is)\s+ON\s+COMMIT\s+(PRESERVE\s+ROWS|DELETE\s+ROWS|DROP)\b")


def _on_commit(text: str) -> str:
    """A temporary table's CREATE without ON COMMIT PRESERVE ROWS (what it does anyway);
    the other ON COMMIT actions are 0A000."""
    m = _ON_COMMIT.search(text)
    if m is None:
        return text
    action = " ".join(m.group(1).upper().split())
    if action != "PRESERVE ROWS":
        raise errors.FeatureNotSupported(f"ON COMMIT {action}")
    return text[:m.start()] + text[m.end():]


def classify(text: str) -> Statement:
    text = text.strip().rstrip(";").strip()
    if not text:
        return Statement(Kind.EMPTY, text)
    m = _FIRST.match(text)
    word = m.group(1).upper() if m else ""
    second = (m.group(2) or "").upper() if m else ""
    if word in ("BEGIN", "START"):
        return Statement(Kind.BEGIN, text)
    if word in ("COMMIT", "END"):
        return Statement(Kind.COMMIT, text)
    session = _session_statement(word, text)
    if session is not None:
        return session
    if word in ("ROLLBACK", "ABORT"):
        return Statement(Kind.ROLLBACK, text)
    if word == "SHOW":
        return Statement(Kind.SHOW, text, name=text[4:].strip().lower())
    if word == "RESET":
        return Statement(Kind.RESET, text, name=text[5:].strip().lower())
    if word == "SET":
        return _set(text)
    if word == "DEALLOCATE":
        rest = re.sub(r"^PREPARE\s+", "", text[10:].strip(), flags=re.IGNORECASE)
        return Statement(Kind.DEALLOCATE, text, name="all" if rest.lower() == "all"
                         else _one_identifier(rest, "DEALLOCATE"))
    if word == "DISCARD":
        return Statement(Kind.DISCARD, text, name=text[7:].strip().lower())
    if word == "CLOSE":
        rest = text[5:].strip()
        return Statement(Kind.CLOSE, text, name="all" if rest.lower() == "all"
                         else _one_identifier(rest, "CLOSE"))
    if word == "EXPLAIN":
        return _explain(text)
    if word == "ALTER" and second in ("VIEW", "MATERIALIZED"):
        # A view's query names what it reads by name: renaming it (or them) would need
        # the dependent views' queries rewritten. Refused, not half-done.
        raise errors.FeatureNotSupported(f"ALTER {second} is not supported")
    if word == "CREATE" and view_statement.is_create_view(text):
        return Statement(Kind.CREATE_VIEW, text, view=view_statement.parse(text, parse_one))
    if word == "CREATE" and second in ("TABLE", "TEMP", "TEMPORARY", "UNLOGGED", "LOCAL",
                                       "GLOBAL"):
        temp = _TEMP.match(text)
        if temp and re.match(r"(?is)^\s*CREATE\s+\S+\s+SEQUENCE\b", text):
            raise errors.FeatureNotSupported("temporary sequences are not supported")
        if temp:
            # A table of the session's temporary schema (coordinator/temp_tables.py).
            st = _create_table(_on_commit(text[temp.end():].join(["CREATE", ""])))
            st.temporary = True
            return st
        return _create_table(text)
    if word == "COPY":
        return Statement(Kind.COPY, text, copy=copy_statement.parse(text))
    if word in ("CREATE", "ALTER", "DROP") and second == "SEQUENCE":
        return Statement(Kind.SEQUENCE, text, sequence=sequences.parse(text))
    if word == "INSERT" and _OVERRIDING.search(text):
        m = _OVERRIDING.search(text)
        st = classify(text[:m.start()] + " " + text[m.end():])
        st.text, st.options = text, {**st.options, "overriding": m.group(1).lower()}
        return st
    if word in ("CREATE", "ALTER", "DROP") and second in ("ROLE", "USER", "GROUP"):
        return Statement(Kind.ROLE, text, role=role_statement.parse(text))
    if word in ("CREATE", "ALTER", "DROP") and second == "SCHEMA":
        return Statement(Kind.SCHEMA, text, schema=schema_statement.parse(text))
    if (word in ("CREATE", "DROP") and second == "INDEX") or (
            word == "CREATE" and second == "UNIQUE"):
        return Statement(Kind.INDEX, text, index=index_statement.parse(text))
    if word == "COMMENT":
        return Statement(Kind.COMMENT, text, comment=comment_statement.parse(text))
    if word in ("GRANT", "REVOKE"):
        # Refused, not accepted unenforced: nothing checks table privileges.
        raise errors.FeatureNotSupported(
            f"{word} is not supported: every role has every privilege")
    if word == "ALTER" and second == "SYSTEM":
        expand = _EXPAND.match(text)
        if expand is None:
            # ALTER SYSTEM SET would write postgresql.auto.conf: raympp has none.
            raise errors.FeatureNotSupported(
                "ALTER SYSTEM other than EXPAND SEGMENTS",
                hint="raympp's settings are per session (SET) or given to raympp serve.")
        count = expand.group(1)
        return Statement(Kind.EXPAND, text,
                         options={"segments": None if count is None else int(count)})
    if word == "ANALYZE" or word == "VACUUM":
        return Statement(Kind.ANALYZE, text, relations=analyze_statement.targets(text))
    if word == "ALTER" and second == "TABLE":
        redistribute = _SET_DISTRIBUTED.match(text)
        if redistribute:
            return _set_distributed(text, redistribute)
        # RENAME's COLUMN keyword is optional in PostgreSQL, not in sqlglot's grammar.
        text = _RENAME_WITHOUT_COLUMN.sub(r"\1COLUMN ", text)
        # now() and CURRENT_TIMESTAMP parse alike; a default shows the one written
        text = _NOW.sub("pg_catalog.now()", text)
    tree = parse_one(text)
    if isinstance(tree, (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values)) or (
            isinstance(tree, exp.Subquery)):
        return Statement(Kind.QUERY, text, tree)
    if isinstance(tree, exp.Insert):
        return Statement(Kind.INSERT, text, tree)
    if isinstance(tree, exp.Alter) and (tree.args.get("kind") or "").upper() == "TABLE":
        return Statement(Kind.ALTER_TABLE, text, tree)
    if isinstance(tree, exp.Merge):
        return Statement(Kind.MERGE, text, tree)
    if isinstance(tree, exp.Delete):
        return Statement(Kind.DELETE, text, tree)
    if isinstance(tree, exp.Update):
        return Statement(Kind.UPDATE, text, tree)
    if isinstance(tree, exp.Drop):
        kind = (tree.args.get("kind") or "").upper()
        if kind not in ("TABLE", "VIEW") or tree.args.get("materialized"):
            raise errors.FeatureNotSupported(
                f"DROP {'MATERIALIZED ' if tree.args.get('materialized') else ''}{kind}")
        return Statement(Kind.DROP_TABLE if kind == "TABLE" else Kind.DROP_VIEW, text, tree,
                         if_not_exists=bool(tree.args.get("exists")))
    if isinstance(tree, exp.TruncateTable):
        return Statement(Kind.TRUNCATE, text, tree)
    raise errors.FeatureNotSupported(f"statement {word} {second}".strip())


# raympp's own: grow the cluster to n segments (none: resume an unfinished expansion).
_EXPAND = re.compile(r"(?is)^\s*ALTER\s+SYSTEM\s+EXPAND\s+SEGMENTS(?:\s+TO\s+(\d{1,9}))?\s*$")
_SET_DISTRIBUTED = re.compile(r"(?is)^\s*ALTER\s+TABLE\s+(IF\s+EXISTS\s+)?(?:ONLY\s+)?(.+?)\s+SET"
                              r"(\s+DISTRIBUTED\s+(?:BY\s*\(([^)]*)\)|(RANDOMLY)|(REPLICATED)))\s*$")


def _set_distributed(text: str, m: re.Match) -> Statement:
    """Greenplum's ALTER TABLE t SET DISTRIBUTED BY (cols) | RANDOMLY | REPLICATED: an
    ALTER TABLE without actions whose `policy_clause` is the new distribution."""
    target = parse_one(f"SELECT * FROM {m.group(2)}").args["from_"].this
    if not isinstance(target, exp.Table):
        raise errors.SyntaxError_(f'syntax error at or near "{m.group(2)}"')
    if m.group(4) is not None:
        policy = (DistKind.HASHED, tuple(_unquote_ident(c.strip())
                                         for c in m.group(4).split(",") if c.strip()))
    else:
        policy = (DistKind.RANDOM, ()) if m.group(5) else (DistKind.REPLICATED, ())
    tree = exp.Alter(this=target, kind="TABLE", exists=bool(m.group(1)), actions=[])
    return Statement(Kind.ALTER_TABLE, text, tree, policy_clause=policy)


_RENAME_WITHOUT_COLUMN = re.compile(r"(?is)^(\s*ALTER\s+TABLE\s+.*?\bRENAME\s+)"
                                    r"(?!COLUMN\b|TO\b|CONSTRAINT\b)")


_CURRENT_OF = re.compile(r"(?is)^\s*(UPDATE|DELETE)\b.*\bWHERE\s+CURRENT\s+OF\b")


def parse_one(text: str) -> exp.Expression:
    try:
        text = regex_rules.substring_similar_syntax(text)  # sqlglot lacks SIMILAR in substring
        trees = sqlglot.parse(_space_placeholders(catalog_array_names(text)), dialect=RaymppPostgres,
                              error_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.ParseError as e:
        if _CURRENT_OF.search(text):  # valid PostgreSQL that sqlglot cannot parse
            raise errors.FeatureNotSupported("WHERE CURRENT OF (positioned UPDATE and DELETE "
                                             "through a cursor)") from None
        first = e.errors[0] if getattr(e, "errors", None) else {}
        near = first.get("highlight") if isinstance(first, dict) else None
        msg = f'syntax error at or near "{near}"' if near else f"syntax error: {str(e).splitlines()[0]}"
        raise errors.SyntaxError_(msg) from None
    except sqlglot.errors.TokenError as e:
        raise errors.SyntaxError_(f"syntax error: {e}") from None
    # (a comment after the last semicolon is a Semicolon node: no statement)
    trees = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if len(trees) != 1:
        raise errors.SyntaxError_("syntax error: expected one statement")
    tree = trees[0]
    if isinstance(tree, exp.Command):
        raise errors.SyntaxError_(f'syntax error at or near "{tree.name or text.split()[0]}"')
    bind_json.mark_aggregates(tree)  # jsonb_agg(x) is an aggregate node
    clause_guard.check(tree)
    volatile_calls.check(tree)
    mark_subscripts(tree)  # a[1]: sqlglot made it 0-based
    return tree


_SET_IDENT = r'(?:[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*|"(?:[^"]|"")+")'
_SET_NAME = re.compile(rf"\s*({_SET_IDENT}(?:\s*\.\s*{_SET_IDENT})*)\s*(?:=|\bTO\b)\s*",
                       re.IGNORECASE)
_SET_TOKEN = re.compile(r"""\s*(?:
      (?P<string>'(?:[^']|'')*')
    | [Ee](?P<escape>'(?:[^'\\]|\\.|'')*')
    | (?P<ident>"(?:[^"]|"")+")
    | (?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?![A-Za-z0-9_$])
    | (?P<word>[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)
    )\s*""", re.VERBOSE)


def _unquote_ident(part: str) -> str:
    part = part.strip()
    if part.startswith('"'):
        return part[1:-1].replace('""', '"')
    return part.lower()


def _set_name(text: str) -> str:
    return ".".join(_unquote_ident(p) for p in re.findall(_SET_IDENT, text))


def _set_args(text: str, what: str) -> tuple[tuple[str, ...], bool]:
    """The arguments of SET (var_list in PostgreSQL's grammar) and whether it is DEFAULT."""
    if re.fullmatch(r"(?is)\s*DEFAULT\s*", text):
        return (), True
    args, pos = [], 0
    while True:
        m = _SET_TOKEN.match(text, pos)
        if not m or m.end() == m.start():
            near = text[pos:].strip().split()
            raise errors.SyntaxError_(f'syntax error at or near "{near[0]}"' if near else
                                      f"syntax error at end of input in SET {what}")
        if m.group("string") is not None:
            args.append(m.group("string")[1:-1].replace("''", "'"))
        elif m.group("escape") is not None:
            args.append(role_statement.escape_string(m.group("escape")[1:-1]))
        elif m.group("ident") is not None:
            args.append(m.group("ident")[1:-1].replace('""', '"'))
        elif m.group("number") is not None:
            num = m.group("number").lstrip("+")
            if re.fullmatch(r"-?\d+", num) and -2**31 <= int(num) < 2**31:
                num = str(int(num))  # an integer constant, printed back as PostgreSQL does
            args.append(num)
        else:
            args.append(m.group("word").lower())
        pos = m.end()
        if pos == len(text):
            return tuple(args), False
        if text[pos] != ",":
            raise errors.SyntaxError_(f'syntax error at or near "{text[pos:].split()[0]}"')
        pos += 1


def transaction_modes(text: str) -> tuple[tuple[str, str], ...]:
    """The modes of SET TRANSACTION / SESSION CHARACTERISTICS AS TRANSACTION / BEGIN as
    (transaction setting, value): ISOLATION LEVEL ..., READ ONLY|WRITE, [NOT] DEFERRABLE."""
    modes, rest = [], text.strip()
    while rest:
        m = (re.match(r"(?is)^ISOLATION\s+LEVEL\s+(SERIALIZABLE|REPEATABLE\s+READ|"
                      r"READ\s+COMMITTED|READ\s+UNCOMMITTED)\b", rest)
             or re.match(r"(?is)^READ\s+(ONLY|WRITE)\b", rest)
             or re.match(r"(?is)^(NOT\s+)?DEFERRABLE\b", rest))
        if not m:
            raise errors.SyntaxError_(f'syntax error at or near "{rest.split()[0]}"')
        word = " ".join(m.group(0).lower().split())
        if word.startswith("isolation"):
            modes.append(("transaction_isolation", " ".join(m.group(1).lower().split())))
        elif word.startswith("read"):
            modes.append(("transaction_read_only", "on" if word == "read only" else "off"))
        else:
            modes.append(("transaction_deferrable", "off" if word.startswith("not") else "on"))
        rest = rest[m.end():].lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
            if not rest:
                raise errors.SyntaxError_("syntax error at end of input")
    if not modes:
        raise errors.SyntaxError_("syntax error at end of input")
    return tuple(modes)


def _set(text: str) -> Statement:
    """SET in PostgreSQL's forms: SET [SESSION | LOCAL] name {TO | =} value [, ...] | DEFAULT,
    SET TIME ZONE, SET NAMES, SET SCHEMA, SET ROLE, SET SESSION AUTHORIZATION,
    SET TRANSACTION ..., SET SESSION CHARACTERISTICS AS TRANSACTION ..."""
    body = text[3:].strip()
    local = False
    scope = re.match(r"(?is)^(SESSION|LOCAL)\s+(.*)$", body)
    if scope and not re.match(r"(?is)^SESSION\s+(AUTHORIZATION|CHARACTERISTICS)\b", body):
        local, body = scope.group(1).upper() == "LOCAL", scope.group(2)

    def make(name: str, args: tuple[str, ...] = (), default: bool = False,
             modes: tuple[tuple[str, str], ...] = (), value: str | None = None) -> Statement:
        if value is None and not default:
            value = ", ".join(args)
        return Statement(Kind.SET, text, name=name, value=value, args=args, default=default,
                         local=local, modes=modes)

    m = re.match(r"(?is)^SESSION\s+CHARACTERISTICS\s+AS\s+TRANSACTION\s+(.*)$", body)
    if m:
        modes = transaction_modes(m.group(1))
        return make("session characteristics", modes=modes, value=m.group(1).strip())
    if re.match(r"(?is)^TRANSACTION\s+SNAPSHOT\b", body):
        raise errors.FeatureNotSupported("SET TRANSACTION SNAPSHOT is not supported")
    m = re.match(r"(?is)^TRANSACTION\s+(.*)$", body)
    if m and not re.match(r"(?is)^TRANSACTION\s*(=|TO\b)", body):
        return make("transaction", modes=transaction_modes(m.group(1)),
                    value=m.group(1).strip())
    m = re.match(r"(?is)^TIME\s+ZONE\s+(.*)$", body)
    if m:
        zone = m.group(1).strip()
        iv = re.match(r"(?is)^INTERVAL\s*(?:\(\s*\d+\s*\))?\s*'((?:[^']|'')*)'(.*)$", zone)
        if iv:
            if iv.group(2).strip() and not re.fullmatch(
                    r"(?is)\s*(YEAR|MONTH|DAY|HOUR|MINUTE|SECOND)(\s*\(\s*\d+\s*\))?"
                    r"(\s+TO\s+(MONTH|HOUR|MINUTE|SECOND)(\s*\(\s*\d+\s*\))?)?\s*", iv.group(2)):
                raise errors.SyntaxError_(f'syntax error at or near "{iv.group(2).split()[0]}"')
            return make("timezone", ("INTERVAL '%s'" % iv.group(1).replace("''", "'"),))
        if re.fullmatch(r"(?is)LOCAL|DEFAULT", zone):
            return make("timezone", default=True)
        args, default = _set_args(zone, "TIME ZONE")
        if len(args) != 1:
            raise errors.SyntaxError_('syntax error at or near ","')
        return make("timezone", args)
    m = re.match(r"(?is)^NAMES\b\s*(.*)$", body)
    if m:
        if not m.group(1).strip():
            return make("client_encoding", default=True)
        return make("client_encoding", *_set_args(m.group(1), "NAMES"))
    m = re.match(r"(?is)^SCHEMA\s+('(?:[^']|'')*')\s*$", body)
    if m:
        return make("search_path", (m.group(1)[1:-1].replace("''", "'"),))
    m = re.match(r"(?is)^(ROLE|SESSION\s+AUTHORIZATION)\s+(?!=|TO\b)(.*)$", body)
    if m:
        name = "role" if m.group(1).upper() == "ROLE" else "session_authorization"
        return make(name, *_set_args(m.group(2), m.group(1).upper()))
    m = _SET_NAME.match(body)
    if not m:
        word = body.split()[0] if body.split() else ""
        raise errors.SyntaxError_(f'syntax error at or near "{word}"' if word else
                                  "syntax error at end of input")
    name = _set_name(m.group(1))
    rest = body[m.end():]
    if not rest.strip():
        raise errors.SyntaxError_("syntax error at end of input")
    return make(name, *_set_args(rest, name))


_EXPLAIN_OPTIONS = ("analyze", "verbose", "costs", "settings", "buffers", "wal", "timing",
                    "summary", "format")


def _explain(text: str) -> Statement:
    rest = text[len("EXPLAIN"):].strip()
    analyze = False
    m = re.match(r"(?is)^\(([^)]*)\)\s*(.*)$", rest)
    if m:
        opts = [o.strip().lower() for o in m.group(1).split(",")]
        for o in opts:
            name, _, value = o.partition(" ")
            if name not in _EXPLAIN_OPTIONS:
                raise errors.SyntaxError_(f'unrecognized EXPLAIN option "{name}"')
            if name == "format" and value.strip() != "text":
                # Only the text form of a plan is written: JSON, XML and YAML are refused.
                raise errors.FeatureNotSupported(f"EXPLAIN (FORMAT {value.strip().upper()})")
        analyze = any(o.split()[0] == "analyze" and (len(o.split()) == 1 or
                                                     o.split()[1] in ("true", "on", "1"))
                      for o in opts if o)
        rest = m.group(2)
    else:
        while True:
            m2 = re.match(r"(?is)^(ANALYZE|VERBOSE)\s+(.*)$", rest)
            if not m2:
                break
            analyze = analyze or m2.group(1).upper() == "ANALYZE"
            rest = m2.group(2)
    inner = classify(rest)
    if inner.kind not in (Kind.QUERY, Kind.DELETE, Kind.UPDATE, Kind.MERGE):
        raise errors.FeatureNotSupported(f"EXPLAIN of {inner.kind.value}")
    return Statement(Kind.EXPLAIN, text, analyze=analyze, inner=inner)


def _create_table(text: str) -> Statement:
    policy = None
    m = _DIST.search(text)
    if m:
        if m.group(1) is not None:
            policy = (DistKind.HASHED, tuple(c.strip().strip('"').lower()
                                             for c in m.group(1).split(",") if c.strip()))
        elif m.group(2):
            policy = (DistKind.RANDOM, ())
        else:
            policy = (DistKind.REPLICATED, ())
        text_sql = text[:m.start()]
    else:
        text_sql = text
    identity_options = [m.group(2) for m in _IDENTITY.finditer(text_sql)]
    # now() and CURRENT_TIMESTAMP parse alike; a default shows the one written
    text_sql = _NOW.sub("pg_catalog.now()", text_sql)
    tree = parse_one(_IDENTITY.sub(lambda m: f"GENERATED {m.group(1)} AS IDENTITY", text_sql))
    if not isinstance(tree, exp.Create) or (tree.args.get("kind") or "").upper() != "TABLE":
        raise errors.SyntaxError_("syntax error in CREATE TABLE")
    exists = bool(tree.args.get("exists"))
    if tree.expression is not None:
        st = Statement(Kind.CREATE_TABLE_AS, text, tree, policy_clause=policy, if_not_exists=exists)
        schema = tree.this
        if isinstance(schema, exp.Schema):
            st.columns = [ColumnDef(c.name.lower(), None) for c in schema.expressions]  # type: ignore[arg-type]
        return st
    schema = tree.this
    if not isinstance(schema, exp.Schema):
        raise errors.SyntaxError_("CREATE TABLE needs a column list")
    keys = unique_keys.extract(schema)  # PRIMARY KEY, UNIQUE: enforced (unique_keys.py)
    st = Statement(Kind.CREATE_TABLE, text, tree, policy_clause=policy, if_not_exists=exists)
    table = relation_name(schema.this).name
    identities = iter(identity_options)
    for c in schema.expressions:
        if isinstance(c, exp.CheckColumnConstraint):
            st.checks.append((None, c.this))
            continue
        if isinstance(c, exp.Constraint) and len(c.expressions) == 1 \
                and isinstance(c.expressions[0], exp.CheckColumnConstraint):
            st.checks.append((_name(c.this), c.expressions[0].this))
            continue
        if not isinstance(c, exp.ColumnDef):
            # Other constraints are refused, not accepted unenforced: a FOREIGN KEY that
            # lets orphans in would be a promise broken silently.
            raise errors.FeatureNotSupported(
                f"table constraint {c.sql(dialect='postgres')!r} (FOREIGN KEY and EXCLUDE "
                "constraints are not enforced yet)")
        if c.args.get("kind") is None:
            raise errors.SyntaxError_(f'column "{c.name}" needs a type')
        st.columns.append(_column(c, table, st, identities, [x.name for x in st.columns]))
    st.unique, st.columns = unique_keys.resolve(table, keys, st.columns)
    return st


def _name(ident) -> str:
    return ident.name if ident.quoted else ident.name.lower()


def _column(c: exp.ColumnDef, table: str, st: Statement, identities, earlier: list[str]
            ) -> ColumnDef:
    """One column of CREATE TABLE, with its NULL/NOT NULL, DEFAULT, CHECK, SERIAL and
    identity; the CHECKs and sequences it asks for go to `st`."""
    _refuse_column_options(c)
    name = _name(c.this)
    if name in earlier:
        raise errors.QueryError(f'column "{name}" specified more than once', "42701")
    kind = c.args["kind"]
    # kind.this is a string for oid, regclass, ... (sqlglot's ObjectIdentifier)
    serial = _SERIALS.get(getattr(kind.this, "name", None)) if not kind.expressions else None
    t = serial if serial is not None else sql_type(kind)
    if t.is_numeric and t.precision is None:
        # An unconstrained numeric column keeps each value's scale, as in PostgreSQL.
        t = types.UNCONSTRAINED
    if t.is_array and t.elem.is_numeric and t.elem.precision is None:
        t = types.array_of(types.UNCONSTRAINED)
    not_null, null, default, identity = serial is not None, False, None, Identity.NONE
    for k in c.constraints:
        kk = k.kind
        if isinstance(kk, exp.NotNullColumnConstraint):
            if kk.args.get("allow_null"):
                null = True
            else:
                not_null = True
        elif isinstance(kk, exp.DefaultColumnConstraint):
            if default is not None:
                raise errors.QueryError(f'multiple default values specified for column '
                                        f'"{name}" of table "{table}"', "42601")
            default = kk.this
        elif isinstance(kk, exp.CheckColumnConstraint):
            st.checks.append((_name(k.this) if k.this is not None else None, kk.this))
        elif isinstance(kk, exp.GeneratedAsIdentityColumnConstraint):
            if identity is not Identity.NONE:
                raise errors.QueryError(f'multiple identity specifications for column '
                                        f'"{name}" of table "{table}"', "42601")
            identity = Identity.ALWAYS if kk.this else Identity.BY_DEFAULT
            options = next(identities, None)
            st.column_sequences.append(sequences.ColumnSequence(
                name, sequences.parse_options(options) if options else sequences.OptionList(),
                True))
            not_null = True
    if null and not_null:
        raise errors.QueryError(f'conflicting NULL/NOT NULL declarations for column "{name}" '
                                f'of table "{table}"', "42601")
    if serial is not None and default is not None:
        raise errors.QueryError(f'multiple default values specified for column "{name}" of '
                                f'table "{table}"', "42601")
    if identity is not Identity.NONE:
        if default is not None:
            raise errors.QueryError(f'both default and identity specified for column '
                                    f'"{name}" of table "{table}"', "42601")
        if t.kind not in (types.Kind.INT2, types.Kind.INT4, types.Kind.INT8):
            raise errors.QueryError("identity column type must be smallint, integer, or "
                                    "bigint", "22023")
    if serial is not None:
        st.column_sequences.append(sequences.ColumnSequence(name, sequences.OptionList(), False))
    col = ColumnDef(name, t, not_null, identity=identity)
    if default is not None:
        col = ColumnDef(name, t, not_null, constraints.default_text(default, col), identity)
    return col


def _refuse_column_options(c: exp.ColumnDef) -> None:
    """NULL / NOT NULL, DEFAULT, CHECK, SERIAL and identity are implemented; keys,
    REFERENCES, generated columns and COLLATE are refused before anything is created."""
    allowed = (exp.NotNullColumnConstraint, exp.DefaultColumnConstraint,
               exp.CheckColumnConstraint, exp.GeneratedAsIdentityColumnConstraint)
    for k in c.constraints:
        if not isinstance(k.kind, allowed) or (
                isinstance(k.kind, exp.GeneratedAsIdentityColumnConstraint)
                and k.kind.args.get("expression") is not None):
            raise errors.FeatureNotSupported(
                f"column option {k.sql(dialect='postgres')!r} of column \"{c.name}\" "
                "(REFERENCES, COLLATE and generated columns are not implemented)")
    for key in ("position", "output", "exists"):
        if c.args.get(key):
            raise errors.FeatureNotSupported(f"column option {key.upper()} of column \"{c.name}\"")


def dist_policy(clause, columns: list[ColumnDef]) -> DistPolicy:
    """The policy of a DISTRIBUTED clause; default: hashed on the first column that is not
    an array (Greenplum's first hashable column; arrays do not hash here)."""
    if clause is None:
        first = next((i for i, c in enumerate(columns) if not c.type.is_array), None)
        return DistPolicy(DistKind.HASHED, (first,)) if first is not None \
            else DistPolicy(DistKind.RANDOM)
    kind, names = clause
    if kind is not DistKind.HASHED:
        return DistPolicy(kind)
    keys = []
    for n in names:
        idx = [i for i, c in enumerate(columns) if c.name == n]
        if not idx:
            raise errors.UndefinedColumn(f'column "{n}" named in DISTRIBUTED BY clause does not exist')
        if columns[idx[0]].type.is_array:
            raise errors.FeatureNotSupported(
                f'distribution keys of array type (column "{n}" is {columns[idx[0]].type})')
        keys.append(idx[0])
    return DistPolicy(DistKind.HASHED, tuple(keys))


# --- session commands: savepoints, cursors, LISTEN/NOTIFY, PREPARE/EXECUTE ---------------
_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*)'
_FETCH_WORDS = {"NEXT": ("forward", 1), "PRIOR": ("backward", 1), "FIRST": ("absolute", 1),
                "LAST": ("absolute", -1), "ALL": ("forward", None)}
# What the placeholder fix below must not look into: strings, quoted names, comments and
# dollar-quoted strings; then a $n placeholder directly followed by punctuation.
_LEXEMES = re.compile(r"""
      (?<![A-Za-z0-9_$\x80-\uffff])[Ee]'(?:[^'\\]|\\.|'')*'
    | '(?:[^']|'')*'
    | "(?:[^"]|"")*"
    | --[^\n]*
    | /\*.*?\*/
    | \$(?P<tag>[A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)?\$.*?\$(?P=tag)\$
    | (?<![A-Za-z0-9_$\x80-\uffff])(?P<param>\$\d+)(?=[^\sA-Za-z0-9_$\x80-\uffff])
    """, re.DOTALL | re.VERBOSE)


def _space_placeholders(text: str) -> str:
    """`$1,$2` as `$1 ,$2`: sqlglot's PostgreSQL tokenizer takes `$1,$` for the start of a
    dollar-quoted string (PostgreSQL's tags cannot start with a digit); a space after a
    placeholder changes nothing else."""
    return _LEXEMES.sub(lambda m: m.group("param") + " " if m.group("param") else m.group(0),
                        text)


def _one_identifier(text: str, what: str) -> str:
    """A name (quoted kept as written, unquoted folded to lower case), alone in `text`."""
    m = re.fullmatch(rf"\s*({_IDENT})\s*", text)
    if not m:
        near = text.split()[0] if text.split() else ""
        raise errors.SyntaxError_(f'syntax error at or near "{near}"' if near else
                                  f"syntax error at end of input in {what}")
    return _unquote_ident(m.group(1))


def _session_statement(word: str, text: str) -> Statement | None:
    """SAVEPOINT, RELEASE, ROLLBACK TO, DECLARE, FETCH, MOVE, LISTEN, UNLISTEN, NOTIFY,
    PREPARE, EXECUTE and asyncpg's `SELECT pg_advisory_unlock_all()`; None for others."""
    if word == "SAVEPOINT":
        return Statement(Kind.SAVEPOINT, text, name=_one_identifier(text[9:], "SAVEPOINT"))
    if word == "RELEASE":
        rest = re.sub(r"(?is)^RELEASE(\s+SAVEPOINT\b)?", "", text)
        return Statement(Kind.RELEASE, text, name=_one_identifier(rest, "RELEASE"))
    if word == "ROLLBACK":
        m = re.match(r"(?is)^ROLLBACK(?:\s+(?:WORK|TRANSACTION))?\s+TO\s+(?:SAVEPOINT\s+)?(.*)$",
                     text)
        if m:
            return Statement(Kind.ROLLBACK_TO, text, name=_one_identifier(m.group(1), "ROLLBACK"))
        return None
    if word == "DECLARE":
        return _declare(text)
    if word in ("FETCH", "MOVE"):
        return _fetch(word, text)
    if word == "LISTEN":
        return Statement(Kind.LISTEN, text, name=_one_identifier(text[6:], "LISTEN"))
    if word == "UNLISTEN":
        rest = text[8:].strip()
        return Statement(Kind.UNLISTEN, text,
                         name="*" if rest == "*" else _one_identifier(rest, "UNLISTEN"))
    if word == "NOTIFY":
        m = re.fullmatch(rf"(?is)NOTIFY\s+({_IDENT})\s*(?:,\s*('(?:[^']|'')*'))?\s*", text)
        if not m:
            raise errors.SyntaxError_("syntax error in NOTIFY")
        payload = m.group(2)[1:-1].replace("''", "'") if m.group(2) else ""
        return Statement(Kind.NOTIFY, text, name=_unquote_ident(m.group(1)),
                         options={"payload": payload})
    if word == "PREPARE":
        return _prepare(text)
    if word == "EXECUTE":
        m = re.fullmatch(rf"(?is)EXECUTE\s+({_IDENT})\s*(?:\((.*)\))?\s*", text)
        if not m:
            raise errors.SyntaxError_("syntax error in EXECUTE")
        args = []
        if m.group(2) is not None and m.group(2).strip():
            args = list(parse_one(f"SELECT {m.group(2)}").expressions)
        return Statement(Kind.EXECUTE, text, name=_unquote_ident(m.group(1)),
                         options={"args": args})
    if word == "SELECT" and re.fullmatch(r"(?is)SELECT\s+pg_advisory_unlock_all\s*\(\s*\)", text):
        return Statement(Kind.UNLOCK_ALL, text)
    return None


def _declare(text: str) -> Statement:
    """DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR
    [{WITH | WITHOUT} HOLD] FOR query."""
    m = re.fullmatch(rf"(?is)DECLARE\s+({_IDENT})\s+(.*?)\bCURSOR\s+(?:(WITH|WITHOUT)\s+HOLD\s+)?"
                     r"FOR\s+(.*)", text)
    if not m:
        raise errors.SyntaxError_("syntax error in DECLARE")
    opts = {"binary": False, "scroll": None, "hold": (m.group(3) or "").upper() == "WITH"}
    words = m.group(2).upper().split()
    i = 0
    while i < len(words):
        w = words[i]
        if w == "BINARY":
            opts["binary"] = True
        elif w in ("ASENSITIVE", "INSENSITIVE"):
            pass  # every cursor is insensitive here: it reads its transaction's snapshot
        elif w == "SCROLL":
            opts["scroll"] = True
        elif w == "NO" and words[i + 1:i + 2] == ["SCROLL"]:
            opts["scroll"] = False
            i += 1
        else:
            raise errors.SyntaxError_(f'syntax error at or near "{w}"')
        i += 1
    inner = classify(m.group(4))
    if inner.kind is not Kind.QUERY:
        raise errors.SyntaxError_(f'syntax error at or near "{m.group(4).split()[0]}"')
    return Statement(Kind.DECLARE, text, name=_unquote_ident(m.group(1)), inner=inner,
                     options=opts)


def _fetch(word: str, text: str) -> Statement:
    """FETCH/MOVE [direction] [FROM | IN] name, the direction as (forward | backward |
    absolute | relative, count); count None is ALL."""
    m = re.fullmatch(rf"(?is){word}\s+(.*?)\s*(?:\b(?:FROM|IN)\s+)?({_IDENT})\s*", text)
    if not m:
        raise errors.SyntaxError_(f"syntax error at end of input in {word}")
    parts = m.group(1).upper().split()
    number = r"[+-]?\d+"
    direction, count = "forward", 1
    if not parts:
        pass  # FETCH name: the next row
    elif len(parts) == 1 and parts[0] in _FETCH_WORDS:
        direction, count = _FETCH_WORDS[parts[0]]
    elif len(parts) == 1 and re.fullmatch(number, parts[0]):
        count = int(parts[0])
    elif parts[0] in ("FORWARD", "BACKWARD") and len(parts) <= 2:
        direction = parts[0].lower()
        if len(parts) == 2:
            if parts[1] == "ALL":
                count = None
            elif re.fullmatch(number, parts[1]):
                count = int(parts[1])
            else:
                raise errors.SyntaxError_(f'syntax error at or near "{parts[1].lower()}"')
    elif parts[0] in ("ABSOLUTE", "RELATIVE") and len(parts) == 2 and re.fullmatch(number,
                                                                                    parts[1]):
        direction, count = parts[0].lower(), int(parts[1])
    else:
        raise errors.SyntaxError_(f'syntax error at or near "{parts[0].lower()}"')
    if direction in ("forward", "backward") and count is not None and count < 0:
        direction, count = ("backward" if direction == "forward" else "forward"), -count
    return Statement(Kind.FETCH if word == "FETCH" else Kind.MOVE, text,
                     name=_unquote_ident(m.group(2)),
                     options={"direction": direction, "count": count})


def _prepare(text: str) -> Statement:
    """PREPARE name [(type, ...)] AS statement."""
    m = re.match(rf"(?is)PREPARE\s+({_IDENT})\s*", text)
    rest = text[m.end():] if m else ""
    declared = []
    if rest.startswith("("):
        depth, end = 0, None
        for i, c in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                end = i
                break
        if end is None:
            raise errors.SyntaxError_("syntax error at end of input")
        names, depth, start = [], 0, 1
        for i, c in enumerate(rest[:end + 1]):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if (c == "," and depth == 1) or i == end:
                names.append(rest[start:i].strip())
                start = i + 1
        if any(names):
            cast = parse_one("SELECT " + ", ".join(f"CAST(NULL AS {t})" for t in names))
            declared = [sql_type(e.to) for e in cast.expressions]
        rest = rest[end + 1:].lstrip()
    body = re.match(r"(?is)AS\s+(.*)$", rest)
    if not m or not body:
        raise errors.SyntaxError_("syntax error in PREPARE")
    inner = classify(body.group(1))
    if inner.kind not in (Kind.QUERY, Kind.INSERT):  # PostgreSQL's PreparableStmt
        raise errors.SyntaxError_(f'syntax error at or near "{body.group(1).split()[0]}"'
                                  if body.group(1).split() else "syntax error at end of input")
    return Statement(Kind.PREPARE, text, name=_unquote_ident(m.group(1)), inner=inner,
                     options={"types": declared})
