"""`accelplane report`: capacity tables and the SVG chart (checked for content, not pixels)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from accelplane.cli import main
from accelplane.report.data import PoolGpus, QueueRow, Report, build_report
from accelplane.report.svg import BAR_WIDTH, BAR_X, render_svg
from accelplane.report.tables import render_report, to_json
from markdown_it import MarkdownIt

from tests.support.specs import model_of
from tests.support.stack_copies import STACKS

SVG = "{http://www.w3.org/2000/svg}"

MIG_SPEC = """
cluster: {name: mig-lab, platforms: [kubernetes]}
nodePools:
  - name: a100-mig
    nodes: 2
    gpu: {vendor: nvidia, model: NVIDIA A100-SXM4-80GB, perNode: 8, mig: {strategy: mixed, devices: {3g.40gb: 1, 1g.10gb: 4}}}
    labels: {accelplane.io/pool: a100-mig}
  - name: t4
    nodes: 3
    gpu: {vendor: nvidia, model: Tesla T4, perNode: 1, sharing: {strategy: timeSlicing, replicas: 4, renameByDefault: false}}
    labels: {accelplane.io/pool: t4}
  - name: cpu-only
    nodes: 5
queues:
  - name: lab
    capability: {cpu: 8, memory: 16Gi, pods: 10, nvidia.com/mig-3g.40gb: 16, nvidia.com/gpu: 6}
    deserved: {nvidia.com/mig-3g.40gb: 8}
  - name: etl
    capability: {cpu: 4, memory: 4Gi, pods: 5}
flink:
  clusters:
    - name: infer
      queue: lab
      image: registry.example.internal/flink-gpu:1.20.5-py3
      taskManager: {replicas: 6, gpu: {amount: 1, pool: a100-mig, resource: nvidia.com/mig-3g.40gb}}
"""


def prod() -> Report:
    return build_report(model_of(STACKS / "prod-eu.yaml"))


def test_prod_eu_capacity() -> None:
    report = prod()
    assert report.basis == "kubernetes"
    assert {r: report.cluster_total(r) for r in report.resources} == {"amd.com/gpu": 16, "nvidia.com/gpu": 32}
    streaming = next(r for r in report.queues if r.queue == "streaming" and r.resource == "nvidia.com/gpu")
    assert (streaming.capability, streaming.deserved, streaming.guarantee, streaming.cluster) == (
        24,
        16,
        8,
        32,
    )
    assert streaming.share("deserved") == 50 and streaming.share("capability") == 75
    assert streaming.depth == 1
    # parents before children, siblings by name
    assert [r.queue for r in report.queues if r.resource == "amd.com/gpu"] == [
        "gpu-platform",
        "batch",
        "streaming",
    ]
    fraud = next(f for f in report.flink if f.cluster == "fraud-scoring")
    assert (fraud.replicas, fraud.gpus_per_tm, fraud.total, fraud.resource, fraud.queue, fraud.pools) == (
        4,
        2,
        8,
        "nvidia.com/gpu",
        "streaming",
        ("a100",),
    )
    assert (fraud.queue_deserved, fraud.queue_capability) == (16, 24)


def test_yarn_cluster_counts_yarn_pools_and_requests_the_yarn_type() -> None:
    report = build_report(model_of(STACKS / "yarn-analytics.yaml"))
    assert report.basis == "yarn"
    assert report.cluster_total("nvidia.com/gpu") == 6 * 4 + 10 * 2
    (flink,) = report.flink
    assert flink.resource == "yarn.io/gpu" and flink.queue_resource == "nvidia.com/gpu"
    assert flink.total == 8 and flink.pools == ("v100",)


def test_mig_and_sharing_use_the_advertised_resources(write_spec: Callable[..., Path]) -> None:
    report = build_report(model_of(write_spec(MIG_SPEC)))
    assert {r: report.cluster_total(r) for r in report.resources} == {
        "nvidia.com/gpu": 3 * 1 * 4,
        "nvidia.com/mig-1g.10gb": 2 * 8 * 4,
        "nvidia.com/mig-3g.40gb": 2 * 8 * 1,
    }
    (infer,) = report.flink
    assert (infer.total, infer.resource, infer.queue_deserved, infer.queue_capability) == (
        6,
        "nvidia.com/mig-3g.40gb",
        8,
        16,
    )
    # rows only for resources a queue sets; queues without GPU limits are listed
    assert [(r.queue, r.resource) for r in report.queues] == [
        ("lab", "nvidia.com/gpu"),
        ("lab", "nvidia.com/mig-3g.40gb"),
    ]
    assert report.without_gpu_limits == ("etl",)
    text = render_report(report, "text")
    assert "  Without GPU capability/deserved/guarantee: etl\n" in text
    assert "  nvidia.com/mig-3g.40gb: 16 (a100-mig: 2 × 8)\n" in text
    # renameByDefault: false — the T4 slices keep the dedicated name and are counted apart
    assert report.slice_total("nvidia.com/gpu") == 12
    assert "  nvidia.com/gpu: 12 = 0 GPUs + 12 slices (t4: 3 × 4 slices)\n" in text
    assert to_json(report)["cluster_gpu_slices"] == {"nvidia.com/gpu": 12}
    assert (
        "lab    nvidia.com/mig-3g.40gb  16          8         —          16       50.0%       100.0%" in text
    )


def test_text_json_and_markdown() -> None:
    report = prod()
    text = render_report(report, "text")
    assert text.startswith(
        "accelplane report: prod-eu\n\nCluster GPUs (Kubernetes pools)\n  amd.com/gpu: 16 (mi300: 2 × 8)\n"
    )
    assert (
        "    streaming   nvidia.com/gpu  24          16        8          32       50.0%       75.0%" in text
    )
    data = json.loads(render_report(report, "json"))
    assert data["cluster_gpus"] == {"amd.com/gpu": 16, "nvidia.com/gpu": 32}
    assert {
        "queue": "batch",
        "resource": "nvidia.com/gpu",
        "deserved_pct": 25,
        "capability_pct": 50,
    }.items() <= next(
        q for q in data["queues"] if q["queue"] == "batch" and q["resource"] == "nvidia.com/gpu"
    ).items()
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(render_report(report, "markdown"))
    tables = sum(1 for t in tokens if t.type == "table_open")
    rows = sum(1 for t in tokens if t.type == "tr_open")
    assert tables == 4
    assert rows == (1 + 2) + (1 + len(report.queues)) + (1 + len(report.flink)) + (1 + len(report.groups))


def test_slot_groups_per_group_figures() -> None:
    """Each slot group's slots, what a slot asks for, and the GPUs all its slots take of the
    TaskManagers' GPUs of its resource: per model where a standalone cluster spans models (only
    TaskManagers on hosts with the model count), every TaskManager otherwise."""
    report = prod()
    rows = {(g.cluster, g.group): g for g in report.groups}
    scoring = rows[("fraud-scoring", "scoring")]
    assert (scoring.slots, scoring.gpu_per_slot, scoring.resource, scoring.gpu_total) == (8, 1, "gpu", 8)
    assert scoring.taskmanager_gpus == 8 and scoring.model == "NVIDIA A100-SXM4-80GB"
    default = rows[("fraud-scoring", "default")]
    assert (default.resource, default.gpu_total, default.taskmanager_gpus) == (None, 0, 0)
    text = render_report(report, "text")
    assert [
        "fraud-scoring", "scoring", "8", "cpu", "1,", "heap", "4Gi,", "managed", "1Gi,", "gpu", "1", "gpu", "(NVIDIA",
        "A100-SXM4-80GB)", "8", "8", "(100.0%)",
    ] in [line.split() for line in text.splitlines()]  # fmt: skip
    embed = rows[("embeddings-amd", "embed")]  # an operator cluster's groups (slot-groups.json in a ConfigMap)
    assert (embed.slots, embed.gpu_total) == (2, 8)
    multi = build_report(model_of(STACKS / "edge-multimodel.yaml"))
    by_group = {g.group: g for g in multi.groups}
    # hosts: gpu-a100-01 (A100), gpu-mix-01 (A100 + T4), gpu-t4-01 (T4), one TaskManager × 2 GPUs each
    assert (by_group["embed"].resource, by_group["embed"].gpu_total, by_group["embed"].taskmanager_gpus) == (
        "gpu-nvidiaa100sxm480gb", 4, 4
    )
    assert (by_group["detect"].resource, by_group["detect"].gpu_total, by_group["detect"].taskmanager_gpus) == (
        "gpu-teslat4", 2, 4
    )
    data = json.loads(render_report(multi, "json"))
    assert {"group": "detect", "gpus_used": 2, "taskmanager_gpus": 4, "gpu_model": "Tesla T4"}.items() <= next(
        g for g in data["slot_groups"] if g["group"] == "detect"
    ).items()
    assert "| edge-vision | detect | 2 | cpu 1, heap 1Gi, gpu 1 | gpu-teslat4 (Tesla T4) | 2 | 4 (50.0%) |" in (
        render_report(multi, "markdown")
    )


def _bars(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def test_svg_has_proportional_bars_per_queue() -> None:
    report = prod()
    svg = render_svg(report)
    assert svg == render_svg(report)  # deterministic
    root = _bars(svg)
    groups = root.findall(f"{SVG}g[@class='resource']")
    assert [g.get("data-resource") for g in groups] == ["amd.com/gpu", "nvidia.com/gpu"]
    for group in groups:
        resource = group.get("data-resource")
        queues = group.findall(f"{SVG}g[@class='queue']")
        assert [q.get("data-queue") for q in queues] == ["gpu-platform", "batch", "streaming"]
        scale = Decimal(group.get("data-scale", ""))
        for q in queues:
            label = q.find(f"{SVG}text")
            assert (
                label is not None
                and label.text is not None
                and label.text.strip("\u00a0") == q.get("data-queue")
            )
            row = next(r for r in report.queues if r.queue == q.get("data-queue") and r.resource == resource)
            for rect in q.findall(f"{SVG}rect"):
                value = Decimal(rect.get("data-value", ""))
                assert value == getattr(row, rect.get("class", ""))
                assert rect.get("x") == str(BAR_X)
                # one scale per resource: widths are proportional to GPUs
                assert abs(Decimal(rect.get("width", "")) - value * scale) <= Decimal("0.005")
        line = group.find(f"{SVG}line[@class='cluster']")
        total = int(group.get("data-cluster", ""))
        assert line is not None and abs(Decimal(line.get("x1", "")) - (BAR_X + total * scale)) <= Decimal(
            "0.005"
        )
    # the widest bar (gpu-platform capability = cluster total) spans the whole bar area
    top = groups[1].find(f"{SVG}g[@data-queue='gpu-platform']/{SVG}rect[@class='capability']")
    assert top is not None and Decimal(top.get("width", "")) == BAR_WIDTH
    streaming = groups[1].find(f"{SVG}g[@data-queue='streaming']")
    assert streaming is not None
    deserved = streaming.find(f"{SVG}rect[@class='deserved']")
    assert deserved is not None and Decimal(deserved.get("width", "")) == BAR_WIDTH / 2  # 16 of 32
    assert [r.get("class") for r in streaming.findall(f"{SVG}rect")] == [
        "capability",
        "deserved",
        "guarantee",
        "flink",
    ]
    assert "deserved 16 (50.0%) · capability 24 · Flink 8" in "".join(streaming.itertext())


def test_svg_escapes_text() -> None:
    name = 'a<b & "c"'
    report = Report(
        cluster="x&y",
        basis="kubernetes",
        pools=(PoolGpus("p<1>", "kubernetes", 2, (("nvidia.com/gpu", 4),)),),
        resources=("nvidia.com/gpu",),
        queues=(QueueRow(name, 0, "nvidia.com/gpu", Decimal(8), None, None, 8),),
        flink=(),
    )
    root = _bars(render_svg(report))
    queue = root.find(f".//{SVG}g[@class='queue']")
    assert queue is not None and queue.get("data-queue") == name
    assert name in "".join(queue.itertext())
    assert "x&y" in "".join(root.itertext()) and "p<1>: 2 × 4" in "".join(root.itertext())


def test_report_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "shares.svg"
    assert main(["report", str(STACKS / "prod-eu.yaml"), "--svg", str(svg)]) == 0
    assert capsys.readouterr().out == render_report(prod(), "text")
    assert svg.read_text(encoding="utf-8") == render_svg(prod())
    assert main(["report", str(STACKS / "prod-eu.yaml"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["cluster"] == "prod-eu"
    assert main(["report", str(tmp_path / "missing.yaml")]) == 1
    capsys.readouterr()
    assert main(["report", str(STACKS / "prod-eu.yaml"), "--svg", str(tmp_path / "no" / "dir.svg")]) == 2
    captured = capsys.readouterr()
    assert "cannot write SVG" in captured.err
    assert captured.out == ""  # fails before printing the report
