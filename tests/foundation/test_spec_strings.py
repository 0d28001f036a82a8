"""Issue 26: a trailing newline or surrounding space gets through no pattern, and names fit file names.

Every reproducer of the hostile-input review is here as a spec (an example stack with one string
changed) and the error it now gets; before the fix each rendered something broken (a template line
run as a command in a host script, a DeviceClass selecting nothing, a second Namespace) or ended in
a traceback. The property over every string of every example stack is in
tests/fuzz/test_hostile_strings.py; the agreement of both schema validators on that corpus in
tests/fuzz/test_schema_fast_agrees.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from accelplane.cli import main
from accelplane.errors import SpecErrors
from accelplane.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_valid_yarn_resource_name,
)
from accelplane.pipeline import load_validated
from accelplane.schema_document import python_pattern
from accelplane.spec_loader import load_spec

from tests.support.paths import REPO_ROOT, SOURCE_ROOT
from tests.support.specs import findings_by_code, write_spec

Mutation = Callable[[dict[str, Any]], None]


def _pool(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in doc["nodePools"] if p["name"] == name)


def _set(*path: str | int, value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value

    return mutate


def _rename_key(*path: str | int, old: str, new: str) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        node: Any = doc
        for part in path:
            node = node[part]
        node[new] = node.pop(old)

    return mutate


# (id, example stack, mutation, the path of the error, a part of its message)
REPRODUCERS: list[tuple[str, str, Mutation, str, str]] = [
    (
        "standalone-cluster-name-newline",
        "edge-standalone",
        _set("flink", "clusters", 0, "name", value="tm\n"),
        "flink.clusters[0].name",
        "'tm\\n'",
    ),
    (
        "gpu-model-newline-host-script",
        "edge-standalone",
        _set("nodePools", 0, "gpu", "model", value="NVIDIA L4\n"),
        "nodePools[0].gpu.model",
        "words separated by single spaces",
    ),
    (
        "gpu-model-trailing-space-dra-cel",
        "dra-gpus",
        _set("nodePools", 0, "gpu", "model", value="NVIDIA A100-SXM4-80GB "),
        "nodePools[0].gpu.model",
        "words separated by single spaces",
    ),
    (
        "gpu-model-leading-space",
        "yarn-analytics",
        _set("nodePools", 0, "gpu", "model", value=" Tesla V100-SXM2-32GB"),
        "nodePools[0].gpu.model",
        "words separated by single spaces",
    ),
    (
        "host-name-newline",
        "edge-standalone",
        _set("nodePools", 0, "hosts", 0, value="edge-gpu-01.example.internal\n"),
        "nodePools[0].hosts[0]",
        "DNS-1123",
    ),
    (
        "multi-model-host-name-newline",
        "edge-multimodel",
        _set("nodePools", 1, "hosts", 1, value="gpu-mix-01.example.internal\n"),
        "nodePools[1].hosts[1]",
        "DNS-1123",
    ),
    (
        "namespace-newline",
        "prod-eu",
        _set("flink", "clusters", 0, "namespace", value="flink\n"),
        "flink.clusters[0].namespace",
        "'flink\\n'",
    ),
    (
        "mig-layout-key-newline",
        "shared-gpus",
        lambda d: _rename_key("gpu", "mig", "devices", old="1g.10gb", new="1g.10gb\n")(_pool(d, "a100-mig")),
        "nodePools[1].gpu.mig.devices.1g.10gb\n",
        "key '1g.10gb\\n'",
    ),
    (
        "label-value-newline",
        "dra-gpus",
        _set("nodePools", 0, "labels", "accelplane.io/pool", value="a100-dra\n"),
        "nodePools[0].labels.accelplane.io/pool",
        "'a100-dra\\n'",
    ),
    (
        "traceback-cluster-name",
        "prod-eu",
        _set("cluster", "name", value="prod-eu\n"),
        "cluster.name",
        "DNS-1123",
    ),
    (
        "traceback-discovery-install-dir",
        "edge-standalone",
        _set("discovery", "installDir", value="/opt/flink/plugins/gpu\n"),
        "discovery.installDir",
        "'/opt/flink/plugins/gpu\\n'",
    ),
    (
        "traceback-discovery-user",
        "edge-standalone",
        _set("discovery", "user", value="flink\n"),
        "discovery.user",
        "'flink\\n'",
    ),
    (
        "traceback-discovery-group",
        "edge-standalone",
        _set("discovery", "group", value="flink\n"),
        "discovery.group",
        "'flink\\n'",
    ),
    (
        "traceback-node-image-base-image",
        "prod-eu",
        _set("nodeImage", "baseImage", value="flink:1.20.1-java17\n"),
        "nodeImage.baseImage",
        "'flink:1.20.1-java17\\n'",
    ),
    (
        "traceback-yarn-pool-name",
        "yarn-analytics",
        lambda d: (
            _set("nodePools", 0, "name", value="v100\n")(d),
            d["flink"]["clusters"][0]["taskManager"]["gpu"].__setitem__("pool", "v100\n"),
        ),
        "nodePools[0].name",
        "'v100\\n'",
    ),
    (
        "traceback-standalone-pool-name-assert",
        "edge-standalone",
        lambda d: (
            _set("nodePools", 0, "name", value="edge-l4\n")(d),
            d["flink"]["clusters"][0]["taskManager"]["gpu"].__setitem__("pool", "edge-l4\n"),
        ),
        "nodePools[0].name",
        "'edge-l4\\n'",
    ),
]


def _mutated(tmp_path: Path, stack: str, mutate: Mutation) -> Path:
    doc = load_spec(REPO_ROOT / "stacks" / f"{stack}.yaml").data
    mutate(doc)
    return write_spec(tmp_path, doc)


@pytest.mark.parametrize(
    ("stack", "mutate", "path", "message"), [r[1:] for r in REPRODUCERS], ids=[r[0] for r in REPRODUCERS]
)
def test_reproducer_is_refused_with_a_located_error(
    tmp_path: Path, stack: str, mutate: Mutation, path: str, message: str
) -> None:
    spec = _mutated(tmp_path, stack, mutate)
    with pytest.raises(SpecErrors) as exc:
        load_validated(spec)
    located = {e.path: e.message for e in exc.value.errors if not e.is_warning}
    assert path in located, located
    assert message in located[path]


@pytest.mark.parametrize("command", ["validate", "render", "diff"])
def test_cli_reports_a_newline_name_without_a_traceback(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`render` (twice into the same directory: `.accelplane-render` holds one file per line) and
    `diff` of a spec whose cluster name ends in a newline: a located error, never a traceback."""
    spec = _mutated(tmp_path, "edge-standalone", _set("cluster", "name", value="edge\n"))
    good = REPO_ROOT / "stacks" / "edge-standalone.yaml"
    argv = {
        "validate": [["validate", str(spec)]],
        "render": [["render", str(spec), "--out", str(tmp_path / "out")]] * 2,
        "diff": [["diff", str(good), str(spec)]],
    }[command]
    for args in argv:
        code = main(args)
        err = capsys.readouterr().err
        assert code == (2 if command == "diff" else 1), err
        assert "cluster.name" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(
    "check", [is_dns1123_label, is_dns1123_subdomain, is_label_value, is_valid_yarn_resource_name]
)
@pytest.mark.parametrize("value", ["flink\n", "flink ", " flink", "flink\r", "flink\n\n"])
def test_name_predicates_match_whole_strings(check: Callable[[str], bool], value: str) -> None:
    assert check("flink") and not check(value)


def test_python_pattern_is_ecma_dollar() -> None:
    assert python_pattern("^[a-z]+$") == "^[a-z]+\\Z"
    assert python_pattern("^[$a]+$") == "^[\\$a]+\\Z"  # a class's `$` is a literal dollar
    assert python_pattern(r"^a\$$") == r"^a\$\Z"  # an escaped dollar stays literal
    assert python_pattern("^(?!latest$)x$") == "^(?!latest\\Z)x\\Z"
    assert re.search(python_pattern("^[a-z]+$"), "flink") and not re.search(python_pattern("^[a-z]+$"), "flink\n")


def _anchored_end(pattern: str) -> bool:
    """True when ``pattern`` ends in an unescaped ``$`` (Python: also before a final newline)."""
    return pattern.endswith("$") and not pattern.endswith("\\$")


def test_no_regex_in_the_package_anchors_with_dollar() -> None:
    """Whole-string checks use ``fullmatch`` (or ``\\Z``): a regex literal ending in ``$`` would
    let a final newline through under ``match``/``search``. The discovery script is exempt: it
    ships on its own and applies its line patterns to lines of ``splitlines()``."""
    offenders = []
    for path in sorted((SOURCE_ROOT / "accelplane").rglob("*.py")):
        if path.name in ("schema_fast.py", "gpu_discovery.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and _anchored_end(node.args[0].value)
                and not any(k.arg == "flags" for k in node.keywords)
                and len(node.args) < 3
            ):
                offenders.append(f"{path.relative_to(SOURCE_ROOT)}:{node.lineno}")
    assert offenders == []


def _long_host(length: int) -> str:
    """A DNS subdomain of exactly ``length`` characters (labels of at most 63)."""
    labels, left = [], length
    while left > 0:
        size = min(63, left if left <= 63 else left - 2)
        labels.append("h" * size)
        left -= size + 1
    host = ".".join(labels)
    assert len(host) == length, host
    return host


def _with_host(tmp_path: Path, host: str) -> Path:
    return _mutated(tmp_path, "edge-standalone", _set("nodePools", 0, "hosts", 0, value=host))


def test_host_name_too_long_for_its_script_is_refused_at_validate(tmp_path: Path) -> None:
    """A 253-character host name is a valid DNS name, but ``<host>.sh`` has 256 bytes: refused at
    validate (AP1501) with the length that fits, instead of `render` failing with ENAMETOOLONG."""
    spec = _with_host(tmp_path, _long_host(253))
    with pytest.raises(SpecErrors) as exc:
        load_validated(spec)
    (error,) = exc.value.errors
    assert error.path == "nodePools[0].hosts" and error.finding is not None and error.finding.code == "AP1501"
    assert "256 bytes" in error.message and "at most 252 characters" in error.message


def test_longest_host_name_that_fits_renders(tmp_path: Path) -> None:
    """At the limit the real file system takes the file: render writes every file of the tree."""
    spec = _with_host(tmp_path, _long_host(252))
    out = tmp_path / "out"
    assert main(["render", str(spec), "--out", str(out)]) == 0
    assert (out / "flink" / "edge-inference" / "taskmanagers" / f"{_long_host(252)}.sh").is_file()


@pytest.mark.parametrize(
    ("stack", "mutate", "path"),
    [
        (
            "prod-eu",
            lambda d: (
                d["priorityClasses"][0].__setitem__("name", _long_host(240)),
                d["flink"]["defaults"].__setitem__("priorityClass", _long_host(240)),
            ),
            "priorityClasses[0].name",
        ),
        (
            "shared-gpus",
            lambda d: d["flink"]["clusters"][0].__setitem__("serviceAccount", _long_host(240)),
            "flink.clusters[0].serviceAccount",
        ),
    ],
    ids=["priority-class", "service-account"],
)
def test_object_names_too_long_for_their_file_are_refused(
    tmp_path: Path, stack: str, mutate: Mutation, path: str
) -> None:
    spec = _mutated(tmp_path, stack, mutate)
    with pytest.raises(SpecErrors) as exc:
        load_validated(spec)
    codes = {(e.path, e.finding.code if e.finding else None) for e in exc.value.errors}
    assert (path, "AP1501") in codes, codes


def test_ha_mode_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    """`high-availability.type: "kubernetes\\n"` is not Kubernetes HA to Flink (it compares the mode
    exactly, then loads a factory class of that name): an error, not a Role without HA rules."""
    spec = _mutated(tmp_path, "prod-eu", _set("flink", "clusters", 0, "config", "high-availability.type", value="kubernetes\n"))
    severity, path, message = findings_by_code(spec)["AP1502"]
    assert (severity, path) == ("error", "flink.clusters[0].config.high-availability.type")
    assert "write 'kubernetes'" in message


def test_flink_value_with_surrounding_space_is_a_warning(tmp_path: Path) -> None:
    spec = _mutated(tmp_path, "prod-eu", _set("flink", "clusters", 0, "config", "pipeline.name", value=" scoring "))
    severity, path, message = findings_by_code(spec)["AP1503"]
    assert (severity, path) == ("warning", "flink.clusters[0].config.pipeline.name")
    assert "write 'scoring'" in message


# --- Issue 37, items 12 and 13 ---------------------------------------------------------------------

CONTROL_IN_SCRIPT_VALUES = [
    ("env.pid.dir", "/var/run/fl\x00ink"),
    ("env.pid.dir", "/var/run/flink\n"),
    ("external-resource.gpu.param.discovery-script.args", "--enable-coordination-mode \x00"),
]


@pytest.mark.parametrize(("key", "value"), CONTROL_IN_SCRIPT_VALUES, ids=["nul", "newline", "args-nul"])
def test_control_character_in_a_value_start_scripts_carry_is_refused(tmp_path: Path, key: str, value: str) -> None:
    """Before: ``env.pid.dir`` with a NUL was written raw into the standalone start scripts (git then
    showed "Binary files differ", so review saw nothing)."""
    spec = _mutated(tmp_path, "edge-standalone", _set("flink", "clusters", 0, "config", key, value=value))
    severity, path, _ = findings_by_code(spec)["AP1560"]
    assert (severity, path) == ("error", f"flink.clusters[0].config.{key}")


def test_control_characters_elsewhere_in_flink_config_still_round_trip(tmp_path: Path) -> None:
    """config.yaml escapes them (docs/hardening.md): only values the scripts carry are refused."""
    spec = _mutated(tmp_path, "prod-eu", _set("flink", "clusters", 0, "config", "pipeline.name", value="a\x00b"))
    assert "AP1560" not in findings_by_code(spec)


@pytest.mark.parametrize(
    ("length", "refused"), [(1024, False), (1025, True)], ids=["1024-characters", "1025-characters"]
)
def test_flink_config_keys_are_bounded_by_yamls_implicit_key_limit(tmp_path: Path, length: int, refused: bool) -> None:
    """A key over 1,024 characters made the rendered config.yaml unparseable (PyYAML's and Flink's
    SnakeYAML Engine's limit on an implicit key, YAML 1.2 §7.4.2)."""
    import yaml

    from tests.support.render import files_for

    key = "connector." + "k" * (length - len("connector."))
    spec = _mutated(tmp_path, "prod-eu", _set("flink", "clusters", 0, "config", key, value="v"))
    if refused:
        assert findings_by_code(spec)["AP1008"][1] == f"flink.clusters[0].config.{key}"
        return
    name = load_spec(spec).data["flink"]["clusters"][0]["name"]
    assert yaml.safe_load(files_for(spec)[f"flink/{name}/config.yaml"][0])[key] == "v"


HA_VALUES = [
    ("kubernetes'", True), ("kubernetes\x00", True), ("kube rnetes", True), ("Kubernetes", False),
    ("ZOOKEEPER", False), ("standalone", False), ("NONE", False), ("com.example.ha.MyHaServicesFactory", False),
    ("MyFactory", True),
]  # fmt: skip


@pytest.mark.parametrize(("value", "refused"), HA_VALUES)
def test_ha_type_is_a_mode_or_a_factory_class(tmp_path: Path, value: str, refused: bool) -> None:
    """``high-availability.type: kubernetes'`` was accepted and the Role silently lost its ConfigMap
    rules (Flink loads any other value as a factory class, which fails)."""
    spec = _mutated(tmp_path, "prod-eu", _set("flink", "clusters", 0, "config", "high-availability.type", value=value))
    found = findings_by_code(spec)
    assert ("AP4060" in found) == refused, found
    if refused:
        assert found["AP4060"][:2] == ("error", "flink.clusters[0].config.high-availability.type")
