"""The monitoring objects checked by their consumers: PodMonitor and PrometheusRule against the
prometheus-operator CRD schemas, the exporter DaemonSets and the dashboard ConfigMap by
kubernetes-validate --strict, the dashboard JSON by grafana-foundation-sdk's own model; and what
the spec switches change."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders.gpu_dashboard import dashboard_uid
from accelplane.builders.monitoring import (
    DASHBOARD_FILE,
    GPU_OPERATOR_VALUES_FILE,
    KPS_VALUES_FILE,
    RULES_FILE,
    build,
)
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from tests.support.paths import REPO_ROOT, SOURCE_ROOT
from tests.support.render import files_for, objects_for
from tests.support.specs import model_of
from tests.support.validators import validate_core_object, validate_crd_object

PROD = REPO_ROOT / "stacks" / "prod-eu.yaml"


def _monitoring_objects(spec: Path) -> list[dict[str, Any]]:
    return [o for o in objects_for(spec) if o["kind"] in ("PodMonitor", "PrometheusRule")
            or o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "gpu-metrics"
            or o["metadata"]["name"].startswith("accelplane-gpu-dashboard")]


@pytest.mark.parametrize(
    ("stack", "kinds"),
    [
        ("prod-eu", {"DaemonSet": 2, "PodMonitor": 2, "ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1}),
        ("shared-gpus", {"DaemonSet": 2, "PodMonitor": 2}),
        ("dra-gpus", {"DaemonSet": 2, "PodMonitor": 2, "ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1}),
    ],
)
def test_objects_validate_against_their_schemas(stack: str, kinds: dict[str, int]) -> None:
    objects = _monitoring_objects(REPO_ROOT / "stacks" / f"{stack}.yaml")
    assert Counter(o["kind"] for o in objects) == Counter({"ConfigMap": 1, "PrometheusRule": 1, **kinds})
    for obj in objects:
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            validate_crd_object(obj)
        else:
            validate_core_object(obj)


def _token_and_grants(objects: list[dict[str, Any]], name: str) -> tuple[bool, list[dict[str, Any]]]:
    """Whether the kubelet mounts a service account token into DaemonSet ``name``'s pods (the pod's
    automountServiceAccountToken, else its ServiceAccount's, else true; the ServiceAccount must
    exist in the pod's namespace or the pod is never created) and the rules bound to that account."""
    ds = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == name)
    pod = ds["spec"]["template"]["spec"]
    ns = ds["metadata"]["namespace"]
    account = pod.get("serviceAccountName", "default")
    sa = next((o for o in objects if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == account
               and o["metadata"]["namespace"] == ns), None)  # fmt: skip
    if account != "default":
        assert sa is not None, f"{name} runs as ServiceAccount {ns}/{account}, which the stack does not render"
    mounted = pod.get("automountServiceAccountToken", (sa or {}).get("automountServiceAccountToken", True))
    roles = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterRole"}
    rules = [
        rule
        for b in objects
        if b["kind"] == "ClusterRoleBinding"
        and {"kind": "ServiceAccount", "name": account, "namespace": ns} in b["subjects"]
        for rule in roles[b["roleRef"]["name"]]["rules"]
    ]
    return bool(mounted), rules


def _allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def test_amd_exporter_gets_the_token_it_cannot_start_without() -> None:
    """AMD device-metrics-exporter v1.4.0 Fatalf's without an in-cluster client (issue 44): its pods
    get a token, and exactly the reads its informers make (list/watch of its node and of the pods on
    it, any namespace), no write."""
    mounted, rules = _token_and_grants(objects_for(PROD), "amd-device-metrics-exporter")
    assert mounted
    for resource in ("nodes", "pods"):
        for verb in ("list", "watch"):
            assert _allows(rules, "", resource, verb), (resource, verb)
    assert {v for r in rules for v in r["verbs"]} == {"list", "watch"}


def test_dcgm_exporters_get_a_token_only_for_dra() -> None:
    """dcgm-exporter reads the API server only for DRA claims (ResourceSlices); elsewhere no token."""
    objects = objects_for(REPO_ROOT / "stacks" / "dra-gpus.yaml")
    mounted, rules = _token_and_grants(objects, "dcgm-exporter-dra")
    assert mounted and rules == [
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"], "verbs": ["list", "watch"]}
    ]
    assert _token_and_grants(objects, "dcgm-exporter") == (False, [])


@pytest.mark.parametrize(
    ("stack", "daemonset", "settings"),
    [
        ("prod-eu", "dcgm-exporter", {}),
        ("shared-gpus", "dcgm-exporter", {}),
        ("shared-gpus", "dcgm-exporter-shared", {"NVIDIA_RESOURCE_NAMES": "nvidia.com/gpu.shared", "KUBERNETES_VIRTUAL_GPUS": "true"}),
        ("dra-gpus", "dcgm-exporter", {}),
        ("dra-gpus", "dcgm-exporter-dra", {"KUBERNETES_ENABLE_DRA": "true"}),
    ],
)
def test_dcgm_exporter_settings_per_pool_group(stack: str, daemonset: str, settings: dict[str, str]) -> None:
    """Each dcgm-exporter DaemonSet carries what its pools' GPUs need, pinned to the first release
    with KUBERNETES_ENABLE_DRA (4.3.1-4.4.0), on exactly those pools."""
    objects = objects_for(REPO_ROOT / "stacks" / f"{stack}.yaml")
    ds = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == daemonset)
    (container,) = ds["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env == {
        "DCGM_EXPORTER_KUBERNETES": "true",
        **settings,
        "NVIDIA_VISIBLE_DEVICES": "all",
        "NVIDIA_DRIVER_CAPABILITIES": "utility",
    }
    assert container["image"] == "nvcr.io/nvidia/k8s/dcgm-exporter:4.3.1-4.4.0-ubuntu22.04"


def test_dashboard_uids_stay_unique_when_truncated() -> None:
    """Two clusters whose names share the first 25 characters keep distinct uids within Grafana's 40."""
    uids = []
    for region in ("europe-west1", "europe-west2"):
        spec = model_of(PROD)
        uids.append(dashboard_uid(replace(spec, name=f"analytics-platform-{region}")))
    assert uids[0] != uids[1]
    assert all(len(u) == 40 and u.startswith("accelplane-gpu-analytics-platfo") for u in uids), uids
    assert dashboard_uid(model_of(PROD)) == "accelplane-gpu-prod-eu"  # short names unchanged


def test_values_snippets_turn_on_what_the_rules_join_on() -> None:
    """kube-prometheus-stack's values allow exactly the pod labels the rules read from
    kube_pod_labels (kube-state-metrics turns ``accelplane.io/flink-cluster`` into
    ``label_accelplane_io_flink_cluster``); the GPU Operator's values carry the shared pool's settings."""
    files = files_for(REPO_ROOT / "stacks" / "shared-gpus.yaml")
    values = yaml.safe_load(files[KPS_VALUES_FILE][0])
    (entry,) = values["kube-state-metrics"]["metricLabelsAllowlist"]
    resource, _, keys = entry.partition("=")
    assert resource == "pods" and keys.startswith("[") and keys.endswith("]")
    allowed = {"label_" + re.sub(r"[^a-zA-Z0-9_]", "_", k) for k in keys[1:-1].split(",")}
    rules = files[RULES_FILE][0]
    assert set(re.findall(r"label_accelplane_io_\w+", rules)) == allowed
    assert values["grafana"]["sidecar"]["dashboards"] == {"enabled": True, "label": "grafana_dashboard", "labelValue": "1"}
    operator = yaml.safe_load(files[GPU_OPERATOR_VALUES_FILE][0])
    assert operator == {
        "dcgmExporter": {
            "env": [
                {"name": "NVIDIA_RESOURCE_NAMES", "value": "nvidia.com/gpu.shared"},
                {"name": "KUBERNETES_VIRTUAL_GPUS", "value": "true"},
            ]
        }
    }
    assert GPU_OPERATOR_VALUES_FILE not in files_for(PROD)  # whole GPUs need nothing beyond the defaults


def test_prometheus_rule_is_the_rule_file() -> None:
    rule = next(o for o in objects_for(PROD) if o["kind"] == "PrometheusRule")
    text = files_for(PROD)[RULES_FILE][0]
    assert rule["spec"] == yaml.safe_load(text)
    assert rule["metadata"]["labels"]["release"] == "kps"  # monitoring.prometheusLabels


def test_pod_monitors_scrape_the_exporters_with_their_labels() -> None:
    objects = objects_for(PROD)
    daemonsets = {o["metadata"]["name"]: o for o in objects if o["kind"] == "DaemonSet"}
    for monitor in (o for o in objects if o["kind"] == "PodMonitor"):
        ds = daemonsets[monitor["metadata"]["name"]]
        selector = monitor["spec"]["selector"]["matchLabels"]
        assert selector.items() <= ds["spec"]["template"]["metadata"]["labels"].items()
        assert monitor["spec"]["namespaceSelector"]["matchNames"] == [ds["metadata"]["namespace"]]
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        ports = {p["name"] for p in ds["spec"]["template"]["spec"]["containers"][0]["ports"]}
        assert endpoint["port"] in ports and endpoint["honorLabels"] is True


def test_dashboard_loads_with_grafanas_model() -> None:
    files = files_for(PROD)
    data = json.loads(files[DASHBOARD_FILE][0])
    board = Dashboard.from_json(data)
    assert board.uid == "accelplane-gpu-prod-eu"
    assert json.loads(json.dumps(board, cls=JSONEncoder, sort_keys=True)) == data  # the model keeps every field
    exprs = [t["expr"] for p in data["panels"] for t in p.get("targets", [])]
    assert any("accelplane:queue_gpus:count" in e for e in exprs)
    assert any("accelplane:taskmanager_gpu_utilization:avg" in e for e in exprs)
    cm = next(o for o in objects_for(PROD) if o["kind"] == "ConfigMap" and "dashboard" in o["metadata"]["name"])
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(cm["data"]["accelplane-gpu-prod-eu.json"]) == data


def test_external_exporters_render_only_rules_and_dashboard() -> None:
    spec = model_of(PROD)
    spec = replace(spec, monitoring=replace(spec.monitoring, exporters="external"))
    assert sorted(o.kind for o in build(spec).objects) == ["ConfigMap", "PrometheusRule"]


def test_disabled_monitoring_renders_nothing() -> None:
    spec = model_of(PROD)
    bundle = build(replace(spec, monitoring=replace(spec.monitoring, enabled=False)))
    assert not bundle.objects and not bundle.files


def test_a_render_without_monitoring_never_imports_the_dashboard_sdk() -> None:
    """grafana-foundation-sdk is imported only when a spec enables monitoring (it costs a process
    about 20 ms to import)."""
    code = (
        "import sys; from accelplane.pipeline import render_spec; render_spec(sys.argv[1]);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'grafana_foundation_sdk'"
        " or m == 'accelplane.builders.gpu_dashboard'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT / "stacks" / "yunikorn-gpus.yaml")], capture_output=True,
        text=True, check=True, env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": "/usr/bin:/bin"},
    ).stdout
    assert out.strip() == "[]"
