"""The YARN scheduler's largest container (``yarn.maximumAllocation``; docs/yarn.md).

A Flink JobManager or TaskManager container above ``yarn.scheduler.maximum-allocation-mb`` /
``-vcores`` (Hadoop's defaults 8192 MiB and 4 vcores) never runs: Flink's YARN client refuses to
deploy a process whose memory exceeds it, its ResourceManager driver computes no container for a
TaskManager above it, and the ResourceManager rejects such an ApplicationMaster. accelplane reports
it (AP3513), renders the maximum the spec sets into the ResourceManager's yarn-site fragment, and
the figures are checked with Hadoop's and Flink's own classes (marker ``hadoop``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from accelplane.derive.node_fit import (
    HADOOP_MAXIMUM_ALLOCATION,
    HADOOP_NODEMANAGER_OFFER,
    yarn_container_request,
)
from accelplane.render import write_tree

from tests.support.render import files_for
from tests.support.specs import findings_of, model_of
from tests.support.yarn_specs import parse_configuration
from tests.yarn.hadoop import FlinkProbe, Probe

WriteSpec = Callable[..., Path]

SPEC = """\
cluster: {name: y, platforms: [yarn]}
nodePools:
  - {name: l4, platform: yarn, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}}
yarn:
  cgroups: v1
  resourceTypes: [{name: yarn.io/gpu, minimumAllocation: 0, maximumAllocation: 4}]
flink:
  clusters:
    - name: scoring
      target: yarn
      jobManager: {memory: JM_MEMORY, cpu: JM_CPU}
      taskManager: {replicas: 2, memory: TM_MEMORY, cpu: TM_CPU, gpu: {amount: 1}}
"""


def _spec(tm: tuple[str, int] = ("8Gi", 4), jm: tuple[str, int] = ("2Gi", 1), maximum: str | None = None) -> str:
    text = (
        SPEC.replace("TM_MEMORY", tm[0]).replace("TM_CPU", str(tm[1]))
        .replace("JM_MEMORY", jm[0]).replace("JM_CPU", str(jm[1]))
    )  # fmt: skip
    return text.replace("  cgroups: v1\n", f"  cgroups: v1\n  maximumAllocation: {maximum}\n") if maximum else text


def _findings(write_spec: WriteSpec, text: str) -> list[tuple[str, str, str]]:
    return [(f.finding.code if f.finding else "", f.path, f.message) for f in findings_of(write_spec(text))]


def test_a_container_at_hadoops_defaults_is_valid(write_spec: WriteSpec) -> None:
    assert _findings(write_spec, _spec()) == []  # 8192 MiB and 4 vcores: exactly the maximum


def test_without_a_maximum_the_largest_nodemanager_offer_is_the_maximum(write_spec: WriteSpec, tmp_path: Path) -> None:
    """``yarn.maximumAllocation`` unset: accelplane renders the largest NodeManager offer (what an
    administrator sets), so a TaskManager that fits a NodeManager is valid (#39 item 1)."""
    path = write_spec(_spec(tm=("16Gi", 6)))
    assert _findings(write_spec, path.read_text()) == []
    tree = write_tree(files_for(path), tmp_path / "out")
    site = parse_configuration((tree / "yarn" / "resourcemanager" / "yarn-site.xml").read_text())
    assert site == [("yarn.scheduler.maximum-allocation-mb", "131072"), ("yarn.scheduler.maximum-allocation-vcores", "32")]


def test_a_taskmanager_above_hadoops_defaults_is_an_error_when_no_pool_states_its_size(write_spec: WriteSpec) -> None:
    """No YARN pool says how big its nodes are: Hadoop's defaults stay; the maximum is the one root
    cause, so one finding per resource at yarn.maximumAllocation (the node offer is 8 vcores, so
    6 vcores fit a node and only the maximum stops them)."""
    found = _findings(write_spec, _spec(tm=("8Gi", 6)).replace(", cpu: 32, memory: 128Gi", ""))
    assert [(code, path) for code, path, _ in found] == [("AP3513", "yarn.maximumAllocation.vcores")]
    assert found[0][2] == (
        "the scheduler's largest container (yarn.scheduler.maximum-allocation-vcores) is 4 vcores, from Hadoop's "
        "default (yarn.maximumAllocation unset and no YARN pool states it), below the container(s) of "
        "flink.clusters.scoring TaskManager (6 vcores: Flink's ResourceManager driver never requests the "
        "TaskManagers): set yarn.maximumAllocation.vcores: 6 (or more)"
    )


def test_a_maximum_too_small_for_several_clusters_is_one_finding_at_the_setting(write_spec: WriteSpec) -> None:
    """One root cause, one finding (#39 item 4): an explicit maximum below the containers of two
    clusters and both roles is one finding per resource at ``yarn.maximumAllocation``, naming each."""
    text = _spec(tm=("16Gi", 6), jm=("10Gi", 5), maximum="{memory: 8Gi, vcores: 4}")
    doc = yaml.safe_load(text)
    second = dict(doc["flink"]["clusters"][0], name="ranking")
    doc["flink"]["clusters"].append(second)
    found = _findings(write_spec, yaml.safe_dump(doc, sort_keys=False))
    assert [(code, path) for code, path, _ in found] == [
        ("AP3513", "yarn.maximumAllocation.memory"),
        ("AP3513", "yarn.maximumAllocation.vcores"),
    ]
    memory, vcores = (m for _, _, m in found)
    for name in ("scoring", "ranking"):
        assert f"flink.clusters.{name} JobManager (10240 MiB" in memory
        assert f"flink.clusters.{name} TaskManager (16384 MiB" in memory
        assert f"flink.clusters.{name} TaskManager (6 vcores" in vcores
    assert memory.endswith("set yarn.maximumAllocation.memory: 16Gi (or more)")
    assert vcores.endswith("set yarn.maximumAllocation.vcores: 6 (or more)")


@pytest.mark.parametrize(
    ("text", "edit"),
    [(_spec(tm=("16Gi", 6)), {"maximumAllocation": {"memory": "16Gi", "vcores": 6}}),
     (_spec(jm=("10Gi", 5)), {"maximumAllocation": {"memory": "10Gi", "vcores": 5}})],
    ids=["taskmanager", "jobmanager"],
)  # fmt: skip
def test_raising_the_maximum_as_the_fix_says_gives_a_valid_spec_and_renders_it(
    text: str, edit: dict[str, object], write_spec: WriteSpec, tmp_path: Path
) -> None:
    doc = yaml.safe_load(text)
    doc["yarn"].update(edit)
    path = write_spec(yaml.safe_dump(doc, sort_keys=False), "fixed.yaml")
    assert _findings(write_spec, path.read_text()) == []
    tree = write_tree(files_for(path), tmp_path / "out")
    site = parse_configuration((tree / "yarn" / "resourcemanager" / "yarn-site.xml").read_text())
    maximum = edit["maximumAllocation"]
    assert isinstance(maximum, dict)
    assert site == [
        ("yarn.scheduler.maximum-allocation-mb", str(int(maximum["memory"].removesuffix("Gi")) * 1024)),
        ("yarn.scheduler.maximum-allocation-vcores", str(maximum["vcores"])),
    ]
    assert not (tree / "yarn" / "resourcemanager" / "cluster-node-labels.txt").exists()


def test_without_a_maximum_or_pool_sizes_no_resourcemanager_fragment_is_rendered(
    write_spec: WriteSpec, tmp_path: Path
) -> None:
    tree = write_tree(files_for(write_spec(_spec().replace(", cpu: 32, memory: 128Gi", ""))), tmp_path / "out")
    assert not (tree / "yarn" / "resourcemanager").exists()


def test_lowering_the_taskmanager_as_the_fix_says_gives_a_valid_spec(write_spec: WriteSpec) -> None:
    assert _findings(write_spec, _spec(tm=("8Gi", 4), maximum=None)) == []
    assert _findings(write_spec, _spec(tm=("12Gi", 6), maximum="{memory: 12Gi, vcores: 6}")) == []


def test_a_container_no_node_holds_either_is_one_finding_naming_the_size_that_fits(write_spec: WriteSpec) -> None:
    """Above the maximum and above every node: raising the maximum would not help, so the one
    finding (not also AP3511) names the size that fits both."""
    ((code, path, message),) = _findings(write_spec, _spec(tm=("200Gi", 4), maximum="{memory: 256Gi}"))
    assert (code, path) == ("AP3511", "flink.clusters[0].taskManager.memory")  # the maximum is no limit here
    ((code, path, message),) = _findings(write_spec, _spec(tm=("200Gi", 4), maximum="{memory: 8Gi}"))
    assert (code, path) == ("AP3513", "flink.clusters[0].taskManager.memory")
    assert message.endswith(
        "no node of the pools that may run it could hold it either (largest: 131072 MiB): use at most 8Gi"
    )
    ((code, path, message),) = _findings(write_spec, _spec(tm=("200Gi", 4)))  # derived: the largest offer
    assert (code, path) == ("AP3513", "flink.clusters[0].taskManager.memory")
    assert "from the largest NodeManager offer of the YARN pools" in message
    assert message.endswith("use at most 128Gi")
    assert _findings(write_spec, _spec(tm=("8Gi", 4))) == []


def test_a_maximum_below_the_minimum_allocation_is_the_one_finding(write_spec: WriteSpec) -> None:
    ((code, path, message),) = _findings(write_spec, _spec(tm=("4Gi", 2), maximum="{memory: 512Mi}"))
    assert (code, path) == ("AP3514", "yarn.maximumAllocation.memory")
    assert message.endswith("set yarn.maximumAllocation.memory to at least 4Gi")
    assert _findings(write_spec, _spec(tm=("4Gi", 2), maximum="{memory: 4Gi}")) == []


# --- Hadoop's and Flink's own classes ----------------------------------------------------------------


@pytest.mark.hadoop
def test_hadoop_computes_the_maximum_we_check_against(
    hadoop_probe: Probe, write_spec: WriteSpec, tmp_path: Path
) -> None:
    """``ResourceUtils.fetchMaximumAllocationFromConfig`` (what the CapacityScheduler reports) from
    yarn-default.xml alone gives Hadoop's defaults, and from the rendered fragment the spec's maximum."""
    tree = write_tree(files_for(write_spec(_spec(maximum="{memory: 24Gi, vcores: 12}"))), tmp_path / "out")
    site = tree / "yarn" / "resourcemanager" / "yarn-site.xml"
    records = hadoop_probe.run("maxalloc", "-", "maxalloc", str(site), conf_dir=tree / "yarn")
    assert [r for r in records if r[0] == "error"] == []
    got = {r[1]: r[2:] for r in records if r[0] == "maxalloc"}
    default = [str(HADOOP_MAXIMUM_ALLOCATION["memory"]), str(HADOOP_MAXIMUM_ALLOCATION["cpu"])]
    assert got["-"] == default * 2
    assert got[str(site)] == ["24576", "12"] * 2
    derived = write_tree(files_for(write_spec(_spec(), "derived.yaml")), tmp_path / "derived")
    site = derived / "yarn" / "resourcemanager" / "yarn-site.xml"
    records = hadoop_probe.run("maxalloc", str(site), conf_dir=derived / "yarn")
    got = {r[1]: r[2:] for r in records if r[0] == "maxalloc"}
    assert got[str(site)] == ["131072", "32"] * 2  # the l4 NodeManagers' offer (128Gi, 32 cores)


@pytest.mark.hadoop
def test_flink_computes_no_container_above_the_maximum_and_the_one_we_check_below_it(
    flink_yarn_probe: FlinkProbe, write_spec: WriteSpec, tmp_path: Path
) -> None:
    """Flink's ResourceManager driver steps (`FlinkYarnRequestProbe`) bounded by the ResourceManager's
    maximum: a 16Gi TaskManager gets no container under Hadoop's defaults (what AP3513 reports) and
    the container accelplane computes under the maximum the fix renders."""
    big = write_spec(_spec(tm=("16Gi", 6), maximum="{memory: 8Gi, vcores: 4}"), "big.yaml")
    fixed = write_spec(_spec(tm=("16Gi", 6), maximum="{memory: 16Gi, vcores: 6}"), "fixed.yaml")
    tree = write_tree(files_for(fixed), tmp_path / "out")
    conf = tree / "flink" / "scoring"
    site = tree / "yarn" / "resourcemanager" / "yarn-site.xml"
    under_default = flink_yarn_probe.requests(tree / "yarn", conf, rm_site="-")[str(conf)]
    assert "no container resource" in under_default["error"], under_default
    got = flink_yarn_probe.requests(tree / "yarn", conf, rm_site=site)[str(conf)]
    assert "error" not in got, got
    cluster = model_of(fixed).flink_clusters[0]
    tm, jm = yarn_container_request(cluster, "taskManager"), yarn_container_request(cluster, "jobManager")
    assert (got["resource:memory-mb"], got["resource:vcores"]) == (str(tm["memory"]), str(tm["cpu"]))
    assert (got["am:memory-mb"], got["am:vcores"]) == (str(jm["memory"]), str(jm["cpu"]))
    assert findings_of(big)  # and without the maximum the spec reports it


# --- What each NodeManager offers containers (nodePools[].memory / cpu) ------------------------------

NO_NODE_SIZE = _spec(tm=("12Gi", 6), maximum="{memory: 32Gi, vcores: 16}").replace(", cpu: 32, memory: 128Gi", "")


def test_a_pool_without_memory_offers_hadoops_default_and_a_bigger_container_is_one_finding(
    write_spec: WriteSpec,
) -> None:
    """A YARN pool that does not say how big its nodes are: its NodeManagers offer Hadoop's default
    (8192 MiB, 8 vcores), so a 12Gi TaskManager is never allocated even under a raised maximum.
    One finding per resource that does not fit, naming the default and the field to set."""
    found = _findings(write_spec, NO_NODE_SIZE)
    assert [(code, path) for code, path, _ in found] == [("AP3511", "flink.clusters[0].taskManager.memory")]
    assert found[0][2] == (
        "a TaskManager container requests memory 12Gi but the NodeManagers that may run it offer at most 8Gi "
        "(l4: 8Gi); pool(s) l4 set no memory, so their NodeManagers offer Hadoop's default "
        "yarn.nodemanager.resource.memory-mb (8192 MiB) and YARN would never allocate it: set nodePools[].memory "
        "of those pools to what their nodes can give containers (accelplane renders it into their yarn-site.xml), "
        "or use at most 8Gi"
    )


def test_setting_the_pools_memory_as_the_fix_says_renders_what_the_nodemanager_offers(
    write_spec: WriteSpec, tmp_path: Path
) -> None:
    fixed = write_spec(NO_NODE_SIZE.replace("nodes: 2,", "nodes: 2, memory: 64Gi, cpu: 16,"), "fixed.yaml")
    assert _findings(write_spec, fixed.read_text()) == []
    tree = write_tree(files_for(fixed), tmp_path / "out")
    site = dict(parse_configuration((tree / "yarn" / "yarn-site" / "l4.xml").read_text()))
    assert (site["yarn.nodemanager.resource.memory-mb"], site["yarn.nodemanager.resource.cpu-vcores"]) == ("65536", "16")
    unset = write_tree(files_for(write_spec(_spec(tm=("4Gi", 2)).replace(", cpu: 32, memory: 128Gi", ""), "u.yaml")),
                       tmp_path / "unset")  # fmt: skip
    assert not {"yarn.nodemanager.resource.memory-mb", "yarn.nodemanager.resource.cpu-vcores"} & set(
        dict(parse_configuration((unset / "yarn" / "yarn-site" / "l4.xml").read_text()))
    )


@pytest.mark.hadoop
def test_hadoop_reads_the_nodemanager_offer_we_check_against(
    hadoop_probe: Probe, write_spec: WriteSpec, tmp_path: Path
) -> None:
    """Hadoop's own keys and defaults: without the pool's figures a NodeManager falls back to
    ``YarnConfiguration.DEFAULT_NM_PMEM_MB`` / ``DEFAULT_NM_VCORES`` (yarn-default.xml says -1 and
    hardware detection is off), which is what AP3511 checks against; with them it reads what the spec says."""
    tree = write_tree(files_for(write_spec(_spec())), tmp_path / "out")
    site = tree / "yarn" / "yarn-site" / "l4.xml"
    records = hadoop_probe.run("nmoffer", "-", "nmoffer", str(site), conf_dir=tree / "yarn")
    assert [r for r in records if r[0] == "error"] == []
    got = {r[1]: r[2:] for r in records if r[0] == "nmoffer"}
    memory_key, vcores_key = "yarn.nodemanager.resource.memory-mb", "yarn.nodemanager.resource.cpu-vcores"
    defaults = [str(HADOOP_NODEMANAGER_OFFER["memory"]), str(HADOOP_NODEMANAGER_OFFER["cpu"])]
    assert got["-"] == [memory_key, "-1", vcores_key, "-1", *defaults, "false"]
    assert got[str(site)] == [memory_key, str(128 * 1024), vcores_key, "32", *defaults, "false"]
