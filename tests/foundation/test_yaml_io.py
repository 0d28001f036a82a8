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

from tests.support.paths import SOURCE_ROOT

STACKS = sorted(p for p in (SOURCE_ROOT.parent / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi."))

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["yes", "No", "null", "~", "123", "0o17", "1e3", "", "a: b", "#c", "- x", "x\n", "x\ny", "  x\ny\n",
     "x\n\n", "it's", '"q"', "\ttab", "é", "key:", "[a]", "{b}", "*a", "&a", "!t", "%x", "@x", "`x", "..."]
)
_scalars = st.none() | st.booleans() | st.integers() | st.floats() | _text
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
    # Unicode line breaks (NEL, LS, PS): PyYAML indents what follows them by context
    breaks = ({"0": ["\x85"]}, {"k": ["\n:\x85:"]}, {"k\u2028": 1}, {"a": {"b": "x\u2029y\n"}})
    for data in ({"f": 1.5}, {1: "a"}, {"long": "x " * 3000}, "scalar", [], {"k": ("t",)}, *breaks):
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


_lines = st.lists(
    st.text(st.sampled_from(["a", "b", " ", ":", "#", "-", "'", '"', "|", "\t", "é", "\x85", "\u2028", "\x7f"]),
            max_size=6),
    min_size=2, max_size=5,
)


@settings(max_examples=500, deadline=None)
@given(_lines, st.sampled_from(["", "\n", "\n\n"]))
def test_literal_blocks_written_directly_are_pyyamls(lines: list[str], end: str) -> None:
    """Multi-line strings that `_literal` writes without PyYAML come out byte for byte as PyYAML
    writes them, as a mapping value, a list item and nested deeper; the rest is left to PyYAML."""
    from accelplane.yaml_io import clear_caches

    text = "\n".join(lines) + end
    clear_caches()
    for data in ({"k": text}, {"k": [text, {"n": text}]}, {"a": {"b": text}}):
        assert dump_yaml(data) == _pyyaml_dump(data), data


def test_a_renders_multi_line_strings_skip_pyyaml() -> None:
    """Not vacuous: nearly every multi-line string of the example renders (configuration files, pod
    templates, scripts inside ConfigMaps) is written by `_literal`, and exactly as PyYAML would."""
    from accelplane.yaml_io import _literal, clear_caches

    texts = set()
    for spec in STACKS:
        for obj in render_spec(spec).bundle.objects:
            for value in (obj.manifest.get("data") or {}).values():
                if isinstance(value, str) and "\n" in value:
                    texts.add(value)
    direct = [t for t in texts if _literal(t) is not None]
    assert len(texts) > 20 and len(direct) >= 0.9 * len(texts)
    clear_caches()
    for text in direct:
        assert dump_yaml({"k": text}) == _pyyaml_dump({"k": text})


_name_like = st.text(st.sampled_from(list("aeyYnNoOtTrRuUfFlLsS0123456789._-/xXbB+~")), min_size=1, max_size=8)


@pytest.mark.slow
@settings(max_examples=800, deadline=None)
@given(st.lists(_name_like, min_size=1, max_size=6))
def test_names_written_plain_are_pyyamls(names: list[str]) -> None:
    """Names, label keys and quantities `_plain` writes without PyYAML, against PyYAML's bytes,
    with the resolver's edge cases (``yes``, ``No``, ``null``, ``~``, ``1_000``, ``0x1F``,
    ``0b101``, ``1e3``, ``.5``, ``1.``) as values, keys and list items."""
    from accelplane.yaml_io import clear_caches

    clear_caches()
    data = {"k": names, **{n: n for n in names}, "m": {n: [n] for n in names}}
    assert dump_yaml(data) == _pyyaml_dump(data)


def test_a_renders_names_skip_pyyaml() -> None:
    """Not vacuous: `_plain` takes most of an example render's distinct strings."""
    from accelplane.yaml_io import _plain

    strings: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                strings.add(k)
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)
        elif isinstance(value, str) and "\n" not in value:
            strings.add(value)

    for obj in render_spec(STACKS[0]).bundle.objects:
        collect(obj.manifest)
    assert len(strings) > 100 and sum(map(_plain, strings)) >= 0.7 * len(strings)


_prose_like = st.lists(
    st.sampled_from([*list("aZ09 :#-?.,[]{}!&*'\"%@`|>~=<$(+;^\\/_\t"), "yes", "null", ": ", " #", "...", "---",
                     "-c", "--", "? ", "- ", "768", "1.5", "0x1F", "~", "''"]),
    min_size=1, max_size=10,
).map("".join)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.lists(_prose_like, min_size=1, max_size=6))
def test_one_line_text_written_plain_or_quoted_is_pyyamls(texts: list[str]) -> None:
    """One-line text `_plain_value` and `_single_quoted` write without PyYAML (prose with spaces and
    punctuation, flags, numbers as strings) against PyYAML's bytes, as values and list items, with
    every indicator PyYAML looks for and every type the resolver knows."""
    from accelplane.yaml_io import clear_caches

    clear_caches()
    data = {"k": texts, "m": {f"k{i}": t for i, t in enumerate(texts)}}
    assert dump_yaml(data) == _pyyaml_dump(data)


def test_every_example_render_is_written_without_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous, and what a cold render costs: every string, number and float of every example
    stack's render (objects and files, empty caches as in a new process) is written directly, none
    by PyYAML's pure-Python emitter. A new failure means a render gained a kind of value the direct
    writer leaves to PyYAML (the byte-for-byte tests above still hold): teach the writer, or accept
    the cost knowingly here."""
    from accelplane import yaml_io
    from accelplane.render import bundle_files

    calls: list[Any] = []
    dump = yaml_io._pyyaml_dump
    monkeypatch.setattr(yaml_io, "_pyyaml_dump", lambda data: calls.append(data) or dump(data))
    for spec in STACKS:
        yaml_io.clear_caches()
        bundle_files(render_spec(spec).bundle)
    assert calls == []


@pytest.mark.parametrize("value", [1.0, 8.0, 0.1, -2.5, 1e16, 1e-7, 5e-324, 0.0, -0.0])
def test_floats_written_directly_are_pyyamls(value: float) -> None:
    """Finite floats (a FlinkDeployment's CPU) are written as PyYAML's representer writes them
    (``1e+16`` as ``1.0e+16``); infinities and NaN go to PyYAML (`test_same_bytes_as_pyyaml`)."""
    from accelplane.yaml_io import _float

    data = {"k": value, "l": [value, {"m": value}]}
    assert dump_yaml(data) == _pyyaml_dump(data)
    assert yaml.safe_load(dump_yaml(data)) == data
    assert _float(value) in dump_yaml(data)


@pytest.mark.parametrize("words", [100, 180])
def test_long_one_line_values_such_as_jvm_option_lists_are_pyyamls(words: int) -> None:
    """Lines up to the direct writer's limit (Flink's ``env.java.opts.all`` is ~1100 characters)
    are written plain, byte for byte as PyYAML writes them (no folding below 4096 columns)."""
    from accelplane.yaml_io import clear_caches

    clear_caches()
    text = " ".join(f"--add-opens=java.base/p{i}=ALL-UNNAMED"[:10] for i in range(words))[:1999]
    data = {"k": text, "m": {"n": [text]}}
    assert dump_yaml(data) == _pyyaml_dump(data)
