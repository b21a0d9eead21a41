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

from planner import clause_guard, copy_statement, errors, types
from planner.bind_expr import sql_type
from planner.schema import ColumnDef, DistKind, DistPolicy


class Kind(enum.Enum):
    QUERY = "SELECT"
    EXPLAIN = "EXPLAIN"
    CREATE_TABLE = "CREATE TABLE"
    CREATE_TABLE_AS = "CREATE TABLE AS"
    DROP_TABLE = "DROP TABLE"
    INSERT = "INSERT"
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
    EMPTY = "EMPTY"


@dataclass
class Statement:
    kind: Kind
    text: str
    tree: exp.Expression | None = None
    # CREATE TABLE
    columns: list[ColumnDef] = field(default_factory=list)
    policy_clause: tuple[str, list[str]] | None = None  # ("by", cols) | ("randomly", []) ...
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


def split(sql: str) -> list[str]:
    """Statement texts of a simple-query string (semicolons outside quotes)."""
    try:
        toks = sqltokens.Tokenizer().tokenize(sql)
    except Exception as e:  # the tokenizer's own error type varies by version
        raise errors.SyntaxError_(f"syntax error: {e}")
    out, start = [], 0
    for t in toks:
        if t.token_type == sqltokens.TokenType.SEMICOLON:
            out.append(sql[start:t.start])
            start = t.end + 1
    out.append(sql[start:])
    return [s.strip() for s in out if s.strip()]


_DIST = re.compile(r"\s+DISTRIBUTED\s+(?:BY\s*\(([^)]*)\)|(RANDOMLY)|(REPLICATED))\s*$",
                   re.IGNORECASE)
_FIRST = re.compile(r"^\s*([A-Za-z]+)(?:\s+([A-Za-z_]+))?", re.DOTALL)
_TEMP = re.compile(r"(?is)^\s*CREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP|TEMPORARY)\b")


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
        return Statement(Kind.DEALLOCATE, text, name=rest.lower())
    if word == "DISCARD":
        return Statement(Kind.DISCARD, text, name=text[7:].strip().lower())
    if word == "CLOSE":
        return Statement(Kind.CLOSE, text, name=text[5:].strip().lower())
    if word == "EXPLAIN":
        return _explain(text)
    if word == "CREATE" and second in ("TABLE", "TEMP", "TEMPORARY", "UNLOGGED", "LOCAL",
                                       "GLOBAL"):
        if _TEMP.match(text):
            # A temporary table would be a shared, persistent one here: refused before
            # anything is created.
            raise errors.FeatureNotSupported("temporary tables are not supported")
        return _create_table(text)
    if word == "COPY":
        return Statement(Kind.COPY, text, copy=copy_statement.parse(text))
    if word == "ANALYZE" or word == "VACUUM":
        names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"(?i)^(vacuum|analyze)(\s+(verbose|analyze|full))*", "", text))
        return Statement(Kind.ANALYZE, text, name=",".join(n.lower() for n in names))
    tree = parse_one(text)
    if isinstance(tree, (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values)) or (
            isinstance(tree, exp.Subquery)):
        return Statement(Kind.QUERY, text, tree)
    if isinstance(tree, exp.Insert):
        return Statement(Kind.INSERT, text, tree)
    if isinstance(tree, exp.Drop):
        if (tree.args.get("kind") or "").upper() != "TABLE":
            raise errors.FeatureNotSupported(f"DROP {tree.args.get('kind')}")
        return Statement(Kind.DROP_TABLE, text, tree, if_not_exists=bool(tree.args.get("exists")))
    if isinstance(tree, exp.TruncateTable):
        return Statement(Kind.TRUNCATE, text, tree)
    raise errors.FeatureNotSupported(f"statement {word} {second}".strip())


def parse_one(text: str) -> exp.Expression:
    try:
        trees = sqlglot.parse(text, dialect="postgres", error_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.ParseError as e:
        first = e.errors[0] if getattr(e, "errors", None) else {}
        near = first.get("highlight") if isinstance(first, dict) else None
        msg = f'syntax error at or near "{near}"' if near else f"syntax error: {str(e).splitlines()[0]}"
        raise errors.SyntaxError_(msg) from None
    except sqlglot.errors.TokenError as e:
        raise errors.SyntaxError_(f"syntax error: {e}") from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise errors.SyntaxError_("syntax error: expected one statement")
    tree = trees[0]
    if isinstance(tree, exp.Command):
        raise errors.SyntaxError_(f'syntax error at or near "{tree.name or text.split()[0]}"')
    clause_guard.check(tree)
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


def _escape_string(body: str) -> str:
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(simple.get(body[i + 1], body[i + 1]))
            i += 2
            continue
        if c == "'" and body[i + 1:i + 2] == "'":
            i += 1
        out.append(c)
        i += 1
    return "".join(out)


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
            args.append(_escape_string(m.group("escape")[1:-1]))
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


def _explain(text: str) -> Statement:
    rest = text[len("EXPLAIN"):].strip()
    analyze = False
    m = re.match(r"(?is)^\(([^)]*)\)\s*(.*)$", rest)
    if m:
        opts = [o.strip().lower() for o in m.group(1).split(",")]
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
    if inner.kind not in (Kind.QUERY,):
        raise errors.FeatureNotSupported(f"EXPLAIN of {inner.kind.value}")
    return Statement(Kind.EXPLAIN, text, analyze=analyze, inner=inner)


def _create_table(text: str) -> Statement:
    policy = None
    m = _DIST.search(text)
    if m:
        if m.group(1) is not None:
            policy = ("by", [c.strip().strip('"').lower() for c in m.group(1).split(",") if c.strip()])
        elif m.group(2):
            policy = ("randomly", [])
        else:
            policy = ("replicated", [])
        text_sql = text[:m.start()]
    else:
        text_sql = text
    tree = parse_one(text_sql)
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
    cols = []
    for c in schema.expressions:
        if not isinstance(c, exp.ColumnDef):
            # Constraints are refused, not accepted unenforced: a PRIMARY KEY that lets
            # duplicates in would be a promise broken silently.
            raise errors.FeatureNotSupported(
                f"table constraint {c.sql(dialect='postgres')!r} (constraints are not "
                "enforced yet)")
        if c.args.get("kind") is None:
            raise errors.SyntaxError_(f'column "{c.name}" needs a type')
        _refuse_column_options(c)
        not_null = any(isinstance(k.kind, exp.NotNullColumnConstraint)
                       and not k.kind.args.get("allow_null") for k in c.constraints)
        name = c.name if c.this.quoted else c.name.lower()
        if any(x.name == name for x in cols):
            raise errors.QueryError(f'column "{name}" specified more than once', "42701")
        t = sql_type(c.args["kind"])
        if t.is_numeric and t.precision is None:
            # An unconstrained numeric column keeps any scale in PostgreSQL; ours have a
            # fixed scale, so give it room rather than rounding values away.
            t = types.numeric(None, types.NUMERIC_DEFAULT_SCALE)
        cols.append(ColumnDef(name, t, not_null))
    return Statement(Kind.CREATE_TABLE, text, tree, columns=cols, policy_clause=policy,
                     if_not_exists=exists)


def _refuse_column_options(c: exp.ColumnDef) -> None:
    """Only NULL / NOT NULL are implemented; DEFAULT, SERIAL, identity, keys, CHECK,
    REFERENCES and COLLATE are refused before anything is created."""
    kind = c.args["kind"]
    if kind.this.name in ("SERIAL", "BIGSERIAL", "SMALLSERIAL"):
        raise errors.FeatureNotSupported(f"type {kind.this.name.lower()} (column defaults "
                                         "and sequences are not implemented yet)")
    for k in c.constraints:
        if not isinstance(k.kind, exp.NotNullColumnConstraint):
            raise errors.FeatureNotSupported(
                f"column option {k.sql(dialect='postgres')!r} of column \"{c.name}\" (only "
                "NULL and NOT NULL are implemented)")
    for key in ("default", "position", "output", "exists"):
        if c.args.get(key):
            raise errors.FeatureNotSupported(f"column option {key.upper()} of column \"{c.name}\"")


def dist_policy(clause, columns: list[ColumnDef]) -> DistPolicy:
    """The policy of a DISTRIBUTED clause; default: hashed on the first column (Greenplum)."""
    if clause is None:
        return DistPolicy(DistKind.HASHED, (0,)) if columns else DistPolicy(DistKind.RANDOM)
    kind, names = clause
    if kind == "randomly":
        return DistPolicy(DistKind.RANDOM)
    if kind == "replicated":
        return DistPolicy(DistKind.REPLICATED)
    keys = []
    for n in names:
        idx = [i for i, c in enumerate(columns) if c.name == n]
        if not idx:
            raise errors.UndefinedColumn(f'column "{n}" named in DISTRIBUTED BY clause does not exist')
        keys.append(idx[0])
    return DistPolicy(DistKind.HASHED, tuple(keys))
