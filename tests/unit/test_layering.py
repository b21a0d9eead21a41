"""The layering of raympp's top-level packages, checked on the source (no module is imported).

Every module of the packages below is parsed with `ast`, and every import in it is read:
at module level, inside functions, under `if TYPE_CHECKING:` and in try blocks alike.
Two rules:

1. Directions. A package imports only itself and the packages ALLOWED names:
   coordinator -> planner, segment, motion (and deploy: the supervisor, the local Ray);
   segment -> planner, motion; planner and motion and deploy -> none of ours;
   workloads (the benchmark kits) -> any of the server's packages, but none of them
   imports workloads. Nothing imports bench/ or tests/.
2. No loops. The graph of modules (an edge from each module to every project module it
   imports, function-local imports included) has no cycle. `from pkg import name` is an
   edge to pkg.name when that is a module, else to pkg (its __init__); importing a module
   is not counted as importing the packages above it.

A function-local import of a project module must say why it is local in a comment on the
line above it or at its end (test_function_local_imports_say_why).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# What each checked package may import besides itself (only packages of this repo count).
ALLOWED = {
    "planner": set(),
    "motion": set(),
    "deploy": set(),
    "segment": {"planner", "motion"},
    "coordinator": {"planner", "segment", "motion", "deploy"},
    "workloads": {"coordinator", "planner", "segment", "motion", "deploy"},
}
OURS = set(ALLOWED) | {"bench", "tests"}

# Import loops that are known and not yet broken, each with why: a loop found must lie
# inside one of these sets. None is left (issue 12, item 3); keep it that way.
KNOWN_LOOPS: dict[str, set[str]] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    out = {}
    for package in ALLOWED:
        for path in sorted((REPO / package).rglob("*.py")):
            out[_module_name(path)] = path
    return out


def _is_module(name: str) -> bool:
    base = REPO.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


class _Imports(ast.NodeVisitor):
    """(imported project module, line, inside a function) of each import of one module."""

    def __init__(self, module: str, is_package: bool):
        self.package = module if is_package else module.rpartition(".")[0]
        self.depth = 0
        self.found: list[tuple[str, int, bool]] = []

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _add(self, name: str, line: int):
        if name.split(".")[0] in OURS:
            self.found.append((name, line, self.depth > 0))

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.level:
            base = self.package.split(".")
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        for alias in node.names:
            full = f"{source}.{alias.name}"
            self._add(full if alias.name != "*" and _is_module(full) else source, node.lineno)


def _scan() -> dict[str, list[tuple[str, int, bool]]]:
    out = {}
    for module, path in _modules().items():
        visitor = _Imports(module, path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(), str(path)))
        out[module] = visitor.found
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, and modules importing
    themselves (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    out.append(sorted(component))
    return out


def test_imports_follow_the_layers():
    bad = []
    for module, imports in sorted(_scan().items()):
        package = module.split(".")[0]
        for target, line, local in imports:
            top = target.split(".")[0]
            if top != package and top not in ALLOWED[package]:
                where = "function-local " if local else ""
                bad.append(f"{module}:{line}: {where}import of {target} ({package} -> {top})")
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_no_import_loops():
    graph = {module: {t for t, _, _ in imports} for module, imports in _scan().items()}
    loops = [c for c in _cycles(graph)
             if not any(set(c) <= known for known in KNOWN_LOOPS.values())]
    described = []
    for component in loops:
        members = set(component)
        edges = [f"  {m} -> {t}" for m in component for t in sorted(graph[m]) if t in members]
        described.append(" <-> ".join(component) + "\n" + "\n".join(edges))
    assert not loops, ("import loops (function-local imports included; known ones in "
                       "KNOWN_LOOPS):\n" + "\n".join(described))


def test_function_local_imports_say_why():
    """A project module imported inside a function carries a comment saying why: on the
    import's lines, or above the block of import lines it is in."""
    bare = []
    for module, imports in sorted(_scan().items()):
        lines = _modules()[module].read_text().splitlines()
        for target, line, local in imports:
            if not local:
                continue
            text = lines[line - 1]
            end = line
            while text.count("(") > text.count(")") and end < len(lines):
                text += lines[end]
                end += 1
            above = line - 2  # the first line above the block of imports this one is in
            while above >= 0 and lines[above].strip().startswith(("from ", "import ")):
                if "#" in lines[above]:
                    break
                above -= 1
            said = above >= 0 and "#" in lines[above]
            if "#" not in text and not said:
                bare.append(f"{module}:{line}: {lines[line - 1].strip()}")
    assert not bare, "function-local imports without a reason:\n" + "\n".join(sorted(set(bare)))


def test_the_checker_sees_violations():
    """The scanner reads function-local, relative and `from pkg import module` imports."""
    visitor = _Imports("segment.operators.scan", False)
    visitor.visit(ast.parse(
        "from . import base\n"
        "def f():\n"
        "    from coordinator import engine\n"
        "    import workloads.tpch.cli\n"))
    assert visitor.found == [("segment.operators.base", 1, False),
                             ("coordinator.engine", 3, True),
                             ("workloads.tpch.cli", 4, True)]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}, "b": set()}) == [["a"]]
