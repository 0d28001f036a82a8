"""`diff` on real specs: list order never matters, spec ≡ its rendered directory, spec changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelplane.cli import main
from accelplane.diff import compare, compare_trees, load_side
from accelplane.diff.impact.node_wide import node_scope
from accelplane.render import write_tree

from tests.diff.scenarios import base_tree, scenario_tree
from tests.support.render import files_for
from tests.support.specs import model_of, write_spec
from tests.support.stack_copies import EXAMPLE_STACKS, STACKS, copy_stacks, load, reordered


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_reordering_a_specs_lists_reports_no_changes(
    tmp_path: Path, stack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    original = copy_stacks(tmp_path / "original")
    shuffled = copy_stacks(tmp_path / "shuffled")
    for path in [shuffled / stack, shuffled / "base" / "gpu-platform.yaml"]:
        write_spec(path.parent, reordered(load(path)), path.name)
        assert path.read_text() != (original / path.relative_to(shuffled)).read_text()
    assert main(["diff", str(original / stack), str(shuffled / stack)]) == 0
    assert capsys.readouterr().out.endswith("No differences.\n")


def test_spec_equals_its_rendered_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stacks = copy_stacks(tmp_path)
    out = tmp_path / "build"
    write_tree(files_for(stacks / "prod-eu.yaml"), out)
    assert main(["diff", str(stacks / "prod-eu.yaml"), str(out)]) == 0
    assert main(["diff", str(out), str(stacks / "prod-eu.yaml"), "--format", "json"]) == 0
    assert '"equal": true' in capsys.readouterr().out


def test_adding_a_queue_and_bumping_capability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stacks = copy_stacks(tmp_path)
    spec = stacks / "prod-eu.yaml"
    data = load(spec)
    data["queues"].append(
        {
            "name": "research",
            "parent": "gpu-platform",
            "capability": {"cpu": 64, "memory": "512Gi", "pods": 50, "nvidia.com/gpu": 8},
            "deserved": {"cpu": 32, "memory": "256Gi", "nvidia.com/gpu": 4},
        }
    )
    streaming = next(q for q in data["queues"] if q["name"] == "streaming")
    streaming["capability"]["nvidia.com/gpu"] = 32
    new = stacks / "prod-eu-new.yaml"
    write_spec(stacks, data, new.name)
    assert main(["diff", str(spec), str(new)]) == 1
    out = capsys.readouterr().out
    assert "• queue research added: nvidia.com/gpu capability 8, deserved 4\n" in out
    assert "• queue streaming: nvidia.com/gpu capability 24 → 32\n" in out
    assert "+ Queue research  [scheduling.volcano.sh/v1beta1 · kubernetes/queue__research.yaml]" in out
    assert '~ spec.capability["nvidia.com/gpu"]: 24 → 32' in out


def test_invalid_spec_exits_2_with_the_validate_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stacks = copy_stacks(tmp_path)
    spec = stacks / "prod-eu.yaml"
    bad = stacks / "bad.yaml"
    bad.write_text(spec.read_text().replace("priority: 100", "priority: -1"))
    assert main(["validate", str(bad)]) == 1
    expected = capsys.readouterr().err
    assert "bad.yaml: queues[1].priority:" in expected
    assert main(["diff", str(spec), str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.err == expected and captured.out == ""


def test_daemonset_scope_is_named_by_pool_when_a_model_is_known() -> None:
    model = model_of(STACKS / "prod-eu.yaml")
    result = compare_trees(
        base_tree(), scenario_tree("upgrade-node-software"), new_model=model, old_model=model
    )
    messages = [i.message for i in result.impacts if i.category == "node-wide"]
    assert len(messages) == 1 and messages[0].endswith(
        "restarts its pods on every node of pool a100 (4 nodes)"
    )
    mig = compare_trees(base_tree(), scenario_tree("change-mig-strategy"), new_model=model)
    assert any(
        i.message.endswith("applies by restarting those pods on every node of pool a100 (4 nodes)")
        for i in mig.impacts
    )


def test_node_scope_rules() -> None:
    model = model_of(STACKS / "prod-eu.yaml")

    def ds(pod: dict[str, object]) -> dict[str, object]:
        return {"spec": {"template": {"spec": pod}}}

    tolerate_all = [{"operator": "Exists"}]
    assert node_scope(ds({"tolerations": tolerate_all}), model) == "every node of pools a100, mi300 (6 nodes)"
    # the mi300 taint (amd.com/gpu=present:NoSchedule) is not tolerated
    nv_only = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert node_scope(ds({"tolerations": nv_only}), model) == "every node of pool a100 (4 nodes)"
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "accelplane.io/pool", "operator": "In", "values": ["mi300"]}
                        ]
                    }
                ]
            }
        }
    }
    assert (
        node_scope(ds({"affinity": affinity, "tolerations": tolerate_all}), model)
        == "every node of pool mi300 (2 nodes)"
    )
    unknown = {"nodeSelector": {"feature.node.kubernetes.io/pci-10de.present": "true"}}
    assert (
        node_scope(ds(unknown), model)
        == "every node matching feature.node.kubernetes.io/pci-10de.present=true"
    )
    assert (
        node_scope(ds(unknown), None)
        == "every node matching feature.node.kubernetes.io/pci-10de.present=true"
    )
    assert node_scope(ds({}), None) == "every node it tolerates"


def test_load_side_kinds(tmp_path: Path) -> None:
    stacks = copy_stacks(tmp_path)
    side = load_side(str(stacks / "prod-eu.yaml"))
    assert side.kind == "spec" and side.model is not None and "kubernetes/queue__streaming.yaml" in side.files
    out = tmp_path / "out"
    write_tree(side.files, out)  # type: ignore[arg-type]
    rendered = load_side(str(out))
    assert rendered.kind == "directory" and rendered.model is None
    assert compare(side, rendered).equal
    assert ".accelplane-render" not in rendered.files
