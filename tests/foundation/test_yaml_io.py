"""`dump_yaml` writes exactly PyYAML's bytes (`_pyyaml_dump`) for every value, fast path or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.pipeline import render_spec
from accelplane.yaml_io import _pyyaml_dump, dump_yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.validators import SOURCE_ROOT

STACKS = sorted(p for p in (SOURCE_ROOT.parent / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi."))

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["yes", "No", "null", "~", "123", "0o17", "1e3", "", "a: b", "#c", "- x", "x\n", "x\ny", "  x\ny\n",
     "x\n\n", "it's", '"q"', "\ttab", "é", "key:", "[a]", "{b}", "*a", "&a", "!t", "%x", "@x", "`x", "..."]
)
_scalars = st.none() | st.booleans() | st.integers() | _text
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4), max_leaves=25
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_text, _values, max_size=5))
def test_same_bytes_as_pyyaml(data: dict[str, Any]) -> None:
    assert dump_yaml(data) == _pyyaml_dump(data)


@pytest.mark.parametrize("spec", STACKS, ids=lambda p: p.name)
def test_same_bytes_as_pyyaml_for_every_example_object(spec: Path) -> None:
    for obj in render_spec(spec).bundle.objects:
        text = dump_yaml(obj.manifest)
        assert text == _pyyaml_dump(obj.manifest)
        assert yaml.safe_load(text) == obj.manifest


def test_unsupported_values_go_through_pyyaml() -> None:
    for data in ({"f": 1.5}, {1: "a"}, {"long": "x " * 3000}, "scalar", [], {"k": ("t",)}):
        assert dump_yaml(data) == _pyyaml_dump(data)


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
