"""The monitoring objects checked by their consumers: PodMonitor and PrometheusRule against the
prometheus-operator CRD schemas, the exporter DaemonSets and the dashboard ConfigMap by
kubernetes-validate --strict, the dashboard JSON by grafana-foundation-sdk's own model; and what
the spec switches change."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from accelplane.builders.monitoring import DASHBOARD_FILE, RULES_FILE, build
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from tests.support.paths import REPO_ROOT, SOURCE_ROOT
from tests.support.render import files_for, objects_for
from tests.support.specs import model_of
from tests.support.validators import validate_core_object, validate_crd_object

PROD = REPO_ROOT / "stacks" / "prod-eu.yaml"


def _monitoring_objects(spec: Path) -> list[dict[str, Any]]:
    return [o for o in objects_for(spec) if o["kind"] in ("PodMonitor", "PrometheusRule")
            or o["metadata"]["name"] in ("dcgm-exporter", "amd-device-metrics-exporter")
            or o["metadata"]["name"].startswith("accelplane-gpu-dashboard")]


def test_objects_validate_against_their_schemas() -> None:
    objects = _monitoring_objects(PROD)
    kinds = sorted(o["kind"] for o in objects)
    assert kinds == ["ConfigMap", "DaemonSet", "DaemonSet", "PodMonitor", "PodMonitor", "PrometheusRule"]
    for obj in objects:
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            validate_crd_object(obj)
        else:
            validate_core_object(obj)


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
