"""Bad Flink specs: `accelplane validate` exits 1 and names file, path and what would be right."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Mapping
from functools import reduce
from operator import getitem
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.flink.specs import KUBERNETES, STANDALONE, variant
from tests.support.paths import SOURCE_ROOT
from tests.support.specs import WriteSpec, expect_errors, expect_findings, run_validate

TM = KUBERNETES["flink"]["clusters"][0]["taskManager"]
DELETE = object()
"""As an `_edited` value: remove the key."""


def _k8s(**cluster: Any) -> dict[str, Any]:
    return variant(KUBERNETES, **cluster)


def _edited(data: Mapping[str, Any], *changes: tuple[tuple[str | int, ...], Any]) -> dict[str, Any]:
    """A deep copy of ``data`` with each ``(path, value)`` set (`DELETE` removes the key)."""
    out = copy.deepcopy(dict(data))
    for path, value in changes:
        *parents, last = path
        target = reduce(getitem, parents, out)
        if value is DELETE:
            del target[last]
        else:
            target[last] = value
    return out


def _on_yarn(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a standalone spec) with its platform and pool moved to YARN (cgroups v1: YARN isolates
    the GPUs without Docker, so no cgroups warning joins the findings under test)."""
    return _edited(
        data,
        (("cluster", "platforms"), ["yarn"]),
        (("nodePools", 0, "platform"), "yarn"),
        (("yarn",), {"cgroups": "v1"}),
    )


class Case(NamedTuple):
    id: str
    spec: dict[str, Any]
    errors: list[str]


CASES = [
    Case(
        # on Kubernetes the device-plugin checks own this message; the Flink checks add no duplicate
        "gpu-request-above-any-node",
        _k8s(taskManager={**TM, "replicas": 1, "gpu": {"amount": 12, "pool": "a100"}}),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu.amount: 12 nvidia.com/gpu per TaskManager exceed what "
            "one node offers (pool 'a100': 8); a TaskManager never spans nodes",
        ],
    ),
    Case(
        "gpu-request-above-any-host",
        variant(STANDALONE, taskManager={"replicas": 1, "gpu": {"amount": 6, "pool": "hosts"}}),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu.amount: 6 GPUs per TaskManager exceed the GPUs per node "
            "of every pool that can host it (hosts: 4 per node); a TaskManager runs on one host, so use at most 4",
        ],
    ),
    Case(
        "gpus-in-total-and-queue-capability",
        _k8s(taskManager={**TM, "replicas": 3, "gpu": {"amount": 8, "pool": "a100"}}),
        [
            "spec.yaml: flink.clusters[0].queue: PodGroup podgroup-job1 needs nvidia.com/gpu 24 (JobManager + 3 "
            "TaskManagers) but queue 'streaming' has capability 16; Volcano would never admit it: raise the "
            "queue's capability or shrink the cluster",
            "spec.yaml: flink.clusters[0].taskManager.replicas: 3 TaskManagers × 8 need 24 nvidia.com/gpu, but "
            "the pools that can host them have 16 in total; lower replicas or amount, or add nodes",
        ],
    ),
    Case(
        "min-resources-above-queue-capability",
        _edited(_k8s(), (("queues", 0, "capability", "cpu"), 8)),
        [
            "spec.yaml: flink.clusters[0].queue: PodGroup podgroup-job1 needs cpu 9 (JobManager + 2 TaskManagers) "
            "but queue 'streaming' has capability 8; Volcano would never admit it: raise the queue's capability "
            "or shrink the cluster",
        ],
    ),
    Case(
        "queue-pods-capability",
        _edited(_k8s(), (("queues", 0, "capability", "pods"), 2)),
        [
            "spec.yaml: flink.clusters[0].queue: the cluster runs 3 pods (JobManager + 2 TaskManagers) but queue "
            "'streaming' allows 2; raise its pods capability or lower replicas",
        ],
    ),
    Case(
        "queue-capability-without-the-gpu-resource",
        _edited(_k8s(), (("queues", 0, "capability", "nvidia.com/gpu"), DELETE)),
        [
            "spec.yaml: flink.clusters[0].queue: queue 'streaming' limits cpu, memory, pods but not "
            "nvidia.com/gpu, which cluster(s) 'job1' request; Volcano 1.15 leaves a dimension the capability does not "
            "set unlimited, so the queue's jobs may take every nvidia.com/gpu: add nvidia.com/gpu to its capability",
        ],
    ),
    Case(
        "queue-capability-without-the-gpu-resource-on-volcano-1.8",
        _edited(_k8s(), (("queues", 0, "capability", "nvidia.com/gpu"), DELETE), (("volcano",), {"version": "1.8"})),
        [
            "spec.yaml: flink.clusters[0].queue: queue 'streaming' limits cpu, memory, pods but not "
            "nvidia.com/gpu, which cluster(s) 'job1' request; add nvidia.com/gpu to its capability (on Volcano 1.8 a "
            "partial capability blocks jobs, volcano#3426)",
        ],
    ),
    Case(
        "undefined-queue",
        _k8s(queue="nightly"),
        ["spec.yaml: flink.clusters[0].queue: queue 'nightly' is not defined (defined: streaming)"],
    ),
    Case(
        "non-leaf-queue",
        _edited(
            _k8s(), (("queues",), [*KUBERNETES["queues"], {"name": "streaming-eu", "parent": "streaming"}])
        ),
        [
            "spec.yaml: flink.clusters[0].queue: queue 'streaming' has child queues; jobs may only run in leaf "
            "queues",
        ],
    ),
    *(
        Case(
            f"conflicting-user-key-{key}",
            _k8s(config={key: "x"}),
            [
                f"spec.yaml: flink.clusters[0].config.{key}: {key} is generated by accelplane from {source}; set "
                f"{source} instead of config.{key}",
            ],
        )
        for key, source in [
            ("kubernetes.cluster-id", "name"),
            ("taskmanager.numberOfTaskSlots", "taskManager.slots"),
            ("kubernetes.container.image", "image"),  # deprecated alias of kubernetes.container.image.ref
            ("kubernetes.pod-template-file", "pod templates"),  # fallback of both pod-template keys
            ("external-resource.gpu.amount", "taskManager.gpu.amount"),
        ]
    ),
    Case(
        "gpu-prefix-reserved",
        _k8s(config={"external-resource.gpu.param.extra": "x"}),
        [
            "spec.yaml: flink.clusters[0].config.external-resource.gpu.param.extra: external-resource.gpu.* and "
            "external-resources are generated from taskManager.gpu and discovery; remove "
            "config.external-resource.gpu.param.extra",
        ],
    ),
    Case(
        "operator-managed-keys",
        _k8s(
            target="kubernetes-operator",
            mode="session",
            config={"kubernetes.namespace": "x", "high-availability.cluster-id": "y"},
        ),
        [
            "spec.yaml: flink.clusters[0].config.high-availability.cluster-id: high-availability.cluster-id is set "
            "by the Flink Kubernetes Operator from the FlinkDeployment that accelplane builds from name; set name "
            "instead of config.high-availability.cluster-id",
            "spec.yaml: flink.clusters[0].config.kubernetes.namespace: kubernetes.namespace is set by the Flink "
            "Kubernetes Operator from the FlinkDeployment that accelplane builds from namespace; set namespace "
            "instead of config.kubernetes.namespace",
        ],
    ),
    Case(
        "wrong-coordination-flag",
        _k8s(
            config={
                "external-resource.gpu.param.discovery-script.args": "--enable-coordination --coordination-file /tmp/x"
            }
        ),
        [
            "spec.yaml: flink.clusters[0].config.external-resource.gpu.param.discovery-script.args: "
            "'--enable-coordination' is not a flag of the GPU discovery script (Flink's docs show it by mistake; "
            "the flag is --enable-coordination-mode); remove this key and set discovery.coordination: true",
        ],
    ),
    Case(
        "flink-conf-yaml-with-flink-2",
        _k8s(version="2.1", configFormat="flink-conf.yaml"),
        [
            "spec.yaml: flink.clusters[0].configFormat: Flink 2.1 reads only config.yaml (flink-conf.yaml support "
            "was removed in 2.0); remove configFormat or set it to config.yaml (bin/migrate-config-file.sh "
            "converts an old file)",
        ],
    ),
    Case(
        "config-yaml-with-flink-1.18",
        _k8s(version="1.18", configFormat="config.yaml"),
        [
            "spec.yaml: flink.clusters[0].configFormat: Flink 1.18 reads only flink-conf.yaml (config.yaml exists "
            "from 1.19 on); remove configFormat or set it to flink-conf.yaml",
        ],
    ),
    Case(
        "legacy-value-with-hash",
        _k8s(version="1.18", config={"pipeline.name": "job#1"}),
        [
            "spec.yaml: flink.clusters[0].config.pipeline.name: flink-conf.yaml treats everything after '#' as a "
            "comment, so the value would be cut; remove the '#' (or use Flink >= 1.19 with config.yaml)",
        ],
    ),
    Case(
        "target-platform-missing",
        _edited(STANDALONE, (("cluster", "platforms"), ["kubernetes"])),
        [
            "spec.yaml: flink.clusters[0].target: target standalone runs on standalone, but cluster.platforms is "
            "[kubernetes]; add standalone to cluster.platforms or change the target",
        ],
    ),
    Case(
        "pool-of-other-platform",
        _edited(
            STANDALONE,
            (("nodePools", 0, "platform"), "yarn"),
            (("cluster", "platforms"), ["standalone", "yarn"]),
            (("yarn",), {"cgroups": "v1"}),
        ),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu.pool: pool 'hosts' belongs to platform yarn, but target "
            "standalone runs its TaskManagers on standalone hosts; name a standalone pool",
        ],
    ),
    Case(
        "memory-not-whole-mebibytes",
        _k8s(jobManager={"cpu": 1, "memory": "2G"}),
        [
            "spec.yaml: flink.clusters[0].jobManager.memory: 2G is not a whole number of MiB; Flink requests "
            "container memory in whole MiB, so write it with Mi or Gi (e.g. 1600Mi, 4Gi)",
        ],
    ),
    Case(
        "sharing-pool-with-coordination",
        _edited(
            _k8s(taskManager={**TM, "gpu": {"amount": 1, "pool": "a100"}}),
            (("nodePools", 0, "gpu", "sharing"), {"strategy": "timeSlicing", "replicas": 4, "renameByDefault": False}),
        ),
        [
            "spec.yaml: flink.clusters[0].discovery.coordination: pool 'a100' shares each GPU between containers "
            "(timeSlicing), so the device plugin hands the same physical GPU to several TaskManagers; coordination "
            "mode has no effect there: the discovery script runs with --isolated-devices on Kubernetes, so each "
            "TaskManager takes the GPU its container was given and drops another pod's record for it, and the "
            "coordination file names only the last TaskManager started on each GPU; set discovery.coordination: "
            "false for this cluster",
        ],
    ),
    Case(
        "model-needs-gpu-feature-discovery",
        _edited(
            _k8s(taskManager={**TM, "gpu": {"amount": 1, "model": "NVIDIA A100-SXM4-80GB"}}),
            (("devicePlugins",), {"nvidia": {"gpuFeatureDiscovery": False}}),
        ),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu.model: selecting a GPU model uses the node label "
            "nvidia.com/gpu.product, which GPU Feature Discovery sets; enable "
            "devicePlugins.nvidia.gpuFeatureDiscovery or name the pool instead of the model",
        ],
    ),
    Case(
        "no-pool-with-that-model",
        variant(
            STANDALONE, taskManager={"replicas": 1, "gpu": {"amount": 1, "model": "NVIDIA H100 80GB HBM3"}}
        ),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu: no standalone node pool has 'NVIDIA H100 80GB HBM3' "
            "GPUs for this cluster's TaskManagers; add such a pool or fix taskManager.gpu (pool, vendor, model)",
        ],
    ),
    Case(
        "named-pool-of-other-vendor",
        _k8s(taskManager={**TM, "gpu": {"amount": 1, "pool": "a100", "vendor": "amd"}}),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu.vendor: pool 'a100' has nvidia GPUs, not amd; fix "
            "vendor or pool",
        ],
    ),
    Case(
        "coordination-dir-outside-accelplane-directories",
        _k8s(discovery={"coordinationFile": "/opt/gpu-claims"}),
        [
            "spec.yaml: flink.clusters[0].discovery.coordinationFile: the coordination file's directory /opt is not "
            "one accelplane owns (/var/lib/accelplane or /run/accelplane, accelplane-<suffix> there, or a directory "
            "below them), but accelplane gives it to the Flink user (flink:flink, mode 2770) and mounts it into "
            "TaskManagers; use e.g. /var/lib/accelplane/gpu-claims",
        ],
    ),
    Case(
        # owned by yarn.check; the Flink checks add no second message
        "yarn-maximum-allocation",
        _edited(
            _on_yarn(variant(STANDALONE, target="yarn")),
            (("yarn",), {"cgroups": "v1", "resourceTypes": [{"name": "yarn.io/gpu", "maximumAllocation": 1}]}),
        ),
        [
            "spec.yaml: flink.clusters[0].taskManager.gpu.amount: GPUs per TaskManager of cluster(s) edge-gpu (2) "
            "exceed the maximum-allocation 1 of yarn.io/gpu (yarn.resourceTypes); the ResourceManager would reject "
            "the containers — raise maximumAllocation to at least 2 or lower the amount",
        ],
    ),
    Case(
        "yarn-fractional-vcores",
        _on_yarn(variant(STANDALONE, target="yarn", jobManager={"cpu": "500m", "memory": "1Gi"})),
        [
            "spec.yaml: flink.clusters[0].jobManager.cpu: YARN allocates whole vcores; 500m is not an integer "
            "(write e.g. 1)",
        ],
    ),
    Case(
        "standalone-hosts-overcommitted",
        _edited(
            STANDALONE,
            (("nodePools", 0, "nodes"), 2),  # the pool claims 2 nodes but lists one host
            (("flink", "clusters", 0, "taskManager", "replicas"), 4),
        ),
        [
            "spec.yaml: flink.clusters[0].taskManager.replicas: 4 TaskManagers spread over the pools' hosts put 4 "
            "on gpu-host-1.example.internal, needing 8 GPUs where it has 4; lower replicas or add hosts",
        ],
    ),
    Case(
        "operator-application-needs-jar",
        _k8s(target="kubernetes-operator"),
        [
            "spec.yaml: flink.clusters[0].job.jarURI: an application cluster on the Flink Kubernetes Operator "
            "needs job.jarURI (a FlinkDeployment without a job is a session cluster); add job.jarURI or set mode: "
            "session",
        ],
    ),
    Case(
        "session-with-job",
        _k8s(mode="session", job={"parallelism": 2}),
        [
            "spec.yaml: flink.clusters[0].job: a session cluster takes its jobs at submission time; remove job or "
            "set mode: application",
        ],
    ),
    Case(
        "priority-class-on-yarn",
        _edited(
            _on_yarn(variant(STANDALONE, target="yarn", priorityClass="flink-critical")),
            (("priorityClasses",), [{"name": "flink-critical", "value": 10}]),
        ),
        [
            "spec.yaml: flink.clusters[0].priorityClass: PriorityClasses are Kubernetes objects and target yarn "
            "would ignore it; remove priorityClass from this cluster",
        ],
    ),
    Case(
        "kubernetes-needs-flink-1.13",
        _k8s(version="1.12"),
        [
            "spec.yaml: flink.clusters[0].version: Flink 1.12 has no pod templates, which carry the Volcano "
            "PodGroup annotation and schedulerName; use Flink 1.13 or newer on Kubernetes",
        ],
    ),
]

VALID = {
    "baseline": _k8s(),
    "hash-is-fine-in-config-yaml": _k8s(config={"pipeline.name": "job#1"}),
}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_spec(
    case: Case, write_spec: WriteSpec, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    expect_findings(write_spec(case.spec), capsys, monkeypatch, case.errors)


@pytest.mark.parametrize("spec", VALID.values(), ids=VALID.keys())
def test_valid(
    spec: dict[str, Any],
    write_spec: WriteSpec,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = run_validate(write_spec(spec), capsys, monkeypatch)
    assert (code, err) == (0, [])


def test_error_in_defaults_names_the_base_file(
    write_spec: WriteSpec, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A conflicting key inherited from flink.defaults of a base spec is reported in the base file."""
    write_spec({"flink": {"defaults": {"config": {"kubernetes.namespace": "other"}}}}, "base/flink.yaml")
    expect_errors(
        write_spec({"extends": ["base/flink.yaml"], **_k8s()}),
        capsys,
        monkeypatch,
        [
            "base/flink.yaml: flink.defaults.config.kubernetes.namespace: kubernetes.namespace is generated by "
            "accelplane from namespace; set namespace instead of config.kubernetes.namespace",
        ],
    )


def test_validate_cli_subprocess(tmp_path: Path, write_spec: WriteSpec) -> None:
    """The same through the installed entry point in a fresh process (exit code 1, message on stderr)."""
    path = write_spec(_k8s(version="2.0", configFormat="flink-conf.yaml"))
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "validate", path.name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": os.defpath},
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == (
        "spec.yaml: flink.clusters[0].configFormat: error AP4035: Flink 2.0 reads only config.yaml (flink-conf.yaml support was "
        "removed in 2.0); remove configFormat or set it to config.yaml (bin/migrate-config-file.sh converts an old "
        "file)"
    )


def test_podgroups_of_two_clusters_over_their_queue_are_one_finding(
    write_spec: WriteSpec, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One root cause, one finding (#39 item 4): the queue's capability stops two clusters, one of
    them in two resources; the finding names every PodGroup and resource."""
    data = _edited(_k8s(), (("queues", 0, "capability", "cpu"), 8), (("queues", 0, "capability", "memory"), "8Gi"))
    second = dict(copy.deepcopy(data["flink"]["clusters"][0]), name="job2")
    second["taskManager"]["cpu"] = 1
    second["taskManager"]["memory"] = "4Gi"
    data["flink"]["clusters"].append(second)
    code, err = run_validate(write_spec(data), capsys, monkeypatch)
    lines = [line for line in err if "PodGroup" in line]
    assert code == 1 and len(lines) == 1, "\n".join(err)
    assert lines[0].startswith("spec.yaml: flink.clusters[0].queue: ")
    assert "PodGroup podgroup-job1 needs cpu 9, memory" in lines[0]
    assert "; PodGroup podgroup-job2 needs memory" in lines[0]
    assert "but queue 'streaming' has capability cpu 8, memory 8Gi; Volcano would never admit them" in lines[0]


def test_two_clusters_over_their_queue_pods_are_one_finding(
    write_spec: WriteSpec, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One root cause, one finding (#39 item 4): the queue's pods capability stops two clusters."""
    data = _edited(_k8s(), (("queues", 0, "capability", "pods"), 2))
    data["flink"]["clusters"].append(dict(copy.deepcopy(data["flink"]["clusters"][0]), name="job2"))
    code, err = run_validate(write_spec(data), capsys, monkeypatch)
    lines = [line for line in err if "allows 2" in line]
    assert code == 1 and len(lines) == 1, "\n".join(err)
    assert lines[0].startswith("spec.yaml: flink.clusters[0].queue: ")
    assert "clusters job1 (3 pods: JobManager + 2 TaskManagers), job2 (3 pods" in lines[0]
