"""The report's SVG as a person sees it: rendered by librsvg (`rsvg-convert`, Debian librsvg2-bin)
and checked pixel by pixel — the queue tree is indented by x offsets, bars have the lengths their
numbers say, and each queue shows the GPUs its Flink clusters request."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest
from accelplane.pipeline import load_validated
from accelplane.report.data import build_report
from accelplane.report.svg import BAR_X, COLOURS, INDENT, LABEL_X, render_svg

from tests.support.paths import REPO_ROOT
from tests.support.png import Pixel, read_png
from tests.support.validators import tool

SVG = "{http://www.w3.org/2000/svg}"


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def _is(pixel: Pixel, colour: str, tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], _rgb(colour), strict=True))


def _dark(pixel: Pixel) -> bool:
    return sum(pixel[:3]) < 300


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[ET.Element, list[list[Pixel]]]:
    svg_text = render_svg(build_report(load_validated(REPO_ROOT / "stacks" / "prod-eu.yaml").model))
    tmp = tmp_path_factory.mktemp("svg")
    (tmp / "r.svg").write_text(svg_text, encoding="utf-8")
    subprocess.run(
        [tool("rsvg-convert"), "--background-color", "white", "-o", str(tmp / "r.png"), str(tmp / "r.svg")],
        check=True,
    )
    return ET.fromstring(svg_text), read_png(tmp / "r.png")


def _label_left(image: list[list[Pixel]], baseline: int) -> int:
    """Leftmost dark (text) pixel in the label column of the row whose text sits on ``baseline``."""
    xs = [x for y in range(baseline - 11, baseline + 2) for x in range(0, BAR_X - 5) if _dark(image[y][x])]
    assert xs, f"no label drawn at y={baseline}"
    return min(xs)


def _run(image: list[list[Pixel]], y: int, x0: int, colour: str) -> int:
    """Length of the run of ``colour`` starting at ``x0`` on row ``y``."""
    x = x0
    while x < len(image[y]) and _is(image[y][x], colour):
        x += 1
    return x - x0


def test_queue_tree_is_indented_by_x_offsets(drawn: tuple[ET.Element, list[list[Pixel]]]) -> None:
    root, image = drawn
    for group in root.findall(f"{SVG}g[@class='resource']"):
        lefts = {}
        for q in group.findall(f"{SVG}g[@class='queue']"):
            text = q.find(f"{SVG}text")
            assert text is not None and text.text == q.get("data-queue")  # no leading spaces
            depth = int(q.get("data-depth", ""))
            assert int(text.get("x", "")) == LABEL_X + INDENT * depth
            lefts[q.get("data-queue")] = (depth, _label_left(image, int(text.get("y", ""))))
        top_depth, top_left = lefts["gpu-platform"]
        assert top_depth == 0 and abs(top_left - LABEL_X) <= 3
        for child in ("batch", "streaming"):
            depth, left = lefts[child]
            assert depth == 1 and left - top_left >= INDENT - 3, (child, left, top_left)
        # a connector joins each child to its parent
        assert len(group.findall(f"{SVG}g[@class='queue']/{SVG}path[@class='tree']")) == 2


def test_bars_are_drawn_as_long_as_their_numbers(drawn: tuple[ET.Element, list[list[Pixel]]]) -> None:
    root, image = drawn
    checked = 0
    for group in root.findall(f"{SVG}g[@class='resource']"):
        scale = Decimal(group.get("data-scale", ""))
        for rect in group.iter(f"{SVG}rect"):
            field = rect.get("class", "")
            if field not in ("capability", "flink"):
                continue
            x, y = int(rect.get("x", "")), int(rect.get("y", ""))
            expected = Decimal(rect.get("data-value", "")) * scale
            assert x == BAR_X
            # capability: its top rows (above the deserved bar); flink: the whole thin bar
            length = _run(image, y + 1, x + 1, COLOURS[field]) + 1
            assert abs(Decimal(length) - expected) <= 2, (field, rect.get("data-value"), length, expected)
            checked += 1
    assert checked >= 8


def test_flink_use_per_queue(drawn: tuple[ET.Element, list[list[Pixel]]]) -> None:
    root, image = drawn
    nvidia = root.find(f"{SVG}g[@data-resource='nvidia.com/gpu']")
    assert nvidia is not None
    use = {
        q.get("data-queue"): q.find(f"{SVG}rect[@class='flink']")
        for q in nvidia.findall(f"{SVG}g[@class='queue']")
    }
    # fraud-scoring (4 TaskManagers × 2 GPUs) in streaming, ad-hoc (2 × 1) in batch; the parent sums them
    values = {name: rect.get("data-value") if rect is not None else None for name, rect in use.items()}
    assert values == {"gpu-platform": "10", "batch": "2", "streaming": "8"}
    streaming = use["streaming"]
    assert streaming is not None
    title = streaming.find(f"{SVG}title")
    assert title is not None and "fraud-scoring" in (title.text or "")
    # drawn in the Flink colour, under the queue's own bars
    y = int(streaming.get("y", ""))
    assert _is(image[y + 2][BAR_X + 5], COLOURS["flink"])
