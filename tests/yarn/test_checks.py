"""Bad YARN specs: `accelplane validate` exits 1 and names file, path and what would be right."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from accelplane.checks.yarn import check
from accelplane.cli import main
from accelplane.errors import Problem

from tests.support.specs import WriteSpec, expect_findings, findings_of, model_of
from tests.support.yarn_specs import BASE, without_gpu_models

RT = "  resourceTypes:\n    - {name: yarn.io/gpu, minimumAllocation: 0, maximumAllocation: 4}\n"
V100_REQUEST = "gpu: {amount: 2, model: Tesla V100-SXM2-32GB}"
NAME_RULE = (
    "Hadoop accepts an optional namespace of dot-separated letter/digit/dash groups and '/', then a letter "
    "followed by letters, digits, '_', '.' or '-'"
)


def _rt(extra: str) -> str:
    return BASE.replace(RT, RT + extra)


# (id, spec text, expected stderr lines without the "spec.yaml: " prefix)
CASES: list[tuple[str, str, list[str]]] = [
    (
        "units-on-builtin",
        BASE.replace(
            "{name: yarn.io/gpu, minimumAllocation: 0,",
            "{name: yarn.io/gpu, units: '', minimumAllocation: 0,",
        ),
        [
            "yarn.resourceTypes[0].units: yarn.io/gpu is built into Hadoop as a countable resource without units "
            "and ResourceUtils refuses any units for it; remove units"
        ],
    ),
    (
        "units-on-custom-type",
        _rt("    - {name: acme.com/npu, units: k}\n"),
        [
            "yarn.resourceTypes[1].units: GPU types count whole devices; with units 'k' Hadoop would convert the "
            "NodeManager amounts into 'k' (4 GPUs → 0k); remove units",
            "yarn.resourceTypes[1].name: resource type acme.com/npu is not provided by any YARN node pool nor "
            "requested by any Flink cluster on YARN (types in use: yarn.io/gpu); fix the name or remove the entry",
        ],
    ),
    (
        "reserved-name",
        _rt("    - {name: memory-mb, maximumAllocation: 8}\n"),
        [
            "yarn.resourceTypes[1].name: 'memory-mb' is one of Hadoop's mandatory resources (memory-mb, vcores) "
            "and cannot be declared in resource-types.xml; only list GPU types such as yarn.io/gpu"
        ],
    ),
    (
        "illegal-name",
        _rt("    - {name: com/acme/gpu}\n"),
        [f"yarn.resourceTypes[1].name: 'com/acme/gpu' is not a valid YARN resource type name ({NAME_RULE})"],
    ),
    (
        "unused-type",
        _rt("    - {name: yarn.io/gpu-teslav100, maximumAllocation: 4}\n"),
        [
            "yarn.resourceTypes[1].name: resource type yarn.io/gpu-teslav100 is not provided by any YARN node pool "
            "nor requested by any Flink cluster on YARN (types in use: yarn.io/gpu); fix the name or remove the "
            "entry"
        ],
    ),
    (
        "per-model-types-are-gone",
        BASE.replace("  nodeLabels: true\n", "  perModelTypes: true\n  nodeLabels: true\n"),
        [
            "yarn.perModelTypes: per-model resource types (yarn.io/gpu-<model>) take the GPU away from YARN's GPU "
            "plugin, which assigns and isolates devices only for containers requesting yarn.io/gpu; remove "
            "perModelTypes and set yarn.nodeLabels: true to place TaskManagers by GPU model with one node "
            "partition per model (docs/yarn.md)"
        ],
    ),
    (
        "model-request-without-node-labels",
        without_gpu_models(BASE.replace("  nodeLabels: true\n", "")),
        [
            "flink.clusters[0].taskManager.gpu: these TaskManagers ask for model 'Tesla V100-SXM2-32GB', but a "
            "YARN container requests only yarn.io/gpu and could be placed on pools mi, t4 too; set "
            "yarn.nodeLabels: true (one node partition per GPU model, yarn.taskmanager.node-label) or remove the "
            "model/pool"
        ],
    ),
    (
        "request-spanning-partitions",
        BASE.replace(V100_REQUEST, "gpu: {amount: 2, vendor: nvidia}"),
        [
            "flink.clusters[0].taskManager.gpu: the pools that may host these TaskManagers lie in several node "
            "partitions (gpu-teslat4, gpu-teslav100sxm232gb) and a container request names one node label; set "
            "taskManager.gpu.model or pool"
        ],
    ),
    (
        "node-labels-without-default-partition",
        BASE[: BASE.index("  - name: cpu\n")] + BASE[BASE.index("queues:") :],
        [
            "yarn.nodeLabels: every YARN node pool is in a GPU-model partition, but ApplicationMasters (Flink "
            "clusters scoring) request no node label and run only in the default partition; add a YARN node pool "
            "without GPUs (or without a GPU model) for them, or give each Flink cluster config "
            "yarn.application.node-label naming the partition its JobManager should run in"
        ],
    ),
    (
        "application-label-names-no-partition",
        BASE.replace("      queue: stream\n", "      queue: stream\n      config: {yarn.application.node-label: gpu-a100}\n"),
        [
            "flink.clusters[0].config.yarn.application.node-label: no NodeManager is in partition 'gpu-a100' "
            "(partitions: gpu-amdinstinctmi300xoam, gpu-teslat4, gpu-teslav100sxm232gb; the default partition is "
            "the pools without a GPU model), so the ApplicationMaster (JobManager) would never start; name one of "
            "them or remove this key for the default partition"
        ],
    ),
    (
        "application-label-without-node-labels",
        without_gpu_models(BASE).replace("  nodeLabels: true\n", "").replace(
            "      queue: stream\n", "      queue: stream\n      config: {yarn.application.node-label: gpu-teslat4}\n"
        ).replace("gpu: {amount: 2, model: Tesla V100-SXM2-32GB}}", "gpu: {amount: 2, pool: v100}}"),
        [
            "flink.clusters[0].config.yarn.application.node-label: the ApplicationMaster (JobManager) would "
            "request node label 'gpu-teslat4', but node labels are off (yarn.nodeLabels), and the ResourceManager "
            "rejects a request with a label expression when labels are not enabled; remove this key or set "
            "yarn.nodeLabels: true",
            "flink.clusters[0].taskManager.gpu: these TaskManagers ask for pool 'v100', but a YARN container "
            "requests only yarn.io/gpu and could be placed on pools mi, t4 too; set yarn.nodeLabels: true (one node "
            "partition per GPU model, yarn.taskmanager.node-label) or remove the model/pool",
        ],
    ),
    (
        "node-labels-without-models",
        without_gpu_models(BASE)
        .replace("model: Tesla V100-SXM2-32GB, ", "")
        .replace("model: Tesla T4, ", "")
        .replace("model: AMD Instinct MI300X OAM, ", "")
        .replace(V100_REQUEST, "gpu: {amount: 2, vendor: nvidia}"),
        [
            "yarn.nodeLabels: no YARN node pool has GPUs with a model, so there is no partition to place "
            "TaskManagers in; set gpu.model on the YARN GPU pools or remove nodeLabels"
        ],
    ),
    (
        "minimum-allocation",
        BASE.replace("minimumAllocation: 0", "minimumAllocation: 1"),
        [
            "yarn.resourceTypes[0].minimumAllocation: the ResourceManager raises every container request to the "
            "minimum allocation, so every container (ApplicationMasters and JobManagers too) would hold 1 "
            "yarn.io/gpu; use 0"
        ],
    ),
    (
        "amount-above-maximum-allocation",
        BASE.replace(
            "minimumAllocation: 0, maximumAllocation: 4}", "minimumAllocation: 0, maximumAllocation: 1}"
        ),
        [
            "flink.clusters[0].taskManager.gpu.amount: GPUs per TaskManager of cluster(s) scoring (2) exceed "
            "the maximum-allocation 1 of yarn.io/gpu (yarn.resourceTypes); the ResourceManager would reject the "
            "containers — raise maximumAllocation to at least 2 or lower the amount"
        ],
    ),
    (
        "amount-above-gpus-per-node",
        BASE.replace("maximumAllocation: 4", "maximumAllocation: 8").replace(
            V100_REQUEST, V100_REQUEST.replace("amount: 2", "amount: 6")
        ),
        [
            "flink.clusters[0].taskManager.gpu.amount: 6 GPUs per TaskManager do not fit on any NodeManager offering "
            "yarn.io/gpu (per node: v100: 4); a container cannot span nodes — use at most 4"
        ],
    ),
    (
        "model-without-pool",
        BASE.replace(V100_REQUEST, "gpu: {amount: 1, model: Tesla A100}"),
        [
            "flink.clusters[0].taskManager.gpu: Flink cluster 'scoring' asks for GPUs of model 'Tesla A100' on "
            "YARN but no YARN node pool has them (YARN pools with GPUs: mi (AMD Instinct MI300X OAM), t4 (Tesla T4), "
            "v100 (Tesla V100-SXM2-32GB))"
        ],
    ),
    (
        "mig-on-yarn",
        BASE.replace(
            "model: Tesla V100-SXM2-32GB, perNode: 4}",
            "model: Tesla V100-SXM2-32GB, perNode: 4, mig: {strategy: single, devices: {1g.10gb: 7}}}",
        ),
        [
            "nodePools[0].gpu.mig.strategy: YARN's GPU plugin hands out whole GPUs (yarn.io/gpu); MIG is "
            "Kubernetes-only — use mig strategy none for a platform: yarn pool"
        ],
    ),
    (
        "sharing-on-yarn",
        BASE.replace(
            "model: Tesla V100-SXM2-32GB, perNode: 4}",
            "model: Tesla V100-SXM2-32GB, perNode: 4, sharing: {strategy: timeSlicing, replicas: 2}}",
        ),
        [
            "nodePools[0].gpu.sharing.strategy: YARN has no GPU sharing (time-slicing/MPS is a Kubernetes "
            "device-plugin feature) — use sharing strategy none for a platform: yarn pool"
        ],
    ),
    (
        "allowed-devices-on-amd",
        BASE.replace(
            "model: AMD Instinct MI300X OAM, perNode: 8}",
            "model: AMD Instinct MI300X OAM, perNode: 8, allowedDevices: ['0:0']}",
        ),
        [
            "nodePools[2].gpu.allowedDevices: allowedDevices configures YARN's GPU plugin, which discovers NVIDIA "
            "GPUs only; remove it from this amd pool"
        ],
    ),
    (
        "allowed-devices-wrong",
        BASE.replace('["0:0", "2:3", "1:1"]', '["0:0", "0:1", "4:4", "5:5", "6:6"]'),
        [
            "nodePools[1].gpu.allowedDevices: 5 allowed devices but perNode is 4; list at most 4",
            "nodePools[1].gpu.allowedDevices: each GPU index and each minor number may appear only once in "
            "allowedDevices",
            "nodePools[1].gpu.allowedDevices: GPU index 4, 5, 6 does not exist on a node with perNode 4 "
            "(nvidia-smi indexes are 0..3)",
        ],
    ),
    (
        "model-makes-illegal-type",
        BASE.replace("model: Tesla T4,", "model: NVIDIA A100 (80GB),").replace(
            "Tesla T4: {}", "NVIDIA A100 (80GB): {}"
        ),
        [
            "nodePools[1].gpu.model: GPU model 'NVIDIA A100 (80GB)' gives the YARN node label "
            "'gpu-nvidiaa100(80gb)', which Hadoop rejects (node labels are letters, digits, '-' and '_', starting "
            "with a letter or digit, at most 255 characters); write the model without such characters"
        ],
    ),
    (
        "docker-runc-with-nvidia",
        BASE.replace("runtime: nvidia", "runtime: runc"),
        [
            "yarn.docker.runtime: YARN's nvidia-docker-v2 GPU plugin starts GPU containers with --runtime=nvidia, "
            "and pools t4, v100 have NVIDIA GPUs; set yarn.docker.runtime: nvidia"
        ],
    ),
    (
        "yarn-pool-without-yarn-platform",
        without_gpu_models(BASE[: BASE.index("flink:")]).replace("platforms: [yarn]", "platforms: [kubernetes]"),
        [
            f"nodePools[{i}].platform: node pool {name!r} is on platform yarn but cluster.platforms does not list "
            "yarn; add yarn to cluster.platforms or move the pool to another platform"
            for i, name in ((0, "v100"), (1, "t4"), (2, "mi"), (3, "cpu"))
        ],
    ),
    (
        "flink-on-yarn-without-yarn-platform",
        "cluster: {name: k, platforms: [kubernetes]}\nflink:\n  clusters:\n    - {name: j, target: yarn}\n",
        [
            "flink.clusters[0].target: Flink cluster 'j' targets yarn but cluster.platforms does not list yarn; add "
            "yarn to cluster.platforms or choose another target"
        ],
    ),
    (
        "absolute-queues-need-pool-sizes",
        BASE.replace("    cpu: 48\n    memory: 192Gi\n", "").replace(
            "{name: batch, weight: 1,", "{name: batch, weight: 1, deserved: {cpu: 4},"
        ),
        [
            "nodePools[3]: YARN node pool 'cpu' must set cpu and memory: queues limit cpu/memory/GPUs, so "
            "capacity-scheduler.xml uses absolute resources computed from the pools' totals"
        ],
    ),
    (
        "deserved-beyond-the-cluster",
        BASE.replace(
            "{name: stream, weight: 2,", "{name: stream, weight: 2, deserved: {nvidia.com/gpu: 100},"
        ),
        [
            "queues[0].deserved: the deserved amounts of the queues under root ('stream') add up to more than "
            "there is: yarn.io/gpu 100 > 25 in the whole cluster; lower deserved to fit"
        ],
    ),
    (
        "queue-names-undeclared-yarn-type",
        BASE.replace("{name: batch, weight: 1,", "{name: batch, weight: 1, deserved: {yarn.io/gpu-h100: 1},"),
        [
            "queues[1].deserved.yarn.io/gpu-h100: yarn.io/gpu-h100 is not a YARN resource type of this cluster "
            "(declared: yarn.io/gpu); to reserve GPUs of one model use yarn.nodeLabels (a partition per model) "
            "and nvidia.com/gpu"
        ],
    ),
    (
        "queue-without-memory",
        BASE.replace("{name: batch, weight: 1,", "{name: batch, weight: 1, capability: {memory: 0},"),
        [
            "queues[1]: queue 'batch' would get 0 MiB of memory as its YARN capacity; Hadoop ignores an absolute "
            "capacity without memory — give it a larger weight, deserved memory or capability memory (or more "
            "memory to the YARN node pools)"
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_spec(
    text: str,
    expected: list[str],
    tmp_path: Path,
    write_spec: WriteSpec,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert text != BASE
    path = write_spec(text)
    expect_findings(path, capsys, monkeypatch, sorted(f"spec.yaml: {line}" for line in expected))
    out = tmp_path / "out"
    rendered = main(["render", "spec.yaml", "--out", str(out)])  # warnings alone render
    assert rendered == main(["validate", "-q", "spec.yaml"])
    assert out.exists() == (rendered == 0)


def test_base_spec_is_valid(write_spec: WriteSpec) -> None:
    assert main(["validate", "-q", str(write_spec(BASE))]) == 0


def test_amount_check_at_model_level_uses_yarn_gpu_type(write_spec: WriteSpec) -> None:
    """The TaskManager amount is checked against the bounds of the type `yarn_gpu_type` returns."""
    import dataclasses

    from accelplane.derive.yarn_types import type_bounds
    from accelplane.model import Spec

    spec: Spec = model_of(write_spec(BASE))
    assert list(check(spec)) == []
    gpu = type_bounds(spec)["yarn.io/gpu"]
    tight = dataclasses.replace(gpu, maximum_allocation=1)
    yarn = dataclasses.replace(spec.yarn, resource_types=(tight,))  # type: ignore[arg-type]
    assert list(check(dataclasses.replace(spec, yarn=yarn))) == [
        Problem(
            ("flink", "clusters", 0, "taskManager", "gpu", "amount"),
            f"GPUs per TaskManager of cluster(s) {spec.flink_clusters[0].name} (2) exceed the maximum-allocation 1 "
            "of yarn.io/gpu (yarn.resourceTypes); the ResourceManager would reject the containers — raise "
            "maximumAllocation to at least 2 or lower the amount",
        )
    ]


def test_an_application_label_gives_the_jobmanager_a_partition(write_spec: WriteSpec) -> None:
    """Without a default-partition pool, a cluster whose JobManager runs in a GPU partition (Flink's
    yarn.application.node-label) is valid: its ApplicationMaster has NodeManagers."""
    text = BASE[: BASE.index("  - name: cpu\n")] + BASE[BASE.index("queues:") :]
    text = text.replace(
        "      queue: stream\n", "      queue: stream\n      config: {yarn.application.node-label: gpu-teslav100sxm232gb}\n"
    )
    assert main(["validate", "-q", str(write_spec(text))]) == 0


def test_a_type_maximum_below_several_clusters_is_one_finding_at_the_bound(write_spec: WriteSpec) -> None:
    """One root cause, one finding (#39 item 4): two clusters above yarn.resourceTypes' maximum."""
    doc = yaml.safe_load(BASE.replace("minimumAllocation: 0, maximumAllocation: 4}", "minimumAllocation: 0, maximumAllocation: 1}"))
    second = dict(doc["flink"]["clusters"][0], name="ranking")
    doc["flink"]["clusters"].append(second)
    found = [f for f in findings_of(write_spec(yaml.safe_dump(doc, sort_keys=False))) if f.finding and f.finding.code == "AP5021"]
    assert [f.path for f in found] == ["yarn.resourceTypes[0].maximumAllocation"]
    assert "cluster(s) ranking (2), scoring (2)" in found[0].message


UNLABELLED_TWO_MODELS = without_gpu_models(BASE).replace("  nodeLabels: true\n", "") + """\
    - name: ranking
      target: yarn
      mode: session
      image: registry.example.com/flink-gpu:1.20.1-py3
      queue: batch
      taskManager: {replicas: 1, slots: 1, cpu: 4, memory: 8Gi, gpu: {amount: 1, model: Tesla T4}}
"""


def test_models_unenforced_without_labels_are_one_finding_at_node_labels(write_spec: WriteSpec) -> None:
    """One root cause, one finding (#39 item 4): yarn.nodeLabels off stops two clusters' GPU models."""
    found = [f for f in findings_of(write_spec(UNLABELLED_TWO_MODELS)) if f.finding and f.finding.code == "AP5014"]
    assert [f.path for f in found] == ["yarn.nodeLabels"]
    assert "Flink clusters ranking (model 'Tesla T4'; also pools mi, v100); scoring (model 'Tesla V100-SXM2-32GB'" in found[0].message


def test_one_unenforced_model_stays_at_the_cluster(write_spec: WriteSpec) -> None:
    text = without_gpu_models(BASE).replace("  nodeLabels: true\n", "")
    found = [f for f in findings_of(write_spec(text)) if f.finding and f.finding.code == "AP5014"]
    assert [f.path for f in found] == ["flink.clusters[0].taskManager.gpu"]
    assert found[0].message.startswith("these TaskManagers ask for model") and found[0].message.endswith("or remove the model/pool")
