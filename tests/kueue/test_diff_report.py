"""`report` shows a Kueue cluster's GPU quota per ClusterQueue and flavor; `diff` names a per-flavor
GPU quota change as one impact line."""

from __future__ import annotations

import json

from accelplane.builders import build_all
from accelplane.diff import compare_trees
from accelplane.diff.changes import Tree
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.render import bundle_files
from accelplane.report.data import build_report
from accelplane.report.tables import render_report

from tests.support.paths import REPO_ROOT
from tests.support.specs import model_of, stack_document

STACK = REPO_ROOT / "stacks" / "kueue-gpus.yaml"


def _spec(doc: dict[str, object]) -> Spec:
    spec, problems = build_model(doc)
    assert spec is not None, problems
    return spec


def test_report_per_flavor() -> None:
    report = build_report(model_of(STACK))
    assert report.scheduler == "kueue"
    rows = {(r.queue, r.flavor): (r.nominal, r.borrowing_limit, r.lending_limit, r.pool_gpus) for r in report.flavors}
    assert rows == {
        ("batch", "a100-nvidia-a100-sxm4-80gb"): (0, 0, None, 32),
        ("batch", "l4-nvidia-l4"): (16, 8, None, 24),
        ("streaming", "a100-nvidia-a100-sxm4-80gb"): (24, 8, 0, 32),
        ("streaming", "l4-nvidia-l4"): (0, 8, 0, 24),
    }
    text = render_report(report, "text")
    assert "Kueue GPU quota per flavor" in text
    assert "| batch | l4-nvidia-l4 | nvidia.com/gpu | 16 | 8 | none | 24 |" in render_report(report, "markdown")
    data = json.loads(render_report(report, "json"))
    assert {"cluster_queue": "streaming", "flavor": "a100-nvidia-a100-sxm4-80gb", "resource": "nvidia.com/gpu",
            "nominal_quota": 24, "borrowing_limit": 8, "lending_limit": 0, "pool_gpus": 32} in data["kueue_flavors"]


def _tree(spec: Spec) -> Tree:
    return bundle_files(build_all(spec))


def test_diff_names_a_flavor_quota_change() -> None:
    """batch's L4 quota 16 → 12 (capability 24): one impact line for that ClusterQueue and flavor;
    the cpu/memory that move with it are no GPU impact."""
    doc = stack_document("kueue-gpus")
    old = _spec(doc)
    doc["queues"][2]["gpuModels"]["NVIDIA L4"]["deserved"] = 12
    new = _spec(doc)
    impacts = [i.message for i in compare_trees(_tree(old), _tree(new)).impacts if i.category == "queues"]
    assert impacts == [
        "Kueue ClusterQueue batch flavor l4-nvidia-l4: nvidia.com/gpu nominalQuota 16 → 12, borrowingLimit 8 → 12"
    ]


def test_diff_names_an_added_cluster_queue() -> None:
    doc = stack_document("kueue-gpus")
    old = _spec(doc)
    doc["queues"].append({"name": "adhoc", "parent": "gpu-platform", "deserved": {"nvidia.com/gpu": 2}})
    new = _spec(doc)
    impacts = [i.message for i in compare_trees(_tree(old), _tree(new)).impacts if i.category == "queues"]
    (impact,) = impacts
    assert impact.startswith("Kueue ClusterQueue adhoc added: a100-nvidia-a100-sxm4-80gb: nvidia.com/gpu")
    assert "nominalQuota 2" in impact
