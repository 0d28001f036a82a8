"""Every rendered YARN file is well-formed, in Hadoop's format, and says exactly what the spec means."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelplane.builders.yarn import (
    container_executor_sections,
    node_resources_properties,
    resource_types_properties,
    resourcemanager_site_properties,
    yarn_site_properties,
)
from accelplane.derive.gpu_resources import yarn_gpu_type
from accelplane.derive.yarn_am_limit import capacity_scheduler_properties
from accelplane.derive.yarn_docker import NM_DOCKER_CAPABILITIES
from accelplane.derive.yarn_labels import add_to_cluster_argument, cluster_labels, taskmanager_label
from accelplane.derive.yarn_types import (
    ConfProperty,
    container_gpu_request,
    needed_types,
    yarn_gpu_clusters,
    yarn_pools,
)
from accelplane.templating import render_template

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.specs import WriteSpec, model_of
from tests.support.yarn_specs import (
    BASE,
    parse_configuration,
    parse_container_executor,
    without_gpu_models,
    yarn_files,
)

# without node labels: the Flink cluster may run on any GPU pool, so it names no model
NO_LABELS = without_gpu_models(BASE).replace("  nodeLabels: true\n", "").replace(
    "gpu: {amount: 2, model: Tesla V100-SXM2-32GB}", "gpu: {amount: 2}"
)
V1_NO_DOCKER = BASE.replace("cgroups: v2", "cgroups: v1").replace(
    "docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}",
    "docker: {enabled: false}",
)
NO_GPUS = """\
cluster: {name: plain, platforms: [yarn]}
nodePools:
  - {name: workers, platform: yarn, nodes: 3, cpu: 16, memory: 64Gi}
"""
VARIANTS = {"base": BASE, "no-labels": NO_LABELS, "v1-no-docker": V1_NO_DOCKER, "no-gpus": NO_GPUS}


def _variant_paths(write_spec: WriteSpec) -> list[Path]:
    return [*EXAMPLE_SPECS, *(write_spec(text, f"{n}.yaml") for n, text in VARIANTS.items())]


def _pairs(props: list[ConfProperty]) -> list[tuple[str, str]]:
    return [(p.name, p.value) for p in props]


def test_every_file_parses_back_to_exactly_the_intended_properties(write_spec: WriteSpec) -> None:
    checked = 0
    for path in _variant_paths(write_spec):
        spec = model_of(path)
        files = yarn_files(path)
        if not spec.has_platform("yarn"):
            assert files == {}, path
            continue
        expected: dict[str, list[tuple[str, str]]] = {
            "resource-types.xml": _pairs(resource_types_properties(spec)),
            "capacity-scheduler.xml": _pairs(capacity_scheduler_properties(spec)),
        }
        for pool in yarn_pools(spec):
            expected[f"node-resources/{pool.name}.xml"] = _pairs(node_resources_properties(spec, pool))
            expected[f"yarn-site/{pool.name}.xml"] = _pairs(yarn_site_properties(spec, pool))
        rm_site = resourcemanager_site_properties(spec)
        if rm_site:
            expected["resourcemanager/yarn-site.xml"] = _pairs(rm_site)
        cfgs = {f"container-executor/{p.name}.cfg": p for p in yarn_pools(spec)}
        labelled = bool(cluster_labels(spec))
        labels = {"resourcemanager/cluster-node-labels.txt"} if labelled else set()
        installer = {"install-container-executor-cfg.sh"} if cfgs else set()
        assert set(files) == set(expected) | set(cfgs) | labels | installer
        if labelled:
            assert files["resourcemanager/cluster-node-labels.txt"] == add_to_cluster_argument(spec) + "\n"
        for name, props in expected.items():
            assert files[name].startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
            assert parse_configuration(files[name]) == props, name
            checked += 1
        for name, pool in cfgs.items():
            want = {s: dict(e) for s, e in container_executor_sections(spec, pool)}
            assert parse_container_executor(files[name]) == want, name
            checked += 1
    assert checked >= 20


NASTY = ["a<b>&c", "quote\"'s", "]]>", "  spaced  ", "tab\there", "ünïcødé ✓", "${not.expanded}", "", "a--b"]


def test_values_and_descriptions_round_trip_through_the_template() -> None:
    props = [ConfProperty(f"k{i}", v, v) for i, v in enumerate(NASTY)]
    text = render_template("yarn/configuration.xml.j2", purpose="test", properties=props)
    assert parse_configuration(text) == [(p.name, p.value) for p in props]
    import xml.etree.ElementTree as ET

    descriptions = [p.findtext("description") for p in ET.fromstring(text)]
    assert descriptions == [v or None for v in NASTY]


def test_layout_of_the_base_spec(write_spec: WriteSpec) -> None:
    files = yarn_files(write_spec(BASE))
    assert sorted(files) == [
        "capacity-scheduler.xml",
        "container-executor/cpu.cfg",
        "container-executor/mi.cfg",
        "container-executor/t4.cfg",
        "container-executor/v100.cfg",
        "install-container-executor-cfg.sh",
        "node-resources/cpu.xml",
        "node-resources/mi.xml",
        "node-resources/t4.xml",
        "node-resources/v100.xml",
        "resource-types.xml",
        "resourcemanager/cluster-node-labels.txt",
        "resourcemanager/yarn-site.xml",
        "yarn-site/cpu.xml",
        "yarn-site/mi.xml",
        "yarn-site/t4.xml",
        "yarn-site/v100.xml",
    ]


def test_clusters_without_the_yarn_platform_render_no_yarn_directory(write_spec: WriteSpec) -> None:
    k8s = """\
cluster: {name: k, platforms: [kubernetes]}
nodePools:
  - {name: a100, nodes: 2, labels: {accelplane.io/pool: a100}, gpu: {vendor: nvidia, perNode: 8}}
yarn: {nodeLabels: true, docker: {enabled: true}}
"""
    files = files_for(write_spec(k8s))
    assert files and not [p for p in files if p.startswith("yarn/")]


def test_resource_types(write_spec: WriteSpec) -> None:
    props = parse_configuration(yarn_files(write_spec(BASE))["resource-types.xml"])
    # yarn.io/gpu only: the one type YARN's GPU plugin isolates; models are node labels
    assert props == [
        ("yarn.resource-types", "yarn.io/gpu"),
        ("yarn.resource-types.yarn.io/gpu.minimum-allocation", "0"),
        ("yarn.resource-types.yarn.io/gpu.maximum-allocation", "4"),
    ]
    assert not [n for n, _ in props if n.endswith(".units")]
    no_model = parse_configuration(yarn_files(write_spec(NO_LABELS, "n.yaml"))["resource-types.xml"])
    assert no_model[0] == ("yarn.resource-types", "yarn.io/gpu")
    assert parse_configuration(yarn_files(write_spec(NO_GPUS, "g.yaml"))["resource-types.xml"]) == [
        ("yarn.resource-types", "")
    ]


def test_node_resources_declare_gpu_amounts(write_spec: WriteSpec) -> None:
    files = yarn_files(write_spec(BASE))
    p = "yarn.nodemanager.resource-type."

    def amounts(pool: str) -> dict[str, str]:
        return {n.removeprefix(p): v for n, v in parse_configuration(files[f"node-resources/{pool}.xml"])}

    assert amounts("v100") == {"yarn.io/gpu": "4"}
    # an explicit allowed-device list is what the GPU plugin reports: 3 of 4 GPUs
    assert amounts("t4") == {"yarn.io/gpu": "3"}
    assert amounts("mi") == {"yarn.io/gpu": "8"}
    assert set(amounts("cpu").values()) == {"0"}
    assert parse_configuration(yarn_files(write_spec(NO_GPUS, "g.yaml"))["node-resources/workers.xml"]) == []


def test_yarn_site_per_pool(write_spec: WriteSpec) -> None:
    files = yarn_files(write_spec(BASE))
    site = {
        pool: dict(parse_configuration(files[f"yarn-site/{pool}.xml"]))
        for pool in ("v100", "t4", "mi", "cpu")
    }
    nm = "yarn.nodemanager."
    for pool in site.values():
        assert (
            pool[f"{nm}container-executor.class"]
            == "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
        )
        assert (
            pool[f"{nm}linux-container-executor.resources-handler.class"]
            == "org.apache.hadoop.yarn.server.nodemanager.util.CgroupsLCEResourcesHandler"
        )
        assert pool[f"{nm}linux-container-executor.cgroups.mount-path"] == "/sys/fs/cgroup"
        assert pool[f"{nm}linux-container-executor.cgroups.hierarchy"] == "yarn"
        assert pool[f"{nm}linux-container-executor.cgroups.v2.enabled"] == "true"
        assert pool[f"{nm}runtime.linux.allowed-runtimes"] == "default,docker"
    assert site["v100"][f"{nm}resource-plugins"] == "yarn.io/gpu"
    assert site["v100"][f"{nm}resource-plugins.gpu.allowed-gpu-devices"] == "auto"
    assert site["t4"][f"{nm}resource-plugins.gpu.allowed-gpu-devices"] == "0:0,1:1,2:3"
    assert site["t4"][f"{nm}resource-plugins.gpu.path-to-discovery-executables"] == "/usr/bin/nvidia-smi"
    assert site["t4"][f"{nm}resource-plugins.gpu.docker-plugin"] == "nvidia-docker-v2"
    for plain in ("mi", "cpu"):  # AMD and CPU-only NodeManagers: no NVIDIA GPU plugin
        assert not [k for k in site[plain] if k.startswith(f"{nm}resource-plugins")]
    v1 = dict(parse_configuration(yarn_files(write_spec(V1_NO_DOCKER, "v1.yaml"))["yarn-site/v100.xml"]))
    assert v1[f"{nm}linux-container-executor.cgroups.v2.enabled"] == "false"
    assert f"{nm}runtime.linux.allowed-runtimes" not in v1
    assert f"{nm}resource-plugins.gpu.docker-plugin" not in v1


NM_DIRS = "/var/lib/hadoop-yarn/nm-local-dir,/var/log/hadoop-yarn/containers"


def test_container_executor_sections(write_spec: WriteSpec) -> None:
    files = yarn_files(write_spec(BASE))
    ce = {
        pool: parse_container_executor(files[f"container-executor/{pool}.cfg"])
        for pool in ("t4", "mi", "cpu")
    }
    assert ce["t4"] == {
        "gpu": {"module.enabled": "true"},
        "cgroups": {"root": "/sys/fs/cgroup", "yarn-hierarchy": "yarn"},
        "docker": {
            "module.enabled": "true",
            "docker.allowed.devices": "/dev/nvidiactl,/dev/nvidia-uvm,/dev/nvidia-uvm-tools,"
            "/dev/nvidia0,/dev/nvidia1,/dev/nvidia3,/dev/nvidia-caps/nvidia-cap1",
            "docker.allowed.runtimes": "nvidia",
            # what the Flink containers mount (tests/yarn/test_docker.py): the host's discovery script
            # and module (the image is not accelplane's node image) and the coordination directory;
            # the NodeManager's own local and log directories (every container's work and log dirs)
            "docker.allowed.ro-mounts": "/opt/accelplane/discovery,"
            "/opt/flink/plugins/external-resource-gpu/accelplane-gpu-discovery",
            "docker.allowed.rw-mounts": f"/var/lib/accelplane,{NM_DIRS}",
            "docker.trusted.registries": "registry.example.com",  # the image's registry/namespace
            "docker.allowed.capabilities": ",".join(NM_DOCKER_CAPABILITIES),  # the NodeManager's 14
            "docker.allowed.networks": "host",  # the NodeManager's default network
        },
    }
    assert ce["mi"] == {
        "cgroups": {"root": "/sys/fs/cgroup", "yarn-hierarchy": "yarn"},
        "docker": {
            "module.enabled": "true",
            "docker.allowed.devices": "/dev/nvidia-caps/nvidia-cap1",
            "docker.allowed.ro-mounts": "/opt/accelplane/discovery,"
            "/opt/flink/plugins/external-resource-gpu/accelplane-gpu-discovery",
            "docker.allowed.rw-mounts": f"/var/lib/accelplane,{NM_DIRS}",
            "docker.trusted.registries": "registry.example.com",
            "docker.allowed.capabilities": ",".join(NM_DOCKER_CAPABILITIES),
            "docker.allowed.networks": "host",
        },
    }
    # CPU-only NodeManagers: no GPU TaskManager runs there, so none of its mounts is allowed (an
    # allowed entry missing on the node would fail every container there, error 52)
    assert "docker.allowed.ro-mounts" not in ce["cpu"]["docker"]
    assert ce["cpu"]["docker"]["docker.allowed.rw-mounts"] == NM_DIRS
    assert "gpu" not in ce["cpu"]
    v1 = parse_container_executor(
        yarn_files(write_spec(V1_NO_DOCKER, "v1.yaml"))["container-executor/v100.cfg"]
    )
    assert set(v1) == {"gpu", "cgroups"}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_type_a_yarn_flink_cluster_requests_is_declared(variant: str, write_spec: WriteSpec) -> None:
    paths = [*EXAMPLE_SPECS, write_spec(VARIANTS[variant], f"{variant}.yaml")]
    for path in paths:
        spec = model_of(path)
        for c in yarn_gpu_clusters(spec):
            declared = needed_types(spec)
            assert yarn_gpu_type(spec, c) in declared
            assert set(container_gpu_request(spec, c)) <= set(declared)


def test_model_placement_is_a_node_label_and_the_request_stays_yarn_io_gpu(write_spec: WriteSpec) -> None:
    spec = model_of(write_spec(BASE))
    (c,) = yarn_gpu_clusters(spec)
    assert yarn_gpu_type(spec, c) == "yarn.io/gpu"
    assert container_gpu_request(spec, c) == {"yarn.io/gpu": 2}
    assert taskmanager_label(spec, c) == "gpu-teslav100sxm232gb"
    files = yarn_files(write_spec(BASE, "again.yaml"))
    assert files["resourcemanager/cluster-node-labels.txt"] == (
        "gpu-amdinstinctmi300xoam(exclusive=true),gpu-teslat4(exclusive=true),gpu-teslav100sxm232gb(exclusive=true)\n"
    )
    assert parse_configuration(files["resourcemanager/yarn-site.xml"])[-2:] == [
        ("yarn.node-labels.enabled", "true"),
        ("yarn.node-labels.configuration-type", "distributed"),
    ]
    for pool, label in (("v100", "gpu-teslav100sxm232gb"), ("t4", "gpu-teslat4"), ("mi", "gpu-amdinstinctmi300xoam")):
        site = dict(parse_configuration(files[f"yarn-site/{pool}.xml"]))
        assert site["yarn.nodemanager.node-labels.provider"] == "config"
        assert site["yarn.nodemanager.node-labels.provider.configured-node-partition"] == label
    assert not [k for k, _ in parse_configuration(files["yarn-site/cpu.xml"]) if "node-labels" in k]
    amd = model_of(
        write_spec(
            BASE.replace("model: Tesla V100-SXM2-32GB}}", "model: AMD Instinct MI300X OAM}}").replace(
                "gpuModels: {Tesla V100-SXM2-32GB: {}}", "gpuModels: {AMD Instinct MI300X OAM: {}}"
            ),
            "a.yaml",
        )
    )
    (c,) = yarn_gpu_clusters(amd)
    assert container_gpu_request(amd, c) == {"yarn.io/gpu": 2}
    assert taskmanager_label(amd, c) == "gpu-amdinstinctmi300xoam"
    no_labels = model_of(write_spec(NO_LABELS, "n.yaml"))
    (c,) = yarn_gpu_clusters(no_labels)
    assert taskmanager_label(no_labels, c) is None
    rm_site = yarn_files(write_spec(NO_LABELS, "n2.yaml"))["resourcemanager/yarn-site.xml"]
    assert not [k for k, _ in parse_configuration(rm_site) if "node-labels" in k]  # only the maximum allocation


def test_generic_gpu_bounds_from_a_base_are_harmless_without_gpus(write_spec: WriteSpec) -> None:
    text = NO_GPUS + "yarn:\n  resourceTypes: [{name: yarn.io/gpu, maximumAllocation: 4}]\n"
    assert parse_configuration(yarn_files(write_spec(text))["resource-types.xml"]) == [
        ("yarn.resource-types", "")
    ]
