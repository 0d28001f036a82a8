"""`dump_yaml` (libyaml's emitter) writes what reads back as the data, deterministically, with literal
blocks for multi-line strings; the strict loaders read the same documents alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.pipeline import render_spec
from accelplane.yaml_io import dump_yaml, load_yaml_text
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import SOURCE_ROOT

STACKS = sorted(p for p in (SOURCE_ROOT.parent / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi."))

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["yes", "No", "null", "~", "123", "0o17", "1e3", "", "a: b", "#c", "- x", "x\n", "x\ny", "  x\ny\n",
     "x\n\n", "it's", '"q"', "\ttab", "é", "key:", "[a]", "{b}", "*a", "&a", "!t", "%x", "@x", "`x", "..."]
)
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4), max_leaves=25
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_text, _values, max_size=5))
def test_what_we_write_reads_back_as_the_data(data: dict[str, Any]) -> None:
    text = dump_yaml(data)
    assert yaml.safe_load(text) == data
    assert load_yaml_text(text, "x") == data
    assert dump_yaml(data) == text  # deterministic
    assert text.endswith("\n")


@pytest.mark.parametrize("spec", STACKS, ids=lambda p: p.name)
def test_every_example_object_reads_back(spec: Path) -> None:
    for obj in render_spec(spec).bundle.objects:
        text = dump_yaml(obj.manifest)
        assert yaml.safe_load(text) == obj.manifest


def test_layout() -> None:
    """Sorted keys, block style, lists as libyaml writes them (not indented under their key), a
    multi-line string as a literal block, no anchors for shared values, a StrEnum as its text."""
    from enum import StrEnum

    class Target(StrEnum):
        K8S = "kubernetes"

    shared = ["x"]
    data = {"b": {"list": [1, {"k": "v"}], "s": "one\ntwo\n"}, "a": [shared, shared], "t": Target.K8S}
    assert dump_yaml(data) == (
        "a:\n- - x\n- - x\nb:\n  list:\n  - 1\n  - k: v\n  s: |\n    one\n    two\nt: kubernetes\n"
    )
    assert dump_yaml({}) == "{}\n" and dump_yaml([]) == "[]\n"


def test_multi_line_strings_of_the_example_renders_are_literal_blocks() -> None:
    """Configuration files, pod templates and scripts inside ConfigMaps stay readable in a review."""
    texts = {
        value
        for spec in STACKS
        for obj in render_spec(spec).bundle.objects
        for value in (obj.manifest.get("data") or {}).values()
        if isinstance(value, str) and "\n" in value
    }
    literal = [t for t in texts if dump_yaml({"k": t}).startswith("k: |")]
    assert len(texts) > 20 and len(literal) >= 0.9 * len(texts)


def _libyaml_loaders() -> list[Any]:
    """Both libyaml loaders: the one libyaml's own nesting limit allows (`_FastLoader`) and the
    other, so each is tested whichever libyaml this machine has."""
    from accelplane import yaml_io

    assert yaml_io._FastLoader is not None, "PyYAML without libyaml: the fast loader is never used"
    return [yaml_io._CComposedLoader, yaml_io._CStrictLoader]


def test_the_fast_loader_composes_in_c_only_where_libyaml_bounds_nesting() -> None:
    from accelplane import yaml_io

    deep = "[" * 1_001 + "]" * 1_001
    try:
        yaml.compose(deep, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        assert "maximum nesting depth" in str(exc)
        assert yaml_io._FastLoader is yaml_io._CComposedLoader
    else:
        assert yaml_io._FastLoader is yaml_io._CStrictLoader
    assert yaml_io._libyaml_bounds_nesting() is (yaml_io._FastLoader is yaml_io._CComposedLoader)


@pytest.mark.parametrize("spec", STACKS, ids=lambda p: p.name)
def test_libyaml_and_pure_python_loaders_agree(spec: Path) -> None:
    from accelplane.yaml_io import _StrictLoader

    text = spec.read_text(encoding="utf-8")
    for loader in _libyaml_loaders():
        assert yaml.load(text, Loader=loader) == yaml.load(text, Loader=_StrictLoader), loader


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_text, _values, max_size=5))
def test_loaders_agree_on_what_we_write(data: dict[str, Any]) -> None:
    from accelplane.yaml_io import _StrictLoader, load_yaml_text

    text = yaml.safe_dump(data, allow_unicode=True)
    expected = yaml.load(text, Loader=_StrictLoader)
    assert load_yaml_text(text, "x") == expected
    for loader in _libyaml_loaders():
        assert yaml.load(text, Loader=loader) == expected, loader


def test_duplicate_keys_are_refused_with_the_pure_parsers_position() -> None:
    from accelplane.yaml_io import YamlSyntaxError, load_yaml_text

    with pytest.raises(YamlSyntaxError, match=r"line 2, column 1: invalid YAML: duplicate key 'a'"):
        load_yaml_text("a: 1\na: 2\n", "spec.yaml")


@pytest.mark.parametrize("words", [100, 180])
def test_long_one_line_values_such_as_jvm_option_lists_stay_on_one_line(words: int) -> None:
    """Flink's ``env.java.opts.all`` is ~1100 characters: written on one line (no folding below
    4096 columns), read back equal."""
    text = " ".join(f"--add-opens=java.base/p{i}=ALL-UNNAMED" for i in range(words))[:1999]
    out = dump_yaml({"k": text})
    assert out.count("\n") == 1 and yaml.safe_load(out) == {"k": text}
