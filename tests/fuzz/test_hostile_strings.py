"""Hostile strings in every free-text field: rejected with a located error, or round-trip equal.

For each string field the schema leaves free (no pattern), a set of hostile values (quotes, `#`,
`:`, `;`, newlines, `<`/`&`, `${}`/`{{ }}`, shell metacharacters, non-ASCII, very long …) is put
into an example stack. The spec must then either be rejected with `file: path: message` errors,
or render artifacts that all pass their validators and, parsed back in their own format (YAML,
Flink's legacy format, the operator's CRD), carry the value exactly.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml
from accelplane._generated.schema_fast import is_valid
from accelplane.builders import build_all
from accelplane.errors import SpecErrors
from accelplane.pipeline import load_validated
from accelplane.render import bundle_files
from accelplane.spec_loader import load_spec

from tests.conftest import EXAMPLE_SPECS
from tests.support.hostile import WHITESPACE_VARIANTS, string_sites, with_variant
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for
from tests.support.specs import write_spec
from tests.support.validators import validate_rendered_files

pytestmark = pytest.mark.slow  # renders every example stack once per hostile value (minutes)

HOSTILE = [
    "double \" and single ' quotes",
    "hash # not a comment",
    "#leading-hash",
    "colon: value",
    "semi;colon;list",
    "line\nbreak",
    "tab\there",
    'xml <tag attr="x"> & ]]> &amp;',
    "${HOME} $(rm -rf /) `id` ; | && > /tmp/x",
    "{{ jinja }} {% raw %} {# c #}",
    "ünïcødé ✓ 中文 🚀",
    "x" * 5000,
    "  padded  ",
    "- dash",
    "*alias &anchor !tag",
    "null",
    "true",
    "0123",
    "1e3",
    "back\\slash",
    "",
    # Issue 15 §6: characters a YAML stream may not carry raw, and terminal/direction controls.
    "del\x7f c1\x85\x9b nonchar\ufffe\uffff",
    "esc\x1b]0;title\x07 \x1b[2J nul\x00",
    "bidi\u202eevil\u202c",
    # Issue 26: Python's `$` matches before one final newline; surrounding space.
    "ends-in-newline\n",
    "trailing-space ",
    " leading-space",
]

Mutation = Callable[[dict[str, Any], str], None]


def _cluster(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in doc["flink"]["clusters"] if c["name"] == name)


def _set_config(name: str) -> Mutation:
    def mutate(doc: dict[str, Any], value: str) -> None:
        _cluster(doc, name).setdefault("config", {})["pipeline.name"] = value

    return mutate


def _parse_legacy(text: str) -> dict[str, str]:
    """Flink's legacy flink-conf.yaml reader: `#` ends the line, split at the first ': '."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        key, sep, value = line.partition(": ")
        if sep and value.strip():
            out[key.strip()] = value.strip()
    return out


def _k8s(files: dict[str, tuple[str, int]], kind: str, name: str) -> dict[str, Any]:
    for path, (text, _) in files.items():
        if path.startswith("kubernetes/"):
            obj = yaml.safe_load(text)
            if obj["kind"] == kind and obj["metadata"]["name"] == name:
                return obj  # type: ignore[no-any-return]
    raise AssertionError(f"{kind}/{name} not rendered")


# (id, stack, file to mutate relative to stacks/, mutation, check of the rendered files)
CASES: list[tuple[str, str, str, Mutation, Callable[[dict[str, tuple[str, int]], str], None]]] = [
    (
        "priorityclass-description",
        "prod-eu",
        "base/gpu-platform.yaml",
        lambda d, v: d["priorityClasses"][0].__setitem__("description", v),
        lambda f, v: _check_eq(_k8s(f, "PriorityClass", "flink-critical").get("description"), v),
    ),
    (
        "operator-job-args",
        "prod-eu",
        "prod-eu.yaml",
        lambda d, v: _cluster(d, "embeddings-amd")["job"]["args"].append(v),
        lambda f, v: _check_eq(_k8s(f, "FlinkDeployment", "embeddings-amd")["spec"]["job"]["args"][-1], v),
    ),
    (
        "config-yaml-value-kubernetes",
        "prod-eu",
        "prod-eu.yaml",
        _set_config("fraud-scoring"),
        lambda f, v: (
            _check_eq(yaml.safe_load(f["flink/fraud-scoring/config.yaml"][0])["pipeline.name"], v),
            _check_eq(
                yaml.safe_load(_k8s(f, "ConfigMap", "accelplane-flink-fraud-scoring")["data"]["config.yaml"])[
                    "pipeline.name"
                ],
                v,
            ),
        ),
    ),
    (
        "operator-flink-configuration",
        "prod-eu",
        "prod-eu.yaml",
        _set_config("embeddings-amd"),
        lambda f, v: _check_eq(
            _k8s(f, "FlinkDeployment", "embeddings-amd")["spec"]["flinkConfiguration"]["pipeline.name"], v
        ),
    ),
    (
        "config-yaml-value-yarn",
        "yarn-analytics",
        "yarn-analytics.yaml",
        _set_config("sessions-v100"),
        lambda f, v: _check_eq(yaml.safe_load(f["flink/sessions-v100/config.yaml"][0])["pipeline.name"], v),
    ),
    (
        "legacy-flink-conf-value",
        "edge-standalone",
        "edge-standalone.yaml",
        lambda d, v: d["flink"]["clusters"][0].setdefault("config", {}).__setitem__("pipeline.name", v),
        lambda f, v: _check_eq(
            _parse_legacy(next(t for p, (t, _) in f.items() if p.endswith("flink-conf.yaml")))[
                "pipeline.name"
            ],
            v,
        ),
    ),
    (
        "descriptions",
        "prod-eu",
        "prod-eu.yaml",
        lambda d, v: (
            d["cluster"].__setitem__("description", v),
            d["queues"][0].__setitem__("description", v),
            d["nodePools"][0].__setitem__("description", v),
        ),
        lambda f, v: None,
    ),
    (
        "taskmanager-gpu-model",
        "yarn-analytics",
        "yarn-analytics.yaml",
        lambda d, v: d["flink"]["clusters"][0]["taskManager"]["gpu"].__setitem__("model", v),
        lambda f, v: None,
    ),
    (
        "yarn-resource-type-name",
        "yarn-analytics",
        "yarn-analytics.yaml",
        lambda d, v: d["yarn"]["resourceTypes"][0].__setitem__("name", v),
        lambda f, v: None,
    ),
]


def _check_eq(actual: Any, expected: str) -> None:
    assert actual == expected, f"round trip changed the value: {expected!r} -> {actual!r}"


@pytest.fixture(scope="module")
def stacks_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stacks")
    shutil.copytree(REPO_ROOT / "stacks", root / "stacks")
    return root / "stacks"


@pytest.mark.parametrize(
    ("stack", "target", "mutate", "check"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_hostile_strings(
    stacks_copy: Path, stack: str, target: str, mutate: Mutation, check: Callable[..., None]
) -> None:
    original = (REPO_ROOT / "stacks" / target).read_text(encoding="utf-8")
    outcomes: dict[str, str] = {}
    try:
        for value in HOSTILE:
            doc = yaml.safe_load(original)
            mutate(doc, value)
            write_spec(stacks_copy, doc, target)
            try:
                validated = load_validated(stacks_copy / f"{stack}.yaml")
            except SpecErrors as exc:
                for error in exc.errors:
                    assert error.file.endswith((f"{stack}.yaml", target)) and error.path and error.message, (
                        error
                    )
                outcomes[value] = "rejected"
                continue
            files = bundle_files(build_all(validated.model))
            validate_rendered_files(files)
            check(files, value)
            outcomes[value] = "accepted"
    finally:
        (stacks_copy / target).write_text(original, encoding="utf-8")
    assert set(outcomes) == set(HOSTILE)


def test_free_values_are_mostly_accepted_where_formats_allow(stacks_copy: Path) -> None:
    """YAML-based artifacts can carry any string: no hostile value may be rejected there, except the
    empty string (an empty Flink setting is refused with a located error: remove the key)."""
    target = stacks_copy / "prod-eu.yaml"
    original = target.read_text(encoding="utf-8")
    try:
        for value in [v for v in HOSTILE if v]:
            doc = yaml.safe_load(original)
            _set_config("fraud-scoring")(doc, value)
            if len(value) <= 4096:  # the schema's limit for one argument
                _cluster(doc, "embeddings-amd")["job"]["args"].append(value)
            write_spec(target.parent, doc, target.name)
            files = files_for(target)
            _check_eq(yaml.safe_load(files["flink/fraud-scoring/config.yaml"][0])["pipeline.name"], value)
    finally:
        target.write_text(original, encoding="utf-8")


def test_long_values_are_quoted_shortened_in_errors(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {"cluster": {"name": "c" * 5000, "platforms": ["kubernetes"]}})
    with pytest.raises(SpecErrors) as exc:
        load_validated(spec)
    (error,) = exc.value.errors
    assert error.path == "cluster.name" and "(5000 chars)" in error.message and len(error.message) < 200


# --- Issue 26: a trailing newline, a trailing space, a leading space in every string ---------------

LONG = os.environ.get("ACCELPLANE_FUZZ_PROFILE") == "long"
REJECTED_STRIDE = 1 if LONG else 7
"""Schema-rejected variants run through the whole loader: all of them in the long profile (`make
fuzz`), every 7th in CI (the fast and the authoritative validator agree on all of them either way,
tests/fuzz/test_schema_fast_agrees.py). Every schema-accepted variant is rendered in both profiles."""


def _shape(value: Any) -> Any:
    """The structure of a parsed document: maps and lists with their sizes, every scalar a type."""
    if isinstance(value, dict):
        return ("map", tuple(_shape(v) for v in value.values()))
    if isinstance(value, list):
        return ("list", tuple(_shape(v) for v in value))
    return type(value).__name__


def _structure(path: str, text: str) -> Any:
    """What must not change when one string of the spec changes: the parsed shape of a YAML, JSON
    or XML file; the number of lines of any other file (a script, a legacy flink-conf.yaml): a
    value never adds a line, so it never adds a command or a setting."""
    if path.endswith((".yaml", ".yml", ".json")):
        return [_shape(doc) for doc in yaml.load_all(text, Loader=yaml.CSafeLoader)]
    if path.endswith(".xml"):
        root = ElementTree.fromstring(text)
        return [(el.tag, sorted(el.attrib), len(el)) for el in root.iter()]
    return text.count("\n")


FREE_TEXT = frozenset({"description", "args", "config", "reason"})
"""Fields whose values are free text (no name, no model, nothing compared with what a driver
reports; ``reason`` is a `lint.ignore` entry's note for reviewers): the only strings that may keep a
trailing newline or surrounding space."""


def _variants(stack: Path) -> Iterator[tuple[str, bool, Any]]:
    """(label, whether the site is free text, the document) for every site and variant."""
    data = load_spec(stack).data
    for site in string_sites(data):
        free = not site.is_key and any(part in FREE_TEXT for part in site.path)
        for name, variant in WHITESPACE_VARIANTS.items():
            yield f"{site} {name}", free, with_variant(data, site, variant)


@pytest.mark.parametrize("stack", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_whitespace_variants_of_every_string(stack: Path, tmp_path: Path) -> None:
    """Every string leaf and map key of an example stack with a trailing "\\n", a trailing space and
    a leading space: never a traceback; a rejection names file and path; an acceptance renders the
    same files with the same structure (a value never becomes a line of YAML, XML or shell)."""
    spec = tmp_path / "spec.yaml"
    baseline = {path: text for path, (text, _) in bundle_files(build_all(load_validated(stack).model)).items()}
    rejected = accepted = 0
    for label, free_text, document in _variants(stack):
        if not is_valid(document):
            rejected += 1
            if rejected % REJECTED_STRIDE:
                continue
        spec.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
        try:
            validated = load_validated(spec)
        except SpecErrors as exc:
            assert exc.errors, label
            for error in exc.errors:
                assert error.file.endswith("spec.yaml") and error.path and error.message, (label, error)
            continue
        accepted += 1
        assert free_text, f"{label}: a name or model with surrounding whitespace was accepted"
        files = bundle_files(build_all(validated.model))
        assert sorted(files) == sorted(baseline), f"{label}: the rendered files changed"
        for path, (text, _) in files.items():
            if text != baseline[path]:
                assert _structure(path, text) == _structure(path, baseline[path]), (
                    f"{label}: the structure of {path} changed"
                )
    assert rejected and accepted, (rejected, accepted)


LOADER_KEYS = frozenset({"extends", "$remove", "$schema"})
"""Strings the loader consumes before the merged document exists (so `load_spec(...).data` has none)."""


def test_whitespace_variants_of_loader_strings(stacks_copy: Path) -> None:
    """`extends` entries and `$remove` keys of every example stack file, with the same variants:
    refused with a located error (a base path with a newline or space is no base)."""
    checked = 0
    for stack in EXAMPLE_SPECS:
        original = stack.read_text(encoding="utf-8")
        doc = yaml.safe_load(original)
        try:
            for site in string_sites(doc):
                if not LOADER_KEYS & {p for p in site.path if isinstance(p, str)}:
                    continue
                for name, variant in WHITESPACE_VARIANTS.items():
                    write_spec(stacks_copy, with_variant(doc, site, variant), stack.name)
                    with pytest.raises(SpecErrors) as exc:
                        load_validated(stacks_copy / stack.name)
                    assert all(e.path and e.message for e in exc.value.errors), (site, name)
                    checked += 1
        finally:
            (stacks_copy / stack.name).write_text(original, encoding="utf-8")
    assert checked


# --- Issue 37: NUL in every string, over-long keys on every map ------------------------------------

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
"""C0 controls (tab and newline excepted) and DEL: what no rendered file may carry raw (a NUL in a
start script made git show "Binary files differ", so review saw nothing)."""
LONG_KEY = "k" * 1100
"""Longer than YAML's 1,024-character limit on implicit keys (PyYAML and SnakeYAML refuse it)."""

NUL_AND_LONG_KEY: dict[str, Any] = {
    "nul": lambda s: s[:1] + "\x00" + s[1:],
    "long-key": lambda s: s + LONG_KEY,
}


def _nul_and_long_key_variants(stack: Path) -> Iterator[tuple[str, Any]]:
    data = load_spec(stack).data
    for site in string_sites(data):
        yield f"{site} nul", with_variant(data, site, NUL_AND_LONG_KEY["nul"])
        if site.is_key:
            yield f"{site} long-key", with_variant(data, site, NUL_AND_LONG_KEY["long-key"])


@pytest.mark.parametrize("stack", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_nul_and_long_keys_on_every_string(stack: Path, tmp_path: Path) -> None:
    """A NUL in every string leaf and map key, and every map key made longer than 1,024 characters:
    never a traceback; refused with file and path, or rendered with no raw control character in
    any file and every file the same shape (each YAML file parses: no key beyond YAML's limit)."""
    spec = tmp_path / "spec.yaml"
    baseline = {path: text for path, (text, _) in bundle_files(build_all(load_validated(stack).model)).items()}
    bad: list[str] = []
    for label, document in _nul_and_long_key_variants(stack):
        if not is_valid(document):
            continue  # the schema refuses it; the fast and the full validator agree (test_schema_fast_agrees)
        spec.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
        try:
            validated = load_validated(spec)
        except SpecErrors as exc:
            assert all(e.file.endswith("spec.yaml") and e.path and e.message for e in exc.errors), label
            continue
        files = bundle_files(build_all(validated.model))
        for path, (text, _) in files.items():
            if RAW_CONTROL.search(text):
                bad.append(f"{label}: raw control character in {path}")
            elif path in baseline and text != baseline[path]:
                try:
                    same = _structure(path, text) == _structure(path, baseline[path])
                except (yaml.YAMLError, ElementTree.ParseError) as exc:
                    bad.append(f"{label}: {path} does not parse: {str(exc).splitlines()[0]}")
                    continue
                if not same:
                    bad.append(f"{label}: the structure of {path} changed")
    assert bad == [], "\n".join(bad)
