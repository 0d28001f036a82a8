"""``diff`` and ``report`` understand DRA: claim and DeviceClass changes show in the impact summary,
and the capacity report counts DRA devices per queue under ``deviceclass/<class>``."""

from __future__ import annotations

import copy
from pathlib import Path

from accelplane.diff import compare_trees
from accelplane.report.data import build_report

from tests.support.dra_specs import stack_document, validated
from tests.support.render import files_for
from tests.support.specs import write_spec


def _messages(tmp_path: Path, edit: object) -> list[str]:
    doc = stack_document()
    new = copy.deepcopy(doc)
    edit(new)  # type: ignore[operator]
    old_files = files_for(write_spec(tmp_path, doc, "old.yaml"))
    new_files = files_for(write_spec(tmp_path, new, "new.yaml"))
    return [i.message for i in compare_trees(old_files, new_files).impacts if i.category == "flink"]


def test_a_claim_change_is_an_impact(tmp_path: Path) -> None:
    def more_gpus(doc: dict) -> None:  # type: ignore[type-arg]
        doc["flink"]["clusters"][0]["taskManager"]["gpu"]["amount"] = 4

    found = _messages(tmp_path, more_gpus)
    assert any(
        "ResourceClaimTemplate" in m and "fraud-scoring-taskmanager-gpu" in m and "2 → 4" in m
        and "replaced delete-first" in m
        for m in found
    ), found
    assert any("deviceclass/nvidia-a100-sxm4-80gb" in m and "8 → 16" in m for m in found), found


def test_moving_a_cluster_to_dra_shows_the_claim_and_the_dropped_config_key(tmp_path: Path) -> None:
    def to_plugin(doc: dict) -> None:  # type: ignore[type-arg]
        doc["flink"]["clusters"][0]["taskManager"]["gpu"] = {"amount": 2, "pool": "t4-plugin"}
        doc["queues"][0]["capability"]["nvidia.com/gpu"] = 24

    found = _messages(tmp_path, to_plugin)
    assert any("fraud-scoring-taskmanager-gpu removed" in m and "2 × nvidia-a100-sxm4-80gb" in m for m in found), found
    assert any("resourceClaims" in m for m in found), found
    assert any("external-resource.gpu.kubernetes.config-key added" in m for m in found), found


def test_device_class_changes_are_impacts(tmp_path: Path) -> None:
    def other_model(doc: dict) -> None:  # type: ignore[type-arg]
        doc["nodePools"][2]["gpu"]["model"] = "AMD Instinct MI325X"
        doc["queues"][1]["capability"] = {"cpu": 128, "memory": "1Ti", "pods": 100, "deviceclass/amd-instinct-mi325x": 16}

    found = _messages(tmp_path, other_model)
    # paired as a rename (same selector shape), with the selector change spelled out
    assert any(
        "DeviceClass amd-instinct-mi300x-oam → DeviceClass amd-instinct-mi325x" in m and "AMD_Instinct_MI325X" in m
        for m in found
    ), found
    assert any("deviceClassName amd-instinct-mi300x-oam → amd-instinct-mi325x" in m for m in found), found


def test_report_counts_dra_devices_per_queue(tmp_path: Path) -> None:
    report = build_report(validated(stack_document(), tmp_path).model)
    assert report.cluster_total("deviceclass/nvidia-a100-sxm4-80gb") == 4 * 8
    assert report.cluster_total("deviceclass/nvidia-h100-80gb-hbm3-mig-1g.10gb") == 2 * 8 * 7
    assert report.cluster_total("deviceclass/amd-instinct-mi300x-oam") == 2 * 8
    assert report.cluster_total("nvidia.com/gpu") == 4 * 4  # only the device-plugin pool
    rows = {(r.queue, r.resource): r for r in report.queues}
    assert rows[("research", "deviceclass/amd-instinct-mi300x-oam")].capability == 16
    flink = {f.cluster: f for f in report.flink}
    assert flink["llm-research"].resource == "deviceclass/amd-instinct-mi300x-oam"
    assert flink["llm-research"].queue_capability == 16
    assert flink["legacy-ranking"].resource == "nvidia.com/gpu"
