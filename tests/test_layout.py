"""The house rules of the package's layout, computed from the modules' own source (docs/architecture.md):

- no import circle between modules (every import counts, a function's deferred ones too, but for the
  ``if TYPE_CHECKING:`` ones, which never run);
- the packages import one way: plugin -> serve -> agents -> app -> views -> ingest -> analysis -> model -> trace
  (plugin and serve both mount app; neither imports the other's side), and the analysis
  families among themselves, with no circle between packages either;
- no module past 700 lines; every analysis family says what it answers; the package root holds only the
  plugin and the packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "torch_tb_profiler"
MAX_LINES = 700
LAYERS = (
    "plugin",
    "serve",
    "app",
    "views",
    "ingest",
    "analysis",
    "model",
    "trace",
)  # each imports only those after it


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a package is its __init__)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _runs(node: ast.AST) -> bool:
    """False for an ``if TYPE_CHECKING:`` block (its imports are for type checkers only)."""
    if not isinstance(node, ast.If):
        return True
    test = node.test
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
    return name != "TYPE_CHECKING"


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        if _runs(node):
            stack.extend(ast.iter_child_nodes(node))
        else:
            stack.extend(node.orelse)  # type: ignore[attr-defined]
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    files = module_files(package)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
                continue
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, *([node.module] if node.module else [])])
            targets.add(base)
            targets.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph (its nodes in import order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def package_of(module: str) -> str:
    """The layer a module belongs to (an analysis family counts as its own package)."""
    root, *parts = module.split(".")
    if not parts:
        return root
    if parts[0] == "analysis" and len(parts) > 1:
        return f"analysis.{parts[1]}"
    return parts[0]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        src = package_of(module)
        out.setdefault(src, set()).update(package_of(t) for t in targets if package_of(t) != src)
    return out


def _layer(package: str) -> int | None:
    top = package.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


# ---- the rules on this package ------------------------------------------------------------------------


def test_no_import_circle_between_modules() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 50  # the walk saw the package
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_packages_import_one_way() -> None:
    packages = package_graph(import_graph(PACKAGE))
    assert find_cycle(packages) is None, " -> ".join(find_cycle(packages) or [])
    upward = [
        f"{src} imports {dst}"
        for src, targets in packages.items()
        for dst in targets
        if _layer(src) is not None and _layer(dst) is not None and _layer(dst) < _layer(src)  # type: ignore[operator]
    ]
    assert not upward, upward


def test_no_module_past_700_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_every_analysis_family_says_what_it_answers() -> None:
    families = [p for p in (PACKAGE / "analysis").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert len(families) >= 8
    for family in families:
        init = family / "__init__.py"
        assert init.is_file(), family.name
        assert ast.get_docstring(ast.parse(init.read_text())), f"analysis/{family.name}/__init__.py"
    loose = sorted(p.name for p in (PACKAGE / "analysis").glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside a family: {loose}"


def test_the_root_holds_only_the_plugin_and_the_packages() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "plugin.py"]


def external_imports(package: Path) -> dict[str, set[str]]:
    """Module -> the top-level names of what it imports from outside the package (deferred imports too)."""
    out: dict[str, set[str]] = {}
    for name, path in module_files(package).items():
        found: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif not node.level and node.module:
                found.add(node.module.split(".")[0])
        out[name] = found - {PACKAGE.name}
    return out


def test_only_the_plugin_imports_tensorboard() -> None:
    """``torch-tb-profiler serve`` and the notebook helper run without TensorBoard (tests/test_serve.py
    checks the running server's ``sys.modules`` too); neither side of plugin/serve imports the other."""
    users = sorted(m for m, names in external_imports(PACKAGE).items() if "tensorboard" in names)
    assert users == ["torch_tb_profiler.plugin"], users
    graph = import_graph(PACKAGE)
    plugin_side = graph["torch_tb_profiler.plugin"]
    assert not any(t.startswith("torch_tb_profiler.serve") for t in plugin_side), plugin_side
    assert not any(
        "torch_tb_profiler.plugin" in targets
        for m, targets in graph.items()
        if m != "torch_tb_profiler.plugin"
    )


# ---- the checks themselves can fail ---------------------------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root / "pkg"


def test_a_circle_through_a_deferred_import_is_found(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def f():\n    from pkg.c import g\n",
            "pkg/c.py": "from . import a\n",
            "pkg/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
        },
    )
    graph = import_graph(pkg)
    assert graph["pkg.d"] == set()  # a type checker's import never runs
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_a_circle_between_packages_is_found(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/trace/__init__.py": "",
            "pkg/trace/x.py": "from pkg.ingest.y import z\n",
            "pkg/ingest/__init__.py": "",
            "pkg/ingest/y.py": "from pkg.trace import x\nz = 1\n",
        },
    )
    graph = import_graph(pkg)
    assert find_cycle(graph) is not None
    assert package_graph(graph) == {"pkg": set(), "trace": {"ingest"}, "ingest": {"trace"}}
    assert find_cycle(package_graph(graph)) is not None


@pytest.mark.parametrize(("module", "package"), [("torch_tb_profiler.analysis.ops.kernels", "analysis.ops")])
def test_an_analysis_family_is_a_package_of_its_own(module: str, package: str) -> None:
    assert package_of(module) == package
    assert package_of("torch_tb_profiler.views.timeline") == "views"
