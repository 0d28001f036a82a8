"""Structural comparison with the upstream manifests in ../shared/reference (byte-identical copies).

For a spec that mirrors upstream defaults, each of our DaemonSets must keep everything upstream's
has — container image repository, command/args/env, volumes and mounts, securityContext,
priorityClassName, tolerations, nodeSelector — except the differences listed in ``DIFFERENCES``
(each one deliberate and documented in docs/device-plugins.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.device_plugin_specs import pool, spec_doc
from tests.support.render import objects_for
from tests.support.specs import write_spec
from tests.support.validators import reference

NVIDIA_VERSION = "v0.20.0"  # upstream release the reference files come from
AMD_VERSION = "1.31.0.10"

# Deliberate differences from upstream, by reference file. Everything not listed is compared.
DIFFERENCES: dict[str, list[str]] = {
    "nvidia/nvidia-device-plugin.yml": [
        "one DaemonSet per pool (nvidia-device-plugin-<pool>) with node affinity on the pool's labels; "
        "upstream has no selector and runs on every node",
        "tolerations add the pool's own taints to upstream's nvidia.com/gpu toleration",
        "automountServiceAccountToken: false (the plugin never calls the API server)",
        "env is omitted when empty (upstream writes env: [])",
    ],
    "nvidia/gpu-feature-discovery-daemonset*.yaml": [
        "node affinity on the pool's labels replaces upstream's NFD labels (pci-10de.present, "
        "cpu-model.vendor_id) and nvidia.com/gpu.present, which may not exist",
        "tolerations added (upstream has none, so it never runs on tainted GPU nodes)",
        "namespace set (upstream's manifest has none)",
        "CONFIG_FILE and the plugin config mounted when the pool has one (sharing changes the labels)",
        "automountServiceAccountToken: false",
    ],
    "amd/k8s-ds-amdgpu-dp.yaml": [
        "image tag pinned (upstream: untagged = latest)",
        "securityContext from upstream's own Helm chart (helm-amd-gpu-values.yaml): "
        "allowPrivilegeEscalation false + drop ALL instead of privileged: true",
        "tolerations add amd.com/gpu NoSchedule and the pools' taints",
        "node affinity on the pools' labels in addition to upstream's nodeSelector",
        "automountServiceAccountToken: false",
        "command and -logtostderr=true from upstream's k8s-ds-amdgpu-dp-health.yaml, so the root file "
        "system is read-only (readOnlyRootFilesystem: true) and /sys is mounted read-only",
    ],
    "amd/k8s-ds-amdgpu-labeller.yaml": [
        "image tag labeller-<version> instead of labeller-latest; imagePullPolicy Always dropped",
        "ServiceAccount/ClusterRole/ClusterRoleBinding named amdgpu-node-labeller (upstream: "
        "node-labeller-sa, cr-node-labeller, labeller) and in devicePlugins.namespace",
        "tolerations add amd.com/gpu NoSchedule and the pools' taints; node affinity on the pools' labels",
        "empty resources: {} omitted",
    ],
}


def is_subset(upstream: Any, ours: Any) -> bool:
    """Every key/value of ``upstream`` is in ``ours``; list items need a matching item in ``ours``."""
    if isinstance(upstream, dict):
        return isinstance(ours, dict) and all(
            k in ours and is_subset(v, ours[k]) for k, v in upstream.items()
        )
    if isinstance(upstream, list):
        return isinstance(ours, list) and all(any(is_subset(u, o) for o in ours) for u in upstream)
    return bool(upstream == ours)


def _docs(path: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(reference(path).read_text()) if d]


def _upstream_ds(path: str) -> dict[str, Any]:
    return next(d for d in _docs(path) if d["kind"] == "DaemonSet")


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Our objects for a spec mirroring upstream defaults: one NVIDIA pool per MIG strategy and an
    AMD pool, tainted the way upstream expects (nvidia.com/gpu, amd.com/gpu)."""
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    doc = spec_doc(
        [
            pool("gpu", taints=[taint]),
            pool("single", mig={"strategy": "single", "devices": {"1g.10gb": 7}}, taints=[taint]),
            pool("mixed", mig={"strategy": "mixed", "devices": {"1g.10gb": 7}}, taints=[taint]),
            pool("mi300", "amd", taints=[{"key": "amd.com/gpu", "value": "present", "effect": "NoSchedule"}]),
        ],
        device_plugins={
            "nvidia": {"version": NVIDIA_VERSION, "gpuFeatureDiscovery": True},
            "amd": {"version": AMD_VERSION, "labeller": True},
        },
    )
    path: Path = write_spec(tmp_path_factory.mktemp("upstream"), doc)
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in objects_for(path)}


def _pod(ds: dict[str, Any]) -> dict[str, Any]:
    return ds["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def _repo(image: str) -> str:
    return image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image


def _compare_containers(up: dict[str, Any], us: dict[str, Any], *, security: bool = True) -> None:
    up_c, us_c = _pod(up)["containers"][0], _pod(us)["containers"][0]
    assert _repo(us_c["image"]) == _repo(up_c["image"])
    for key in ("name", "command", "args", "workingDir"):
        assert us_c.get(key) == up_c.get(key), key
    assert is_subset(up_c.get("env", []), us_c.get("env", [])), (up_c.get("env"), us_c.get("env"))
    assert is_subset(up_c.get("volumeMounts", []), us_c["volumeMounts"])
    assert is_subset(_pod(up).get("volumes", []), _pod(us)["volumes"])
    if security:
        assert is_subset(up_c["securityContext"], us_c["securityContext"])
    assert _pod(us).get("priorityClassName") == _pod(up).get("priorityClassName")
    assert is_subset(_pod(up).get("tolerations", []), _pod(us)["tolerations"])
    assert is_subset(_pod(up).get("nodeSelector", {}), _pod(us).get("nodeSelector", {}))


def test_differences_are_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "device-plugins.md").read_text()
    for path in DIFFERENCES:
        assert path.replace("*", "") in docs or path in docs, path


def test_nvidia_device_plugin_is_superset_of_upstream(ours: dict[str, dict[str, Any]]) -> None:
    up = _upstream_ds("nvidia/nvidia-device-plugin.yml")
    us = ours["DaemonSet/nvidia-device-plugin-gpu"]
    _compare_containers(up, us)
    assert _pod(us)["containers"][0]["image"] == f"nvcr.io/nvidia/k8s-device-plugin:{NVIDIA_VERSION}"
    assert _pod(us)["containers"][0]["image"] == _pod(up)["containers"][0]["image"]
    assert us["spec"]["updateStrategy"] == up["spec"]["updateStrategy"]
    assert us["metadata"]["namespace"] == up["metadata"]["namespace"]


@pytest.mark.parametrize(
    ("ref", "ours_name"),
    [
        ("nvidia/gpu-feature-discovery-daemonset.yaml", "gpu-feature-discovery-gpu"),
        ("nvidia/gpu-feature-discovery-daemonset-with-mig-single.yaml", "gpu-feature-discovery-single"),
        ("nvidia/gpu-feature-discovery-daemonset-with-mig-mixed.yaml", "gpu-feature-discovery-mixed"),
    ],
)
def test_gfd_is_superset_of_upstream(ours: dict[str, dict[str, Any]], ref: str, ours_name: str) -> None:
    up = _upstream_ds(ref)
    us = ours[f"DaemonSet/{ours_name}"]
    _compare_containers(up, us)
    assert _pod(us)["containers"][0]["image"] == _pod(up)["containers"][0]["image"]
    assert is_subset(up["metadata"]["labels"], us["metadata"]["labels"])
    # the pool's labels replace upstream's NFD-based affinity
    terms = _pod(us)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert all(
        not e["key"].startswith("feature.node.kubernetes.io/") for t in terms for e in t["matchExpressions"]
    )


def test_mig_plugins_keep_upstream_volumes_and_add_only_sys_admin(ours: dict[str, dict[str, Any]]) -> None:
    up = _upstream_ds("nvidia/nvidia-device-plugin.yml")
    for name in ("nvidia-device-plugin-single", "nvidia-device-plugin-mixed"):
        us = ours[f"DaemonSet/{name}"]
        _compare_containers(up, us, security=False)
        # Helm chart (_helpers.tpl nvidia-device-plugin.securityContext): MIG strategies get SYS_ADMIN
        assert _pod(us)["containers"][0]["securityContext"] == {
            "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
        }


def test_amd_device_plugin_is_superset_of_upstream(ours: dict[str, dict[str, Any]]) -> None:
    up = _upstream_ds("amd/k8s-ds-amdgpu-dp.yaml")
    us = ours["DaemonSet/amdgpu-device-plugin"]
    # documented difference: the health manifest's command and glog flag (logs to stderr, not /tmp)
    health = _pod(_upstream_ds("amd/k8s-ds-amdgpu-dp-health.yaml"))["containers"][0]
    container = _pod(us)["containers"][0]
    assert container["command"] == health["command"]
    assert container["args"] == ["-logtostderr=true"] and "-logtostderr=true" in health["args"]
    up_without_flags = {**up, "spec": {**up["spec"]}}
    up_c = {**_pod(up)["containers"][0], "command": health["command"], "args": container["args"]}
    up_without_flags["spec"]["template"] = {
        **up["spec"]["template"],
        "spec": {**_pod(up), "containers": [up_c]},
    }
    _compare_containers(up_without_flags, us, security=False)
    assert container["image"] == f"rocm/k8s-device-plugin:{AMD_VERSION}"
    # documented difference: upstream's Helm chart securityContext instead of privileged, plus a
    # read-only root file system
    helm = yaml.safe_load(reference("amd/helm-amd-gpu-values.yaml").read_text())["securityContext"]
    assert container["securityContext"] == {**helm, "readOnlyRootFilesystem": True}
    assert is_subset(
        [{"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], _pod(us)["tolerations"]
    )
    assert _pod(us)["restartPolicy"] == _pod(up)["restartPolicy"]


def test_amd_labeller_and_rbac_match_upstream(ours: dict[str, dict[str, Any]]) -> None:
    docs = {d["kind"]: d for d in _docs("amd/k8s-ds-amdgpu-labeller.yaml")}
    us = ours["DaemonSet/amdgpu-node-labeller"]
    _compare_containers(docs["DaemonSet"], us)
    assert _pod(us)["containers"][0]["image"] == f"rocm/k8s-device-plugin:labeller-{AMD_VERSION}"
    role = ours["ClusterRole/amdgpu-node-labeller"]
    assert role["rules"] == docs["ClusterRole"]["rules"]  # least privilege exactly as upstream
    binding = ours["ClusterRoleBinding/amdgpu-node-labeller"]
    assert binding["roleRef"] == {**docs["ClusterRoleBinding"]["roleRef"], "name": role["metadata"]["name"]}
    sa = ours["ServiceAccount/amdgpu-node-labeller"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": sa["metadata"]["namespace"]}
    ]
    assert _pod(us)["serviceAccountName"] == sa["metadata"]["name"]


def test_is_subset() -> None:
    assert is_subset({"a": [1, {"b": 2}]}, {"a": [{"b": 2, "c": 3}, 1], "d": 4})
    assert not is_subset({"a": [1]}, {"a": [2]})
    assert not is_subset({"a": 1}, {})
