"""The modules of ``koikoi.ai`` import each other without a circle, imports inside functions included:
each can be read, and changed, from the bottom up (base and values first, the agents last)."""

from __future__ import annotations

import ast
from pathlib import Path

AI = Path(__file__).resolve().parent.parent / "src" / "koikoi" / "ai"


def _imports(path: Path) -> set[str]:
    """The ``koikoi.ai`` modules that ``path`` imports anywhere in it (top level or inside a function)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                out.add(node.module.split(".")[0])
            elif node.level == 1:
                out.update(a.name for a in node.names)
            elif node.level == 0 and node.module and node.module.startswith("koikoi.ai."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[2] for a in node.names if a.name.startswith("koikoi.ai."))
    return out


def _graph() -> dict[str, set[str]]:
    modules = {p.stem for p in AI.glob("*.py")}
    return {p.stem: _imports(p) & modules - {p.stem} for p in AI.glob("*.py")}


def test_the_ai_modules_import_each_other_in_layers():
    graph = _graph()
    graph.pop("__init__")  # the package gathers its agents; no module imports it
    assert not any("__init__" in deps for deps in graph.values())
    order: list[str] = []
    left = dict(graph)
    while left:
        ready = sorted(m for m, deps in left.items() if deps <= set(order))
        assert ready, f"these koikoi.ai modules import each other in a circle: {sorted(left)} ({left})"
        order += ready
        for m in ready:
            del left[m]
    assert order.index("base") < order.index("search") and order.index("values") < order.index("heuristic")


def test_the_checker_sees_a_circle_through_a_function_level_import(tmp_path):
    """A lazy import counts: heuristic importing the search, which imports heuristic inside a function."""
    (tmp_path / "search.py").write_text("def f():\n    from .heuristic import g\n")
    assert _imports(tmp_path / "search.py") == {"heuristic"}
    (tmp_path / "hints.py").write_text("from koikoi.ai.base import Choice\nimport koikoi.ai.search\n")
    assert _imports(tmp_path / "hints.py") == {"base", "search"}
