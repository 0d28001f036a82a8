"""Discovery-script ConfigMaps: one per GPU Flink namespace, immutable, content-named, strict-valid.

Each carries the script as a module and the pod entry stub that runs it; what pods do with them
(the preflight fills the bytecode cache, the TaskManager's calls use it) is run in
tests/flink/test_taskmanager_preflight.py."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import yaml
from accelplane.builders import discovery_configmap
from accelplane.discovery_install import (
    CONFIGMAP_KEY,
    MODULE_KEY,
    configmap_name,
    pod_entry_stub,
    script_text,
)

from tests.conftest import STACKS_DIR
from tests.support.node_provisioning import FULL_SPEC
from tests.support.render import files_for, objects_for
from tests.support.specs import model_of
from tests.support.validators import validate_k8s_object


def _configmaps(spec_path: Path) -> list[dict[str, object]]:
    return [
        o
        for o in objects_for(spec_path)
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == configmap_name()
    ]


def test_one_configmap_per_gpu_namespace(write_spec):
    cms = _configmaps(write_spec(FULL_SPEC))
    # team-c runs no GPUs, team-d asks for 0 GPUs; YARN/standalone clusters get none.
    assert [cm["metadata"]["namespace"] for cm in cms] == ["team-a", "team-b"]
    text = script_text()
    for cm in cms:
        validate_k8s_object(cm)
        assert cm["immutable"] is True
        assert cm["data"] == {CONFIGMAP_KEY: pod_entry_stub(), MODULE_KEY: text}
        assert cm["metadata"]["annotations"] == {
            discovery_configmap.SHA256_ANNOTATION: hashlib.sha256(text.encode()).hexdigest()
        }
        labels = cm["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "accelplane"
        assert labels["accelplane.io/cluster"] == "mixed"
        assert labels["app.kubernetes.io/component"] == "gpu-discovery"


def test_configmap_name_carries_a_hash_of_its_data():
    data = f"{CONFIGMAP_KEY}\0{pod_entry_stub()}\0{MODULE_KEY}\0{script_text()}"
    assert configmap_name() == f"accelplane-gpu-discovery-{hashlib.sha256(data.encode()).hexdigest()[:10]}"


def test_pod_entry_stub_refuses_paths_it_cannot_quote():
    import pytest

    for bad in ("relative/dir", "/a'b", '/a"b', "/a$b", "/a`b", "/a\\b"):
        with pytest.raises(ValueError, match="absolute paths without quotes"):
            pod_entry_stub(module_dir=bad)
        with pytest.raises(ValueError, match="absolute paths without quotes"):
            pod_entry_stub(cache_dir=bad)


def test_example_stacks():
    prod = _configmaps(STACKS_DIR / "prod-eu.yaml")
    # one per namespace with GPU Flink pods: native clusters in flink, the operator cluster in flink-batch
    assert sorted(cm["metadata"]["namespace"] for cm in prod) == ["flink", "flink-batch"]
    for cm in prod:
        validate_k8s_object(cm)
    assert _configmaps(STACKS_DIR / "yarn-analytics.yaml") == []


def test_rendered_file_name_and_text_round_trip(write_spec):
    files = files_for(write_spec(FULL_SPEC))
    rel = f"kubernetes/configmap_team-a_{configmap_name()}.yaml"
    text, mode = files[rel]
    assert mode == 0o644
    data = yaml.safe_load(text)["data"]
    assert data[MODULE_KEY] == script_text()
    assert data[CONFIGMAP_KEY] == pod_entry_stub()


def test_no_configmaps_without_kubernetes_platform(write_spec):
    model = model_of(write_spec(FULL_SPEC))
    assert discovery_configmap.gpu_namespaces(model) == ["team-a", "team-b"]
    without_kubernetes = dataclasses.replace(model, platforms=("standalone", "yarn"))
    assert discovery_configmap.gpu_namespaces(without_kubernetes) == []
    assert discovery_configmap.build(without_kubernetes).objects == []


def test_cluster_list_order_does_not_change_output(write_spec):
    model_text = FULL_SPEC
    head, clusters = model_text.split("  clusters:\n")
    entries = ["    - name:" + e for e in clusters.split("    - name:")[1:]]
    reordered = head + "  clusters:\n" + "".join(reversed(entries))
    a = files_for(write_spec(model_text, "a.yaml"))
    b = files_for(write_spec(reordered, "b.yaml"))
    assert a == b
