"""Review and deployment match: for every example stack, what `pulumi up` registers is exactly what
`accelplane render` writes for the same spec (objects, files and their digests)."""

from __future__ import annotations

import gc
import hashlib
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.pulumi.conftest import RunProgram, stack_config
from tests.support.paths import REPO_ROOT
from tests.support.pulumi_program import (
    PULUMI_STACKS,
    normalise,
    registered_objects,
    render_with_cli,
    rendered_objects,
    spec_of,
    tree,
)


@pytest.mark.parametrize("stack", PULUMI_STACKS)
def test_registered_objects_equal_rendered_objects(
    stack: str, pulumi_run: RunProgram, tmp_path: Path
) -> None:
    rendered = render_with_cli(REPO_ROOT / spec_of(stack), tmp_path / "render")
    config = stack_config(stack)
    config.pop("accelplane:renderDir", None)
    run = pulumi_run(config, stack=stack)

    registered = registered_objects(run)
    expected = rendered_objects(rendered)
    assert registered == expected, (
        f"only registered: {sorted(registered - expected)}\nonly rendered: {sorted(expected - registered)}"
    )
    # one resource per object: no object registered twice, nothing auto-named
    assert len(run.kubernetes()) == len(expected)
    for reg in run.kubernetes():
        assert reg.inputs["metadata"]["name"] in reg.name


def _subtrees(node: Any) -> Iterator[Any]:
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from _subtrees(child)


def reaches_kubernetes(text: str, applied: list[dict[str, Any]]) -> bool:
    """Whether a Kubernetes API receives ``text``: it is a ConfigMap's data value, or the YAML/JSON
    document it holds is part of an object (a pod template inside a FlinkDeployment, the rule file
    as a PrometheusRule's spec)."""
    if any(text in (inputs.get("data") or {}).values() for inputs in applied if inputs.get("kind") == "ConfigMap"):
        return True
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    if not isinstance(document, dict):
        return False
    document = normalise(document)
    return any(document == sub for inputs in applied for sub in _subtrees(normalise(inputs)))


@pytest.mark.parametrize("stack", PULUMI_STACKS)
def test_file_outputs_equal_rendered_files(stack: str, pulumi_run: RunProgram, tmp_path: Path) -> None:
    rendered = tree(render_with_cli(REPO_ROOT / spec_of(stack), tmp_path / "render"))
    rendered.pop(".accelplane-render")
    config = stack_config(stack)
    config.pop("accelplane:renderDir", None)
    run = pulumi_run(config, stack=stack)

    files = run.outputs["files"]
    assert sorted(files) == sorted(rendered)
    for path, (data, mode) in rendered.items():
        assert files[path]["sha256"] == hashlib.sha256(data).hexdigest(), path
        assert files[path]["mode"] == f"{mode:04o}", path
    contents = run.outputs["fileContents"]
    for path, text in contents.items():
        assert text.encode("utf-8") == rendered[path][0], path
    # lean state: the text of exactly the files no Kubernetes API receives (judged on what Pulumi
    # registered: a ConfigMap's data value, or a document inside an object)
    applied = [r.inputs for r in run.kubernetes()]
    for path in (p for p in rendered if not p.startswith("kubernetes/")):
        received = reaches_kubernetes(rendered[path][0].decode("utf-8"), applied)
        assert (path not in contents) == received, path


@pytest.mark.parametrize("stack", PULUMI_STACKS)
def test_render_dir_written_on_update_equals_cli_render(
    stack: str, pulumi_run: RunProgram, tmp_path: Path
) -> None:
    expected = tree(render_with_cli(REPO_ROOT / spec_of(stack), tmp_path / "cli"))
    out = tmp_path / "pulumi-render"
    config = stack_config(stack) | {"accelplane:renderDir": str(out)}
    run = pulumi_run(config, stack=stack)
    assert run.outputs["renderDir"] == str(out)
    assert tree(out) == expected


def test_preview_writes_nothing(pulumi_run: RunProgram, tmp_path: Path) -> None:
    out = tmp_path / "never"
    run = pulumi_run(stack_config("yarn-analytics") | {"accelplane:renderDir": str(out)}, preview=True)
    assert run.outputs["renderDir"] == str(out)
    assert not out.exists()


def test_relative_render_dir_resolves_against_project_dir(pulumi_run: RunProgram, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    for src in (REPO_ROOT / "stacks").rglob("*.yaml"):
        dest = project / src.relative_to(REPO_ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
    run = pulumi_run(stack_config("yarn-analytics"), stack="yarn-analytics", project_dir=project)
    assert run.outputs["renderDir"] == str(project / "build" / "yarn-analytics")
    assert (project / "build" / "yarn-analytics" / ".accelplane-render").is_file()


def test_yarn_only_cluster_creates_no_kubernetes_resources(pulumi_run: RunProgram, tmp_path: Path) -> None:
    config = stack_config("yarn-analytics") | {"accelplane:renderDir": str(tmp_path / "out")}
    run = pulumi_run(config, stack="yarn-analytics")
    assert run.kubernetes() == []
    assert run.of_type("pulumi:providers:kubernetes") == [], (
        "no provider (and no plugin) for a YARN-only cluster"
    )
    assert run.registrations[0].type == "accelplane:index:GpuPlatform"
    assert all(r.type.startswith("accelplane:") for r in run.registrations), "components only"
    assert run.outputs["cluster"] == "yarn-analytics"
    assert run.outputs["objects"] == []
    assert set(run.outputs["fileContents"]) == {
        p for p in run.outputs["files"] if not p.startswith("kubernetes/")
    }


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """The garbage collector's settings as they were, after a test that runs ``__main__.py``
    (`accelplane.program.tune_collector` is meant for a process that ends with the program)."""
    threshold = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_entry_point_runs_the_program(pulumi_run: RunProgram, collector_restored: None) -> None:
    """``__main__.py`` (what `pulumi up` executes in the project directory) sets the collector for
    its own process (`tune_collector`: what was imported frozen, the young generation collected
    after 200,000 allocations) and runs `accelplane.program.main`."""
    config = stack_config("prod-eu")
    gc.unfreeze()
    run = pulumi_run(config, stack="prod-eu", program=lambda: runpy.run_path(str(REPO_ROOT / "__main__.py")))
    assert run.outputs["cluster"] == "prod-eu"
    assert len(run.kubernetes()) == len(run.outputs["objects"]) > 0
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (200_000, 30, 30)


def test_spec_files_are_reported_with_digests(pulumi_run: RunProgram) -> None:
    run = pulumi_run(stack_config("prod-eu"), stack="prod-eu")
    spec_files = run.outputs["specFiles"]
    assert sorted(spec_files) == ["stacks/base/gpu-platform.yaml", "stacks/prod-eu.yaml"]
    for path, digest in spec_files.items():
        assert digest == hashlib.sha256((REPO_ROOT / path).read_bytes()).hexdigest()


def test_file_texts_are_in_the_stack_outputs_only(pulumi_run: RunProgram) -> None:
    """The state holds each file's text once: the stack's ``fileContents`` output. Neither the
    platform nor a family component registers it (or the per-file ``files`` map) again."""
    run = pulumi_run(stack_config("prod-eu"), stack="prod-eu")
    texts = set(run.outputs["fileContents"].values())
    assert texts and set(run.outputs["files"]) > set(run.outputs["fileContents"])
    component_outputs = {r.type: r.outputs for r in run.registrations if not r.custom}
    assert set(component_outputs["accelplane:index:GpuPlatform"] or {}) == {
        "cluster", "queueNames", "priorityClassNames", "podGroupNames", "namespaces", "objects"
    }
    for type_, outputs in component_outputs.items():
        assert "fileContents" not in (outputs or {}), type_
        leaves = set()
        pending: list[object] = [outputs]
        while pending:
            value = pending.pop()
            if isinstance(value, dict):
                pending.extend(value.values())
            elif isinstance(value, list):
                pending.extend(value)
            else:
                leaves.add(value)
        assert not leaves & texts, f"{type_} registers file texts"
