"""DRA objects of the example stack ``dra-gpus`` on every Kubernetes release 1.32–1.37: the API
version each release serves, ``kubernetes-validate --strict`` for that release, golden files per API
version (regenerate with UPDATE_GOLDEN=1), and how the rest of the platform follows a DRA pool:
no device plugin on it, the TaskManager template claims the GPUs, Flink does not also request
them, Volcano counts them as ``deviceclass/<class>`` with its DRA plugin arguments on, Pulumi has
a typed resource for every DRA kind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from accelplane.artifacts import K8sObject
from accelplane.builders import build_all
from accelplane.derive.device_plugin_placement import placements
from accelplane.pulumi import kinds
from accelplane.yaml_io import dump_yaml

from tests.support.dra_specs import DRA_STACK, stack_document, validated, with_version
from tests.support.render import files_for

RELEASES = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
API = {"1.32": "v1beta1", "1.33": "v1beta2", "1.34": "v1", "1.35": "v1", "1.36": "v1", "1.37": "v1"}
GOLDEN = Path(__file__).with_name("golden")
DRA_KINDS = {"DeviceClass", "ResourceClaimTemplate"}


def _dra_objects(release: str, tmp_path: Path) -> list[K8sObject]:
    spec = validated(with_version(stack_document(), release), tmp_path).model
    return [o for o in build_all(spec).objects if o.kind in DRA_KINDS]


@pytest.mark.parametrize("release", RELEASES)
def test_dra_objects_pass_kubernetes_validate_strict_for_the_release(release: str, tmp_path: Path) -> None:
    objects = _dra_objects(release, tmp_path)
    assert {o.kind for o in objects} == DRA_KINDS
    for o in objects:
        assert o.api_version == f"resource.k8s.io/{API[release]}"
        kubernetes_validate.validate(o.manifest, f"{release}.0", strict=True)


@pytest.mark.parametrize("release", ["1.32", "1.33", "1.34"])
def test_dra_objects_match_the_golden_files(release: str, tmp_path: Path) -> None:
    """One golden file per API version: the request shape differs (``deviceClassName`` beside
    ``count`` in v1beta1, under ``exactly`` in v1beta2 and v1)."""
    text = "".join(f"---\n{dump_yaml(o.manifest)}" for o in _dra_objects(release, tmp_path))
    path = GOLDEN / f"dra-gpus-{API[release]}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"{path} missing: run with UPDATE_GOLDEN=1 to create it"
    assert path.read_text() == text, f"{path.name} differs from the golden file (UPDATE_GOLDEN=1)"
    for doc in yaml.safe_load_all(text):
        kubernetes_validate.validate(doc, f"{release}.0", strict=True)


@pytest.mark.parametrize(("shape_of", "served_by"), [("1.32", "1.34"), ("1.34", "1.32")])
def test_the_request_shapes_are_not_interchangeable(shape_of: str, served_by: str, tmp_path: Path) -> None:
    """The validator tells the shapes apart: a v1beta1 request under v1 (or the reverse) fails."""
    (template,) = [o for o in _dra_objects(shape_of, tmp_path) if o.name == "fraud-scoring-taskmanager-gpu"]
    manifest = {**template.manifest, "apiVersion": f"resource.k8s.io/{API[served_by]}"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(manifest, f"{served_by}.0", strict=True)


def test_releases_before_dra_are_refused(tmp_path: Path) -> None:
    from tests.support.dra_specs import errors

    found = errors(with_version(stack_document(), "1.31"), tmp_path)
    assert len(found) == 3  # one per DRA pool
    assert all("DRA needs Kubernetes 1.32 or later" in e and "gpu.allocation" in e for e in found)


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return [yaml.safe_load(t) for p, (t, _) in files_for(DRA_STACK).items() if p.startswith("kubernetes/")]


@pytest.fixture(scope="module")
def files() -> dict[str, tuple[str, int]]:
    return files_for(DRA_STACK)


def test_device_plugins_never_run_on_dra_pools(objects: list[dict[str, Any]], tmp_path: Path) -> None:
    """A device plugin on a DRA pool's nodes would advertise the same GPUs a second time; only the
    GPU metrics exporter for DRA claims (dcgm-exporter-dra, docs/monitoring.md) runs there."""
    spec = validated(stack_document(), tmp_path).model
    admitted = {p.name for pl in placements(spec) for p in pl.pools}
    assert admitted == {"t4-plugin"}
    daemonsets = [o for o in objects if o["kind"] == "DaemonSet"]
    assert daemonsets
    for ds in daemonsets:
        terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        pools = {"a100-dra", "h100-mig-dra"} if ds["metadata"]["name"] == "dcgm-exporter-dra" else {"t4-plugin"}
        selected = {e["values"][0] for t in terms for e in t["matchExpressions"] if e["key"] == "accelplane.io/pool"}
        assert selected == pools and len(terms) == len(pools), ds["metadata"]["name"]


def test_taskmanagers_claim_their_gpus(files: dict[str, tuple[str, int]], objects: list[dict[str, Any]]) -> None:
    claims = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ResourceClaimTemplate"}
    for cluster, cls, count in (
        ("fraud-scoring", "nvidia-a100-sxm4-80gb", 2),
        ("embeddings-mig", "nvidia-h100-80gb-hbm3-mig-1g.10gb", 1),
        ("llm-research", "amd-instinct-mi300x-oam", 4),
    ):
        pod = yaml.safe_load(files[f"flink/{cluster}/taskmanager-pod-template.yaml"][0])
        (claim,) = pod["spec"]["resourceClaims"]
        template = claims[claim["resourceClaimTemplateName"]]
        assert template["metadata"]["namespace"] == "flink"
        (request,) = template["spec"]["spec"]["devices"]["requests"]
        assert request["exactly"] == {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
        (main,) = pod["spec"]["containers"]
        assert main["resources"] == {"claims": [{"name": claim["name"]}]}
        assert "affinity" not in pod["spec"]  # no GFD label on DRA pools: the class selects the model
        config = yaml.safe_load(files[f"flink/{cluster}/config.yaml"][0])
        assert "external-resource.gpu.kubernetes.config-key" not in config
        assert config["external-resource.gpu.amount"] == count
        assert "--isolated-devices" in config["external-resource.gpu.param.discovery-script.args"]
        group = next(o for o in objects if o["kind"] == "PodGroup" and o["metadata"]["name"] == f"podgroup-{cluster}")
        replicas = {"fraud-scoring": 4, "embeddings-mig": 7, "llm-research": 2}[cluster]
        assert group["spec"]["minResources"][f"deviceclass/{cls}"] == str(replicas * count)
        assert not any(k.endswith("/gpu") for k in group["spec"]["minResources"])
    legacy = yaml.safe_load(files["flink/legacy-ranking/config.yaml"][0])
    assert legacy["external-resource.gpu.kubernetes.config-key"] == "nvidia.com/gpu"
    assert "resourceClaims" not in yaml.safe_load(files["flink/legacy-ranking/taskmanager-pod-template.yaml"][0])["spec"]


def test_volcano_enables_dra_and_counts_device_classes(objects: list[dict[str, Any]]) -> None:
    (cm,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "volcano-scheduler-configmap"]
    conf = yaml.safe_load(cm["data"]["volcano-scheduler.conf"])
    plugins = {p["name"]: p for tier in conf["tiers"] for p in tier["plugins"]}
    assert plugins["predicates"]["arguments"] == {"predicate.DynamicResourceAllocationEnable": True}
    assert plugins["capacity"]["arguments"] == {"capacity.DynamicResourceAllocationEnable": True}
    assert "proportion" not in plugins  # deviceclass/<class> quotas are the capacity plugin's
    queues = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Queue"}
    assert queues["research"]["spec"]["capability"]["deviceclass/amd-instinct-mi300x-oam"] == "16"


def test_pulumi_maps_every_dra_kind() -> None:
    for version in ("v1beta1", "v1beta2", "v1"):
        for kind, namespaced in (("DeviceClass", False), ("ResourceClaimTemplate", True)):
            mapping = kinds.KINDS[(f"resource.k8s.io/{version}", kind)]
            assert mapping.resource_class is not None and mapping.resource_class.__name__ == kind
            assert mapping.namespaced is namespaced


@pytest.mark.parametrize("release", ["1.32", "1.34"])
@pytest.mark.parametrize(("strategy", "driver_strategy"), [("timeSlicing", "TimeSlicing"), ("mps", "MPS")])
def test_pool_sharing_becomes_the_drivers_gpu_config(
    release: str, strategy: str, driver_strategy: str, tmp_path: Path
) -> None:
    """A DRA pool's ``sharing.strategy`` reaches the claim as the NVIDIA driver's opaque
    ``resource.nvidia.com/v1beta1`` ``GpuConfig`` (api/nvidia.com/resource/v1beta1/sharing.go)."""
    doc = with_version(stack_document(), release)
    next(p for p in doc["nodePools"] if p["name"] == "a100-dra")["gpu"]["sharing"] = {"strategy": strategy}
    spec = validated(doc, tmp_path).model
    (template,) = [o for o in build_all(spec).objects if o.name == "fraud-scoring-taskmanager-gpu"]
    kubernetes_validate.validate(template.manifest, f"{release}.0", strict=True)
    assert template.manifest["spec"]["spec"]["devices"]["config"] == [
        {
            "requests": ["gpu"],
            "opaque": {
                "driver": "gpu.nvidia.com",
                "parameters": {
                    "apiVersion": "resource.nvidia.com/v1beta1",
                    "kind": "GpuConfig",
                    "sharing": {"strategy": driver_strategy},
                },
            },
        }
    ]
