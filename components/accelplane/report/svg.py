"""The capacity report as a deterministic SVG bar chart built from plain strings (no plotting
dependency): the queue tree by x offsets, each queue's shares, and its Flink clusters' GPUs; with
YARN node labels also each queue's GPUs per GPU-model partition.
"""

from __future__ import annotations

from decimal import Decimal
from xml.sax.saxutils import escape

from accelplane.report.data import Report
from accelplane.report.tables import pool_text, show_number, show_percent, total_text

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



def _close_resource_group(body: list[str], total: int, scale: Decimal, first_row: int, y: int) -> int:
    """Draw the dashed line at the cluster's (or partition's) total across the rows of one resource,
    close its group and return where the next group starts."""
    line_x = Decimal(BAR_X) + Decimal(total) * scale
    body.append(
        f'<line class="cluster" x1="{_f(line_x)}" y1="{first_row}" x2="{_f(line_x)}" y2="{y}" '
        f'stroke="{COLOURS["cluster"]}" stroke-dasharray="4 3" data-value="{total}"/>'
    )
    body.append("</g>")
    return y + 16

def _partitions(report: Report, body: list[str], y: int) -> int:
    """One group per YARN GPU-model partition: each queue's maximum (light) and guaranteed (dark)
    GPUs of the partition's model, against the partition's GPUs (red line). Returns the next y."""
    for label in sorted({r.label for r in report.partitions}):
        rows = [r for r in report.partitions if r.label == label]
        total = rows[0].gpus
        scale = Decimal(BAR_WIDTH) / total if total > 0 else Decimal(0)
        title = f"YARN partition {label} ({rows[0].model}): {total} GPUs"
        body.append(
            f'<g class="partition" data-label="{_attr(label)}" data-model="{_attr(rows[0].model)}" '
            f'data-gpus="{total}">'
        )
        body.append(
            f'<text x="{LABEL_X}" y="{y + 14}" font-size="13" font-weight="bold">{escape(title)}</text>'
        )
        y += 22
        first_row = y
        for r in rows:
            x = label_x(r.depth)
            body.append(f'<g class="queue" data-queue="{_attr(r.queue)}" data-label="{_attr(label)}">')
            body.append(f'<text x="{x}" y="{y + 16}" font-size="12">{escape(r.queue)}</text>')
            for field, value, inset, height in (
                ("capability", r.maximum_gpus, 3, 18),
                ("deserved", r.capacity_gpus, 7, 10),
            ):
                if value is None:
                    continue
                what = "maximum" if field == "capability" else "guaranteed"
                body.append(
                    f'<rect class="{field}" x="{BAR_X}" y="{y + inset}" width="{_f(Decimal(value) * scale)}" '
                    f'height="{height}" fill="{COLOURS[field]}" data-value="{value}">'
                    f"<title>{escape(f'{r.queue} {what}: {value} {r.model} GPUs in {label}')}</title></rect>"
                )
            if r.percent is not None:
                note = f"{show_number(r.percent)}% of the parent's share"
            else:
                note = f"guaranteed {r.capacity_gpus} ({show_percent(r.share())}) · max {r.maximum_gpus}"
            body.append(
                f'<text x="{BAR_X + BAR_WIDTH + 10}" y="{y + 16}" font-size="11">{escape(note)}</text></g>'
            )
            y += ROW_HEIGHT
        y = _close_resource_group(body, total, scale, first_row, y)
    if report.without_partition:
        text = f"Without a GPU partition: {', '.join(report.without_partition)}"
        body.append(f'<text class="without-partition" x="{LABEL_X}" y="{y + 12}" font-size="11">{escape(text)}</text>')
        y += 24
    return y


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
        title = f"{resource}: {total_text(report, resource)} in the cluster ({pool_text(report, resource)})"
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
                    f'height="{height}" fill="{COLOURS[field]}" data-value="{show_number(value)}">'
                    f"<title>{escape(f'{r.queue} {what}: {show_number(value)} {resource}')}</title></rect>"
                )
            parts = []
            if r.deserved is not None or r.capability is not None:
                parts.append(
                    f"deserved {show_number(r.deserved)} ({show_percent(r.share('deserved'))}) · capability {show_number(r.capability)}"
                )
            if r.flink:
                parts.append(f"Flink {r.flink}")
            note = " · ".join(parts) or "no limit set"
            body.append(
                f'<text x="{BAR_X + BAR_WIDTH + 10}" y="{y + 16}" font-size="11">{escape(note)}</text></g>'
            )
            y += ROW_HEIGHT
        y = _close_resource_group(body, total, scale, first_row, y)
    y = _partitions(report, body, y)
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
