"""`accelplane report`: GPU capacity per queue and per Flink cluster, as tables and an SVG chart.

Cluster GPUs are what the device plugins advertise (`accelplane.derive.gpu_resources.advertised_resources`
× nodes), summed per resource name over the pools the queue tree schedules onto: the Kubernetes
pools when the cluster runs Kubernetes (Volcano queues), else the YARN pools (capacity-scheduler
queues). Queue numbers are the queue's own ``capability``/``deserved``/``guarantee``; shares are
percentages of the cluster total of that resource. The SVG is a deterministic horizontal bar chart
built from plain strings (no plotting dependency).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape

from accelplane.derive.dra import kubernetes_gpu_key, pool_gpu_resources
from accelplane.derive.gpu_resources import (
    candidate_pools,
    target_platform,
    unrenamed_slices,
    yarn_gpu_type,
)
from accelplane.derive.queues import queue_parent
from accelplane.display import escape_controls, escape_controls_json, md_text
from accelplane.model import NodePool, Queue, Spec, is_gpu_resource
from accelplane.quantity import format_quantity

REPORT_FORMATS = ("text", "markdown", "json")
FIELDS = ("capability", "deserved", "guarantee")


@dataclass(frozen=True)
class PoolGpus:
    """What one pool contributes to the cluster's GPUs."""

    pool: str
    platform: str
    nodes: int
    per_node: tuple[tuple[str, int], ...]
    slices_per_node: tuple[tuple[str, int], ...] = ()
    """Of ``per_node``: shared slices advertised under a dedicated name (``renameByDefault: false``)."""

    def total(self, resource: str) -> int:
        """GPUs of ``resource`` in the whole pool."""
        return dict(self.per_node).get(resource, 0) * self.nodes

    def slices(self, resource: str) -> int:
        """Of `total`: shared slices (not whole GPUs) in the whole pool."""
        return dict(self.slices_per_node).get(resource, 0) * self.nodes


@dataclass(frozen=True)
class QueueRow:
    """One queue × one GPU resource."""

    queue: str
    depth: int
    resource: str
    capability: Decimal | None
    deserved: Decimal | None
    guarantee: Decimal | None
    cluster: int
    parent: str | None = None
    flink: int = 0  # GPUs of this resource the Flink clusters in this queue's subtree request
    flink_clusters: tuple[str, ...] = ()

    def share(self, field: str) -> Decimal | None:
        """``field`` as a percentage of the cluster's GPUs of this resource."""
        value = getattr(self, field)
        if value is None or self.cluster == 0:
            return None
        return Decimal(value) * 100 / self.cluster


@dataclass(frozen=True)
class FlinkRow:
    """One Flink cluster's GPU footprint."""

    cluster: str
    target: str
    queue: str | None
    pools: tuple[str, ...]
    replicas: int
    gpus_per_tm: int
    resource: str | None
    queue_resource: str | None
    queue_capability: Decimal | None
    queue_deserved: Decimal | None

    @property
    def total(self) -> int:
        """GPUs of all TaskManagers together."""
        return self.replicas * self.gpus_per_tm


@dataclass(frozen=True)
class Report:
    """The capacity report of one spec."""

    cluster: str
    basis: str
    pools: tuple[PoolGpus, ...]
    resources: tuple[str, ...]
    queues: tuple[QueueRow, ...]
    flink: tuple[FlinkRow, ...]
    without_gpu_limits: tuple[str, ...] = ()

    def cluster_total(self, resource: str) -> int:
        """Cluster GPUs of ``resource`` over the basis pools (as the scheduler counts them)."""
        return sum(p.total(resource) for p in self.pools)

    def slice_total(self, resource: str) -> int:
        """Of `cluster_total`: time-sliced/MPS slices advertised under the dedicated name."""
        return sum(p.slices(resource) for p in self.pools)


def _basis(spec: Spec) -> str:
    if spec.has_platform("kubernetes"):
        return "kubernetes"
    if spec.has_platform("yarn"):
        return "yarn"
    return ""


def _queue_order(spec: Spec) -> list[tuple[Queue, int]]:
    """Queues depth-first (parents before children, siblings by name) with their depth."""
    children: dict[str | None, list[Queue]] = {}
    for q in spec.queues:
        children.setdefault(queue_parent(q), []).append(q)
    out: list[tuple[Queue, int]] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for q in sorted(children.get(parent, []), key=lambda q: q.name):
            if q.name in seen:
                continue
            seen.add(q.name)
            out.append((q, depth))
            walk(q.name, depth + 1)

    walk(None, 0)
    out += [(q, 0) for q in spec.queues if q.name not in seen]  # unreachable only in invalid specs
    return out


def _flink_use(spec: Spec, flink: list[FlinkRow]) -> dict[tuple[str, str], tuple[int, tuple[str, ...]]]:
    """(queue, resource) → GPUs its subtree's Flink clusters request, and which clusters."""
    parents = {q.name: queue_parent(q) for q in spec.queues}
    use: dict[tuple[str, str], tuple[int, tuple[str, ...]]] = {}
    for row in flink:
        if row.queue is None or row.queue_resource is None or row.total == 0:
            continue
        name: str | None = row.queue
        seen: set[str] = set()
        while name is not None and name not in seen:  # up to the top (a cycle only in invalid specs)
            seen.add(name)
            total, names = use.get((name, row.queue_resource), (0, ()))
            use[(name, row.queue_resource)] = (total + row.total, (*names, row.cluster))
            name = parents.get(name)
    return use


def _value(queue: Queue, field: str, resource: str) -> Decimal | None:
    q = getattr(queue, field).get(resource)
    return q.value if q is not None else None


def build_report(spec: Spec) -> Report:
    """Compute the capacity report of a validated spec."""
    basis = _basis(spec)
    pools = [
        PoolGpus(
            pool.name,
            pool.platform,
            pool.nodes,
            tuple(pool_gpu_resources(pool).items()),
            tuple(unrenamed_slices(pool).items()),
        )
        for pool in pools_of(spec)
    ]
    resources = {name for p in pools for name, _ in p.per_node}
    for q in spec.queues:
        for field in FIELDS:
            resources |= {n for n in getattr(q, field).names() if is_gpu_resource(n)}
    ordered_resources = tuple(sorted(resources))
    report_pools = tuple(pools)
    totals = {r: sum(p.total(r) for p in report_pools) for r in ordered_resources}
    flink = []
    for c in spec.flink_clusters:
        gpu = c.task_manager.gpu
        amount = gpu.amount if gpu is not None else 0
        platform = target_platform(c)
        resource = yarn_gpu_type(spec, c) if platform == "yarn" else kubernetes_gpu_key(spec, c)
        queue_resource = kubernetes_gpu_key(spec, c)
        queue = spec.queue(c.queue) if c.queue else None
        flink.append(
            FlinkRow(
                cluster=c.name,
                target=c.target,
                queue=c.queue,
                pools=tuple(p.name for p in candidate_pools(spec, c)),
                replicas=c.task_manager.replicas,
                gpus_per_tm=amount,
                resource=resource,
                queue_resource=queue_resource,
                queue_capability=_value(queue, "capability", queue_resource)
                if queue and queue_resource
                else None,
                queue_deserved=_value(queue, "deserved", queue_resource)
                if queue and queue_resource
                else None,
            )
        )
    use = _flink_use(spec, flink)
    rows = [
        QueueRow(
            queue=q.name,
            depth=depth,
            resource=r,
            capability=_value(q, "capability", r),
            deserved=_value(q, "deserved", r),
            guarantee=_value(q, "guarantee", r),
            cluster=totals[r],
            parent=queue_parent(q),
            flink=use.get((q.name, r), (0, ()))[0],
            flink_clusters=use.get((q.name, r), (0, ()))[1],
        )
        for r in ordered_resources
        for q, depth in _queue_order(spec)
        if any(_value(q, field, r) is not None for field in FIELDS) or (q.name, r) in use
    ]
    limited = {row.queue for row in rows}
    without = tuple(q.name for q, _ in _queue_order(spec) if q.name not in limited)
    return Report(spec.name, basis, report_pools, ordered_resources, tuple(rows), tuple(flink), without)


# -- formatting ----------------------------------------------------------------------------------------


def _num(value: Decimal | int | None) -> str:
    if value is None:
        return "—"
    return format_quantity(Decimal(value), binary=False)


def _pct(value: Decimal | None) -> str:
    return "—" if value is None else f"{value.quantize(Decimal('0.1'))}%"


def _pool_text(report: Report, resource: str) -> str:
    parts = [
        f"{p.pool}: {p.nodes} × {dict(p.per_node)[resource]}" + (" slices" if p.slices(resource) else "")
        for p in report.pools
        if dict(p.per_node).get(resource)
    ]
    return ", ".join(parts) if parts else "no pool advertises it"


def _total_text(report: Report, resource: str) -> str:
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


def _queue_cells(row: QueueRow, indent: str) -> list[str]:
    return [
        indent * row.depth + row.queue,
        row.resource,
        _num(row.capability),
        _num(row.deserved),
        _num(row.guarantee),
        str(row.cluster),
        _pct(row.share("deserved")),
        _pct(row.share("capability")),
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
        _num(row.queue_deserved),
        _num(row.queue_capability),
    ]


def _columns(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]


def format_text(report: Report) -> str:
    """Plain-text tables."""
    out = [f"accelplane report: {report.cluster}", "", f"Cluster GPUs ({_basis_title(report)})"]
    if report.resources:
        out += [f"  {r}: {_total_text(report, r)} ({_pool_text(report, r)})" for r in report.resources]
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
    return "\n".join(out) + "\n"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return out + ["| " + " | ".join(md_text(c) for c in r) + " |" for r in rows]


def format_markdown(report: Report) -> str:
    """Markdown tables (for a PR description or a wiki page)."""
    out = [f"## GPU capacity: {md_text(report.cluster)}", "", f"Cluster GPUs ({_basis_title(report)}):", ""]
    out += _md_table(
        ["Resource", "GPUs", "Pools"],
        [[r, _total_text(report, r), _pool_text(report, r)] for r in report.resources],
    )
    out += ["", "### Queues", ""]
    out += _md_table(QUEUE_HEADER, [_queue_cells(r, "\u00a0\u00a0") for r in report.queues])
    if report.without_gpu_limits:
        names = ", ".join(report.without_gpu_limits)
        out += ["", f"Without GPU capability/deserved/guarantee: {md_text(names)}"]
    out += ["", "### Flink clusters", ""]
    out += _md_table(FLINK_HEADER, [_flink_cells(r) for r in report.flink])
    return "\n".join(out) + "\n"


def _dec(value: Decimal | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def to_json(report: Report) -> dict[str, Any]:
    """Plain data."""
    return {
        "cluster": report.cluster,
        "basis": report.basis,
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
    }


def format_json(report: Report) -> str:
    """Stable JSON."""
    return escape_controls_json(json.dumps(to_json(report), indent=2, ensure_ascii=False)) + "\n"


def render_report(report: Report, fmt: str) -> str:
    """``text``, ``markdown`` or ``json``; control characters escaped (`accelplane.display`)."""
    if fmt == "json":
        return format_json(report)
    return escape_controls({"text": format_text, "markdown": format_markdown}[fmt](report))


# -- SVG -----------------------------------------------------------------------------------------------

SVG_WIDTH = 900
LABEL_X = 10
INDENT = 16  # x offset per level of the queue tree (SVG collapses leading spaces, so no spaces)
BAR_X = 200
BAR_WIDTH = 380
ROW_HEIGHT = 30
COLOURS = {
    "capability": "#c6dbef",
    "deserved": "#2171b5",
    "guarantee": "#08306b",
    "flink": "#ff7f0e",
    "cluster": "#d62728",
    "tree": "#969696",
}
# (field, y offset in the row, height): capability behind deserved behind guarantee; Flink below
BARS = (("capability", 3, 18), ("deserved", 7, 10), ("guarantee", 10, 4), ("flink", 23, 5))


def _attr(value: str) -> str:
    return escape(value, {'"': "&quot;"})


def _f(x: Decimal) -> str:
    return f"{x.quantize(Decimal('0.01'))}"


def label_x(depth: int) -> int:
    """Where the label of a queue at ``depth`` (0 = top level) starts."""
    return LABEL_X + INDENT * depth


def render_svg(report: Report) -> str:
    """Horizontal bars per GPU resource: each queue's capability (light), deserved (dark) and
    guarantee (thin) against the cluster total (red line), and below them (orange) the GPUs that
    the Flink clusters in the queue's subtree request. The queue tree is drawn with x offsets and
    connector lines. Bar widths are proportional to GPUs on one scale per resource; every shape
    carries ``data-*`` attributes with the numbers."""
    body: list[str] = []
    y = 40
    body.append(
        f'<text x="{LABEL_X}" y="24" font-size="16" font-weight="bold">'
        f"{escape(f'GPU shares and Flink use per queue — {report.cluster}')}</text>"
    )
    for resource in report.resources:
        rows = [r for r in report.queues if r.resource == resource]
        total = report.cluster_total(resource)
        values = [v for r in rows for v in (r.capability, r.deserved) if v is not None]
        top = max([Decimal(total), *values, *(Decimal(r.flink) for r in rows)])
        scale = Decimal(BAR_WIDTH) / top if top > 0 else Decimal(0)
        title = f"{resource}: {_total_text(report, resource)} in the cluster ({_pool_text(report, resource)})"
        body.append(
            f'<g class="resource" data-resource="{_attr(resource)}" data-cluster="{total}" '
            f'data-scale="{scale.quantize(Decimal("0.000001"))}">'
        )
        body.append(
            f'<text x="{LABEL_X}" y="{y + 14}" font-size="13" font-weight="bold">{escape(title)}</text>'
        )
        y += 22
        first_row = y
        row_mid: dict[str, int] = {}
        for r in rows:
            x = label_x(r.depth)
            body.append(
                f'<g class="queue" data-queue="{_attr(r.queue)}" data-resource="{_attr(resource)}" '
                f'data-depth="{r.depth}">'
            )
            if r.parent is not None and r.parent in row_mid:
                stem = label_x(r.depth - 1) + 4
                body.append(
                    f'<path class="tree" d="M{stem} {row_mid[r.parent] + 6} V{y + 12} H{x - 3}" '
                    f'fill="none" stroke="{COLOURS["tree"]}"/>'
                )
            row_mid[r.queue] = y + 12
            body.append(f'<text x="{x}" y="{y + 16}" font-size="12">{escape(r.queue)}</text>')
            for field, inset, height in BARS:
                value = getattr(r, field)
                if value is None or (field == "flink" and not value):
                    continue
                what = f"requested by Flink ({', '.join(r.flink_clusters)})" if field == "flink" else field
                body.append(
                    f'<rect class="{field}" x="{BAR_X}" y="{y + inset}" width="{_f(Decimal(value) * scale)}" '
                    f'height="{height}" fill="{COLOURS[field]}" data-value="{_num(value)}">'
                    f"<title>{escape(f'{r.queue} {what}: {_num(value)} {resource}')}</title></rect>"
                )
            parts = []
            if r.deserved is not None or r.capability is not None:
                parts.append(
                    f"deserved {_num(r.deserved)} ({_pct(r.share('deserved'))}) · capability {_num(r.capability)}"
                )
            if r.flink:
                parts.append(f"Flink {r.flink}")
            note = " · ".join(parts) or "no limit set"
            body.append(
                f'<text x="{BAR_X + BAR_WIDTH + 10}" y="{y + 16}" font-size="11">{escape(note)}</text></g>'
            )
            y += ROW_HEIGHT
        line_x = Decimal(BAR_X) + Decimal(total) * scale
        body.append(
            f'<line class="cluster" x1="{_f(line_x)}" y1="{first_row}" x2="{_f(line_x)}" y2="{y}" '
            f'stroke="{COLOURS["cluster"]}" stroke-dasharray="4 3" data-value="{total}"/>'
        )
        body.append("</g>")
        y += 16
    legend = [
        ("capability", "capability"),
        ("deserved", "deserved"),
        ("guarantee", "guarantee"),
        ("flink", "Flink GPUs"),
    ]
    x = LABEL_X
    for key, text in legend:
        body.append(f'<rect class="legend" x="{x}" y="{y}" width="12" height="12" fill="{COLOURS[key]}"/>')
        body.append(f'<text x="{x + 16}" y="{y + 11}" font-size="11">{escape(text)}</text>')
        x += 110
    body.append(
        f'<line class="legend" x1="{x}" y1="{y}" x2="{x}" y2="{y + 12}" stroke="{COLOURS["cluster"]}" stroke-dasharray="4 3"/>'
    )
    body.append(f'<text x="{x + 6}" y="{y + 11}" font-size="11">cluster GPUs</text>')
    height = y + 24
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_WIDTH}" height="{height}" '
        f'viewBox="0 0 {SVG_WIDTH} {height}" font-family="sans-serif" role="img" '
        f'aria-label="{_attr("GPU shares and Flink use per queue of " + report.cluster)}">'
    )
    return "\n".join([head, *body, "</svg>"]) + "\n"


def pools_of(spec: Spec) -> list[NodePool]:
    """The pools the report counts (the basis platform's GPU pools)."""
    basis = _basis(spec)
    return [p for p in spec.node_pools if p.platform == basis and p.gpu is not None]
