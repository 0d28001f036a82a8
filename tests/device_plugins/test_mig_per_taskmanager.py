"""One MIG device per TaskManager: the check behind the discovery script's MIG numbering.

A TaskManager is one JVM process and one CUDA process enumerates a single MIG device (NVIDIA MIG
user guide, "CUDA Device Enumeration"), so a spec asking for more per TaskManager is rejected
with ``file: path: message``; whole GPUs and one MIG device stay valid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.device_plugin_specs import pool, spec_doc, tm_cluster
from tests.support.specs import expect_findings, run_validate, write_spec

MIXED = {"strategy": "mixed", "devices": {"1g.10gb": 7}}
SINGLE = {"strategy": "single", "devices": {"1g.10gb": 7}}
MESSAGE = (
    "flink.clusters[0].taskManager.gpu.amount: 2 MIG devices per TaskManager: one CUDA process (the "
    "TaskManager JVM) can use only one MIG device (NVIDIA MIG user guide, CUDA device enumeration), so the "
    "others would be reserved and idle; ask for 1 and raise taskManager.replicas instead"
)


@pytest.mark.parametrize(("mig", "gpu", "errors"), [
    (MIXED, {"amount": 2, "pool": "a100", "resource": "nvidia.com/mig-1g.10gb"}, [MESSAGE]),
    (SINGLE, {"amount": 2, "pool": "a100"}, [MESSAGE]),  # single: every nvidia.com/gpu is a MIG device
    (MIXED, {"amount": 1, "pool": "a100", "resource": "nvidia.com/mig-1g.10gb"}, []),
    (SINGLE, {"amount": 1, "pool": "a100"}, []),
    (None, {"amount": 2, "pool": "a100"}, []),  # whole GPUs: any amount a node has
], ids=["mixed-2", "single-2", "mixed-1", "single-1", "whole-2"])
def test_mig_devices_per_taskmanager(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch, mig: dict[str, Any] | None,
                                     gpu: dict[str, Any], errors: list[str]) -> None:
    doc = spec_doc([pool("a100", model="NVIDIA A100-SXM4-80GB", per_node=8, mig=mig)],
                   clusters=[tm_cluster("tm", gpu)])
    path = write_spec(tmp_path, doc)
    if errors:
        expect_findings(path, capsys, monkeypatch, [f"spec.yaml: {e}" for e in errors])
    else:
        assert run_validate(path, capsys, monkeypatch) == (0, [])
