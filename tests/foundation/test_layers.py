"""The package's layers import only downward (docs/architecture.md).

Each module of `accelplane` belongs to one layer; a module may import modules of its own layer or
of layers below it, never above. `checks` and `builders` share a layer but never import each other:
what both need lives in `derive`, below them. No module but the Pulumi wiring imports pulumi, and
the discovery script imports nothing of the package (it ships as one standalone file).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import SOURCE_ROOT

PACKAGE = SOURCE_ROOT / "accelplane"

# Lowest first. A module's layer is found by its longest matching prefix.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("accelplane", "accelplane.errors", "accelplane.findings", "accelplane.quantity", "accelplane.names", "accelplane.package_data",
     "accelplane.yaml_io", "accelplane.discovery_constants", "accelplane.discovery", "accelplane.display",
     "accelplane.job_helpers", "accelplane.dataclass_bytecode", "accelplane.finding_output",
     "accelplane.flink_options"),
    ("accelplane.templating", "accelplane.spec_loader", "accelplane.schema", "accelplane.schema_docs",
     "accelplane.schema_fast", "accelplane.schema_codegen",
     "accelplane.schema_document", "accelplane.partial", "accelplane.lint",
     "accelplane.model", "accelplane.artifacts", "accelplane.kube", "accelplane.gpu_names"),
    ("accelplane.derive",),
    ("accelplane.checks", "accelplane.builders"),
    ("accelplane.pipeline", "accelplane.render", "accelplane.report", "accelplane.merged_view"),
    ("accelplane.diff",),
    ("accelplane.cli", "accelplane.program", "accelplane.pulumi", "accelplane.findings_docs"),
)
PEERS_THAT_MUST_NOT_MEET = (("accelplane.checks", "accelplane.builders"),)
PULUMI_ALLOWED = ("accelplane.program", "accelplane.pulumi")


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> set[str]:
    """Absolute module names imported by a file (``from X import y`` counts X and X.y)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
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


ALL = modules()


@pytest.mark.parametrize("name", sorted(ALL))
def test_imports_go_downward(name: str) -> None:
    mine = layer_of(name)
    wrong = []
    for target in sorted(imports(ALL[name])):
        if not target.startswith("accelplane") or (target not in ALL and target.rsplit(".", 1)[0] not in ALL):
            continue
        target_module = target if target in ALL else target.rsplit(".", 1)[0]
        if layer_of(target_module) > mine:
            wrong.append(target_module)
        for a, b in PEERS_THAT_MUST_NOT_MEET:
            pair = {group(name, (a, b)), group(target_module, (a, b))}
            if pair == {a, b}:
                wrong.append(target_module)
    assert not wrong, f"{name} imports upward or across: {sorted(set(wrong))}"


@pytest.mark.parametrize("name", sorted(ALL))
def test_only_the_pulumi_wiring_imports_pulumi(name: str) -> None:
    if group(name, PULUMI_ALLOWED):
        return
    assert not {i for i in imports(ALL[name]) if i.split(".")[0] in ("pulumi", "pulumi_kubernetes")}


def test_discovery_script_is_standalone() -> None:
    script = PACKAGE / "discovery" / "gpu_discovery.py"
    assert not {i for i in imports(script) if i.startswith("accelplane")}


def test_every_module_has_a_layer() -> None:
    for name in ALL:
        layer_of(name)


def test_pyflink_helper_is_standalone() -> None:
    """Jobs ship the PyFlink helper as one file: it imports nothing of the package."""
    helper = PACKAGE / "job_helpers" / "pyflink_slot_groups.py"
    assert not {i for i in imports(helper) if i.startswith("accelplane")}
