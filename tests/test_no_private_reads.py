"""No module of koikoi reads another module's private attributes (the project's standard; issue 34).

Every ``X._name`` attribute access in src/koikoi is parsed out of the source (ast) and must be one of:

- on ``self`` or ``cls``;
- a dunder (``__class__``, ``__new__`` ...);
- inside a class that itself defines ``_name``: another instance of the same class (``clone`` copying
  its own slots, a classmethod building an instance);
- of a private name that classes of the same module define and no class of any other module does: the
  module's own code on its own objects (a receiver from elsewhere could not have the name);
- in the short allow-list below: standard-library names that are public API despite the underscore.

The fast paths use the documented fast interfaces instead (``Hand.export_state`` and friends,
``BatchHands.seat_hands`` and friends; docs/architecture.md, "Where the rules live").
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "koikoi"

# (receiver as written, attribute): public API of the standard library that carries an underscore.
ALLOWED = {
    ("os", "_exit"),  # os._exit: the documented way for a forked child to leave without cleanup
}
# Attributes public on any receiver: collections.namedtuple's documented methods (SQLAlchemy rows too).
ALLOWED_ANYWHERE = {"_asdict", "_replace", "_fields", "_make"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _class_names(cls: ast.ClassDef) -> set[str]:
    """The private names a class defines: its slots, its class-level names, and every private attribute
    assigned anywhere in its body (``self._x = ...``, ``h._x = ...`` on an instance it builds)."""
    names: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(t, ast.Name):
                    names.add(t.id)
                    if t.id == "__slots__" and stmt.value is not None:
                        for elt in ast.walk(stmt.value):
                            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                                names.update(elt.value.split())
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute):
                    names.add(sub.attr)
    return {n for n in names if _private(n)}


class _Scan(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.classes: list[set[str]] = []  # the names defined by each enclosing class
        self.defined: set[str] = set()  # by any class of the module
        self.accesses: list[tuple[int, str, str, bool]] = []  # line, receiver, name, inside a class defining it

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        names = _class_names(node)
        self.defined |= names
        self.classes.append(names)
        self.generic_visit(node)
        self.classes.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _private(node.attr):
            v = node.value
            if not (isinstance(v, ast.Name) and v.id in ("self", "cls")):
                own = any(node.attr in names for names in self.classes)
                self.accesses.append((node.lineno, ast.unparse(v), node.attr, own))
        self.generic_visit(node)


def _scan_all() -> dict[str, _Scan]:
    scans = {}
    for path in sorted(SRC.rglob("*.py")):
        scan = _Scan(str(path.relative_to(SRC.parent)))
        scan.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        scans[scan.module] = scan
    return scans


def violations(scans: dict[str, _Scan]) -> list[str]:
    owners: dict[str, set[str]] = defaultdict(set)  # private name -> the modules whose classes define it
    for module, scan in scans.items():
        for name in scan.defined:
            owners[name].add(module)
    out = []
    for module, scan in scans.items():
        for line, receiver, name, own_class in scan.accesses:
            if own_class or name in ALLOWED_ANYWHERE or (receiver, name) in ALLOWED:
                continue
            if owners.get(name) == {module}:
                continue
            out.append(f"{module}:{line}: {receiver}.{name}")
    return out


def test_no_module_reads_another_modules_private_attributes() -> None:
    found = violations(_scan_all())
    assert not found, "private attributes read across modules (use the public or fast interface):\n" + "\n".join(found)


def test_the_scan_sees_a_private_read(tmp_path: Path) -> None:
    """The scanner itself: a read of another module's private slot is found, the same class's is not."""
    engine = _Scan("koikoi/engine.py")
    engine.visit(
        ast.parse(
            "class Hand:\n"
            "    __slots__ = ('_hands',)\n"
            "    def clone(self):\n"
            "        h = Hand.__new__(Hand)\n"
            "        h._hands = self._hands[:]\n"
            "        return h\n"
        )
    )
    fast = _Scan("koikoi/fast.py")
    fast.visit(ast.parse("def playout(h):\n    return h._hands[0] + h.__class__.__name__.count('x')\n"))
    assert violations({engine.module: engine, fast.module: fast}) == ["koikoi/fast.py:2: h._hands"]
    # A module's own code on a name only its classes define is its own business.
    own = _Scan("koikoi/fast.py")
    own.visit(ast.parse("class W:\n    _k = 1\n\ndef f(w):\n    return w._k\n"))
    assert violations({engine.module: engine, own.module: own}) == []


def private_imports(path: Path, text: str) -> list[str]:
    """``from <a koikoi module> import _name`` (or ``import koikoi.x._y``): another module's private name
    taken by import, which is a private read too."""
    out = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("koikoi")):
            for alias in node.names:
                if _private(alias.name):
                    out.append(f"{path}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}")
    return out


def test_no_module_imports_another_modules_private_names() -> None:
    found = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        for hit in private_imports(path.relative_to(SRC.parent), path.read_text(encoding="utf-8"))
    ]
    assert not found, "private names imported across modules (make them public where they belong):\n" + "\n".join(found)


def test_the_scan_sees_a_private_import() -> None:
    text = "from .batch import BatchHands, _Scorer\nfrom .rules import RULES_VERSION as _V\nimport os\n"
    assert private_imports(Path("koikoi/x.py"), text) == ["koikoi/x.py:1: from .batch import _Scorer"]
