"""YAML input: merge keys and anchors work as YAML says; hostile YAML fails fast with a located
error instead of a traceback, a hang or gigabytes of memory (nesting, alias bombs, complex keys,
huge integers)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from accelplane import yaml_io
from accelplane.cli import main
from accelplane.errors import SpecErrors
from accelplane.pipeline import load_validated
from accelplane.spec_loader import load_spec
from accelplane.yaml_io import MAX_NESTING, YamlSyntaxError, load_yaml_text

POOLS = """\
x-gpu-node: &a100
  nodes: 2
  gpu: {vendor: nvidia, perNode: 8, model: NVIDIA A100-SXM4-80GB}
  labels: {gpu: a100}
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - <<: *a100
    name: a100-a
    labels: {gpu: a100, rack: a}
  - <<: *a100
    name: a100-b
    nodes: 4
    labels: {gpu: a100, rack: b}
"""


def test_merge_keys_may_be_overridden(write_spec: Callable[..., Path]) -> None:
    data = load_validated(write_spec(POOLS)).loaded.data
    pools = {p["name"]: p for p in data["nodePools"]}
    assert pools["a100-a"]["nodes"] == 2 and pools["a100-b"]["nodes"] == 4
    assert {k: v for k, v in pools["a100-b"]["gpu"].items() if k != "allocation"} == {"vendor": "nvidia", "perNode": 8, "model": "NVIDIA A100-SXM4-80GB"}
    assert "x-gpu-node" not in data  # x- keys are a place for anchors, not part of the spec


def test_real_duplicate_keys_are_still_errors() -> None:
    with pytest.raises(
        YamlSyntaxError,
        match=r"line 4, column 3: invalid YAML: duplicate key 'name' \(first at line 3, column 3\)",
    ):
        load_yaml_text("a: &a {name: x}\nb:\n  name: y\n  name: z\n", "f.yaml")
    with pytest.raises(YamlSyntaxError, match="duplicate key 'name'"):
        load_yaml_text("b:\n  <<: {name: x}\n  name: y\n  name: z\n", "f.yaml")


def test_earlier_merges_win_over_later_ones_and_own_keys_over_both() -> None:
    doc = load_yaml_text("a: &a {k: 1, m: 1}\nb: &b {k: 2, n: 2}\nc: {<<: [*a, *b], m: 3}\n", "f.yaml")
    assert doc["c"] == {"k": 1, "m": 3, "n": 2}


def test_x_keys_only_at_the_top_level(write_spec: Callable[..., Path]) -> None:
    spec = write_spec("cluster: {name: c, platforms: [kubernetes], x-note: hi}\n")
    with pytest.raises(SpecErrors, match=r"cluster: unknown field\(s\) 'x-note'"):
        load_validated(spec)


def _fails(text: str, message: str) -> None:
    with pytest.raises(YamlSyntaxError) as exc:
        load_yaml_text(text, "f.yaml")
    assert message in str(exc.value)
    assert str(exc.value).startswith("f.yaml: line ")


def test_deep_nesting_is_a_located_error_not_a_recursion_error() -> None:
    _fails("x: " + "[" * 600 + "]" * 600, f"invalid YAML: nesting deeper than {MAX_NESTING} levels")
    _fails("x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 700)), "nesting deeper than")
    # past libyaml's own limit (1,000 levels), which the fast loader relies on: same located error
    _fails("x: " + "[" * 20_000 + "]" * 20_000, f"invalid YAML: nesting deeper than {MAX_NESTING} levels")


def test_aliases_cannot_nest_deeper_than_the_limit() -> None:
    lines = ["a0: &a0 [1]"] + [f"a{i}: &a{i} [[[[*a{i - 1}]]]]" for i in range(1, 20)]
    _fails("\n".join(lines) + "\n", "nesting deeper than 50 levels once aliases are expanded")
    _fails("a: &a [*a]\n", "once aliases are expanded")  # an alias to itself


def _bomb(levels: int) -> str:
    text = 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels + 1):
        text += f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n"
    return text


@pytest.mark.parametrize("levels", [7, 9])
def test_alias_bombs_are_rejected_before_anything_is_built(
    levels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*_: object) -> None:
        raise AssertionError("constructed Python objects from an alias bomb")

    monkeypatch.setattr(yaml_io._StrictLoader, "construct_document", never)
    _fails(_bomb(levels), "refusing an alias bomb")


def test_merge_key_bombs_are_rejected_too() -> None:
    text = "m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}\n"
    for i in range(1, 10):
        text += f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 9) + "]}\n"
    _fails(text, "refusing an alias bomb")


def test_modest_reuse_of_anchors_is_fine() -> None:
    text = "a: &a {" + ", ".join(f"k{i}: {i}" for i in range(40)) + "}\n"
    text += "".join(f"b{i}: *a\n" for i in range(300))
    assert len(load_yaml_text(text, "f.yaml")) == 301


def test_complex_and_non_string_keys() -> None:
    _fails("? [a, b]\n: 1\n", "a mapping key must be a plain string, not a list")
    _fails("? {a: 1}\n: 1\n", "a mapping key must be a plain string, not a mapping")
    _fails("1: x\n", "mapping key '1' must be a string (quote it)")


def test_huge_integers() -> None:
    _fails("a: " + "9" * 5000 + "\n", "integer with 5000 digits (at most 100)")


@pytest.mark.parametrize(
    "text",
    [
        "cluster: " + "[" * 600 + "]" * 600 + "\n",
        "? [a, b]\n: 1\n",
        "cluster: {name: " + "7" * 5000 + "}\n",
        _bomb(9),
    ],
    ids=["nesting", "complex-key", "huge-int", "bomb"],
)
def test_cli_reports_hostile_yaml_without_traceback(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "spec.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "spec.yaml"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("spec.yaml: line ") and "invalid YAML" in err and "Traceback" not in err


def test_hostile_yaml_in_a_base_names_the_base(write_spec: Callable[..., Path]) -> None:
    write_spec(_bomb(9), "base.yaml")
    spec = write_spec("extends: [base.yaml]\ncluster: {name: c, platforms: [kubernetes]}\n")
    with pytest.raises(SpecErrors) as exc:
        load_spec(spec)
    assert "base.yaml: line" in str(exc.value) and "alias bomb" in str(exc.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x: " + "[" * 600 + "]" * 600, "nesting deeper than 50 levels"),
        ("x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 700)), "nesting deeper than 50 levels"),
        ("a: &a [*a]\n", "once aliases are expanded"),
        (_bomb(9), "refusing an alias bomb"),
        ("? [a, b]\n: 1\n", "a mapping key must be a plain string, not a list"),
        ("a: " + "9" * 5000 + "\n", "integer with 5000 digits (at most 100)"),
        ("a: 1\na: 2\n", "duplicate key 'a'"),
    ],
    ids=["nesting", "block-nesting", "self-alias", "bomb", "complex-key", "huge-int", "duplicate"],
)
@pytest.mark.parametrize("loader_name", ["_CComposedLoader", "_CStrictLoader"])
def test_the_libyaml_loaders_have_the_same_bounds_themselves(
    text: str, message: str, loader_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libyaml reads every spec first (`yaml_io._FastLoader` is one of these); each must refuse
    hostile input on its own, before building any Python object from it (the strict loader then
    only words the error)."""
    import yaml

    assert yaml_io._FastLoader is not None, "PyYAML without libyaml: the fast loader is never used"
    loader = getattr(yaml_io, loader_name)
    if "bomb" in message:

        def never(*_: object) -> None:
            raise AssertionError("constructed Python objects from an alias bomb")

        monkeypatch.setattr(loader, "construct_document", never)
    with pytest.raises(yaml.YAMLError, match=re.escape(message)):
        yaml.load(text, Loader=loader)


def test_the_shallow_tree_shortcut_leaves_aliases_and_depth_to_the_full_walk() -> None:
    """`_check_expansion` skips its memoised walk only for graphs without a repeated node that nest
    at most `MAX_NESTING` levels; anything else (an alias, more depth) goes through the walk."""
    import yaml

    def graph(text: str) -> Any:
        return yaml.compose(text, Loader=yaml.SafeLoader)

    def nested(levels: int) -> str:  # a document nesting exactly ``levels`` levels
        return "[" * (levels - 1) + "x" + "]" * (levels - 1)

    assert yaml_io._is_shallow_tree(graph("a: [1, {b: c}]\nd: e\n"))
    assert yaml_io._is_shallow_tree(graph(nested(MAX_NESTING)))
    assert not yaml_io._is_shallow_tree(graph(nested(MAX_NESTING + 1)))
    assert not yaml_io._is_shallow_tree(graph("a: &x [1]\nb: *x\n"))
    assert not yaml_io._is_shallow_tree(graph("a: &x {k: v}\nb: {<<: *x}\n"))
    yaml_io._check_expansion(graph(nested(MAX_NESTING)))
    with pytest.raises(yaml.YAMLError, match="nesting deeper than"):
        yaml_io._check_expansion(graph(nested(MAX_NESTING + 1)))
