"""Spec construction, CLI runs and API-server rules shared by the device-plugin tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from tests.support.paths import REPO_ROOT

CONFIG_SCHEMA_PATH = REPO_ROOT / "tests" / "device_plugins" / "nvidia-device-plugin-config.schema.json"


def pool(
    name: str,
    vendor: str = "nvidia",
    *,
    model: str | None = None,
    per_node: int = 4,
    mig: dict[str, Any] | None = None,
    sharing: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    platform: str | None = None,
) -> dict[str, Any]:
    """A node pool entry (labels default to ``accelplane.io/pool: <name>``)."""
    gpu: dict[str, Any] = {"vendor": vendor, "perNode": per_node}
    if model is not None:
        gpu["model"] = model
    if mig is not None:
        gpu["mig"] = mig
    if sharing is not None:
        # renameByDefault must be explicit on a shared pool; false keeps the former default
        if sharing.get("strategy", "none") != "none" and "renameByDefault" not in sharing:
            sharing = {**sharing, "renameByDefault": False}
        gpu["sharing"] = sharing
    out: dict[str, Any] = {"name": name, "nodes": 2}
    if platform is not None:
        out["platform"] = platform
    out["gpu"] = gpu
    out["labels"] = {"accelplane.io/pool": name} if labels is None else labels
    if taints:
        out["taints"] = taints
    return out


def spec_doc(
    pools: list[dict[str, Any]],
    *,
    clusters: list[dict[str, Any]] | None = None,
    queues: list[dict[str, Any]] | None = None,
    device_plugins: dict[str, Any] | None = None,
    platforms: tuple[str, ...] = ("kubernetes",),
) -> dict[str, Any]:
    """A complete single-file spec."""
    doc: dict[str, Any] = {"cluster": {"name": "dp-test", "platforms": list(platforms)}, "nodePools": pools}
    if device_plugins is not None:
        doc["devicePlugins"] = device_plugins
    if queues is not None:
        doc["queues"] = queues
    if clusters is not None:
        doc["flink"] = {"clusters": clusters}
    return doc


def tm_cluster(name: str, gpu: dict[str, Any], target: str = "kubernetes") -> dict[str, Any]:
    """A Flink cluster whose TaskManagers request ``gpu``."""
    # coordination off: flink.check refuses coordination mode on shared (time-sliced/MPS) GPUs
    return {
        "name": name,
        "target": target,
        "image": "registry.example.internal/flink-gpu:1.20.5-py3",
        "taskManager": {"replicas": 1, "gpu": gpu},
        "discovery": {"coordination": False},
    }


def config_validator() -> jsonschema.Draft202012Validator:
    """Validator of the device plugin's api/config/v1 subset (tests/device_plugins/*.schema.json)."""
    schema = json.loads(CONFIG_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def config_errors(doc: Any) -> list[str]:
    """Every schema error of a plugin config document."""
    return sorted(e.message for e in config_validator().iter_errors(doc))


def containers(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Init and regular containers of a pod spec."""
    yield from pod.get("initContainers", [])
    yield from pod.get("containers", [])


def api_server_pod_problems(pod: dict[str, Any]) -> list[str]:
    """Cross-field rules the API server enforces on a pod spec that OpenAPI schemas (and so
    kubernetes-validate) cannot express (k8s.io/kubernetes pkg/apis/core/validation: names unique,
    mounts name existing volumes, ``allowPrivilegeEscalation: false`` excludes ``privileged`` and
    ``CAP_SYS_ADMIN``, ``Bidirectional`` propagation needs a privileged container, at most one
    volume source per volume)."""
    problems: list[str] = []
    volumes = [v["name"] for v in pod.get("volumes", [])]
    if len(volumes) != len(set(volumes)):
        problems.append(f"duplicate volume names {volumes}")
    for v in pod.get("volumes", []):
        sources = [k for k in v if k != "name"]
        if len(sources) != 1:
            problems.append(f"volume {v['name']} has {len(sources)} sources")
    names = [c["name"] for c in containers(pod)]
    if len(names) != len(set(names)):
        problems.append(f"duplicate container names {names}")
    for c in containers(pod):
        mounts = c.get("volumeMounts", [])
        paths = [m["mountPath"] for m in mounts]
        if len(paths) != len(set(paths)):
            problems.append(f"{c['name']}: duplicate mount paths {paths}")
        for m in mounts:
            if m["name"] not in volumes:
                problems.append(f"{c['name']}: mount of unknown volume {m['name']}")
        env = [e["name"] for e in c.get("env", [])]
        if len(env) != len(set(env)):
            problems.append(f"{c['name']}: duplicate env {env}")
        sc = c.get("securityContext", {})
        privileged = bool(sc.get("privileged"))
        added = {a.removeprefix("CAP_") for a in sc.get("capabilities", {}).get("add", [])}
        if sc.get("allowPrivilegeEscalation") is False and (privileged or "SYS_ADMIN" in added):
            problems.append(f"{c['name']}: allowPrivilegeEscalation false with privileged/CAP_SYS_ADMIN")
        if any(m.get("mountPropagation") == "Bidirectional" for m in mounts) and not privileged:
            problems.append(f"{c['name']}: Bidirectional mount propagation needs a privileged container")
    return problems


def kitchen_sink_doc() -> dict[str, Any]:
    """A Kubernetes spec using every device-plugin feature at once (and a plain CPU pool)."""
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    return spec_doc(
        [
            pool(
                "t4-ts",
                model="Tesla T4",
                sharing={"strategy": "timeSlicing", "replicas": 4, "failRequestsGreaterThanOne": True},
                taints=[gpu_taint],
            ),
            pool(
                "a100-mixed",
                model="NVIDIA A100-SXM4-80GB",
                per_node=8,
                mig={"strategy": "mixed", "devices": {"1g.10gb+me": 1, "1g.10gb": 2, "2g.20gb": 1}},
                sharing={"strategy": "timeSlicing", "replicas": 2, "renameByDefault": True},
                labels={"accelplane.io/pool": "a100-mixed", "topology.kubernetes.io/zone": "eu-1a"},
                taints=[gpu_taint, {"key": "dedicated", "value": "ml", "effect": "NoExecute"}],
            ),
            pool(
                "h100-single",
                model="NVIDIA H100 80GB HBM3",
                per_node=8,
                mig={"strategy": "single", "devices": {"3g.40gb": 2}},
                taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            ),
            pool("l4-mps", model="NVIDIA L4", sharing={"strategy": "mps", "replicas": 8}),
            pool(
                "mi300",
                "amd",
                model="AMD Instinct MI300X OAM",
                per_node=8,
                taints=[{"key": "amd.com/gpu", "value": "present", "effect": "NoSchedule"}],
            ),
            pool("mi250", "amd", per_node=4, labels={"accelplane.io/pool": "mi250", "rack": "r7"}),
            {"name": "cpu", "nodes": 10, "labels": {"accelplane.io/pool": "cpu"}},
        ],
        device_plugins={
            "namespace": "gpu-system",
            "nvidia": {"version": "v0.20.0", "deviceListStrategy": "cdi-cri", "gpuFeatureDiscovery": True},
            "amd": {"version": "1.31.0.10", "labeller": True},
        },
    )
