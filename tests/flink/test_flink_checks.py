"""Bad Flink specs: `accelplane validate` exits 1 and names file, path and what would be right."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main

from tests.flink.specs import KUBERNETES, STANDALONE, variant
from tests.support.validators import SOURCE_ROOT

TM = KUBERNETES["flink"]["clusters"][0]["taskManager"]


def _validate(
    tmp_path: Path, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[str]]:
    monkeypatch.chdir(tmp_path)
    Path("spec.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code = main(["validate", "spec.yaml"])
    err = capsys.readouterr().err.splitlines()
    return code, err


def _expect(
    tmp_path: Path,
    data: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *lines: str,
) -> None:
    code, err = _validate(tmp_path, data, monkeypatch, capsys)
    n = len(lines)
    assert err == [*lines, f"accelplane: {n} error{'s' if n != 1 else ''}"]
    assert code == 1


def _k8s(**cluster: Any) -> dict[str, Any]:
    return variant(KUBERNETES, **cluster)


def test_valid_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _validate(tmp_path, _k8s(), monkeypatch, capsys)
    assert (code, err) == (0, [])


def test_gpu_request_above_any_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On Kubernetes the device-plugin checks own this message; the Flink checks add no duplicate."""
    data = _k8s(taskManager={**TM, "replicas": 1, "gpu": {"amount": 12, "pool": "a100"}})
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.gpu.amount: 12 nvidia.com/gpu per TaskManager exceed what one "
        "node offers (pool 'a100': 8); a TaskManager never spans nodes",
    )


def test_gpu_request_above_any_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(STANDALONE, taskManager={"replicas": 1, "gpu": {"amount": 6, "pool": "hosts"}})
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.gpu.amount: 6 GPUs per TaskManager exceed the GPUs per node of "
        "every pool that can host it (hosts: 4 per node); a TaskManager runs on one host, so use at most 4",
    )


def test_gpus_in_total_and_queue_capability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s(taskManager={**TM, "replicas": 3, "gpu": {"amount": 8, "pool": "a100"}})
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].queue: PodGroup podgroup-job1 needs nvidia.com/gpu 24 (JobManager + 3 "
        "TaskManagers) but queue 'streaming' has capability 16; Volcano would never admit it: raise the queue's "
        "capability or shrink the cluster",
        "spec.yaml: flink.clusters[0].taskManager.replicas: 3 TaskManagers × 8 need 24 nvidia.com/gpu, but the "
        "pools that can host them have 16 in total; lower replicas or amount, or add nodes",
    )


def test_min_resources_above_queue_capability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s()
    data["queues"][0]["capability"]["cpu"] = 8
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].queue: PodGroup podgroup-job1 needs cpu 9 (JobManager + 2 TaskManagers) but "
        "queue 'streaming' has capability 8; Volcano would never admit it: raise the queue's capability or shrink "
        "the cluster",
    )


def test_queue_pods_capability(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s()
    data["queues"][0]["capability"]["pods"] = 2
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].queue: the cluster runs 3 pods (JobManager + 2 TaskManagers) but queue "
        "'streaming' allows 2; raise its pods capability or lower replicas",
    )


def test_queue_capability_without_the_gpu_resource(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s()
    del data["queues"][0]["capability"]["nvidia.com/gpu"]
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].queue: queue 'streaming' limits cpu, memory, pods but not nvidia.com/gpu, "
        "which this cluster requests; add nvidia.com/gpu to its capability (a partial capability blocks jobs, "
        "volcano#3426)",
    )


def test_undefined_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(queue="nightly"),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].queue: queue 'nightly' is not defined (defined: streaming)",
    )


def test_non_leaf_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s()
    data["queues"].append({"name": "streaming-eu", "parent": "streaming"})
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].queue: queue 'streaming' has child queues; jobs may only run in leaf queues",
    )


@pytest.mark.parametrize(
    ("key", "source"),
    [
        ("kubernetes.cluster-id", "name"),
        ("taskmanager.numberOfTaskSlots", "taskManager.slots"),
        ("kubernetes.container.image", "image"),  # deprecated alias of kubernetes.container.image.ref
        ("kubernetes.pod-template-file", "pod templates"),  # fallback of both pod-template keys
        ("external-resource.gpu.amount", "taskManager.gpu.amount"),
    ],
)
def test_conflicting_user_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], key: str, source: str
) -> None:
    _expect(
        tmp_path,
        _k8s(config={key: "x"}),
        monkeypatch,
        capsys,
        f"spec.yaml: flink.clusters[0].config.{key}: {key} is generated by accelplane from {source}; set {source} "
        f"instead of config.{key}",
    )


def test_gpu_prefix_reserved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(config={"external-resource.gpu.param.extra": "x"}),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].config.external-resource.gpu.param.extra: external-resource.gpu.* and "
        "external-resources are generated from taskManager.gpu and discovery; remove "
        "config.external-resource.gpu.param.extra",
    )


def test_operator_managed_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s(
        target="kubernetes-operator",
        mode="session",
        config={"kubernetes.namespace": "x", "high-availability.cluster-id": "y"},
    )
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].config.high-availability.cluster-id: high-availability.cluster-id is set by "
        "the Flink Kubernetes Operator from the FlinkDeployment that accelplane builds from name; set name instead "
        "of config.high-availability.cluster-id",
        "spec.yaml: flink.clusters[0].config.kubernetes.namespace: kubernetes.namespace is set by the Flink "
        "Kubernetes Operator from the FlinkDeployment that accelplane builds from namespace; set namespace instead "
        "of config.kubernetes.namespace",
    )


def test_wrong_coordination_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "external-resource.gpu.param.discovery-script.args"
    _expect(
        tmp_path,
        _k8s(config={key: "--enable-coordination --coordination-file /tmp/x"}),
        monkeypatch,
        capsys,
        f"spec.yaml: flink.clusters[0].config.{key}: '--enable-coordination' is not a flag of the GPU discovery "
        "script (Flink's docs show it by mistake; the flag is --enable-coordination-mode); remove this key and set "
        "discovery.coordination: true",
    )


def test_flink_conf_yaml_with_flink_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(version="2.1", configFormat="flink-conf.yaml"),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].configFormat: Flink 2.1 reads only config.yaml (flink-conf.yaml support was "
        "removed in 2.0); remove configFormat or set it to config.yaml (bin/migrate-config-file.sh converts an old "
        "file)",
    )


def test_config_yaml_with_flink_1_18(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(version="1.18", configFormat="config.yaml"),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].configFormat: Flink 1.18 reads only flink-conf.yaml (config.yaml exists from "
        "1.19 on); remove configFormat or set it to flink-conf.yaml",
    )


def test_legacy_value_with_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(version="1.18", config={"pipeline.name": "job#1"}),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].config.pipeline.name: flink-conf.yaml treats everything after '#' as a "
        "comment, so the value would be cut; remove the '#' (or use Flink >= 1.19 with config.yaml)",
    )


def test_hash_is_fine_in_config_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _validate(tmp_path, _k8s(config={"pipeline.name": "job#1"}), monkeypatch, capsys)
    assert (code, err) == (0, [])


def test_target_platform_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = copy.deepcopy(STANDALONE)
    data["cluster"]["platforms"] = ["kubernetes"]
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].target: target standalone runs on standalone, but cluster.platforms is "
        "[kubernetes]; add standalone to cluster.platforms or change the target",
    )


def test_pool_of_other_platform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(STANDALONE)
    data["nodePools"][0]["platform"] = "yarn"
    data["cluster"]["platforms"] = ["standalone", "yarn"]
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.gpu.pool: pool 'hosts' belongs to platform yarn, but target "
        "standalone runs its TaskManagers on standalone hosts; name a standalone pool",
    )


def test_memory_not_whole_mebibytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(jobManager={"cpu": 1, "memory": "2G"}),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].jobManager.memory: 2G is not a whole number of MiB; Flink requests container "
        "memory in whole MiB, so write it with Mi or Gi (e.g. 1600Mi, 4Gi)",
    )


def test_sharing_pool_with_coordination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s(taskManager={**TM, "gpu": {"amount": 1, "pool": "a100"}})
    data["nodePools"][0]["gpu"]["sharing"] = {"strategy": "timeSlicing", "replicas": 4}
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].discovery.coordination: pool 'a100' shares each GPU between containers "
        "(timeSlicing); coordination mode would give every physical GPU to a single TaskManager; set "
        "discovery.coordination: false for this cluster",
    )


def test_model_needs_gpu_feature_discovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s(taskManager={**TM, "gpu": {"amount": 1, "model": "NVIDIA A100-SXM4-80GB"}})
    data["devicePlugins"] = {"nvidia": {"gpuFeatureDiscovery": False}}
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.gpu.model: selecting a GPU model uses the node label "
        "nvidia.com/gpu.product, which GPU Feature Discovery sets; enable devicePlugins.nvidia.gpuFeatureDiscovery "
        "or name the pool instead of the model",
    )


def test_no_pool_with_that_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(
        STANDALONE, taskManager={"replicas": 1, "gpu": {"amount": 1, "model": "NVIDIA H100 80GB HBM3"}}
    )
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.gpu: no standalone node pool has 'NVIDIA H100 80GB HBM3' GPUs "
        "for this cluster's TaskManagers; add such a pool or fix taskManager.gpu (pool, vendor, model)",
    )


def test_named_pool_of_other_vendor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _k8s(taskManager={**TM, "gpu": {"amount": 1, "pool": "a100", "vendor": "amd"}})
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.gpu.vendor: pool 'a100' has nvidia GPUs, not amd; fix vendor or "
        "pool",
    )


def test_coordination_dir_would_hide_flink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(discovery={"coordinationFile": "/opt/gpu-claims"}),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].discovery.coordinationFile: the coordination file's directory /opt is mounted "
        "from the host into every TaskManager and would hide /opt/flink, /opt/flink/plugins/external-resource-gpu; "
        "put the file in its own directory such as /var/lib/accelplane/gpu-coordination",
    )


def test_yarn_maximum_allocation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(STANDALONE, target="yarn")
    data["cluster"]["platforms"] = ["yarn"]
    data["nodePools"][0]["platform"] = "yarn"
    data["yarn"] = {"resourceTypes": [{"name": "yarn.io/gpu", "maximumAllocation": 1}]}
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        # owned by yarn.check; the Flink checks add no second message
        "spec.yaml: flink.clusters[0].taskManager.gpu.amount: 2 GPUs per TaskManager exceed the "
        "maximum-allocation 1 of yarn.io/gpu (yarn.resourceTypes); the ResourceManager would reject the "
        "container — raise maximumAllocation to at least 2 or lower the amount",
    )


def test_yarn_fractional_vcores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(STANDALONE, target="yarn", jobManager={"cpu": "500m", "memory": "1Gi"})
    data["cluster"]["platforms"] = ["yarn"]
    data["nodePools"][0]["platform"] = "yarn"
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].jobManager.cpu: YARN allocates whole vcores; 500m is not an integer (write "
        "e.g. 1)",
    )


def test_standalone_hosts_overcommitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(STANDALONE)
    data["nodePools"][0]["nodes"] = 2  # the pool claims 2 nodes but lists one host
    data["flink"]["clusters"][0]["taskManager"]["replicas"] = 4
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].taskManager.replicas: 4 TaskManagers spread over the pools' hosts put 4 on "
        "gpu-host-1.example.internal, needing 8 GPUs where it has 4; lower replicas or add hosts",
    )


def test_operator_application_needs_jar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(target="kubernetes-operator"),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].job.jarURI: an application cluster on the Flink Kubernetes Operator needs "
        "job.jarURI (a FlinkDeployment without a job is a session cluster); add job.jarURI or set mode: session",
    )


def test_session_with_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(mode="session", job={"parallelism": 2}),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].job: a session cluster takes its jobs at submission time; remove job or set "
        "mode: application",
    )


def test_priority_class_on_yarn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = variant(STANDALONE, target="yarn", priorityClass="flink-critical")
    data["cluster"]["platforms"] = ["yarn"]
    data["nodePools"][0]["platform"] = "yarn"
    data["priorityClasses"] = [{"name": "flink-critical", "value": 10}]
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].priorityClass: PriorityClasses are Kubernetes objects and target yarn would "
        "ignore it; remove priorityClass from this cluster",
    )


def test_kubernetes_needs_flink_1_13(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect(
        tmp_path,
        _k8s(version="1.12"),
        monkeypatch,
        capsys,
        "spec.yaml: flink.clusters[0].version: Flink 1.12 has no pod templates, which carry the Volcano PodGroup "
        "annotation and schedulerName; use Flink 1.13 or newer on Kubernetes",
    )


def test_error_in_defaults_names_the_base_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A conflicting key inherited from flink.defaults of a base spec is reported in the base file."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "flink.yaml").write_text(
        yaml.safe_dump({"flink": {"defaults": {"config": {"kubernetes.namespace": "other"}}}}),
        encoding="utf-8",
    )
    data = {"extends": ["base/flink.yaml"], **_k8s()}
    _expect(
        tmp_path,
        data,
        monkeypatch,
        capsys,
        "base/flink.yaml: flink.defaults.config.kubernetes.namespace: kubernetes.namespace is generated by "
        "accelplane from namespace; set namespace instead of config.kubernetes.namespace",
    )


def test_validate_cli_subprocess(tmp_path: Path) -> None:
    """The same through the installed entry point in a fresh process (exit code 1, message on stderr)."""
    import subprocess
    import sys


    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_k8s(version="2.0", configFormat="flink-conf.yaml")), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == (
        "spec.yaml: flink.clusters[0].configFormat: Flink 2.0 reads only config.yaml (flink-conf.yaml support was "
        "removed in 2.0); remove configFormat or set it to config.yaml (bin/migrate-config-file.sh converts an old "
        "file)"
    )
