"""The package's layers import only downward (docs/architecture.md).

Each module of `accelplane` belongs to one layer; a module may import modules of its own layer or
of layers below it, never above. `checks` and `builders` share a layer but never import each other:
what both need lives in `derive`, below them. Inside the spec layer the order is fixed too
(`ORDER_IN_LAYER`: schema document → loader and schema → salvage → model → model_convert), and no layer holds an
import cycle. Every import counts: absolute or relative, at module level or inside a function, and
`importlib.import_module`/`__import__` with a literal name (a computed name is refused: the test
could not follow it). No module but the Pulumi wiring imports pulumi, and the discovery script
imports nothing of the package (it ships as one standalone file).

The last tests run the checker on small made-up modules, one per hole it must close.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.support.paths import SOURCE_ROOT

PACKAGE = SOURCE_ROOT / "accelplane"

# Lowest first. A module's layer is found by its longest matching prefix.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("accelplane", "accelplane.errors", "accelplane.findings", "accelplane.digests", "accelplane.quantity", "accelplane.names", "accelplane.memo", "accelplane.package_data",
     "accelplane.yaml_io", "accelplane.discovery_install", "accelplane.discovery", "accelplane.display",
     "accelplane.job_helpers", "accelplane.finding_output", "accelplane.flink_options"),
    ("accelplane.templating", "accelplane.spec_loader", "accelplane.schema", "accelplane.schema_docs",
     "accelplane._generated", "accelplane.schema_codegen",
     "accelplane.schema_document", "accelplane.salvage", "accelplane.lint",
     "accelplane.model", "accelplane.model_convert", "accelplane.artifacts", "accelplane.kubernetes_rules", "accelplane.lifecycle", "accelplane.kueue_rules", "accelplane.gpu_names", "accelplane.mig_profiles"),
    ("accelplane.derive",),
    ("accelplane.checks", "accelplane.builders"),
    ("accelplane.pipeline", "accelplane.render", "accelplane.report", "accelplane.merged_view"),
    ("accelplane.diff",),
    ("accelplane.cli", "accelplane.program", "accelplane.pulumi", "accelplane.findings_docs"),
)
# The order inside a layer, lowest first (same rule: import your rank or below). Layer 1 follows the
# data: the schema document (and what needs nothing of the spec) → loading and validating a document
# → what is left of an invalid one → the typed model → its conversion from a document, which may
# use everything below it.
ORDER_IN_LAYER: Mapping[int, tuple[tuple[str, ...], ...]] = {
    1: (
        ("accelplane.schema_document", "accelplane._generated", "accelplane.templating", "accelplane.artifacts",
         "accelplane.kubernetes_rules", "accelplane.lifecycle", "accelplane.kueue_rules", "accelplane.gpu_names", "accelplane.mig_profiles", "accelplane.lint"),
        ("accelplane.spec_loader", "accelplane.schema", "accelplane.schema_codegen", "accelplane.schema_docs"),
        ("accelplane.salvage",),
        ("accelplane.model",),
        ("accelplane.model_convert",),
    ),
}
PEERS_THAT_MUST_NOT_MEET = (("accelplane.checks", "accelplane.builders"),)
PULUMI_ALLOWED = ("accelplane.program", "accelplane.pulumi")
# Import cycles inside a layer that exist today and are being removed (each names its issue).
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()
DYNAMIC = "<computed module name>"
# Modules allowed a computed import, with the packages it walks (all below the module's layer):
# the findings table imports every check and derivation so that a code declared in a new module
# is listed without anyone registering it (`accelplane.findings_docs.load_all_findings`).
COMPUTED_IMPORTS: Mapping[str, tuple[str, ...]] = {
    "accelplane.findings_docs": ("accelplane.checks", "accelplane.derive"),
}
"""What `imports` records for an ``import_module``/``__import__`` whose name is not a literal."""


def module_name(path: Path, root: Path = SOURCE_ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package.parent): p for p in sorted(package.rglob("*.py"))}


def _absolute(name: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in module ``name``."""
    if level == 0:
        return module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _literal_import(call: ast.Call, name: str, is_package: bool) -> str | None:
    """The module an ``importlib.import_module``/``__import__`` call loads, `DYNAMIC` if not a
    literal, ``None`` if the call is something else."""
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called not in ("import_module", "__import__") or not call.args:
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return DYNAMIC
    target: str = first.value
    if target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        return _absolute(name, is_package, level, target.lstrip(".") or None)
    return target


def imports(path: Path, name: str | None = None, source: str | None = None) -> set[str]:
    """Absolute module names a file imports (``from X import y`` counts X and X.y; relative imports
    resolved against the module's package; literal ``import_module``/``__import__`` calls too)."""
    name = name if name is not None else module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(name, is_package, node.level, node.module)
            if module:
                out.add(module)
            out.update(f"{module}.{a.name}" if module else a.name for a in node.names)
        elif isinstance(node, ast.Call):
            target = _literal_import(node, name, is_package)
            if target:
                out.add(target)
    return out


def group(name: str, prefixes: tuple[str, ...]) -> str | None:
    best = None
    for prefix in prefixes:
        if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def layer_of(name: str) -> int:
    found = [
        (len(p), i)
        for i, layer in enumerate(LAYERS)
        for p in layer
        if name == p or (p != "accelplane" and name.startswith(p + "."))
    ]
    assert found, f"{name} is in no layer: add it to LAYERS (and docs/architecture.md)"
    return max(found)[1]


def rank_of(name: str) -> tuple[int, int]:
    """(layer, rank inside the layer): imports may go to an equal or lower pair only."""
    layer = layer_of(name)
    order = ORDER_IN_LAYER.get(layer)
    if order is None:
        return layer, 0
    ranks = [i for i, prefixes in enumerate(order) if group(name, prefixes)]
    assert ranks, f"{name} has no place in ORDER_IN_LAYER[{layer}]: add it (and to docs/architecture.md)"
    return layer, ranks[0]


def _known(target: str, known: Mapping[str, Path]) -> str | None:
    """The package module ``target`` names (``pkg.mod.func`` is ``pkg.mod``), if any."""
    if target.split(".")[0] != "accelplane":
        return None
    if target in known:
        return target
    parent = target.rsplit(".", 1)[0]
    return parent if parent in known else None


def package_targets(name: str, path: Path, known: Mapping[str, Path], source: str | None = None) -> set[str]:
    """The package modules ``name`` imports: ``from pkg import mod`` is a dependency on ``pkg.mod``,
    ``from pkg import func`` on ``pkg``; a computed name is kept as `DYNAMIC`."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(source if source is not None else path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(name, is_package, node.level, node.module)
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        elif isinstance(node, ast.Call) and (call := _literal_import(node, name, is_package)):
            targets = [call]
        for target in targets:
            found = DYNAMIC if target == DYNAMIC else _known(target, known)
            if found:
                out.add(found)
    return out


def wrong_imports(name: str, targets: set[str]) -> list[str]:
    """The targets ``name`` may not import: upward, above its rank, across peers, or computed."""
    mine = rank_of(name)
    wrong = []
    for target in sorted(targets):
        if target == DYNAMIC:
            walked = COMPUTED_IMPORTS.get(name, ())
            if not walked or any(rank_of(p) > mine for p in walked):
                wrong.append(target)
            continue
        if rank_of(target) > mine:
            wrong.append(target)
        for a, b in PEERS_THAT_MUST_NOT_MEET:
            if {group(name, (a, b)), group(target, (a, b))} == {a, b}:
                wrong.append(target)
    return wrong


def cycles_within_layers(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module among imports inside one layer."""
    edges = {n: {t for t in ts if t in graph and t != n and layer_of(t) == layer_of(n)} for n, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:  # Tarjan; the package is small enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


ALL = modules()
GRAPH = {name: package_targets(name, path, ALL) for name, path in ALL.items()}


@pytest.mark.parametrize("name", sorted(ALL))
def test_imports_go_downward(name: str) -> None:
    wrong = wrong_imports(name, GRAPH[name])
    assert not wrong, f"{name} imports upward, across or a computed name: {sorted(set(wrong))}"


def test_no_import_cycle_inside_a_layer() -> None:
    found = [sorted(c) for c in cycles_within_layers(GRAPH) if c not in KNOWN_CYCLES]
    assert not found, f"import cycles inside a layer: {found}"


def test_known_cycles_still_exist() -> None:
    """A removed cycle leaves KNOWN_CYCLES, so it cannot come back unnoticed."""
    assert set(KNOWN_CYCLES) <= set(cycles_within_layers(GRAPH))


@pytest.mark.parametrize("name", sorted(ALL))
def test_only_the_pulumi_wiring_imports_pulumi(name: str) -> None:
    if group(name, PULUMI_ALLOWED):
        return
    assert not {i for i in imports(ALL[name]) if i.split(".")[0] in ("pulumi", "pulumi_kubernetes")}


def test_discovery_script_is_standalone() -> None:
    script = PACKAGE / "discovery" / "gpu_discovery.py"
    assert not {i for i in imports(script) if i.startswith("accelplane") or i == DYNAMIC}


def test_every_module_has_a_layer() -> None:
    for name in ALL:
        rank_of(name)


def test_pyflink_helper_is_standalone() -> None:
    """Jobs ship the PyFlink helper as one file: it imports nothing of the package."""
    helper = PACKAGE / "job_helpers" / "pyflink_slot_groups.py"
    assert not {i for i in imports(helper) if i.startswith("accelplane") or i == DYNAMIC}


# Tests of the test: each hole the checker closes, shown on a made-up module of the real package.
def _wrong(name: str, source: str, *, is_package: bool = False) -> list[str]:
    path = PACKAGE.joinpath(*name.split(".")[1:], "__init__.py") if is_package else PACKAGE.joinpath(
        *name.split(".")[1:]).with_suffix(".py")
    return wrong_imports(name, package_targets(name, path, ALL, source))


@pytest.mark.parametrize(
    ("name", "source", "expected"),
    [
        ("accelplane.derive.queues", "from accelplane.pipeline import load_validated\n", ["accelplane.pipeline"]),
        ("accelplane.derive.queues", "from ..pipeline import load_validated\n", ["accelplane.pipeline"]),
        ("accelplane.derive.queues", "from .. import pipeline\n", ["accelplane.pipeline"]),
        ("accelplane.derive.queues", "def f():\n    from ..checks import flink\n", ["accelplane.checks.flink"]),
        ("accelplane.model", "import importlib\nm = importlib.import_module('accelplane.pipeline')\n",
         ["accelplane.pipeline"]),
        ("accelplane.model", "from importlib import import_module\nimport_module('.cli', 'accelplane')\n",
         ["accelplane.cli"]),
        ("accelplane.model", "__import__('accelplane.render')\n", ["accelplane.render"]),
        ("accelplane.model", "import importlib\nname = 'accelplane.cli'\nimportlib.import_module(name)\n", [DYNAMIC]),
        ("accelplane.spec_loader", "from accelplane.model import Spec\n", ["accelplane.model"]),
        ("accelplane.schema_document", "from accelplane import spec_loader\n", ["accelplane.spec_loader"]),
        ("accelplane.model", "from accelplane.model_convert import build_model\n", ["accelplane.model_convert"]),
        ("accelplane.checks.flink", "from accelplane.builders.flink import build\n", ["accelplane.builders.flink"]),
    ],
    ids=["absolute-up", "relative-up", "relative-package", "relative-in-function", "import_module",
         "import_module-relative", "__import__", "import_module-computed", "layer1-sideways-model",
         "layer1-sideways-loader", "layer1-types-above-conversion", "checks-builders"],
)
def test_the_checker_catches(name: str, source: str, expected: list[str]) -> None:
    assert _wrong(name, source) == expected


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("accelplane.model", "from accelplane.spec_loader import load_spec\nfrom accelplane import schema\n"),
        ("accelplane.derive.queues", "from . import dra\nfrom .gpu_resources import gpu_amount\n"),
        ("accelplane.derive", "from . import queues\n"),
    ],
    ids=["layer1-downward", "relative-same-layer", "package-relative"],
)
def test_the_checker_allows(name: str, source: str) -> None:
    assert _wrong(name, source, is_package=name == "accelplane.derive") == []


def test_relative_imports_resolve_against_the_package() -> None:
    module = PACKAGE / "derive" / "queues.py"
    assert "accelplane.derive.dra" in imports(module, "accelplane.derive.queues", "from .dra import x\n")
    init = PACKAGE / "derive" / "__init__.py"
    assert "accelplane.derive.dra" in imports(init, "accelplane.derive", "from .dra import x\n")
    assert "accelplane.pipeline" in imports(init, "accelplane.derive", "from ..pipeline import x\n")


def test_the_cycle_finder_catches_a_cycle_inside_a_layer() -> None:
    graph = {
        "accelplane.derive.queues": {"accelplane.derive.dra"},
        "accelplane.derive.dra": {"accelplane.derive.gpu_resources"},
        "accelplane.derive.gpu_resources": {"accelplane.derive.queues", "accelplane.model"},
        "accelplane.model": set(),
        "accelplane.derive.yarn_types": {"accelplane.derive.gpu_resources"},
    }
    assert cycles_within_layers(graph) == [
        frozenset({"accelplane.derive.queues", "accelplane.derive.dra", "accelplane.derive.gpu_resources"})
    ]
    graph["accelplane.derive.gpu_resources"].discard("accelplane.derive.queues")
    assert cycles_within_layers(graph) == []
