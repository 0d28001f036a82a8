"""The monitoring checks (AP7xxx warnings): each names the field to change and one fix, and the
spec still loads (warnings never block)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.errors import SpecErrors
from accelplane.pipeline import load_validated

from tests.support.paths import reference
from tests.support.specs import WriteSpec

IMAGE = "registry.example.com/flink-gpu:1.20-1"


def _spec(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "cluster": {"name": "mon", "platforms": ["kubernetes"]},
        "nodePools": [
            {"name": "a100", "nodes": 1, "labels": {"pool": "a100"}, "gpu": {"vendor": "nvidia", "perNode": 2}}
        ],
        "queues": [{"name": "q", "capability": {"cpu": 8, "memory": "64Gi", "pods": 10, "nvidia.com/gpu": 2}}],
        "flink": {
            "clusters": [
                {"name": "jobs", "queue": "q", "image": IMAGE, "taskManager": {"gpu": {"amount": 1}}}
            ]
        },
        "monitoring": {"enabled": True},
    }
    doc.update(over)
    return doc


def _warnings(path: Path) -> list[tuple[str, str, str]]:
    return [(w.finding.code if w.finding else "", w.path, w.message) for w in load_validated(path).warnings]


def test_a_monitored_stack_has_no_warnings(write_spec: WriteSpec) -> None:
    assert _warnings(write_spec(_spec())) == []


def test_exporters_of_a_gpu_operator_are_not_ours(write_spec: WriteSpec) -> None:
    spec = _spec(devicePlugins={"nvidia": {"enabled": False}})
    (warning,) = _warnings(write_spec(spec))
    assert warning[:2] == ("AP7001", "monitoring.exporters")
    assert "set monitoring.exporters: external" in warning[2]
    spec["monitoring"]["exporters"] = "external"
    assert _warnings(write_spec(spec)) == []


def test_nvidia_dra_pools_get_dcgm_exporter(write_spec: WriteSpec) -> None:
    """accelplane runs dcgm-exporter with KUBERNETES_ENABLE_DRA on NVIDIA DRA pools (issue 44), so no
    finding says they go unmonitored."""
    spec = _spec()
    spec["kubernetes"] = {"version": "1.34"}
    spec["nodePools"][0]["gpu"].update(allocation="dra", model="NVIDIA A100-SXM4-80GB")
    spec["queues"] = [{"name": "q"}]
    codes = [code for code, _, _ in _warnings(write_spec(spec))]
    assert "AP7003" not in codes


def test_dra_pools_without_exporter_are_one_finding_a_spec_can_silence(write_spec: WriteSpec) -> None:
    """One finding naming every AMD DRA pool (v1.4.0 maps no claims), at the setting that causes it;
    lint.ignore silences it by code, or by that path (stacks/dra-gpus.yaml)."""
    spec = _spec()
    spec["kubernetes"] = {"version": "1.34"}
    spec["nodePools"][0]["gpu"].update(allocation="dra", model="NVIDIA A100-SXM4-80GB")
    for name in ("mi300x", "mi300x-b"):
        spec["nodePools"].append(
            {"name": name, "nodes": 1, "labels": {"pool": name},
             "gpu": {"vendor": "amd", "perNode": 8, "model": "AMD Instinct MI300X OAM", "allocation": "dra"}}
        )  # fmt: skip
    spec["queues"] = [{"name": "q"}]
    spec["flink"]["clusters"][0]["taskManager"]["gpu"]["pool"] = "a100"
    found = [w for w in _warnings(write_spec(spec)) if w[0] == "AP7003"]
    assert [(code, path) for code, path, _ in found] == [("AP7003", "monitoring.exporters")]
    assert "AMD pools mi300x, mi300x-b hand out GPUs through DRA" in found[0][2]
    assert "v1.4.1 or later" in found[0][2]
    for scope in ({}, {"path": "monitoring.exporters"}, {"path": "monitoring"}):
        spec["lint"] = {"ignore": [{"code": "AP7003", **scope, "reason": "the GPU Operator runs dcgm-exporter there"}]}
        assert [w for w in _warnings(write_spec(spec)) if w[0] in ("AP7003", "AP1301")] == [], scope
    spec["lint"] = {"ignore": [{"code": "AP7003", "path": "nodePools[0].gpu.allocation"}]}  # the former path
    assert [code for code, _, _ in _warnings(write_spec(spec))].count("AP7003") == 1


def test_host_clusters_need_coordination_for_owner_metrics(write_spec: WriteSpec) -> None:
    spec = _spec(
        cluster={"name": "mon", "platforms": ["standalone"]},
        nodePools=[{"name": "edge", "nodes": 1, "platform": "standalone", "hosts": ["h1"], "gpu": {"vendor": "nvidia", "perNode": 2}}],
        flink={"clusters": [{"name": "jobs", "target": "standalone", "image": IMAGE, "taskManager": {"gpu": {"amount": 1}}, "discovery": {"coordination": False}}]},
    )
    spec.pop("queues")
    (warning,) = _warnings(write_spec(spec))
    assert warning[:2] == ("AP7002", "flink.clusters[0].discovery.coordination")


DURATIONS = ["0", "30m", "1h30m", "1y2w3d4h5m6s7ms", "90s", "0ms0ms", "30m1h", "1m1m", "", "1.5h", "-1m", "10"]


@pytest.mark.parametrize("value", DURATIONS, ids=repr)
def test_durations_are_what_the_prometheus_rule_crd_accepts(value: str, write_spec: WriteSpec) -> None:
    """Every monitoring duration lands in the PrometheusRule's ``for``: the spec accepts exactly the
    non-empty strings prometheus-operator's CRD pattern accepts (the fuzzer found ``0ms0ms`` passing
    the spec and failing the CRD)."""
    crd = yaml.safe_load(reference("prometheus-operator/monitoring.coreos.com_prometheusrules.yaml").read_text())
    rule = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["groups"]
    pattern = rule["items"]["properties"]["rules"]["items"]["properties"]["for"]["pattern"]
    crd_accepts = value != "" and re.fullmatch(pattern.removeprefix("^").removesuffix("$"), value) is not None
    try:
        load_validated(write_spec(_spec(monitoring={"enabled": True, "idleFor": value})))
        spec_accepts = True
    except SpecErrors:
        spec_accepts = False
    assert spec_accepts is crd_accepts


HOST_METRICS = """\
cluster: {name: hosts, platforms: [standalone]}
nodePools:
  - {name: l4, platform: standalone, nodes: 1, hosts: [gpu-01.example.internal],
     gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}}
flink:
  clusters:
    - {name: l4-jobs, target: standalone, taskManager: {gpu: {amount: 2, pool: l4}}}
monitoring: {enabled: true, exporters: external, textfileDirectory: DIR}
"""


def _textfile_codes(write_spec: WriteSpec, directory: str) -> list[str]:
    try:
        load_validated(write_spec(HOST_METRICS.replace("DIR", directory)))
    except SpecErrors as e:
        assert all(err.path == "monitoring.textfileDirectory" for err in e.errors), e
        return [err.finding.code if err.finding else "" for err in e.errors]
    return []


@pytest.mark.parametrize(
    "directory",
    ["/etc/node-exporter", "/usr/bin", "/", "/var", "/var/lib", "/tmp/metrics", "/run/user/0",
     "/var/lib/accelplane", "/var/lib/accelplane/metrics", "/var/lib/accelplane-flink-pids",
     "/opt/flink/plugins", "/opt/accelplane/discovery", "/var/lib/prometheus/../node-exporter"],
)
def test_ap7075_a_textfile_directory_provision_sh_may_not_take_over(directory: str, write_spec: WriteSpec) -> None:
    """provision.sh makes the directory root:<group> 2775 (the Flink group writes): never a system,
    shared or accelplane directory."""
    assert _textfile_codes(write_spec, directory) == ["AP7075"]


@pytest.mark.parametrize("directory", ["/var/lib/prometheus/node-exporter", "/var/lib/node_exporter/textfile_collector"])
def test_ap7075_node_exporters_own_directories_are_fine(directory: str, write_spec: WriteSpec) -> None:
    assert _textfile_codes(write_spec, directory) == []
