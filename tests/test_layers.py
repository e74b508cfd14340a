"""The package reads bottom-up: no module imports one above it, and no import goes round in a circle.

Every import counts, wherever it is: at the top of a module, inside a function (a lazy import is
still a dependency, only a later one) and under ``if TYPE_CHECKING:`` (the type checker follows it).

The rules core is the strictest: cards -> rules -> yaku -> actions -> hand -> match -> observation ->
records, each importing only those before it, the helpers every layer may use (``_version``,
``safejson``) and the standard library.

The whole package then stands in LAYERS, lowest first: base < core < engine < ai < lineup < arena <
rl < views < web < cli. A module may import its own layer or one below; a new module fails
:func:`test_every_module_has_a_layer` until it is given one, so that where it sits is a decision, not
an accident. Within a layer, :func:`test_no_import_circle` keeps the order: it lists every group of
modules that import one another, each with one circle through it and every import inside the group.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src"
PACKAGE = SRC / "koikoi"
ORDER = ["_version", "safejson", "cards", "rules", "yaku", "actions", "hand", "match", "observation", "records"]

# Lowest first. "koikoi.cli.*" is koikoi.cli and every module under it (the same for every "pkg.*").
LAYERS: list[tuple[str, list[str]]] = [
    # Helpers with no game in them: the standard library only.
    ("base", ["_version", "safejson", "clocks", "glicko2", "playerspec", "_botlauncher"]),
    # The rules of the game, and the package's own face (koikoi/__init__.py re-exports the core).
    ("core", ["koikoi", *ORDER[2:]]),
    # What the rules make possible without a mind: many hands at once in NumPy, the bot protocol, the
    # simple players, and an observation as a vector of numbers.
    ("engine", ["cardbits", "batch", "botproto", "players", "encoding", "kkai"]),
    # Minds: the computer levels (and their registry), hints, a trained policy.
    ("ai", ["ai.*", "policy"]),
    # A player spec made into a player: a built-in by name with its options, policy:FILE, cmd:COMMAND.
    ("lineup", ["lineup"]),
    # Many matches between two players; a bot program connected to a server.
    ("arena", ["arena.*", "botconnect", "ladder"]),
    # Reinforcement learning environments (they play their opponents through the lineup).
    ("rl", ["env", "vector"]),
    # What a person reads: the terminal game, its drawings, reviews, the rules written out; puzzles and
    # lessons, which the review's search and reasons judge.
    (
        "views",
        ["render", "reviewtable", "ttyline", "review", "puzzles", "puzzlegen", "lessons", "terminal", "rulesdoc"],
    ),
    # The web app.
    ("web", ["web.*"]),
    # The command line, which starts everything below it (koikoi serve starts the web app), and
    # ``python -m koikoi``, which is the command line.
    ("cli", ["cli.*", "__main__"]),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{MODULES[self.source].relative_to(SRC.parent)}:{self.line} imports {self.target}"


def _resolved(module: str, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    if level == 0:
        return name or ""
    parts = module.split(".") if is_package(module) else module.split(".")[:-1]
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _loaded(importer: str, target: str) -> Iterator[str]:
    """The koikoi modules that importing ``target`` runs: it and each package above it, except those the
    importer sits in (they are already being imported when it runs)."""
    parts = target.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name not in MODULES or name == importer:
            continue
        if is_package(name) and (importer + ".").startswith(name + "."):
            continue
        yield name


def imports_of(module: str) -> list[Import]:
    """Every import of a koikoi module by ``module``, wherever it is (functions, TYPE_CHECKING blocks)."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    out: list[Import] = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = _resolved(module, node.level, node.module)
            targets.append(base)
            targets += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
        elif isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        for target in targets:
            out += [Import(module, name, node.lineno) for name in _loaded(module, target)]
    return out


GRAPH: dict[str, list[Import]] = {m: imports_of(m) for m in MODULES}


def layer_of(module: str) -> int | None:
    for rank, (_, members) in enumerate(LAYERS):
        for member in members:
            name = "koikoi" if member == "koikoi" else f"koikoi.{member}"
            if member.endswith(".*"):
                if module == name[:-2] or module.startswith(name[:-1]):
                    return rank
            elif module == name:
                return rank
    return None


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if layer_of(m) is None]
    assert not missing, f"give these modules a layer in tests/test_layers.py: {', '.join(missing)}"


def test_a_package_stands_in_its_layer_with_everything_under_it():
    # koikoi.cli is becoming a package: its modules sit where cli.py sat, at the top.
    assert layer_of("koikoi.cli") == layer_of("koikoi.cli.play") == len(LAYERS) - 1
    assert layer_of("koikoi.web.routes.table") == layer_of("koikoi.web")
    assert layer_of("koikoi.client") is None and layer_of("koikoi.arenas") is None


def test_every_layer_names_modules_that_exist():
    for name, members in LAYERS:
        for member in members:
            stem = "koikoi" if member == "koikoi" else "koikoi." + member.removesuffix(".*")
            assert stem in MODULES, f"layer {name} names {member}, which is not a module of the package"


def test_no_module_imports_one_above_it():
    wrong = []
    for module, imports in GRAPH.items():
        rank = layer_of(module)
        for imp in imports:
            above = layer_of(imp.target)
            if rank is not None and above is not None and above > rank:
                wrong.append(f"{imp} (layer {LAYERS[rank][0]} imports layer {LAYERS[above][0]})")
    if wrong:
        pytest.fail("imports upwards:\n" + "\n".join(wrong), pytrace=False)


def circles(graph: dict[str, list[Import]]) -> list[list[Import]]:
    """One shortest circle through each group of modules that import one another (Tarjan's strongly
    connected components), the groups in a fixed order; an empty list when the imports form no circle."""
    return [path for _, path in circle_groups(graph)]


def circle_groups(graph: dict[str, list[Import]]) -> list[tuple[set[str], list[Import]]]:
    """Each group of modules that import one another, with one shortest circle through its first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the number of modules (a few hundred)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for imp in graph[v]:
            w = imp.target
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for group in sorted(groups, key=min):
        start = min(group)
        # Breadth first from start back to start, inside the group: the shortest circle through it.
        came: dict[str, Import] = {}
        frontier = [start]
        found: Import | None = None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for imp in sorted(graph[v], key=lambda i: (i.target, i.line)):
                    if imp.target == start:
                        found = imp
                        break
                    if imp.target in group and imp.target not in came:
                        came[imp.target] = imp
                        nxt.append(imp.target)
                if found:
                    break
            frontier = nxt
        assert found is not None
        path = [found]
        while path[0].source != start:
            path.insert(0, came[path[0].source])
        out.append((group, path))
    return out


def test_no_import_circle():
    found = circle_groups(GRAPH)
    report = []
    for group, path in found:
        ring = " -> ".join([p.source for p in path] + [path[0].source])
        inside = [str(i) for m in sorted(group) for i in sorted(GRAPH[m], key=lambda i: i.line) if i.target in group]
        report.append(
            f"{ring}\n  every import among {', '.join(sorted(group))}:\n" + "\n".join(f"    {i}" for i in inside)
        )
    if found:
        pytest.fail(f"{len(found)} import circle(s):\n" + "\n".join(report), pytrace=False)


def test_the_circle_finder_finds_a_circle_and_names_its_lines():
    a, b, c = "koikoi.cards", "koikoi.rules", "koikoi.yaku"  # real names, so that str(Import) works
    graph = {a: [Import(a, b, 1)], b: [Import(b, c, 2)], c: [Import(c, a, 3), Import(c, b, 4)]}
    assert [[(i.source, i.target) for i in path] for path in circles(graph)] == [[(a, b), (b, c), (c, a)]]
    assert circles({a: [Import(a, b, 1)], b: [], c: []}) == []


def test_imports_are_read_everywhere_and_resolved():
    """Lazy, TYPE_CHECKING and relative imports all count, packages and their __init__ included."""
    targets = {imp.target for imp in GRAPH["koikoi.terminal"]}
    assert "koikoi.ai" in targets  # from .ai import make_agent, inside a method
    assert "koikoi.ai.hints" in targets  # ... and from .ai.hints import hint_lines: the package runs first
    targets = {imp.target for imp in GRAPH["koikoi.web.routes.table"]}
    assert {"koikoi.safejson", "koikoi.web.games"} <= targets  # from ... import safejson; from ..games import
    assert "koikoi.web" not in targets  # its own package is already being imported


@pytest.mark.parametrize("module", ORDER)
def test_the_core_imports_only_downwards_and_the_standard_library(module):
    rank = ORDER.index(module)
    for imp in GRAPH[f"koikoi.{module}"]:
        target = imp.target.removeprefix("koikoi.")
        assert target in ORDER, f"{imp}, which is not part of the core"
        assert ORDER.index(target) < rank, f"{imp}, which sits above it"
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for what in names:
            top = what.split(".")[0]
            assert top in sys.stdlib_module_names or top == "__future__", (
                f"{module}.py:{node.lineno} imports {what}: the core uses the standard library only"
            )
