"""The capacity report as text, Markdown and JSON (`render_report` picks one).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from accelplane.display import escape_controls, escape_controls_json, md_text
from accelplane.finding_output import as_dict, text_line
from accelplane.quantity import format_quantity
from accelplane.report.data import FlavorRow, FlinkRow, GroupRow, PartitionRow, QueueRow, Report

# -- formatting ----------------------------------------------------------------------------------------


def show_number(value: Decimal | int | None) -> str:
    if value is None:
        return "—"
    return format_quantity(Decimal(value), binary=False)


def show_percent(value: Decimal | None) -> str:
    return "—" if value is None else f"{value.quantize(Decimal('0.1'))}%"


def pool_text(report: Report, resource: str) -> str:
    parts = [
        f"{p.pool}: {p.nodes} × {dict(p.per_node)[resource]}" + (" slices" if p.slices(resource) else "")
        for p in report.pools
        if dict(p.per_node).get(resource)
    ]
    return ", ".join(parts) if parts else "no pool advertises it"


def total_text(report: Report, resource: str) -> str:
    """``40`` or, when slices hide under the name, ``40 = 8 GPUs + 32 slices``."""
    total, slices = report.cluster_total(resource), report.slice_total(resource)
    return f"{total} = {total - slices} GPUs + {slices} slices" if slices else str(total)


def _basis_title(report: Report) -> str:
    return {"kubernetes": "Kubernetes pools", "yarn": "YARN pools"}.get(report.basis, "no GPU platform")


QUEUE_HEADER = [
    "Queue",
    "Resource",
    "Capability",
    "Deserved",
    "Guarantee",
    "Cluster",
    "Deserved %",
    "Capability %",
]
FLINK_HEADER = [
    "Flink cluster",
    "Target",
    "Queue",
    "Pools",
    "TMs × GPUs",
    "Total GPUs",
    "Requests",
    "Queue deserved",
    "Queue capability",
]


GROUP_HEADER = [
    "Flink cluster",
    "Slot group",
    "Slots",
    "Per slot",
    "GPU resource",
    "GPUs used",
    "Of TaskManager GPUs",
]


PARTITION_HEADER = [
    "Partition",
    "GPU model",
    "Queue",
    "GPUs guaranteed",
    "GPUs max",
    "Partition GPUs",
    "Guaranteed %",
    "Memory, vcores guaranteed",
]
PARTITION_TITLE = "YARN GPU partitions (capacity-scheduler.xml, per node label)"


def _partition_cells(row: PartitionRow, indent: str) -> list[str]:
    if row.percent is not None:  # percentage mode: a share of the parent's share
        guaranteed, maximum, share, rest = f"{show_number(row.percent)}% of parent", "100% of parent", "—", "—"
    else:
        guaranteed, maximum = show_number(row.capacity_gpus), show_number(row.maximum_gpus)
        share = show_percent(row.share())
        memory = format_quantity(Decimal(row.capacity_memory_mib or 0) * 2**20, binary=True)
        rest = f"{memory}, {row.capacity_vcores}"
    return [row.label, row.model, indent * row.depth + row.queue, guaranteed, maximum, str(row.gpus), share, rest]


def _partition_lines(
    report: Report, indent: str, table: Callable[[list[str], list[list[str]]], list[str]]
) -> list[str]:
    out = table(PARTITION_HEADER, [_partition_cells(r, indent) for r in report.partitions])
    if report.without_partition:
        out += ["", f"Without a GPU partition (CPU-only NodeManagers): {', '.join(report.without_partition)}"]
    return out


def _group_cells(row: GroupRow) -> list[str]:
    per_slot = f"cpu {show_number(row.cpu)}, heap {format_quantity(row.task_heap, binary=True)}"
    if row.managed_memory:
        per_slot += f", managed {format_quantity(row.managed_memory, binary=True)}"
    if row.gpu_per_slot:
        per_slot += f", gpu {show_number(row.gpu_per_slot)}"
    resource = "—"
    if row.resource:
        resource = row.resource + (f" ({row.model})" if row.model else "")
    used = show_number(row.gpu_total) if row.resource else "—"
    of = "—"
    if row.resource and row.taskmanager_gpus:
        of = f"{row.taskmanager_gpus} ({show_percent(row.gpu_total * 100 / row.taskmanager_gpus)})"
    return [row.cluster, row.group, str(row.slots), per_slot, resource, used, of]


def _queue_cells(row: QueueRow, indent: str) -> list[str]:
    return [
        indent * row.depth + row.queue,
        row.resource,
        show_number(row.capability),
        show_number(row.deserved),
        show_number(row.guarantee),
        str(row.cluster),
        show_percent(row.share("deserved")),
        show_percent(row.share("capability")),
    ]


def _flink_cells(row: FlinkRow) -> list[str]:
    return [
        row.cluster,
        row.target,
        row.queue or "—",
        ", ".join(row.pools) or "—",
        f"{row.replicas} × {row.gpus_per_tm}",
        str(row.total),
        row.resource or "—",
        show_number(row.queue_deserved),
        show_number(row.queue_capability),
    ]


def _columns(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]


FLAVOR_TITLE = "Kueue GPU quota per flavor (ClusterQueue nominalQuota, borrowingLimit, lendingLimit)"
FLAVOR_HEADER = ["ClusterQueue", "Flavor", "Resource", "Nominal", "Borrowing limit", "Lending limit", "Pool GPUs"]
KUEUE_NOTE = (
    "Scheduler: Kueue (each pod admitted on its own against its ClusterQueue's quota per flavor; "
    "deserved (else guarantee) is nominalQuota, capability - deserved the borrowingLimit)"
)


def _limit(value: Decimal | None, unset: str) -> str:
    return unset if value is None else show_number(value)


def _flavor_cells(row: FlavorRow) -> list[str]:
    return [
        row.queue, row.flavor, row.resource, show_number(row.nominal),
        _limit(row.borrowing_limit, "none"), _limit(row.lending_limit, "none"), str(row.pool_gpus),
    ]


YUNIKORN_NOTE = (
    "Scheduler: Apache YuniKorn (yunikorn-configs queues.yaml: capability is a queue's max, "
    "deserved (else guarantee) its guaranteed)"
)


def format_text(report: Report) -> str:
    """Plain-text tables."""
    out = [f"accelplane report: {report.cluster}", ""]
    if report.scheduler == "yunikorn":
        out += [YUNIKORN_NOTE, ""]
    if report.scheduler == "kueue":
        out += [KUEUE_NOTE, ""]
    out.append(f"Cluster GPUs ({_basis_title(report)})")
    if report.resources:
        out += [f"  {r}: {total_text(report, r)} ({pool_text(report, r)})" for r in report.resources]
    else:
        out.append("  none")
    out += ["", "Queues"]
    if report.queues:
        out += [
            "  " + line for line in _columns(QUEUE_HEADER, [_queue_cells(r, "  ") for r in report.queues])
        ]
    else:
        out.append("  no queue sets GPU resources")
    if report.without_gpu_limits:
        out.append(f"  Without GPU capability/deserved/guarantee: {', '.join(report.without_gpu_limits)}")
    out += ["", "Flink clusters"]
    if report.flink:
        out += ["  " + line for line in _columns(FLINK_HEADER, [_flink_cells(r) for r in report.flink])]
    else:
        out.append("  none")
    if report.groups:
        out += ["", "Slot groups (GPUs all slots of a group take, of its cluster's TaskManagers' GPUs)"]
        out += ["  " + line for line in _columns(GROUP_HEADER, [_group_cells(r) for r in report.groups])]
    if report.flavors:
        out += ["", FLAVOR_TITLE]
        out += ["  " + line for line in _columns(FLAVOR_HEADER, [_flavor_cells(r) for r in report.flavors])]
    if report.partitions:
        out += ["", PARTITION_TITLE]
        out += [("  " + line).rstrip() for line in _partition_lines(report, "  ", _columns)]
    if report.warnings:
        out += ["", f"Warnings ({len(report.warnings)})"]
        out += [f"  {text_line(w)}" for w in report.warnings]
    return "\n".join(out) + "\n"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return out + ["| " + " | ".join(md_text(c) for c in r) + " |" for r in rows]


def format_markdown(report: Report) -> str:
    """Markdown tables (for a PR description or a wiki page)."""
    out = [f"## GPU capacity: {md_text(report.cluster)}", ""]
    if report.scheduler == "yunikorn":
        out += [md_text(YUNIKORN_NOTE), ""]
    if report.scheduler == "kueue":
        out += [md_text(KUEUE_NOTE), ""]
    out += [f"Cluster GPUs ({_basis_title(report)}):", ""]
    out += _md_table(
        ["Resource", "GPUs", "Pools"],
        [[r, total_text(report, r), pool_text(report, r)] for r in report.resources],
    )
    out += ["", "### Queues", ""]
    out += _md_table(QUEUE_HEADER, [_queue_cells(r, "\u00a0\u00a0") for r in report.queues])
    if report.without_gpu_limits:
        names = ", ".join(report.without_gpu_limits)
        out += ["", f"Without GPU capability/deserved/guarantee: {md_text(names)}"]
    out += ["", "### Flink clusters", ""]
    out += _md_table(FLINK_HEADER, [_flink_cells(r) for r in report.flink])
    if report.groups:
        out += ["", "### Slot groups", ""]
        out += _md_table(GROUP_HEADER, [_group_cells(r) for r in report.groups])
    if report.flavors:
        out += ["", f"### {FLAVOR_TITLE}", ""]
        out += _md_table(FLAVOR_HEADER, [_flavor_cells(r) for r in report.flavors])
    if report.partitions:
        out += ["", f"### {PARTITION_TITLE}", ""]
        out += [md_text(line) if line.startswith("Without") else line for line in _partition_lines(report, "\u00a0\u00a0", _md_table)]
    if report.warnings:
        out += ["", "### Warnings", ""]
        out += _md_table(
            ["Code", "File", "Path", "Message"],
            [[w.finding.code if w.finding else "", w.file, w.path, w.message] for w in report.warnings],
        )
    return "\n".join(out) + "\n"


def _dec(value: Decimal | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def to_json(report: Report) -> dict[str, Any]:
    """Plain data (``warnings`` only when the spec has some)."""
    warnings = {"warnings": [as_dict(w) for w in report.warnings]} if report.warnings else {}
    return {
        "cluster": report.cluster,
        "basis": report.basis,
        "scheduler": report.scheduler,
        "cluster_gpus": {r: report.cluster_total(r) for r in report.resources},
        "cluster_gpu_slices": {r: report.slice_total(r) for r in report.resources if report.slice_total(r)},
        "pools": [
            {
                "pool": p.pool,
                "platform": p.platform,
                "nodes": p.nodes,
                "per_node": dict(p.per_node),
                "slices_per_node": dict(p.slices_per_node),
            }
            for p in report.pools
        ],
        "queues": [
            {
                "queue": r.queue,
                "depth": r.depth,
                "resource": r.resource,
                "capability": _dec(r.capability),
                "deserved": _dec(r.deserved),
                "guarantee": _dec(r.guarantee),
                "cluster": r.cluster,
                "deserved_pct": _dec(r.share("deserved")),
                "capability_pct": _dec(r.share("capability")),
                "flink_gpus": r.flink,
                "flink_clusters": list(r.flink_clusters),
            }
            for r in report.queues
        ],
        "queues_without_gpu_limits": list(report.without_gpu_limits),
        "flink_clusters": [
            {
                "cluster": r.cluster,
                "target": r.target,
                "queue": r.queue,
                "pools": list(r.pools),
                "replicas": r.replicas,
                "gpus_per_taskmanager": r.gpus_per_tm,
                "total_gpus": r.total,
                "resource": r.resource,
                "queue_resource": r.queue_resource,
                "queue_deserved": _dec(r.queue_deserved),
                "queue_capability": _dec(r.queue_capability),
            }
            for r in report.flink
        ],
        "slot_groups": [
            {
                "cluster": r.cluster,
                "group": r.group,
                "slots": r.slots,
                "cpu_per_slot": _dec(r.cpu),
                "task_heap_bytes_per_slot": _dec(r.task_heap),
                "managed_memory_bytes_per_slot": _dec(r.managed_memory),
                "gpu_per_slot": _dec(r.gpu_per_slot),
                "gpu_resource": r.resource,
                "gpu_model": r.model,
                "gpus_used": _dec(r.gpu_total),
                "taskmanager_gpus": r.taskmanager_gpus,
            }
            for r in report.groups
        ],
        "yarn_partitions": [
            {
                "label": r.label,
                "gpu_model": r.model,
                "queue": r.queue,
                "depth": r.depth,
                "partition_gpus": r.gpus,
                "capacity_gpus": r.capacity_gpus,
                "maximum_gpus": r.maximum_gpus,
                "capacity_memory_mib": r.capacity_memory_mib,
                "capacity_vcores": r.capacity_vcores,
                "capacity_pct_of_parent": _dec(r.percent),
            }
            for r in report.partitions
        ],
        "queues_without_yarn_partition": list(report.without_partition),
        "kueue_flavors": [
            {
                "cluster_queue": r.queue,
                "flavor": r.flavor,
                "resource": r.resource,
                "nominal_quota": _dec(r.nominal),
                "borrowing_limit": _dec(r.borrowing_limit),
                "lending_limit": _dec(r.lending_limit),
                "pool_gpus": r.pool_gpus,
            }
            for r in report.flavors
        ],
        **warnings,
    }


def format_json(report: Report) -> str:
    """Stable JSON."""
    return escape_controls_json(json.dumps(to_json(report), indent=2, ensure_ascii=False)) + "\n"


def render_report(report: Report, fmt: str) -> str:
    """``text``, ``markdown`` or ``json``; control characters escaped (`accelplane.display`)."""
    if fmt == "json":
        return format_json(report)
    return escape_controls({"text": format_text, "markdown": format_markdown}[fmt](report))
