"""Specs that would not work with DRA get one clear ``file: path: message`` per mistake, all at once."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.dra_specs import errors, stack_document

Edit = Callable[[dict[str, Any]], None]


def _pool(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in doc["nodePools"] if p["name"] == name)


def _cluster(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in doc["flink"]["clusters"] if c["name"] == name)


def _queue(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(q for q in doc["queues"] if q["name"] == name)


def _no_model(doc: dict[str, Any]) -> None:
    del _pool(doc, "a100-dra")["gpu"]["model"]
    _cluster(doc, "fraud-scoring")["taskManager"]["gpu"] = {"amount": 2, "pool": "a100-dra"}
    cap = _queue(doc, "streaming")
    del cap["capability"]["deviceclass/nvidia-a100-sxm4-80gb"]
    del cap["deserved"]["deviceclass/nvidia-a100-sxm4-80gb"]


def _old_volcano(doc: dict[str, Any]) -> None:
    doc["volcano"]["version"] = "1.11"


def _quota_volcano(doc: dict[str, Any]) -> None:
    doc["volcano"]["version"] = "1.14"


def _unknown_class(doc: dict[str, Any]) -> None:
    _queue(doc, "research")["capability"]["deviceclass/gpu.nvidia.com"] = 4


def _mixed_pools(doc: dict[str, Any]) -> None:
    _pool(doc, "t4-plugin")["gpu"]["model"] = "NVIDIA A100-SXM4-80GB"


def _resource(doc: dict[str, Any]) -> None:
    _cluster(doc, "fraud-scoring")["taskManager"]["gpu"]["resource"] = "nvidia.com/gpu"


def _too_many(doc: dict[str, Any]) -> None:
    _cluster(doc, "llm-research")["taskManager"]["gpu"]["amount"] = 9


def _plugin_sharing(doc: dict[str, Any]) -> None:
    _pool(doc, "a100-dra")["gpu"]["sharing"] = {"strategy": "timeSlicing", "replicas": 4}


def _mig_profiles(doc: dict[str, Any]) -> None:
    _pool(doc, "h100-mig-dra")["gpu"]["mig"] = {"strategy": "mixed", "devices": {"1g.10gb": 3, "2g.20gb": 2}}


def _dra_on_yarn(doc: dict[str, Any]) -> None:
    doc["cluster"]["platforms"] = ["kubernetes", "yarn"]
    doc["nodePools"].append(
        {"name": "yarn-gpu", "platform": "yarn", "nodes": 1, "gpu": {"vendor": "nvidia", "model": "Tesla T4", "perNode": 2, "allocation": "dra"}}
    )


def _same_class_name(doc: dict[str, Any]) -> None:
    doc["nodePools"].append(
        {"name": "a100-other", "nodes": 1, "gpu": {"vendor": "nvidia", "model": "NVIDIA A100 SXM4 80GB", "perNode": 8, "allocation": "dra"}}
    )


def _two_mig_devices(doc: dict[str, Any]) -> None:
    _cluster(doc, "embeddings-mig")["taskManager"]["gpu"]["amount"] = 2
    _pool(doc, "h100-mig-dra")["gpu"]["mig"] = {"strategy": "mixed", "devices": {"1g.10gb": 7}}


CASES: dict[str, tuple[Edit, list[tuple[str, str]]]] = {
    "two-mig-devices": (_two_mig_devices, [("flink.clusters[1].taskManager.gpu.amount", "2 MIG devices per TaskManager")]),
    "same-class-name": (_same_class_name, [("nodePools[4].gpu.model", "is the same as for pool 'a100-dra'")]),
    "no-model": (_no_model, [("nodePools[0].gpu.allocation", "a DRA pool needs gpu.model")]),
    "volcano-1.11": (_old_volcano, [("volcano.version", "cannot schedule pods with resource claims")]),
    "volcano-1.14-quota": (
        _quota_volcano,
        [
            ("queues[1].capability.deviceclass/amd-instinct-mi300x-oam", "ignores deviceclass/<class> quotas"),
            ("queues[0].capability.deviceclass/nvidia-a100-sxm4-80gb", "ignores"),
            ("queues[0].capability.deviceclass/nvidia-h100-80gb-hbm3-mig-1g.10gb", "ignores"),
            ("queues[0].deserved.deviceclass/nvidia-a100-sxm4-80gb", "ignores"),
        ],
    ),
    "unknown-class": (_unknown_class, [("queues[1].capability.deviceclass/gpu.nvidia.com", "names no DeviceClass")]),
    "mixed-pools": (_mixed_pools, [("flink.clusters[0].taskManager.gpu.model", "DRA pools (a100-dra) and device-plugin pools (t4-plugin)")]),
    "resource": (_resource, [("flink.clusters[0].taskManager.gpu.resource", "gpu.resource names a device-plugin")]),
    "too-many": (_too_many, [("flink.clusters[2].taskManager.gpu.amount", "9 devices per TaskManager exceed")]),
    "plugin-sharing": (_plugin_sharing, [("nodePools[0].gpu.sharing", "sharing.replicas configure the device plugin")]),
    "mig-profiles": (_mig_profiles, [("nodePools[1].gpu.mig.devices", "one MIG profile")]),
    "dra-on-yarn": (_dra_on_yarn, [("nodePools[4].gpu.allocation", "DRA is Kubernetes' allocation mechanism")]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_dra_spec_is_refused_with_its_path(case: str, tmp_path: Path) -> None:
    edit, expected = CASES[case]
    doc = copy.deepcopy(stack_document())
    edit(doc)
    found = errors(doc, tmp_path)
    for path, message in expected:
        assert any(f": {path}: " in e and message in e for e in found), (path, message, found)
    # the DRA rules say nothing else about these specs (other families may add their own problems,
    # e.g. a queue limit or a YARN pool's size, but no DRA message appears twice)
    dra = [e for e in found if any(m in e for _, m in expected)]
    assert len(dra) == len(expected), found


def test_the_example_is_valid(tmp_path: Path) -> None:
    assert errors(stack_document(), tmp_path) == []
