"""Slot groups on Kubernetes whose TaskManagers pin no pool or model (#39 item 7).

The TaskManagers request one resource (`kubernetes_gpu_resource`), so only the pools whose device
plugin advertises it can run them (`derive.slot_groups.host_pools`): a group's ``gpuModel`` is
checked against those pools' models, and where they still span models no group's model is
guaranteed. Operator clusters ship ``slot-groups.json`` in a ConfigMap their JobManager mounts
where the job helpers read it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from accelplane.derive.slot_groups import GROUP_FILE, GROUP_FILE_DIR, host_pools
from accelplane.job_helpers import pyflink_slot_groups

from tests.flink.operator_schema import validate_flink_deployment
from tests.flink.specs import A100_POOL, KUBERNETES
from tests.support.render import files_for
from tests.support.specs import WriteSpec, findings_of, model_of
from tests.support.validators import validate_core_object

T4_POOL: dict[str, Any] = {
    "name": "t4",
    "nodes": 4,
    "cpu": 32,
    "memory": "128Gi",
    "gpu": {"vendor": "nvidia", "model": "Tesla T4", "perNode": 2},
    "labels": {"accelplane.io/pool": "t4"},
}
DEFAULT = {"name": "default", "slots": 1, "cpu": 0.5, "taskHeap": "256Mi"}


def _spec(*, shared_t4: bool, groups: list[dict[str, Any]], target: str = "kubernetes") -> dict[str, Any]:
    doc = copy.deepcopy(KUBERNETES)
    t4 = copy.deepcopy(T4_POOL)
    if shared_t4:
        t4["gpu"]["sharing"] = {"strategy": "timeSlicing", "replicas": 4, "renameByDefault": True}
    doc["nodePools"] = [copy.deepcopy(A100_POOL), t4]
    c = doc["flink"]["clusters"][0]
    c["target"] = target
    c["taskManager"] = {"replicas": 2, "slots": 3, "cpu": 4, "memory": "8Gi", "gpu": {"amount": 1}}
    c["slotGroups"] = [DEFAULT, *groups]
    return doc


def _write(write_spec: WriteSpec, doc: dict[str, Any], name: str = "spec.yaml") -> Path:
    return write_spec(yaml.safe_dump(doc, sort_keys=False), name)


def _codes(path: Path) -> list[tuple[str, str]]:
    return [(f.finding.code, f.path) for f in findings_of(path) if f.finding and f.finding.code == "AP4008"]


def test_only_the_pools_advertising_the_requested_resource_host_the_taskmanagers(write_spec: WriteSpec) -> None:
    """The T4s are renamed nvidia.com/gpu.shared; the TaskManagers ask for nvidia.com/gpu: only the
    A100 pool can run them, so a group naming the T4 model is AP4008 (on main both models passed)."""
    groups = [
        {"name": "score", "slots": 1, "cpu": 1, "taskHeap": "512Mi", "gpu": 1, "gpuModel": "NVIDIA A100-SXM4-80GB"},
        {"name": "embed", "slots": 1, "cpu": 1, "taskHeap": "512Mi", "gpu": 0, "gpuModel": None},
    ]
    groups[1].pop("gpuModel")
    doc = _spec(shared_t4=True, groups=groups)
    doc["flink"]["clusters"][0]["taskManager"]["replicas"] = 1  # what Flink packs these groups into
    path = _write(write_spec, doc)
    assert _codes(path) == []
    spec = model_of(path)
    assert [p.name for p in host_pools(spec, spec.flink_clusters[0])] == ["a100"]
    wrong = copy.deepcopy(groups)
    wrong[0]["gpuModel"] = "Tesla T4"
    assert _codes(_write(write_spec, _spec(shared_t4=True, groups=wrong), "t4.yaml")) == [
        ("AP4008", "flink.clusters[0].slotGroups[1].gpuModel")
    ]


def test_groups_naming_a_model_when_the_taskmanagers_may_land_on_two_models_is_one_finding(
    write_spec: WriteSpec,
) -> None:
    groups = [
        {"name": "score", "slots": 1, "cpu": 1, "taskHeap": "512Mi", "gpu": 1, "gpuModel": "NVIDIA A100-SXM4-80GB"},
        {"name": "embed", "slots": 1, "cpu": 1, "taskHeap": "512Mi", "gpu": 1, "gpuModel": "Tesla T4"},
    ]
    found = [f for f in findings_of(_write(write_spec, _spec(shared_t4=False, groups=groups))) if f.finding]
    near = [(f.finding.code, f.path) for f in found if f.finding and f.finding.code == "AP4008"]  # type: ignore[union-attr]
    assert near == [("AP4008", "flink.clusters[0].taskManager.gpu")]
    message = next(f.message for f in found if f.finding and f.finding.code == "AP4008")
    assert "may run on pools a100, t4" in message and "pin taskManager.gpu.model" in message


def test_an_operator_cluster_ships_slot_groups_json_to_its_jobmanager(write_spec: WriteSpec) -> None:
    groups = [{"name": "score", "slots": 2, "cpu": 1, "taskHeap": "512Mi", "gpu": 1}]
    doc = _spec(shared_t4=True, groups=groups, target="kubernetes-operator")
    doc["flink"]["clusters"][0]["taskManager"]["gpu"]["pool"] = "a100"
    doc["flink"]["clusters"][0]["job"] = {"jarURI": "local:///opt/flink/usrlib/job.jar", "parallelism": 6}
    path = _write(write_spec, doc)
    assert [f for f in findings_of(path) if not f.is_warning] == []
    files = {p: t for p, (t, _) in files_for(path).items()}
    (cm_path,) = [p for p in files if p.startswith("kubernetes/configmap_flink_accelplane-slot-groups-")]
    cm = yaml.safe_load(files[cm_path])
    validate_core_object(cm)
    assert cm["data"][GROUP_FILE] == files["flink/job1/slot-groups.json"]
    json.loads(cm["data"][GROUP_FILE])
    (fd_path,) = [p for p in files if p.startswith("kubernetes/flinkdeployment_")]
    fd = yaml.safe_load(files[fd_path])
    validate_flink_deployment(fd)
    jm = fd["spec"]["jobManager"]["podTemplate"]["spec"]
    (volume,) = jm["volumes"]
    assert volume["configMap"]["name"] == cm["metadata"]["name"]
    (mount,) = jm["containers"][0]["volumeMounts"]
    assert (mount["name"], mount["mountPath"]) == (volume["name"], GROUP_FILE_DIR)
    # the job helpers' default path is where the file lands
    assert f"{GROUP_FILE_DIR}/{GROUP_FILE}" in Path(pyflink_slot_groups.__file__).read_text()
    assert pyflink_slot_groups.parse(cm["data"][GROUP_FILE]) is not None
