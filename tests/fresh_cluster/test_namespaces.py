"""Namespaces a fresh cluster needs, with Pod Security labels matching the pods rendered into them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main
from accelplane.derive.namespaces import namespace_uses
from accelplane.derive.pod_security import LEVELS, pod_level, weakest

from tests.conftest import EXAMPLE_SPECS
from tests.support.findings_text import without_tags
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.support.validators import validate_core_object

PSA = "pod-security.kubernetes.io/"


def _objects(files: dict[str, tuple[str, int]]) -> list[dict[str, Any]]:
    return [yaml.safe_load(t) for p, (t, _) in files.items() if p.startswith("kubernetes/")]


def _rendered_pods(files: dict[str, tuple[str, int]]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(namespace, who, pod spec)`` of every pod the rendered tree causes, read back from the files:
    DaemonSet templates, the pod templates of native clusters (ConfigMap ``accelplane-flink-<c>``)
    and the FlinkDeployments' embedded templates."""
    for obj in _objects(files):
        ns = obj["metadata"].get("namespace")
        if obj["kind"] == "DaemonSet":
            yield ns, obj["metadata"]["name"], obj["spec"]["template"]["spec"]
        elif obj["kind"] == "FlinkDeployment":
            for role in ("jobManager", "taskManager"):
                yield ns, f"{obj['metadata']['name']} {role}", obj["spec"][role]["podTemplate"]["spec"]
        elif obj["kind"] == "ConfigMap" and obj["metadata"]["name"].startswith("accelplane-flink-"):
            for key, text in obj["data"].items():
                if key.endswith("-pod-template.yaml"):
                    yield ns, f"{obj['metadata']['name']} {key}", yaml.safe_load(text)["spec"]


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_every_namespace_gets_the_level_its_pods_pass(spec: Path) -> None:
    files = files_for(spec)
    objects = _objects(files)
    namespaces = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Namespace"}
    pods: dict[str, list[dict[str, Any]]] = {}
    for ns, _who, pod in _rendered_pods(files):
        pods.setdefault(ns, []).append(pod)
    for name, ns in namespaces.items():
        validate_core_object(ns)
        labels = ns["metadata"]["labels"]
        level = weakest(pod_level(p) for p in pods.get(name, []))
        for mode in ("enforce", "audit", "warn"):
            assert labels[f"{PSA}{mode}"] == level, (name, mode)
            assert labels[f"{PSA}{mode}-version"] == "v1.33"
        reason = ns["metadata"].get("annotations", {}).get("accelplane.io/pod-security-reason")
        assert (reason is None) == (level == "restricted")
        if level == "privileged":
            assert "hostPath volume" in reason or "privileged" in reason
    # every namespace of a namespaced object exists, comes from elsewhere by design, or is declared so
    model = yaml.safe_load(spec.read_text())
    unmanaged = {n for n, s in (model.get("namespaces") or {}).items() if s.get("managed") is False}
    external = {"kube-system", "default", "volcano-system", "yunikorn", "gpu-operator"}
    # the monitoring installation's namespaces (Prometheus operator, Grafana), as derive/namespaces says
    external |= {u.name for u in namespace_uses(model_of(spec)) if u.created_by and "monitoring" in u.created_by}
    for obj in objects:
        ns = obj["metadata"].get("namespace")
        if ns is not None:
            assert ns in namespaces or ns in external | unmanaged, (obj["kind"], obj["metadata"]["name"], ns)
    for name in unmanaged | external:
        assert name not in namespaces


def test_example_namespaces_and_levels() -> None:
    """The example stacks exercise privileged (coordination hostPath, device plugins), restricted
    (GPU TaskManagers without coordination: the Flink containers run as uid 9999 with no
    capabilities, no escalation and RuntimeDefault seccomp) and namespaces managed elsewhere."""
    shared = _objects(files_for(next(p for p in EXAMPLE_SPECS if p.stem == "shared-gpus")))
    levels = {
        o["metadata"]["name"]: o["metadata"]["labels"][f"{PSA}enforce"]
        for o in shared
        if o["kind"] == "Namespace"
    }
    assert levels == {"flink": "privileged", "inference": "restricted", "nvidia-device-plugin": "privileged"}
    prod = _objects(files_for(next(p for p in EXAMPLE_SPECS if p.stem == "prod-eu")))
    ns = next(o for o in prod if o["kind"] == "Namespace")
    assert ns["metadata"]["name"] == "flink" and ns["metadata"]["labels"][f"{PSA}enforce"] == "privileged"
    assert (
        "hostPath volume 'accelplane-gpu-coordination'"
        in ns["metadata"]["annotations"]["accelplane.io/pod-security-reason"]
    )
    assert not any(o["kind"] == "Namespace" and o["metadata"]["name"] == "flink-batch" for o in prod)


# --- the Pod Security Standards evaluation itself -----------------------------------------------

RESTRICTED_POD: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "app",
            "image": "x",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
    "volumes": [{"name": "c", "configMap": {"name": "c"}}],
}


def _with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    pod = yaml.safe_load(yaml.safe_dump(RESTRICTED_POD))
    change(pod)
    return pod


@pytest.mark.parametrize(
    ("change", "level"),
    [
        (lambda p: None, "restricted"),
        (lambda p: p["securityContext"].pop("runAsNonRoot"), "baseline"),
        (lambda p: p["securityContext"].pop("seccompProfile"), "baseline"),
        (lambda p: p["containers"][0]["securityContext"].pop("allowPrivilegeEscalation"), "baseline"),
        (lambda p: p["containers"][0]["securityContext"]["capabilities"].update(add=["CHOWN"]), "baseline"),
        (lambda p: p["volumes"].append({"name": "e", "nfs": {"server": "s", "path": "/"}}), "baseline"),
        (lambda p: p["containers"][0]["securityContext"].update(runAsUser=0), "baseline"),
        (
            lambda p: p["containers"][0]["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
            "privileged",
        ),
        (lambda p: p["containers"][0]["securityContext"].update(privileged=True), "privileged"),
        (lambda p: p["volumes"].append({"name": "h", "hostPath": {"path": "/x"}}), "privileged"),
        (lambda p: p.update(hostNetwork=True), "privileged"),
        (lambda p: p.update(hostPID=True), "privileged"),
        (lambda p: p["containers"][0].update(ports=[{"containerPort": 80, "hostPort": 80}]), "privileged"),
        (lambda p: p["securityContext"].update(seccompProfile={"type": "Unconfined"}), "privileged"),
        (
            lambda p: p["securityContext"].update(sysctls=[{"name": "kernel.msgmax", "value": "1"}]),
            "privileged",
        ),
        (
            lambda p: p["securityContext"].update(
                sysctls=[{"name": "net.ipv4.tcp_syncookies", "value": "1"}]
            ),
            "restricted",
        ),
        (lambda p: p["containers"][0]["securityContext"].update(procMount="Unmasked"), "privileged"),
        (
            lambda p: p["containers"][0]["securityContext"].update(seLinuxOptions={"type": "spc_t"}),
            "privileged",
        ),
    ],
)
def test_pod_security_levels_follow_the_standards(
    change: Callable[[dict[str, Any]], None], level: str
) -> None:
    assert pod_level(_with(change)) == level
    assert level in LEVELS


# --- spec errors ------------------------------------------------------------------------------

BASE = """\
cluster: {name: c, platforms: [kubernetes]}
nodeImage: {image: registry.example.com/flink-gpu:1.20.1-java17-1}
nodePools:
  - {name: a100, nodes: 1, gpu: {vendor: nvidia, perNode: 8}, labels: {pool: a100}}
flink:
  clusters:
    - {name: native, namespace: jobs, taskManager: {gpu: {amount: 1}}}
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "namespaces: {other: {managed: false}}\n",
            "spec.yaml: namespaces.other: no object of this stack lives in namespace 'other' "
            "(used: jobs, kube-system, volcano-system); remove the entry",
        ),
        (
            "namespaces: {kube-system: {managed: false}}\n",
            "spec.yaml: namespaces.kube-system: namespace 'kube-system' is created by Kubernetes (system "
            "namespace), never by accelplane; remove the entry",
        ),
    ],
)
def test_bad_namespace_settings(
    write_spec: Callable[..., Path], capsys: pytest.CaptureFixture[str], extra: str, message: str
) -> None:
    path = write_spec(BASE + extra)
    assert main(["validate", str(path)]) == 0  # a warning: the entry has no effect
    assert main(["validate", "--strict", str(path)]) == 1
    err = without_tags(capsys.readouterr().err)
    assert f"{path.parent}/{message}" in err or message in err, err


def test_managed_false_renders_no_namespace(write_spec: Callable[..., Path]) -> None:
    files = files_for(write_spec(BASE + "namespaces: {jobs: {managed: false}}\n"))
    assert not [p for p in files if p.startswith("kubernetes/namespace_")]
    files = files_for(write_spec(BASE))
    assert "kubernetes/namespace__jobs.yaml" in files
    assert "kubernetes/namespace__kube-system.yaml" not in files
