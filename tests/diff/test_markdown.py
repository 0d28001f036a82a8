"""The Markdown output parses in a real Markdown parser (markdown-it-py) without losing tables."""

from __future__ import annotations

import pytest
from accelplane.diff import compare_trees
from accelplane.diff.formats import format_markdown
from accelplane.display import md_code, md_text
from markdown_it import MarkdownIt
from markdown_it.token import Token

from tests.diff.scenarios import SCENARIOS, base_tree, scenario_tree


def _parser() -> MarkdownIt:
    # CommonMark + the GFM table extension, as GitHub renders PR comments; raw HTML allowed.
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def _tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Every table as rows of cell inline sources (header row first)."""
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            assert row is not None
            row.append(tokens[i + 1].content if tokens[i + 1].type == "inline" else "")
        elif tok.type == "tr_close":
            assert row is not None
            tables[-1].append(row)
    return tables


def _plain(inline: Token) -> str:
    """Rendered text of an inline token (code spans and text, HTML stripped)."""
    return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_tables_survive_a_real_parser(scenario: str) -> None:
    result = compare_trees(base_tree(), scenario_tree(scenario), "base", scenario)
    tokens = _parser().parse(format_markdown(result))
    tables = _tables(tokens)
    # summary table first: header + one row per kind + total
    summary = tables[0]
    assert summary[0] == ["Artifact kind", "Added", "Removed", "Changed", "Renamed"]
    assert len(summary) == 1 + len(result.counts()) + 1
    assert summary[-1][0] == "**Total**"
    # then one change table per artifact that has key/field changes, with one row per change
    with_changes = [a for a in result.artifacts if a.changes]
    change_tables = tables[1:]
    assert len(change_tables) == len(with_changes)
    for table, artifact in zip(change_tables, with_changes, strict=True):
        assert table[0] == ["Change", "Field / key", "Old", "New"]
        assert len(table) == 1 + len(artifact.changes)
        assert all(len(r) == 4 for r in table)
        assert [r[0] for r in table[1:]] == [c.op for c in artifact.changes]
    # every artifact is one collapsible section
    html = [t.content for t in tokens if t.type == "html_block"]
    assert sum(h.count("<details>") for h in html) == len(result.artifacts)
    assert sum(h.count("</details>") for h in html) == len(result.artifacts)
    # text diffs are fenced `diff` blocks
    fences = [t for t in tokens if t.type == "fence"]
    assert all(f.info == "diff" for f in fences)
    text_diffs = [a.text_diff for a in result.artifacts if a.text_diff]
    text_diffs += [c.text_diff for a in result.artifacts for c in a.changes if c.text_diff]
    assert len(fences) == len(text_diffs)
    assert sorted(f.content for f in fences) == sorted("\n".join(d) + "\n" for d in text_diffs)


def test_pipes_and_backticks_in_cells_are_escaped() -> None:
    old = {
        "kubernetes/cm.yaml": (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 'x|y', b: 'one`two'}\n",
            0o644,
        )
    }
    new = {
        "kubernetes/cm.yaml": (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 'x||z', b: '``three``'}\n",
            0o644,
        )
    }
    text = format_markdown(compare_trees(old, new))
    tokens = _parser().parse(text)
    tables = _tables(tokens)
    rows = tables[1][1:]
    assert len(rows) == 2 and all(len(r) == 4 for r in rows)
    inlines = [t for t in tokens if t.type == "inline"]
    rendered = {_plain(t) for t in inlines}
    assert {"x|y", "x||z", "one`two", "``three``"} <= rendered


@pytest.mark.parametrize(
    "value", ["plain", "a|b", "`tick`", "``", "a ``b`` c", " spaced ", "*not bold* _nor_ [link](x) <b>"]
)
def test_md_code_round_trips_through_the_parser(value: str) -> None:
    tokens = _parser().parse(f"| h |\n| --- |\n| {md_code(value)} |\n")
    cell = [t for t in tokens if t.type == "inline"][-1]
    codes = [c.content for c in cell.children or [] if c.type == "code_inline"]
    assert codes == [value]


def test_md_text_is_literal() -> None:
    value = "queue *a* | [b](c) `d` <e> ~f~ _g_ #h & i"
    tokens = _parser().parse(md_text(value) + "\n")
    inline = next(t for t in tokens if t.type == "inline")
    assert _plain(inline) == value
    assert all(c.type == "text" for c in inline.children or [])
