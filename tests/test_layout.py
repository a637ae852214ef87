"""The floor plan of the packages (``tsfile_catalog``, ``pyspark_tsfile``) stays readable:

* **No import cycle** among their modules, counting imports inside functions too (a cycle
  held together by a function-level import is still a cycle: it only moves the failure to
  run time). An import under ``if TYPE_CHECKING:`` never runs and does not count, so the
  verbs below a façade may name the façade's class in annotations (pyiceberg's
  ``table/maintenance.py`` does this with ``Table``). ``from pkg import name`` is an import of
  the submodule ``pkg.name`` when that is a module, else of ``pkg``; relative imports are
  resolved the same way. A module's implicit import of its parent packages is not counted:
  every submodule has one.
* **No climbing into the Spark layer** from the Spark-free ones: ``write/`` and ``table/``
  (what ``write_table`` and ``open_table`` run) import nothing from ``datasource/``,
  ``spark_catalog/`` or pyspark, in functions too, so a Spark-free install can run them and
  the Spark edge stays an edge.
* **No module over 600 lines unless it says why it holds one job**: a line of its module
  docstring that starts with ``One job:`` and gives the reason, e.g.

  .. code-block:: python

      \"\"\"The SQL dialect's parser: statement text to statement models.

      One job: one parse function per statement of one grammar; split, it would scatter
      the grammar over modules that all import each other's helpers.
      \"\"\"

  (``grep -rn "One job:" tsfile_catalog`` lists the exceptions.)

Both checks read the source with :mod:`ast` alone; the cycle search is Tarjan's algorithm. On
failure they print each cycle's modules and the import lines that close it, and each long
module with its length.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tsfile_catalog", "pyspark_tsfile")
MAX_LINES = 600
ONE_JOB = "One job:"


# -- reading the modules and their imports ----------------------------------------------------


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


@dataclass(frozen=True)
class Import:
    """One module importing another: the statement's file, line and text."""

    source: str
    target: str
    path: Path
    line: int
    text: str
    in_function: bool


def find_modules(root: Path, packages: Sequence[str]) -> dict[str, Module]:
    """Every ``.py`` file of ``packages`` under ``root``, by dotted name."""
    found: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(
    nodes: Iterable[ast.AST], in_function: bool = False
) -> Iterator[tuple[ast.stmt, bool]]:
    """The import statements among ``nodes`` and below, each with whether a function holds
    it; the bodies of ``if TYPE_CHECKING:`` are skipped (their ``else`` is not)."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _statements(node.orelse, in_function)
        else:
            inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            yield from _statements(ast.iter_child_nodes(node), inside)


def _targets(module: Module, node: ast.stmt, modules: Mapping[str, Module]) -> list[str]:
    """The package modules one import statement imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        # ``import a.b.c`` imports the module a.b.c (the longest prefix that is one of ours).
        out = []
        for name in names:
            parts = name.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts:
                out.append(".".join(parts))
        return out
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    out = []
    for alias in node.names:
        submodule = f"{origin}.{alias.name}" if origin else alias.name
        if submodule in modules:
            out.append(submodule)
        elif origin in modules:
            out.append(origin)
    return out


def find_imports(modules: Mapping[str, Module]) -> list[Import]:
    """Every import of one package module by another, in source order."""
    found: list[Import] = []
    for module in modules.values():
        tree = ast.parse(module.path.read_text(), filename=str(module.path))
        for node, in_function in _statements(tree.body):
            statement = ast.unparse(node)
            for target in dict.fromkeys(_targets(module, node, modules)):
                if target != module.name:
                    found.append(
                        Import(
                            module.name, target, module.path, node.lineno, statement, in_function
                        )
                    )
    return found


# -- cycles -----------------------------------------------------------------------------------


def strongly_connected(edges: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node, each sorted (an
    iterative walk: a deep package must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(edges.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def closing_imports(component: Sequence[str], imports: Sequence[Import]) -> list[Import]:
    """One shortest cycle through the component's first module, as the import statements
    that make it (the first statement of each hop)."""
    members = set(component)
    first: dict[tuple[str, str], Import] = {}
    for imp in imports:
        if imp.source in members and imp.target in members:
            first.setdefault((imp.source, imp.target), imp)
    start = component[0]
    came_from: dict[str, Import] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for (source, target), imp in first.items():
            if source != node:
                continue
            if target == start:
                path = [imp]
                while path[0].source != start:
                    path.insert(0, came_from[path[0].source])
                return path
            if target not in came_from:
                came_from[target] = imp
                queue.append(target)
    raise AssertionError(f"no cycle through {start}")


def import_cycles(root: Path, packages: Sequence[str]) -> list[str]:
    """A description of each import cycle among ``packages``' modules (none: an empty list)."""
    modules = find_modules(root, packages)
    imports = find_imports(modules)
    edges: dict[str, list[str]] = {name: [] for name in modules}
    for imp in imports:
        if imp.target not in edges[imp.source]:
            edges[imp.source].append(imp.target)
    reports = []
    for component in strongly_connected(edges):
        members = set(component)
        inside = [i for i in imports if i.source in members and i.target in members]
        closing = closing_imports(component, imports)
        hops = "\n".join(
            f"    {i.path.relative_to(root)}:{i.line}: {i.text}"
            + ("   (inside a function)" if i.in_function else "")
            for i in closing
        )
        reports.append(
            f"import cycle among {len(component)} modules: {', '.join(component)}\n"
            f"  closed by:\n{hops}\n"
            f"  ({len(inside)} imports in all between these modules)"
        )
    return reports


# -- layers -----------------------------------------------------------------------------------

# A package and the modules it must never import (a name and everything below it).
SPARK_FREE: dict[str, tuple[str, ...]] = dict.fromkeys(
    ("tsfile_catalog.write", "tsfile_catalog.table"),
    ("tsfile_catalog.datasource", "tsfile_catalog.spark_catalog", "pyspark"),
)


def _named(module: Module, node: ast.stmt) -> list[str]:
    """The absolute dotted names one import statement names (``from a import b``: ``a`` and
    ``a.b``), ours or not."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    return [origin] + [f"{origin}.{alias.name}" for alias in node.names]


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def layer_violations(
    root: Path, packages: Sequence[str], rules: Mapping[str, Sequence[str]]
) -> list[str]:
    """Each import (inside functions too; not under ``if TYPE_CHECKING:``) by a module of a
    ``rules`` package of a name that package must not import, as ``file:line: statement``."""
    out = []
    for module in find_modules(root, packages).values():
        banned = [b for layer, names in rules.items() if _under(module.name, layer) for b in names]
        if not banned:
            continue
        tree = ast.parse(module.path.read_text(), filename=str(module.path))
        for node, _ in _statements(tree.body):
            names = _named(module, node)
            hit = next((b for b in banned if any(_under(n, b) for n in names)), None)
            if hit is not None:
                out.append(
                    f"{module.path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"
                    f"   ({hit} is above {module.name})"
                )
    return sorted(out)


# -- module length ----------------------------------------------------------------------------


def long_modules(root: Path, packages: Sequence[str], limit: int = MAX_LINES) -> list[str]:
    """Each module over ``limit`` lines whose docstring has no ``One job:`` line."""
    out = []
    for module in find_modules(root, packages).values():
        text = module.path.read_text()
        count = len(text.splitlines())
        if count <= limit:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if not any(line.strip().startswith(ONE_JOB) for line in docstring.splitlines()):
            out.append(f"{module.path.relative_to(root)}: {count} lines")
    return sorted(out)


# -- the checks on this repository ------------------------------------------------------------


def test_no_import_cycle_among_package_modules() -> None:
    cycles = import_cycles(ROOT, PACKAGES)
    assert not cycles, (
        f"{len(cycles)} import cycle(s) among package modules (imports inside functions "
        "count):\n\n" + "\n\n".join(cycles)
    )


def test_write_and_table_never_import_the_spark_layer() -> None:
    found = layer_violations(ROOT, PACKAGES, SPARK_FREE)
    assert not found, (
        "write/ and table/ run without Spark (write_table, open_table): move what they need "
        "below them instead of importing the Spark layer:\n  " + "\n  ".join(found)
    )


def test_no_module_over_600_lines_unless_it_says_why() -> None:
    long = long_modules(ROOT, PACKAGES)
    assert not long, (
        f"modules over {MAX_LINES} lines: split each by job, or say in its docstring, on a "
        f"line starting {ONE_JOB!r}, why its lines belong together:\n  " + "\n  ".join(long)
    )


# -- the checks themselves, on small packages written here ------------------------------------


def _package(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_closed_inside_a_function_is_found_with_its_lines(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "import os\n\n\ndef f():\n    from .a import f as g\n    return g\n",
            "pkg/c.py": "from pkg.a import b\n",  # into the cycle, not part of it
        },
    )
    (report,) = import_cycles(root, ["pkg"])
    assert report.splitlines() == [
        "import cycle among 2 modules: pkg.a, pkg.b",
        "  closed by:",
        "    pkg/a.py:1: from pkg import b",
        "    pkg/b.py:5: from .a import f as g   (inside a function)",
        "  (2 imports in all between these modules)",
    ]


def test_names_resolve_to_submodules_else_to_the_package(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.sub.x import VALUE\n",
            "pkg/sub/__init__.py": "",
            # A submodule by name: an edge to pkg.sub.y, not to pkg.sub.
            "pkg/sub/x.py": "from pkg.sub import y\nVALUE = 1\n",
            # A name the package defines: an edge to pkg, which imports pkg.sub.x: a cycle.
            "pkg/sub/y.py": "import os\nfrom .. import VALUE\n",
            "pkg/z.py": "import pkg.sub.y\n",
        },
    )
    modules = find_modules(root, ["pkg"])
    edges = {(i.source, i.target) for i in find_imports(modules)}
    assert edges == {
        ("pkg", "pkg.sub.x"),
        ("pkg.sub.x", "pkg.sub.y"),
        ("pkg.sub.y", "pkg"),
        ("pkg.z", "pkg.sub.y"),
    }
    (report,) = import_cycles(root, ["pkg"])
    assert report.startswith("import cycle among 3 modules: pkg, pkg.sub.x, pkg.sub.y\n")
    assert "    pkg/sub/y.py:2: from .. import VALUE" in report


def test_type_checking_imports_do_not_count(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/table.py": "from pkg.verbs import run\n",
            "pkg/verbs.py": (
                "from typing import TYPE_CHECKING\n"
                "import typing\n"
                "if TYPE_CHECKING:\n    from pkg.table import Table\n"
                "if typing.TYPE_CHECKING:\n    from pkg import table\n"
                "else:\n    import json\n"
            ),
        },
    )
    assert import_cycles(root, ["pkg"]) == []
    (root / "pkg/verbs.py").write_text("def run():\n    from pkg.table import Table\n")
    assert len(import_cycles(root, ["pkg"])) == 1


def test_long_modules_need_a_one_job_line(tmp_path: Path) -> None:
    body = "x = 1\n" * 600
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/fits.py": body[:-6] + '"""Short."""\n',
            "pkg/long.py": '"""Many jobs."""\n' + body,
            "pkg/says_why.py": '"""One grammar.\n\nOne job: the parser of one grammar.\n"""\n'
            + body,
            "pkg/mentions.py": '"""Not a reason: this says One job: mid-line."""\n' + body,
        },
    )
    assert long_modules(root, ["pkg"]) == [
        "pkg/long.py: 601 lines",
        "pkg/mentions.py: 601 lines",
    ]


def test_layer_rules_catch_function_level_and_relative_imports(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/edge/__init__.py": "",
            "pkg/edge/opts.py": "X = 1\n",
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "def f():\n    from ..edge.opts import X\n    return X\n",
            "pkg/low/b.py": "import typing\nif typing.TYPE_CHECKING:\n    import pyspark.sql\n",
            "pkg/low/c.py": "import pyspark.sql.types as T\nimport pysparkling\n",
            "pkg/low/d.py": "from pkg import edge\n",
            "pkg/edge/e.py": "import pyspark\n",  # the edge may
        },
    )
    rules = {"pkg.low": ("pkg.edge", "pyspark")}
    assert layer_violations(root, ["pkg"], rules) == [
        "pkg/low/a.py:2: from ..edge.opts import X   (pkg.edge is above pkg.low.a)",
        "pkg/low/c.py:1: import pyspark.sql.types as T   (pyspark is above pkg.low.c)",
        "pkg/low/d.py:1: from pkg import edge   (pkg.edge is above pkg.low.d)",
    ]
