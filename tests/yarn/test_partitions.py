"""YARN queue shares per GPU-model partition (``queues[].gpuModels``, issue 29 item 4).

A team with A100 and T4 NodeManagers and CPU-only ones: an ETL queue that must never land on GPU
nodes, an A100 session queue and a T4 batch queue under one parent. Each queue gets capacity only
in the partitions of the models it lists, and the report shows the figures per partition.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from accelplane.derive.yarn_capacity import plan_queues
from accelplane.report.data import build_report
from accelplane.report.svg import render_svg
from accelplane.report.tables import render_report

from tests.support.specs import WriteSpec, findings_of, model_of
from tests.support.yarn_specs import parse_configuration, yarn_files

CS = "yarn.scheduler.capacity."
A100 = "accessible-node-labels.gpu-nvidiaa100sxm480gb."
T4 = "accessible-node-labels.gpu-teslat4."
TWO_MODELS = """\
cluster: {name: ml, platforms: [yarn]}
nodePools:
  - {name: a100, platform: yarn, nodes: 2, cpu: 96, memory: 1Ti, gpu: {vendor: nvidia, model: NVIDIA A100-SXM4-80GB, perNode: 8}}
  - {name: t4, platform: yarn, nodes: 4, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, model: Tesla T4, perNode: 2}}
  - {name: cpu, platform: yarn, nodes: 4, cpu: 64, memory: 256Gi}
queues:
  - {name: etl, weight: 2, capability: {cpu: 256, memory: 1Ti, pods: 100, nvidia.com/gpu: 0}}
  - {name: ml, weight: 3}
  - name: sessions
    parent: ml
    capability: {cpu: 192, memory: 2Ti, pods: 50, nvidia.com/gpu: 16}
    gpuModels: {NVIDIA A100-SXM4-80GB: {deserved: 12}}
  - name: batch
    parent: ml
    gpuModels: {Tesla T4: {deserved: 6, capability: 8}}
yarn:
  nodeLabels: true
  maximumAllocation: {memory: 32Gi, vcores: 8}
  resourceTypes: [{name: yarn.io/gpu, minimumAllocation: 0, maximumAllocation: 8}]
flink:
  clusters:
    - name: notebooks
      target: yarn
      mode: session
      queue: sessions
      taskManager: {replicas: 3, slots: 1, cpu: 8, memory: 32Gi, gpu: {amount: 4, model: NVIDIA A100-SXM4-80GB}}
"""


def _vector(value: str) -> dict[str, int]:
    return {k: int(v) for k, v in (p.split("=") for p in value.strip("[]").split(","))}


def _findings(write_spec: WriteSpec, text: str) -> list[tuple[str, str, bool]]:
    """(code, path, warning) of every finding with a code from the AP56xx range."""
    found = findings_of(write_spec(text))
    return sorted(
        (f.finding.code, f.path, f.is_warning)
        for f in found
        if f.finding is not None and f.finding.code.startswith("AP56")
    )


def test_each_queue_gets_only_the_partitions_of_its_models(write_spec: WriteSpec) -> None:
    props = dict(parse_configuration(yarn_files(write_spec(TWO_MODELS))["capacity-scheduler.xml"]))
    labels = {k.removeprefix(CS): v for k, v in props.items() if k.endswith(".accessible-node-labels")}
    assert labels == {
        "root.etl.accessible-node-labels": " ",  # Hadoop's "no label"; unset would inherit root's *
        "root.ml.accessible-node-labels": "gpu-nvidiaa100sxm480gb,gpu-teslat4",
        "root.ml.sessions.accessible-node-labels": "gpu-nvidiaa100sxm480gb",
        "root.ml.batch.accessible-node-labels": "gpu-teslat4",
    }
    # the CPU-only queue has no capacity in any GPU partition, not even 40 % of their memory
    assert not [k for k in props if k.startswith(f"{CS}root.etl.accessible-node-labels.")]
    # ml holds every A100 and T4 (its only sibling lists no model); below it each child its own model:
    # the T4 queue takes no A100 share, so the A100 session queue gets the 12 A100s it deserves
    assert _vector(props[f"{CS}root.ml.{A100}capacity"]) == {"memory": 2 * 1024 * 1024, "vcores": 192, "yarn.io/gpu": 16}
    assert _vector(props[f"{CS}root.ml.sessions.{A100}capacity"]) == {
        "memory": 2 * 1024 * 1024 * 12 // 16,
        "vcores": 192 * 12 // 16,
        "yarn.io/gpu": 12,
    }
    assert _vector(props[f"{CS}root.ml.sessions.{A100}maximum-capacity"]) == {
        "memory": 2 * 1024 * 1024,
        "vcores": 192,
        "yarn.io/gpu": 16,
    }
    assert f"{CS}root.ml.batch.{A100}capacity" not in props
    assert _vector(props[f"{CS}root.ml.batch.{T4}capacity"]) == {"memory": 4 * 128 * 1024 * 6 // 8, "vcores": 96, "yarn.io/gpu": 6}
    assert _vector(props[f"{CS}root.ml.batch.{T4}maximum-capacity"])["yarn.io/gpu"] == 8
    assert f"{CS}root.ml.sessions.{T4}capacity" not in props
    # the default partition (CPU-only NodeManagers) is shared by weight as before: etl 2 of 5
    assert _vector(props[f"{CS}root.etl.capacity"]) == {"memory": 4 * 256 * 1024 * 2 // 5, "vcores": 102, "yarn.io/gpu": 0}


def test_access_without_amounts_is_a_weight_share_in_percentage_mode(write_spec: WriteSpec) -> None:
    text = TWO_MODELS.replace(", nvidia.com/gpu: 0}}", "}}").replace(
        "    capability: {cpu: 192, memory: 2Ti, pods: 50, nvidia.com/gpu: 16}\n", ""
    )
    text = text.replace("{deserved: 12}", "{}").replace("{deserved: 6, capability: 8}", "{}")
    text = text.replace("  - {name: etl, weight: 2, capability: {cpu: 256, memory: 1Ti, pods: 100}}\n",
                        "  - {name: etl, weight: 2}\n  - {name: lab, weight: 1, gpuModels: {Tesla T4: {}}}\n")
    plan = plan_queues(model_of(write_spec(text)))
    assert plan.mode == "percentage"
    props = {p.name: p.value for p in plan.properties}
    # T4s: ml (weight 3) and lab (weight 1) share them; etl has none; A100s: ml alone
    assert props[f"{CS}root.ml.{T4}capacity"] == "75"
    assert props[f"{CS}root.lab.{T4}capacity"] == "25"
    assert props[f"{CS}root.ml.{A100}capacity"] == "100"
    assert f"{CS}root.lab.{A100}capacity" not in props
    assert f"{CS}root.etl.{T4}capacity" not in props
    assert props[f"{CS}root.ml.sessions.{A100}capacity"] == "100"


def test_a_clean_two_model_spec_has_no_partition_findings(write_spec: WriteSpec) -> None:
    assert _findings(write_spec, TWO_MODELS) == []


BARE = TWO_MODELS.replace(
    "  - {name: etl, weight: 2, capability: {cpu: 256, memory: 1Ti, pods: 100, nvidia.com/gpu: 0}}",
    "  - {name: etl, weight: 2, deserved: {nvidia.com/gpu: 4}, capability: {nvidia.com/gpu: 6}}",
)
"""A GPU queue that lists no gpuModels (#39 item 2)."""


def test_a_gpu_queue_without_gpu_models_may_use_every_gpu_partition_split_by_their_gpus(
    write_spec: WriteSpec,
) -> None:
    """Its deserved 4 and capability 6 GPUs are split across the A100 (16 GPUs) and T4 (8 GPUs)
    partitions in proportion to their GPUs (largest remainder): 3 + 1 and 4 + 2."""
    path = write_spec(BARE)
    assert _findings(write_spec, BARE) == []
    props = dict(parse_configuration(yarn_files(path)["capacity-scheduler.xml"]))
    assert props[f"{CS}root.etl.accessible-node-labels"] == "gpu-nvidiaa100sxm480gb,gpu-teslat4"
    assert _vector(props[f"{CS}root.etl.{A100}capacity"])["yarn.io/gpu"] == 3
    assert _vector(props[f"{CS}root.etl.{T4}capacity"])["yarn.io/gpu"] == 1
    assert _vector(props[f"{CS}root.etl.{A100}maximum-capacity"])["yarn.io/gpu"] == 4
    assert _vector(props[f"{CS}root.etl.{T4}maximum-capacity"])["yarn.io/gpu"] == 2
    # ml keeps the rest of each partition; its children as before
    assert _vector(props[f"{CS}root.ml.{A100}capacity"])["yarn.io/gpu"] == 13
    assert _vector(props[f"{CS}root.ml.sessions.{A100}capacity"])["yarn.io/gpu"] == 12
    report = build_report(model_of(path))
    assert {(r.label, r.queue): r.capacity_gpus for r in report.partitions if r.queue == "etl"} == {
        ("gpu-nvidiaa100sxm480gb", "etl"): 3,
        ("gpu-teslat4", "etl"): 1,
    }
    assert "etl" not in report.without_partition
    # a CPU-only queue (no GPU amount, or 0) still gets none; gpuModels restricts
    restricted = BARE.replace("capability: {nvidia.com/gpu: 6}}", "capability: {nvidia.com/gpu: 6}, gpuModels: {Tesla T4: {deserved: 1}}}")
    props = dict(parse_configuration(yarn_files(write_spec(restricted, "r.yaml"))["capacity-scheduler.xml"]))
    assert props[f"{CS}root.etl.accessible-node-labels"] == "gpu-teslat4"


def test_findings_a_team_gets(write_spec: WriteSpec) -> None:
    # a model name no YARN pool has (a typo): the share would give nothing
    assert _findings(write_spec, TWO_MODELS.replace("gpuModels: {Tesla T4:", "gpuModels: {T4:")) == [
        ("AP5602", "queues[3].gpuModels.T4", False),
        # and so nobody may use the T4s
        ("AP5606", "yarn.nodeLabels", True),
    ]
    # deserved beyond what the partition has
    assert _findings(write_spec, TWO_MODELS.replace("{deserved: 12}", "{deserved: 20}")) == [
        ("AP5601", "queues[2].gpuModels.NVIDIA A100-SXM4-80GB.deserved", False)
    ]
    # deserved above capability
    assert _findings(write_spec, TWO_MODELS.replace("{deserved: 6, capability: 8}", "{deserved: 6, capability: 4}")) == [
        ("AP5607", "queues[3].gpuModels.Tesla T4.deserved", True)
    ]
    # the Flink cluster's queue may not use its TaskManagers' partition
    assert _findings(write_spec, TWO_MODELS.replace("      queue: sessions\n", "      queue: batch\n")) == [
        ("AP5605", "flink.clusters[0].queue", False)
    ]
    # a GPU amount on a parent queue whose queues list no model and give themselves no GPU reaches
    # no partition: one finding for the queue, naming both fields
    parent = TWO_MODELS.replace(
        "  - {name: etl, weight: 2, capability: {cpu: 256, memory: 1Ti, pods: 100, nvidia.com/gpu: 0}}\n",
        "  - {name: etl, weight: 2, deserved: {nvidia.com/gpu: 4}, capability: {nvidia.com/gpu: 8}}\n"
        "  - {name: etl-daily, parent: etl}\n",
    )
    found = findings_of(write_spec(parent))
    ((path, message),) = [(f.path, f.message) for f in found if f.finding and f.finding.code == "AP5604"]
    assert path == "queues[0].deserved.nvidia.com/gpu"
    assert "deserved nvidia.com/gpu: 4, capability nvidia.com/gpu: 8" in message
    # gpuModels without node labels has no effect: one finding for both queues, where labels are enabled
    assert ("AP5603", "yarn.nodeLabels", True) in _findings(
        write_spec,
        TWO_MODELS.replace("  nodeLabels: true\n", "").replace(
            "gpu: {amount: 4, model: NVIDIA A100-SXM4-80GB}", "gpu: {amount: 4}"
        ),
    )


def test_two_idle_partitions_are_one_finding(write_spec: WriteSpec) -> None:
    """One path, one finding (#39 item 4): both models misspelt leave both partitions idle."""
    text = TWO_MODELS.replace("gpuModels: {Tesla T4:", "gpuModels: {T4:").replace(
        "gpuModels: {NVIDIA A100-SXM4-80GB: {deserved: 12}}", "gpuModels: {A100: {deserved: 12}}"
    )
    found = [f for f in findings_of(write_spec(text)) if f.finding and f.finding.code == "AP5606"]
    assert [f.path for f in found] == ["yarn.nodeLabels"]
    assert "no queue lists GPU models 'NVIDIA A100-SXM4-80GB', 'Tesla T4' in gpuModels" in found[0].message
    assert "partitions gpu-nvidiaa100sxm480gb, gpu-teslat4 and their NodeManagers" in found[0].message


def test_report_shows_every_partition_apart(write_spec: WriteSpec) -> None:
    report = build_report(model_of(write_spec(TWO_MODELS)))
    assert [(r.label, r.queue, r.capacity_gpus, r.maximum_gpus, r.gpus) for r in report.partitions] == [
        ("gpu-nvidiaa100sxm480gb", "ml", 16, 16, 16),
        ("gpu-nvidiaa100sxm480gb", "sessions", 12, 16, 16),
        ("gpu-teslat4", "ml", 8, 8, 8),
        ("gpu-teslat4", "batch", 6, 8, 8),
    ]
    assert report.without_partition == ("etl",)
    text = render_report(report, "text")
    assert "YARN GPU partitions (capacity-scheduler.xml, per node label)" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["gpu-teslat4", "Tesla", "T4", "batch", "6", "8", "8", "75.0%", "384Gi,", "96"] in lines
    assert "  Without a GPU partition (CPU-only NodeManagers): etl" in text
    md = render_report(report, "markdown")
    assert "| gpu-nvidiaa100sxm480gb | NVIDIA A100-SXM4-80GB | \u00a0\u00a0sessions | 12 | 16 | 16 | 75.0% | 1536Gi, 144 |" in md
    data = json.loads(render_report(report, "json"))
    assert data["queues_without_yarn_partition"] == ["etl"]
    assert {(p["label"], p["queue"]): p["capacity_gpus"] for p in data["yarn_partitions"]} == {
        ("gpu-nvidiaa100sxm480gb", "ml"): 16,
        ("gpu-nvidiaa100sxm480gb", "sessions"): 12,
        ("gpu-teslat4", "ml"): 8,
        ("gpu-teslat4", "batch"): 6,
    }
    svg = ET.fromstring(render_svg(report))
    ns = "{http://www.w3.org/2000/svg}"
    groups = {g.get("data-label"): g for g in svg.iter(f"{ns}g") if g.get("class") == "partition"}
    assert sorted(groups) == ["gpu-nvidiaa100sxm480gb", "gpu-teslat4"]
    t4 = groups["gpu-teslat4"]
    bars = {
        (q.get("data-queue"), r.get("class")): r.get("data-value")
        for q in t4.iter(f"{ns}g")
        if q.get("class") == "queue"
        for r in q.iter(f"{ns}rect")
    }
    assert bars == {("ml", "capability"): "8", ("ml", "deserved"): "8", ("batch", "capability"): "8", ("batch", "deserved"): "6"}


def test_report_without_node_labels_has_no_partitions(write_spec: WriteSpec) -> None:
    text = TWO_MODELS.replace("  nodeLabels: true\n", "").replace(
        "gpu: {amount: 4, model: NVIDIA A100-SXM4-80GB}", "gpu: {amount: 4}"
    )
    report = build_report(model_of(write_spec(text)))
    assert report.partitions == () and report.without_partition == ()
    assert "YARN GPU partitions" not in render_report(report, "text")


def test_a_gpu_capability_of_0_leaves_no_share_of_the_gpu_nodes(write_spec: WriteSpec) -> None:
    # a queue that may use the T4 partition but caps its GPUs at 0 holds none of those nodes' memory
    text = TWO_MODELS.replace(
        "  - {name: ml, weight: 3}\n",
        "  - {name: ml, weight: 3}\n  - {name: probe, weight: 1, capability: {nvidia.com/gpu: 0}, gpuModels: {Tesla T4: {}}}\n",
    )
    props = {p.name: p.value for p in plan_queues(model_of(write_spec(text))).properties}
    assert _vector(props[f"{CS}root.probe.{T4}capacity"]) == {"memory": 0, "vcores": 0, "yarn.io/gpu": 0}
    assert _vector(props[f"{CS}root.probe.{T4}maximum-capacity"])["yarn.io/gpu"] == 0


def test_gpu_models_without_a_yarn_platform_are_one_finding(write_spec: WriteSpec) -> None:
    spec = """\
    cluster: {name: k, platforms: [kubernetes]}
    queues:
      - {name: a, gpuModels: {Tesla T4: {deserved: 2}}}
      - {name: b, gpuModels: {Tesla T4: {}}}
    """
    (finding,) = [f for f in findings_of(write_spec(spec)) if f.finding and f.finding.code == "AP5603"]
    assert finding.path == "queues[0].gpuModels"
    assert "queues 'a', 'b' list gpuModels" in finding.message and "no YARN platform" in finding.message
