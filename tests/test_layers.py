"""The rules core reads bottom-up: no core module imports one above it, not even for type checking.

cards -> rules -> yaku -> actions -> hand -> match -> observation -> records, with the two helpers
every layer may use (``_version``, ``safejson``) below them all. The standard library is the only
other thing the core imports.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src" / "koikoi"
ORDER = ["_version", "safejson", "cards", "rules", "yaku", "actions", "hand", "match", "observation", "records"]


def imports_of(module: str) -> list[tuple[str, int]]:
    """(what, line) of every import in the module, wherever it is (functions, TYPE_CHECKING blocks)."""
    tree = ast.parse((SRC / f"{module}.py").read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                out.append((node.module or "", node.lineno))
            elif node.module:
                out.append(("." + node.module.split(".")[0], node.lineno))
            else:  # from . import x, y
                out += [("." + a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
    return out


@pytest.mark.parametrize("module", ORDER)
def test_the_core_imports_only_downwards_and_the_standard_library(module):
    rank = ORDER.index(module)
    for what, line in imports_of(module):
        if what.startswith("."):
            target = what[1:]
            assert target in ORDER, f"{module}.py:{line} imports .{target}, which is not part of the core"
            assert ORDER.index(target) < rank, f"{module}.py:{line} imports .{target}, which sits above it"
        else:
            top = what.split(".")[0]
            assert top in sys.stdlib_module_names or top == "__future__", (
                f"{module}.py:{line} imports {what}: the core uses the standard library only"
            )
