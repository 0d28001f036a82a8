"""Rendered device-plugin objects: real validators, API-server rules, placement and determinism."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.artifacts import K8sObject
from accelplane.derive import device_plugin_placement
from accelplane.derive.node_selection import pool_labels, selects, tolerates
from accelplane.errors import SpecErrors
from accelplane.model import Taint

from tests.conftest import EXAMPLE_SPECS
from tests.support.device_plugin_specs import api_server_pod_problems, kitchen_sink_doc, pool, spec_doc
from tests.support.render import bundle_for, files_for, objects_for
from tests.support.specs import model_of, write_spec
from tests.support.validators import validate_k8s_object


def _family(spec_path: Path) -> list[K8sObject]:
    return [
        o for o in bundle_for(spec_path).objects if o.family == "device-plugins"
    ]


def _by_name(objs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


@pytest.fixture
def kitchen_sink(tmp_path: Path) -> Path:
    return write_spec(tmp_path, kitchen_sink_doc())


def _rendered(path: Path) -> list[dict[str, Any]]:
    names = {(o.kind, o.name) for o in _family(path)}
    return [o for o in objects_for(path) if (o["kind"], o["metadata"]["name"]) in names]


@pytest.mark.parametrize("spec_path", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_example_stacks_validate_strictly(spec_path: Path) -> None:
    for obj in _rendered(spec_path):
        validate_k8s_object(obj)
        if obj["kind"] == "DaemonSet":
            assert api_server_pod_problems(obj["spec"]["template"]["spec"]) == []


def test_kitchen_sink_validates_strictly(kitchen_sink: Path) -> None:
    objs = _rendered(kitchen_sink)
    kinds = sorted({(o["kind"], o["metadata"]["name"]) for o in objs})
    assert [n for k, n in kinds if k == "DaemonSet"] == [
        "amdgpu-device-plugin",
        "amdgpu-node-labeller",
        "gpu-feature-discovery-a100-mixed",
        "gpu-feature-discovery-h100-single",
        "gpu-feature-discovery-l4-mps",
        "gpu-feature-discovery-t4-ts",
        "nvidia-device-plugin-a100-mixed",
        "nvidia-device-plugin-h100-single",
        "nvidia-device-plugin-l4-mps",
        "nvidia-device-plugin-t4-ts",
        "nvidia-mps-control-daemon-l4-mps",
    ]
    for obj in objs:
        validate_k8s_object(obj)
        if obj["kind"] == "DaemonSet":
            pod = obj["spec"]["template"]["spec"]
            assert api_server_pod_problems(pod) == [], obj["metadata"]["name"]
            assert obj["metadata"]["namespace"] == "gpu-system"
            # selector matches the template (the API server rejects a DaemonSet otherwise)
            assert selects(
                obj["spec"]["selector"]["matchLabels"], obj["spec"]["template"]["metadata"]["labels"]
            )


def test_daemonsets_select_exactly_their_pools_and_tolerate_them(kitchen_sink: Path) -> None:
    spec = model_of(kitchen_sink)
    objs = _by_name(_rendered(kitchen_sink))
    k8s_pools = [p for p in spec.node_pools if p.platform == "kubernetes"]
    for placement in device_plugin_placement.placements(spec):
        pod = objs[("DaemonSet", placement.name)]["spec"]["template"]["spec"]
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ]
        node_selector = pod.get("nodeSelector", {})

        def admits(
            labels: dict[str, str], terms: list[dict[str, Any]] = terms, ns: dict[str, str] = node_selector
        ) -> bool:
            term_ok = any(
                all(labels.get(e["key"]) in e["values"] for e in t["matchExpressions"])
                and t["matchExpressions"]
                for t in terms
            )
            return term_ok and all(labels.get(k, v) == v for k, v in ns.items())

        for p in k8s_pools:
            # the labels a pool's nodes carry: declared ones plus nvidia.com/mig.config on MIG pools
            assert admits(pool_labels(p)) == (p in placement.pools), (placement.name, p.name)
        for p in placement.pools:
            for taint in p.taints:
                assert any(tolerates(t, taint) for t in pod["tolerations"]), (placement.name, taint)


def test_one_mig_setting_drives_plugin_gfd_and_names(kitchen_sink: Path) -> None:
    spec = model_of(kitchen_sink)
    objs = _by_name(_rendered(kitchen_sink))
    configs = {
        o["metadata"]["name"]: yaml.safe_load(o["data"]["config.yaml"])
        for o in objs.values()
        if o["kind"] == "ConfigMap"
    }
    for p in device_plugin_placement.kubernetes_gpu_pools(spec, "nvidia"):
        assert p.gpu is not None
        plugin = objs[("DaemonSet", f"nvidia-device-plugin-{p.name}")]["spec"]["template"]["spec"]
        gfd = objs[("DaemonSet", f"gpu-feature-discovery-{p.name}")]["spec"]["template"]["spec"]
        cm = next(v["configMap"]["name"] for v in plugin["volumes"] if "configMap" in v)
        assert configs[cm]["flags"]["migStrategy"] == p.gpu.mig.strategy
        gfd_env = {e["name"]: e["value"] for e in gfd["containers"][0]["env"]}
        assert gfd_env["MIG_STRATEGY"] == p.gpu.mig.strategy
        assert gfd_env["CONFIG_FILE"] == "/config/config.yaml"
        assert next(v["configMap"]["name"] for v in gfd["volumes"] if "configMap" in v) == cm
        plugin_env = {e["name"]: e["value"] for e in plugin["containers"][0]["env"]}
        assert plugin_env["CONFIG_FILE"] == "/config/config.yaml"
        mig = p.gpu.mig.strategy != "none"
        assert ("NVIDIA_MIG_MONITOR_DEVICES" in plugin_env) == mig
        assert ("NVIDIA_MIG_MONITOR_DEVICES" in gfd_env) == mig
        caps = plugin["containers"][0]["securityContext"]["capabilities"]
        assert caps["drop"] == ["ALL"]
        assert caps.get("add", []) == (["SYS_ADMIN"] if mig else [])


def test_mps_pool_gets_control_daemon_and_mounts(kitchen_sink: Path) -> None:
    objs = _by_name(_rendered(kitchen_sink))
    plugin = objs[("DaemonSet", "nvidia-device-plugin-l4-mps")]["spec"]["template"]["spec"]
    daemon = objs[("DaemonSet", "nvidia-mps-control-daemon-l4-mps")]["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in plugin["containers"][0]["volumeMounts"]}
    assert mounts["mps-root"] == "/mps" and mounts["mps-shm"] == "/dev/shm"
    host = {v["name"]: v["hostPath"]["path"] for v in plugin["volumes"] if "hostPath" in v}
    assert host["mps-root"] == "/run/nvidia/mps" and host["mps-shm"] == "/run/nvidia/mps/shm"
    assert {v["name"]: v["hostPath"]["path"] for v in daemon["volumes"] if "hostPath" in v} == {
        "mps-root": "/run/nvidia/mps",
        "mps-shm": "/run/nvidia/mps/shm",
    }
    plugin_cm = next(v["configMap"]["name"] for v in plugin["volumes"] if "configMap" in v)
    assert next(v["configMap"]["name"] for v in daemon["volumes"] if "configMap" in v) == plugin_cm
    assert daemon["hostPID"] is True
    # only the MPS pool gets a control daemon
    assert [n for k, n in objs if n.startswith("nvidia-mps-control-daemon-")] == [
        "nvidia-mps-control-daemon-l4-mps"
    ]


def test_cdi_strategy_mounts_cdi_root(kitchen_sink: Path) -> None:
    objs = _by_name(_rendered(kitchen_sink))
    plugin = objs[("DaemonSet", "nvidia-device-plugin-t4-ts")]["spec"]["template"]["spec"]
    assert {"name": "cdi-root", "mountPath": "/var/run/cdi"} in plugin["containers"][0]["volumeMounts"]


def test_least_privilege(kitchen_sink: Path) -> None:
    objs = _by_name(_rendered(kitchen_sink))
    for (kind, name), obj in objs.items():
        if kind != "DaemonSet":
            continue
        pod = obj["spec"]["template"]["spec"]
        # only the AMD labeller talks to the API server
        assert pod.get("automountServiceAccountToken", True) is (name == "amdgpu-node-labeller"), name
        for c in pod["containers"]:
            sc = c["securityContext"]
            if not sc.get("privileged"):
                assert sc["capabilities"]["drop"] == ["ALL"], name
        # issue 15: RuntimeDefault seccomp and bounded resources on every container, init containers too
        assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}, name
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            assert set(c["resources"]) == {"requests", "limits"}, (name, c["name"])
        # every privilege kept is explained to checkov where it is granted
        skips = [v for k, v in obj["metadata"]["annotations"].items() if k.startswith("checkov.io/skip")]
        assert all("=" in v and len(v.split("=", 1)[1]) > 20 for v in skips), name
        if any(c["securityContext"].get("privileged") for c in pod["containers"]):
            assert any(v.startswith("CKV_K8S_16=") for v in skips), name
    for name in ("nvidia-device-plugin-t4-ts", "nvidia-device-plugin-l4-mps"):
        sc = objs[("DaemonSet", name)]["spec"]["template"]["spec"]["containers"][0]["securityContext"]
        assert sc == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}, name
    amd = objs[("DaemonSet", "amdgpu-device-plugin")]["spec"]["template"]["spec"]["containers"][0]
    assert amd["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
    }
    assert {"name": "sys", "mountPath": "/sys", "readOnly": True} in amd["volumeMounts"]
    assert amd["command"] == ["./k8s-device-plugin"] and amd["args"] == ["-logtostderr=true"]
    role = objs[("ClusterRole", "amdgpu-node-labeller")]
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["watch", "get", "list", "update"]}
    ]


def _reordered(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["nodePools"].reverse()
    for p in out["nodePools"]:
        p["labels"] = dict(reversed(list(p["labels"].items())))
        p.get("taints", []).reverse()
        mig = p.get("gpu", {}).get("mig")
        if mig:
            mig["devices"] = dict(reversed(list(mig["devices"].items())))
    return out


def test_output_is_deterministic_and_order_independent(tmp_path: Path) -> None:
    doc = kitchen_sink_doc()
    a = files_for(write_spec(tmp_path, doc, "a.yaml"))
    b = files_for(write_spec(tmp_path, _reordered(doc), "b.yaml"))
    c = files_for(write_spec(tmp_path, doc, "c.yaml"))
    assert a == b == c


def test_config_change_renames_configmap(tmp_path: Path) -> None:
    def cm_names(replicas: int) -> set[str]:
        doc = spec_doc([pool("t4", sharing={"strategy": "timeSlicing", "replicas": replicas})])
        return {
            o.name for o in _family(write_spec(tmp_path, doc, f"r{replicas}.yaml")) if o.kind == "ConfigMap"
        }

    four, eight = cm_names(4), cm_names(8)
    assert len(four) == len(eight) == 1 and four != eight
    assert next(iter(four)).startswith("nvidia-device-plugin-t4-")


def test_no_config_without_mig_or_sharing(tmp_path: Path) -> None:
    objs = _family(write_spec(tmp_path, spec_doc([pool("a100")])))
    assert sorted((o.kind, o.name) for o in objs) == [
        ("DaemonSet", "gpu-feature-discovery-a100"),
        ("DaemonSet", "nvidia-device-plugin-a100"),
    ]
    plugin = next(o for o in objs if o.name == "nvidia-device-plugin-a100").manifest
    assert "env" not in plugin["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize(
    ("device_plugins_", "expected"),
    [
        ({"nvidia": {"enabled": False}, "amd": {"enabled": False}}, []),
        (
            {"nvidia": {"gpuFeatureDiscovery": False}, "amd": {"labeller": False}},
            ["amdgpu-device-plugin", "nvidia-device-plugin-a100"],
        ),
    ],
)
def test_switches(tmp_path: Path, device_plugins_: dict[str, Any], expected: list[str]) -> None:
    doc = spec_doc([pool("a100"), pool("mi300", "amd")], device_plugins=device_plugins_)
    assert sorted(o.name for o in _family(write_spec(tmp_path, doc))) == expected


def test_nothing_without_kubernetes(tmp_path: Path) -> None:
    doc = spec_doc([pool("v100", platform="yarn", labels={})], platforms=("yarn",))
    assert _family(write_spec(tmp_path, doc)) == []
    yarn_stack = next(p for p in EXAMPLE_SPECS if p.stem == "yarn-analytics")
    assert _family(yarn_stack) == []


def test_yarn_pools_of_a_mixed_cluster_get_no_plugin(tmp_path: Path) -> None:
    doc = spec_doc([pool("a100"), pool("v100", platform="yarn", labels={})], platforms=("kubernetes", "yarn"))
    assert sorted(o.name for o in _family(write_spec(tmp_path, doc))) == [
        "gpu-feature-discovery-a100",
        "nvidia-device-plugin-a100",
    ]


def test_tolerations_are_the_narrowest_that_work(tmp_path: Path) -> None:
    doc = spec_doc(
        [
            pool(
                "a100",
                taints=[
                    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                    {"key": "dedicated", "value": "flink", "effect": "NoExecute"},
                    {"key": "spot", "effect": "PreferNoSchedule"},
                ],
            )
        ]
    )
    plugin = next(
        o for o in _family(write_spec(tmp_path, doc)) if o.name == "nvidia-device-plugin-a100"
    ).manifest
    assert plugin["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "flink", "effect": "NoExecute"},
        {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
    ]


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"key": "a", "operator": "Exists"}, Taint("a", "x", "NoSchedule"), True),
        ({"key": "a", "operator": "Exists", "effect": "NoExecute"}, Taint("a", "x", "NoSchedule"), False),
        ({"key": "a", "value": "x"}, Taint("a", "x", "NoSchedule"), True),
        ({"key": "a", "operator": "Equal", "value": "y"}, Taint("a", "x", "NoSchedule"), False),
        ({"operator": "Exists"}, Taint("anything", "x", "NoExecute"), True),
        ({"key": "", "operator": "Equal"}, Taint("a", "", "NoSchedule"), False),
        ({"key": "b", "operator": "Exists"}, Taint("a", "", "NoSchedule"), False),
    ],
)
def test_toleration_semantics(toleration: dict[str, str], taint: Taint, expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


def test_image_digests_are_an_option(tmp_path: Path) -> None:
    """devicePlugins.*.imageDigest pins images by digest; the digest skip annotation then goes away."""
    nv, amd, lbl = "sha256:" + "a" * 64, "sha256:" + "b" * 64, "sha256:" + "c" * 64
    doc = kitchen_sink_doc()
    doc.setdefault("devicePlugins", {}).setdefault("nvidia", {})["imageDigest"] = nv
    doc["devicePlugins"].setdefault("amd", {}).update({"imageDigest": amd, "labellerImageDigest": lbl})
    objs = _by_name(_rendered(write_spec(tmp_path, doc)))
    for (kind, name), obj in objs.items():
        if kind != "DaemonSet":
            continue
        pod = obj["spec"]["template"]["spec"]
        want = lbl if name == "amdgpu-node-labeller" else amd if name.startswith("amdgpu") else nv
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            assert c["image"].endswith(f"@{want}"), (name, c["image"])
        assert not [v for v in obj["metadata"]["annotations"].values() if v.startswith("CKV_K8S_43=")], name
    bad = kitchen_sink_doc()
    bad.setdefault("devicePlugins", {}).setdefault("nvidia", {})["imageDigest"] = "sha256:XYZ"
    with pytest.raises(SpecErrors) as exc:
        model_of(write_spec(tmp_path, bad, "bad.yaml"))
    assert [e.path for e in exc.value.errors] == ["devicePlugins.nvidia.imageDigest"]
