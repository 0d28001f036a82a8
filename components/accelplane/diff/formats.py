"""Output formats of `accelplane diff`: terminal text (ANSI colour optional), Markdown for a pull
request comment, JSON for tooling. All three are deterministic for the same inputs."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

from accelplane.diff import DiffResult
from accelplane.diff.changes import KIND_TITLES, ArtifactDiff, Change
from accelplane.diff.impact.common import CATEGORY_TITLES, Impact
from accelplane.display import escape_controls, escape_controls_json, md_code, md_fence, md_text
from accelplane.yaml_io import dump_yaml

FORMATS = ("text", "markdown", "json")
STATUS_MARK = {"added": "+", "removed": "-", "changed": "~", "renamed": ">"}
OP_MARK = {"added": "+", "removed": "-", "changed": "~"}
INLINE_LIMIT = 100

_ANSI = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "dim": "2"}
_STATUS_COLOUR = {"added": "green", "removed": "red", "changed": "yellow", "renamed": "cyan"}


# -- values ------------------------------------------------------------------------------------------


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if value == "" or value != value.strip() else value
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def is_block(value: Any) -> bool:
    """True for values shown as an indented block instead of inline (multi-line text, big maps)."""
    if isinstance(value, str):
        return "\n" in value
    if isinstance(value, dict | list):
        return len(_scalar(value)) > INLINE_LIMIT
    return False


def block_lines(value: Any) -> list[str]:
    """Lines of a block value: text as is, structures as YAML."""
    text = value if isinstance(value, str) else dump_yaml(value)
    return text.rstrip("\n").split("\n")


def show_pair(change: Change) -> tuple[str, str]:
    """Inline displays of a change's old and new values, quoted when they would look equal."""
    old, new = _scalar(change.old), _scalar(change.new)
    if change.op == "changed" and old == new:
        old = json.dumps(change.old, ensure_ascii=False, default=str)
        new = json.dumps(change.new, ensure_ascii=False, default=str)
    return old, new


def _summary_line(result: DiffResult) -> str:
    totals = {s: 0 for s in ("added", "removed", "changed", "renamed")}
    for counts in result.counts().values():
        for s, n in counts.items():
            totals[s] += n
    parts = [f"{n} {s}" for s, n in totals.items() if n]
    n = len(result.artifacts)
    return f"{', '.join(parts)} ({n} artifact{'s' if n != 1 else ''})"


def _change_count(a: ArtifactDiff) -> str:
    n = len(a.changes)
    if n:
        return f"{n} change{'s' if n != 1 else ''}"
    if a.text_diff and a.status in ("added", "removed"):
        lines = sum(1 for line in a.text_diff[2:] if line[:1] in "+-")
        return f"{lines} line{'s' if lines != 1 else ''}"
    return "text diff" if a.text_diff else "no content changes"


def _where(a: ArtifactDiff) -> str:
    """API version and file(s) of a Kubernetes object; empty for files (their title is the path)."""
    if a.kind != "kubernetes":
        return ""
    paths = [a.api_version or ""]
    if a.old_path and a.new_path and a.old_path != a.new_path:
        paths.append(f"{a.old_path} → {a.new_path}")
    else:
        paths.append(a.new_path or a.old_path or "")
    return " · ".join(p for p in paths if p)


# -- text ----------------------------------------------------------------------------------------------


def format_text(result: DiffResult, color: bool = False) -> str:
    """Human-readable output; ANSI colour only when ``color``."""

    def paint(text: str, colour: str) -> str:
        text = escape_controls(text, newlines=False)  # spec/file text: never raw escapes
        return f"\x1b[{_ANSI[colour]}m{text}\x1b[0m" if color and text else text

    def plain(text: str) -> str:
        return escape_controls(text, newlines=False)

    def diff_line(line: str, indent: str) -> str:
        if line.startswith(("+++", "---")):
            return indent + paint(line, "bold")
        if line.startswith("@@"):
            return indent + paint(line, "cyan")
        if line.startswith("+"):
            return indent + paint(line, "green")
        if line.startswith("-"):
            return indent + paint(line, "red")
        return indent + plain(line)

    out = [paint(f"accelplane diff: {result.old_label} → {result.new_label}", "bold")]
    if result.equal:
        out.append("No differences.")
        return "\n".join(out) + "\n"
    out.append(_summary_line(result))
    if result.impacts:
        out += ["", paint("Impact", "bold")]
        for category, items in _by_category(result.impacts):
            out.append(f"  {CATEGORY_TITLES[category]}")
            out += [f"    • {plain(i.message)}" for i in items]
    for kind, artifacts in _by_kind(result.artifacts):
        out += ["", paint(KIND_TITLES[kind], "bold")]
        for a in artifacts:
            mark = STATUS_MARK[a.status]
            head = paint(f"{mark} {a.title}", _STATUS_COLOUR[a.status])
            where = _where(a)
            out.append(f"  {head}  {paint('[' + where + ']', 'dim')}" if where else f"  {head}")
            if a.note:
                out.append(f"      ({plain(a.note)})")
            for c in a.changes:
                colour = _STATUS_COLOUR[c.op]
                if c.text_diff:
                    out.append("      " + paint(f"~ {c.path}:", colour))
                    out += [diff_line(line, "          ") for line in c.text_diff]
                    continue
                value = c.new if c.op == "added" else c.old
                if c.op in ("added", "removed") and is_block(value):
                    out.append("      " + paint(f"{OP_MARK[c.op]} {c.path}:", colour))
                    prefix = OP_MARK[c.op]
                    out += ["          " + paint(f"{prefix} {line}", colour) for line in block_lines(value)]
                    continue
                if c.op == "changed" and (is_block(c.old) or is_block(c.new)):
                    out.append("      " + paint(f"~ {c.path}:", colour))
                    out += ["          " + paint(f"- {line}", "red") for line in block_lines(c.old)]
                    out += ["          " + paint(f"+ {line}", "green") for line in block_lines(c.new)]
                    continue
                old, new = show_pair(c)
                if c.op == "added":
                    out.append("      " + paint(f"+ {c.path}: {new}", colour))
                elif c.op == "removed":
                    out.append("      " + paint(f"- {c.path}: {old}", colour))
                else:
                    out.append("      " + paint(f"~ {c.path}: {old} → {new}", colour))
            out += [diff_line(line, "      ") for line in a.text_diff]
    return "\n".join(out) + "\n"


def _by_category(impacts: tuple[Impact, ...]) -> list[tuple[str, list[Impact]]]:
    return [
        (c, [i for i in impacts if i.category == c])
        for c in CATEGORY_TITLES
        if any(i.category == c for i in impacts)
    ]


def _by_kind(artifacts: tuple[ArtifactDiff, ...]) -> list[tuple[str, list[ArtifactDiff]]]:
    return [
        (k, [a for a in artifacts if a.kind == k]) for k in KIND_TITLES if any(a.kind == k for a in artifacts)
    ]


# -- markdown --------------------------------------------------------------------------------------------

def _md_table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> list[str]:
    align = align or ["---"] * len(header)
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def format_markdown(result: DiffResult) -> str:
    """GitHub-flavoured Markdown for a pull-request comment: summary table, impact list, then one
    collapsible ``<details>`` section per artifact with a change table and fenced diffs."""
    out = ["## accelplane diff", ""]
    head = f"{md_code(result.old_label)} → {md_code(result.new_label)}"
    if result.equal:
        out.append(f"{head}: **no differences**")
        return "\n".join(out) + "\n"
    out += [f"{head}: **{md_text(_summary_line(result))}**", ""]
    rows = []
    totals = [0, 0, 0, 0]
    for kind, counts in result.counts().items():
        values = [counts[s] for s in ("added", "removed", "changed", "renamed")]
        totals = [t + v for t, v in zip(totals, values, strict=True)]
        rows.append([md_text(KIND_TITLES[kind]), *(str(v) for v in values)])
    rows.append(["**Total**", *(f"**{t}**" for t in totals)])
    out += _md_table(
        ["Artifact kind", "Added", "Removed", "Changed", "Renamed"],
        rows,
        ["---", "---:", "---:", "---:", "---:"],
    )
    if result.impacts:
        out += ["", "### Impact", ""]
        for category, items in _by_category(result.impacts):
            out.append(f"**{md_text(CATEGORY_TITLES[category])}**")
            out.append("")
            out += [f"- {md_text(i.message)}" for i in items]
            out.append("")
    else:
        out.append("")
    for kind, artifacts in _by_kind(result.artifacts):
        out += [f"### {md_text(KIND_TITLES[kind])}", ""]
        for a in artifacts:
            out += _md_artifact(a)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_artifact(a: ArtifactDiff) -> list[str]:
    summary = (
        f"<details><summary>{html.escape(STATUS_MARK[a.status])} {a.status}: "
        f"<code>{html.escape(a.title)}</code> ({html.escape(_change_count(a))})</summary>"
    )
    out = [summary, ""]
    where = _where(a)
    if where:
        out += [" · ".join(md_code(p) for p in where.split(" · ")), ""]
    if a.note:
        out += [f"_{md_text(a.note)}_", ""]
    blocks: list[tuple[str, list[str]]] = []
    rows = []
    for c in a.changes:
        old, new = show_pair(c)
        cells = {"added": ("", new), "removed": (old, ""), "changed": (old, new)}[c.op]
        block: list[str] = []
        if c.text_diff:
            block = list(c.text_diff)
        elif c.op in ("added", "removed") and is_block(c.new if c.op == "added" else c.old):
            mark = OP_MARK[c.op]
            block = [f"{mark}{line}" for line in block_lines(c.new if c.op == "added" else c.old)]
        elif c.op == "changed" and (is_block(c.old) or is_block(c.new)):
            block = [f"-{line}" for line in block_lines(c.old)] + [f"+{line}" for line in block_lines(c.new)]
        if block:
            blocks.append((c.path, block))
            below = "_see diff below_"
            rows.append(
                [c.op, md_code(c.path), "" if c.op == "added" else below, "" if c.op == "removed" else below]
            )
        else:
            rows.append(
                [
                    c.op,
                    md_code(c.path),
                    md_code(cells[0]) if cells[0] else "",
                    md_code(cells[1]) if cells[1] else "",
                ]
            )
    if rows:
        out += _md_table(["Change", "Field / key", "Old", "New"], rows)
        out.append("")
    for path, block in blocks:
        out += [md_code(path), "", *md_fence(block), ""]
    if a.text_diff:
        out += [*md_fence(list(a.text_diff)), ""]
    out += ["</details>", ""]
    return out


# -- json ----------------------------------------------------------------------------------------------


def format_json(result: DiffResult) -> str:
    """Stable JSON document (see `DiffResult.to_json`); control characters ``\\u``-escaped."""
    return escape_controls_json(json.dumps(result.to_json(), indent=2, ensure_ascii=False)) + "\n"


FORMATTERS: dict[str, Callable[[DiffResult], str]] = {
    "markdown": format_markdown,
    "json": format_json,
}


def render(result: DiffResult, fmt: str, color: bool = False) -> str:
    """Format a result as ``text`` (optionally coloured), ``markdown`` or ``json``."""
    if fmt == "text":
        return format_text(result, color=color)
    if fmt == "markdown":
        return escape_controls(format_markdown(result))
    return FORMATTERS[fmt](result)
