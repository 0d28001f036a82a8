"""Findings a user can act on (issue 28): every finding has a registered code and severity and is
documented; warnings pass, ``--strict`` fails them; a spec silences warnings (never errors); one
root cause gives one finding; and following a message's fix gives a valid spec."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.cli import main
from accelplane.errors import SpecErrors
from accelplane.findings import REGISTRY, Severity
from accelplane.findings_docs import DOC, load_all_findings, render
from accelplane.pipeline import load_validated

from tests.support.findings_text import FINDING_LINE, codes
from tests.support.specs import findings_of
from tests.support.yarn_specs import BASE as YARN_BASE

SOURCE = Path(__file__).resolve().parents[2] / "components" / "accelplane"
WriteSpec = Callable[..., Path]


# --- registry and docs ---------------------------------------------------------------------------


def test_docs_table_is_current() -> None:
    """docs/findings.md lists every registered code (run `make findings` after adding one)."""
    text = DOC.read_text(encoding="utf-8")
    assert render(text) == text, "docs/findings.md is stale: run `make findings`"
    for code in load_all_findings():
        assert f"| {code} |" in text


def _calls(name: str) -> list[tuple[Path, ast.Call]]:
    out = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [
            (path, n)
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == name
        ]
    return out


@pytest.mark.parametrize(("name", "position"), [("Problem", 2), ("SpecError", 3)])
def test_every_problem_is_made_with_a_finding(name: str, position: int) -> None:
    """Every Problem/SpecError the package makes names its finding (a registered code and severity)."""
    missing = [
        f"{path.relative_to(SOURCE)}:{call.lineno}"
        for path, call in _calls(name)
        if len(call.args) <= position and not any(k.arg == "finding" for k in call.keywords)
    ]
    assert missing == [], f"{name}(...) without a finding: {missing}"


def test_findings_are_only_made_by_declare() -> None:
    """A Finding made outside `declare` would be a code missing from REGISTRY and from the docs."""
    made = [f"{p.relative_to(SOURCE)}:{c.lineno}" for p, c in _calls("Finding") if p.name != "findings.py"]
    assert made == []


def test_registry_codes_are_well_formed_and_documented() -> None:
    found = load_all_findings()
    assert len(found) >= 150
    for code, f in found.items():
        assert f.code == code and f.summary and f.fix, code
        assert f.severity in (Severity.ERROR, Severity.WARNING)


EXAMPLES = sorted(p for p in (SOURCE.parents[1] / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_emit_only_registered_findings(path: Path) -> None:
    for f in findings_of(path):
        assert f.finding is not None and REGISTRY.get(f.finding.code) is f.finding, f


# --- severities, output and --strict --------------------------------------------------------------

HEAD = "cluster: {name: c, platforms: [kubernetes]}\n"
POOL = (
    "nodePools:\n"
    "  - {name: gpus, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}\n"
)
WEIGHT = HEAD + POOL + "queues:\n  - {name: a, weight: 3, deserved: {cpu: 8}}\n  - {name: b}\n"


def test_weight_under_capacity_validates_with_a_warning_and_renders(
    write_spec: WriteSpec, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_spec(WEIGHT)
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    (line, summary) = captured.err.splitlines()
    assert line.startswith(f"{path}: queues[0].weight: warning AP2101: Volcano's capacity plugin")
    assert summary == "accelplane: 1 warning"
    assert captured.out == f"{path}: ok (1 warning)\n"
    assert main(["render", str(path), "--out", str(tmp_path / "out")]) == 0
    assert "warning AP2101" in capsys.readouterr().err
    assert main(["validate", "--strict", str(path)]) == 1
    assert main(["validate", "-q", str(path)]) == 0


def test_report_lists_the_warnings(write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(WEIGHT)
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Warnings (1)" in out and "queues[0].weight: warning AP2101:" in out
    assert main(["report", "--format", "json", str(path)]) == 0
    (warning,) = json.loads(capsys.readouterr().out)["warnings"]
    assert (warning["code"], warning["path"], warning["severity"]) == ("AP2101", "queues[0].weight", "warning")
    assert main(["report", "--format", "markdown", str(path)]) == 0
    assert "### Warnings" in capsys.readouterr().out


def test_json_format(write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_spec(WEIGHT, "good.yaml")
    bad = write_spec(HEAD + "queues: [{name: a, parent: nowhere}]\n", "bad.yaml")
    assert main(["validate", "--format", "json", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.err == ""
    doc = json.loads(captured.out)
    assert (doc["errors"], doc["warnings"]) == (1, 1)
    first, second = doc["specs"]
    assert first["findings"][0]["code"] == "AP2101" and first["findings"][0]["fix"]
    assert second["findings"] == [
        {
            "file": str(bad),
            "path": "queues[0].parent",
            "line": 2,
            "severity": "error",
            "code": "AP2003",
            "message": "parent queue 'nowhere' is not defined in queues",
            "summary": REGISTRY["AP2003"].summary,
            "fix": REGISTRY["AP2003"].fix,
        }
    ]


def test_github_format(write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(WEIGHT)
    assert main(["validate", "--format", "github", str(path)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"::warning file={path},line=5,title=AP2101::queues[0].weight: Volcano's capacity plugin")


def test_text_lines_are_grouped_per_file_with_a_summary(
    write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    write_spec("queues:\n  - {name: a, weight: 0}\n", "base.yaml")
    path = write_spec("extends: [base.yaml]\n" + HEAD + POOL + "queues:\n  - {name: b, weight: 3, deserved: {cpu: 1}}\n")
    assert main(["validate", str(path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert [FINDING_LINE.match(x).group("file") for x in lines[:-1]] == [  # type: ignore[union-attr]
        str(path.parent / "base.yaml"),
        str(path),
    ]
    assert codes("\n".join(lines)) == ["AP1006", "AP2101"]
    assert lines[-1] == "accelplane: 1 error, 1 warning"


# --- lint.ignore -----------------------------------------------------------------------------------


def _codes(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    code = main(["validate", *extra, str(path)])
    return code, codes(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("ignore", "expected"),
    [
        ("[{code: AP2101}]", (0, [])),
        ("[{code: AP2101, path: 'queues[0].weight'}]", (0, [])),
        ("[{code: AP2101, path: 'queues[0]'}]", (0, [])),
        ("[{code: AP2101, path: 'queues[0].weight', reason: YARN comes next}]", (0, [])),
        ("[{code: AP2101, path: 'queues[1]'}]", (0, ["AP1301", "AP2101"])),
        ("[{code: AP2101}, {code: AP3100}]", (0, ["AP1301"])),
        ("[{code: AP2003}]", (1, ["AP1302", "AP2101"])),
        ("[{code: AP2101}, {code: AP9999}]", (0, ["AP1303"])),
        ("[{code: AP21}]", (1, ["AP1004"])),
        ("[{path: queues}]", (1, ["AP1002"])),
    ],
    ids=["everywhere", "at-path", "below-path", "with-reason", "other-path", "unused", "error-code",
         "unknown-code", "malformed-code", "no-code"],
)  # fmt: skip
def test_lint_ignore(
    ignore: str, expected: tuple[int, list[str]], write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_spec(WEIGHT + f"lint: {{ignore: {ignore}}}\n")
    assert _codes(path, capsys) == expected
    assert _codes(path, capsys, "--strict")[0] == (1 if expected[1] else 0)


def test_an_error_cannot_be_silenced(write_spec: WriteSpec) -> None:
    path = write_spec(HEAD + "queues: [{name: a, parent: nowhere}]\nlint: {ignore: [{code: AP2003}]}\n")
    with pytest.raises(SpecErrors) as exc:
        load_validated(path)
    assert sorted(e.finding.code for e in exc.value.errors if e.finding) == ["AP1302", "AP2003"]


def test_lint_ignore_by_path_in_a_base(write_spec: WriteSpec) -> None:
    """A warning in a base is silenced by its path in the merged document or in the base."""
    write_spec("queues:\n  - {name: a, weight: 3, deserved: {cpu: 8}}\n", "base.yaml")
    for where in ("queues[0].weight", "queues[0]"):
        path = write_spec(
            "extends: [base.yaml]\n" + HEAD + POOL + "queues:\n  - {name: b}\n"
            f"lint: {{ignore: [{{code: AP2101, path: '{where}'}}]}}\n",
            "spec.yaml",
        )
        assert load_validated(path).warnings == ()


# --- one root cause, one finding -------------------------------------------------------------------

SHARED_POOL = """\
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - name: shared
    nodes: 2
    cpu: 32
    memory: 128Gi
    labels: {pool: shared}
    gpu: {vendor: nvidia, perNode: 4, sharing: {strategy: STRATEGY, replicas: 4, renameByDefault: true}}
queues:
  - {name: a, capability: {cpu: 16, memory: 64Gi, pods: 20, nvidia.com/gpu.shared: 8}}
  - {name: b, capability: {cpu: 16, memory: 64Gi, pods: 20, nvidia.com/gpu.shared: 8}}
  - {name: c, deserved: {nvidia.com/gpu.shared: 2}, guarantee: {nvidia.com/gpu.shared: 1}}
flink:
  clusters:
    - name: f
      queue: a
      image: registry.example.com/flink-gpu:1.20.1
      discovery: {coordination: false}
      jobManager: {memory: 2Gi, cpu: 1}
      taskManager: {replicas: 2, memory: 8Gi, cpu: 2, gpu: {amount: 1, resource: nvidia.com/gpu.shared}}
"""

MISSPELT_KEY = """\
cluster: {name: c, platforms: [kubernetes]}
namespaces:
  flink-growth: {}
flink:
  clusters:
    - name: growth
      namespace: flink-growth
      jobManager: {memory: 2Gi, cpu: 1}
      taskmanager: {replicas: 2, memory: 8Gi, cpu: 2}
"""

CYCLE = """\
cluster: {name: c, platforms: [kubernetes]}
queues:
  - {name: a, parent: d, capability: {cpu: 1, memory: 1Gi}}
  - {name: b, parent: a, capability: {cpu: 1, memory: 1Gi}}
  - {name: c, parent: b, capability: {cpu: 1, memory: 1Gi}}
  - {name: d, parent: c, capability: {cpu: 2, memory: 2Gi}}
"""

YARN = """\
cluster: {name: y, platforms: [yarn]}
nodePools:
  - {name: v100, platform: yarn, nodes: 6, cpu: 64, memory: 512Gi, gpu: {vendor: nvidia, model: Tesla V100-SXM2-32GB, perNode: 4}}
  - {name: t4, platform: yarn, nodes: 10, cpu: 32, memory: 256Gi, gpu: {vendor: nvidia, model: Tesla T4, perNode: 2}}
EXTRA_POOLS
queues:
  - {name: analytics, weight: 3, capability: {cpu: 512, memory: 4Ti, pods: 1000}, deserved: DESERVED,
     gpuModels: {Tesla V100-SXM2-32GB: {capability: 24}, Tesla T4: {capability: 20}MODELS}}
  - {name: adhoc, weight: 1, capability: {cpu: 128, memory: 1Ti, pods: 200}, deserved: {cpu: 20, memory: 100Gi},
     gpuModels: {Tesla T4: {deserved: 8, capability: 12}}}
yarn:
  nodeLabels: true
  cgroups: v1
  resourceTypes:
    - {name: yarn.io/gpu, minimumAllocation: 0, maximumAllocation: 4}
"""
CPU_POOL = "  - {name: edge, platform: yarn, nodes: 4, cpu: 48, memory: 192Gi}\n"
A100_POOL = (
    "  - {name: a100, platform: yarn, nodes: 2, cpu: 64, memory: 512Gi, "
    "gpu: {vendor: nvidia, model: NVIDIA A100-SXM4-80GB, perNode: 4}}\n"
)
A100_MODEL = ", NVIDIA A100-SXM4-80GB: {deserved: 4}"


def _yarn(extra: str, deserved: str = "{cpu: 10, memory: 50Gi}", models: str = "") -> str:
    return YARN.replace("EXTRA_POOLS\n", extra).replace("DESERVED", deserved).replace("MODELS", models)


DRA_POOLS = """\
cluster: {name: d, platforms: [kubernetes]}
kubernetes: {version: "1.34"}
nodePools:
  - {name: a100, nodes: 2, labels: {accelplane.io/pool: a100}, gpu: {vendor: nvidia, model: NVIDIA A100-SXM4-80GB, perNode: 8, allocation: dra}}
  - {name: mi300x, nodes: 2, labels: {accelplane.io/pool: mi300x}, gpu: {vendor: amd, model: AMD Instinct MI300X OAM, perNode: 8, allocation: dra}}
  - {name: mi300x-b, nodes: 2, labels: {accelplane.io/pool: mi300x-b}, gpu: {vendor: amd, model: AMD Instinct MI300X OAM, perNode: 8, allocation: dra}}
monitoring: {enabled: true}
"""

YARN_BIG_TASKMANAGER = """\
cluster: {name: y, platforms: [yarn]}
nodePools:
  - {name: l4, platform: yarn, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}}
yarn:
  cgroups: v1
  maximumAllocation: {memory: 8Gi}
  resourceTypes: [{name: yarn.io/gpu, minimumAllocation: 0, maximumAllocation: 4}]
flink:
  clusters:
    - {name: f, target: yarn, taskManager: {replicas: 2, memory: 16Gi, cpu: 4, gpu: {amount: 1}}}
"""


CASCADES = {
    "enum-typo": (SHARED_POOL.replace("STRATEGY", "time-slicing"), ["AP1001"]),
    "enum-typo-derived-resource": (
        SHARED_POOL.replace("STRATEGY", "time-slicing").replace(", resource: nvidia.com/gpu.shared", ""),
        ["AP1001"],
    ),
    "misspelt-key": (MISSPELT_KEY, ["AP1003"]),
    "parent-cycle": (CYCLE, ["AP2005"]),
    "remove-nothing": (HEAD + "nodePools:\n  - {name: ghost, $remove: true}\n", ["AP1210"]),
    "yarn-labels-without-cpu-pool": (_yarn(""), ["AP5011"]),
    "yarn-deserved-over-partitions": (
        _yarn(CPU_POOL + A100_POOL, "{cpu: 500, memory: 3Ti}", A100_MODEL),
        ["AP5031"],
    ),
    # warnings: one finding at the setting that is the cause, naming every queue/pool it affects
    "yarn-gpu-models-without-labels": (_yarn(CPU_POOL).replace("  nodeLabels: true\n", ""), ["AP5603"]),
    "dra-pools-without-exporter": (DRA_POOLS, ["AP7003"]),
}


@pytest.mark.parametrize("case", sorted(CASCADES))
def test_one_root_cause_one_finding(case: str, write_spec: WriteSpec) -> None:
    text, expected = CASCADES[case]
    found = findings_of(write_spec(text))
    assert [e.finding.code for e in found if e.finding] == expected, [str(e) for e in found]
    assert len(found) == 1


@pytest.mark.parametrize(
    ("case", "path", "names"),
    [("yarn-gpu-models-without-labels", "yarn.nodeLabels", ["'analytics'", "'adhoc'"]),
     ("dra-pools-without-exporter", "monitoring.exporters", ["mi300x", "mi300x-b"])],
)  # fmt: skip
def test_one_finding_names_everything_its_cause_affects(
    case: str, path: str, names: list[str], write_spec: WriteSpec
) -> None:
    (finding,) = findings_of(write_spec(CASCADES[case][0]))
    assert finding.path == path
    for name in names:
        assert name in finding.message, finding.message


def test_the_cycle_message_says_where_to_break_it(write_spec: WriteSpec) -> None:
    with pytest.raises(SpecErrors) as exc:
        load_validated(write_spec(CYCLE))
    (error,) = exc.value.errors
    assert error.message == (
        "parent cycle: 'a' → 'd' → 'c' → 'b' → 'a'; remove the parent of 'd' (its capability exceeds its "
        "parent's, so the cycle can only be broken there)"
    )


def test_the_over_committed_partitions_are_named_in_one_finding(write_spec: WriteSpec) -> None:
    text, _ = CASCADES["yarn-deserved-over-partitions"]
    with pytest.raises(SpecErrors) as exc:
        load_validated(write_spec(text))
    (error,) = exc.value.errors
    # cpu and memory deserved apply in the default partition; in a GPU-model partition a queue's
    # memory and vcores follow its gpuModels share (docs/yarn.md), so only the default one is over
    assert "default partition" in error.message
    for dimension in ("memory (MiB)", "vcores"):
        assert dimension in error.message


def test_the_fixed_cascades_are_valid(write_spec: WriteSpec) -> None:
    """The one finding is the whole story: fixing it leaves a valid spec."""
    load_validated(write_spec(SHARED_POOL.replace("STRATEGY", "timeSlicing"), "a.yaml"))
    load_validated(write_spec(MISSPELT_KEY.replace("taskmanager", "taskManager"), "b.yaml"))
    load_validated(write_spec(CYCLE.replace("{name: d, parent: c, ", "{name: d, "), "c.yaml"))
    load_validated(write_spec(_yarn(CPU_POOL), "d.yaml"))


# --- every suggested fix leads to a valid spec ------------------------------------------------------

RENAME = """\
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - name: shared
    nodes: 2
    cpu: 32
    memory: 128Gi
    labels: {pool: shared}
    gpu: {vendor: nvidia, perNode: 4, sharing: {strategy: timeSlicing, replicas: 4}}
queues:
  - {name: a, capability: {cpu: 16, memory: 64Gi, pods: 20, nvidia.com/gpu: 8}}
flink:
  clusters:
    - name: f
      queue: a
      image: registry.example.com/flink-gpu:1.20.1
      discovery: {coordination: false}
      jobManager: {memory: 2Gi, cpu: 1}
      taskManager: {replicas: 2, memory: 8Gi, cpu: 2, gpu: {amount: 1}}
"""


def _set(doc: Any, path: str, value: Any) -> None:
    *parents, last = yaml.safe_load(f"[{path}]")
    for part in parents:
        doc = doc[part]
    if value is None:
        del doc[last]
    else:
        doc[last] = value


# two YARN clusters asking for GPU models with node labels off: AP5014 is one finding at yarn.nodeLabels
YARN_TWO_MODELS_UNLABELLED = YARN_BASE.replace("  nodeLabels: true\n", "") + """\
    - name: ranking
      target: yarn
      mode: session
      image: registry.example.com/flink-gpu:1.20.1-py3
      queue: batch
      taskManager: {replicas: 1, slots: 1, cpu: 4, memory: 8Gi, gpu: {amount: 1, model: Tesla T4}}
"""

# two GPU clusters inheriting a stock nodeImage.image: AP8010 is one finding at nodeImage.image
STOCK_NODE_IMAGE = """\
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - {name: l4, nodes: 2, labels: {pool: l4}, gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}}
nodeImage: {baseImage: flink:1.20.5-java17, image: flink:1.20.5-java17}
queues:
  - {name: streaming}
flink:
  clusters:
    - {name: f, queue: streaming, taskManager: {replicas: 2, gpu: {amount: 1}}}
    - {name: g, queue: streaming, taskManager: {replicas: 1, gpu: {amount: 1}}}
"""

FIXES: dict[str, tuple[str, str, list[tuple[str, Any]]]] = {
    # name: (spec, the code it reports, the fix the message gives as (path, value) edits)
    "enum-did-you-mean": (
        SHARED_POOL.replace("STRATEGY", "time-slicing"),
        "AP1001",
        [("nodePools, 0, gpu, sharing, strategy", "timeSlicing")],
    ),
    "unknown-key-did-you-mean": (
        MISSPELT_KEY,
        "AP1003",
        [("flink, clusters, 0, taskManager", {"replicas": 2, "memory": "8Gi", "cpu": 2}),
         ("flink, clusters, 0, taskmanager", None)],
    ),
    "parent-cycle": (CYCLE, "AP2005", [("queues, 3, parent", None)]),  # where the message says
    "rename-true": (
        RENAME,
        "AP3100",
        [("nodePools, 0, gpu, sharing, renameByDefault", True),
         ("queues, 0, capability", {"cpu": 16, "memory": "64Gi", "pods": 20, "nvidia.com/gpu.shared": 8})],
    ),
    "rename-false": (RENAME, "AP3100", [("nodePools, 0, gpu, sharing, renameByDefault", False)]),
    "weight-as-deserved": (
        WEIGHT,
        "AP2101",
        [("queues, 0, weight", None), ("queues, 0, deserved", {"cpu": 8})],
    ),
    "yarn-cpu-only-pool": (
        _yarn(""),
        "AP5011",
        [("nodePools, 2", {"name": "edge", "platform": "yarn", "nodes": 4, "cpu": 48, "memory": "192Gi"})],
    ),
    "partial-gpu-capability": (
        HEAD + POOL + "volcano: {version: '1.8'}\nqueues:\n  - {name: a, capability: {nvidia.com/gpu: 4}}\n",
        "AP2013",
        [("queues, 0, capability", {"nvidia.com/gpu": 4, "cpu": 16, "memory": "64Gi", "pods": 10})],
    ),
    "replicas-at-least-2": (
        RENAME.replace("replicas: 4}", "replicas: 1, renameByDefault: false}"),
        "AP3015",
        [("nodePools, 0, gpu, sharing, replicas", 2)],
    ),
    "pool-label": (
        RENAME.replace("    labels: {pool: shared}\n", ""),
        "AP3021",
        [("nodePools, 0, labels", {"accelplane.io/pool": "shared"}),
         ("nodePools, 0, gpu, sharing, renameByDefault", False)],
    ),
    "gpu-image": (
        RENAME.replace("      image: registry.example.com/flink-gpu:1.20.1\n", "").replace("replicas: 4}", "replicas: 4, renameByDefault: false}"),
        "AP8010",
        [("flink, clusters, 0, image", "registry.example.com/flink-gpu:1.20.1")],
    ),
    "guarantee-over-deserved": (
        HEAD + "queues:\n  - {name: a, deserved: {cpu: 4}, guarantee: {cpu: 8}}\n",
        "AP2010",
        [("queues, 0, guarantee", {"cpu": 4})],
    ),
    "gpu-models-without-labels": (
        CASCADES["yarn-gpu-models-without-labels"][0],
        "AP5603",
        [("queues, 0, gpuModels", None), ("queues, 1, gpuModels", None)],
    ),
    "dra-exporters-external": (DRA_POOLS, "AP7003", [("monitoring, exporters", "external")]),
    "yarn-maximum-allocation": (
        YARN_BIG_TASKMANAGER, "AP3513", [("yarn, maximumAllocation", {"memory": "16Gi"})],
    ),
    "stock-node-image": (STOCK_NODE_IMAGE, "AP8010", [("nodeImage, image", "registry.example.com/flink-gpu:1.20.5-java17-1")]),
    "yarn-models-need-node-labels": (YARN_TWO_MODELS_UNLABELLED, "AP5014", [("yarn, nodeLabels", True)]),
    "yarn-taskmanager-within-maximum": (
        YARN_BIG_TASKMANAGER, "AP3513", [("flink, clusters, 0, taskManager, memory", "8Gi")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FIXES))
def test_following_the_fix_gives_a_valid_spec(name: str, write_spec: WriteSpec) -> None:
    text, code, edits = FIXES[name]
    found = findings_of(write_spec(text, "before.yaml"))
    assert code in [f.finding.code for f in found if f.finding], [str(f) for f in found]
    doc = yaml.safe_load(text)
    for path, value in edits:
        if path.endswith(", 2") and path.startswith("nodePools"):
            doc["nodePools"].append(value)
        else:
            _set(doc, path, value)
    after = write_spec(yaml.safe_dump(doc, sort_keys=False), "after.yaml")
    validated = load_validated(after)  # raises on any error
    assert [str(w) for w in validated.warnings] == []


def test_diff_prints_warnings_and_proceeds(write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(WEIGHT)
    assert main(["diff", str(path), str(path)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning AP2101") == 2 and err.endswith("accelplane: 2 warnings\n")


def test_merged_reports_a_load_error(write_spec: WriteSpec, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(HEAD + "queues:\n  - {name: ghost, $remove: true}\n")
    assert main(["merged", str(path)]) == 1
    assert "error AP1210: $remove: nothing inherited to remove" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("path", "line"),
    [("queues[0].capability.nvidia.com/gpu", 3), ("queues[1]", 4), ("queues[1].weight", 5), ("queues[1].nope", 4),
     ("cluster.name", 1), ("<root>", None), ("line 7, column 2", 7), ("queues[9]", 2)],
)  # fmt: skip
def test_line_of_a_path(path: str, line: int | None) -> None:
    from accelplane.yaml_io import line_of

    text = "cluster: {name: c}\nqueues:\n  - {name: a, capability: {nvidia.com/gpu: 1}}\n  - name: b\n    weight: 2\n"
    assert line_of(text, path) == line
