"""Every validation rule of the foundation, one bad spec each: message, file, path, exit 1, no output."""

from __future__ import annotations

from pathlib import Path

import pytest
from accelplane.cli import main

from tests.support.findings_text import FINDING_LINE, without_tags
from tests.support.specs import WriteSpec, run_validate

BASE = """\
cluster: {name: demo, platforms: [kubernetes]}
nodePools:
  - {name: gpus, nodes: 2, cpu: 16, memory: 64Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}
priorityClasses:
  - {name: high, value: 1000}
queues:
  - {name: top, capability: {cpu: 10, memory: 10Gi, pods: 10, nvidia.com/gpu: 4}, deserved: {cpu: 5}}
  - {name: leaf, parent: top, deserved: {cpu: 2}}
flink:
  clusters:
    - {name: job, queue: leaf, priorityClass: high}
"""

# (id, files {name: text}, expected "file: path: message-substring" lines)
CASES: list[tuple[str, dict[str, str], list[str]]] = [
    (
        "malformed-yaml",
        {"spec.yaml": "cluster: {name: demo\n"},
        ["spec.yaml: line 2, column 1: invalid YAML"],
    ),
    (
        "duplicate-yaml-key",
        {"spec.yaml": "cluster: {name: a, platforms: [yarn]}\ncluster: {name: b}\n"},
        ["spec.yaml: line 2, column 1: invalid YAML: duplicate key 'cluster'"],
    ),
    (
        "not-a-mapping",
        {"spec.yaml": "- just\n- a list\n"},
        ["spec.yaml: <root>: a spec must be a YAML mapping"],
    ),
    (
        "missing-base",
        {"spec.yaml": "extends: [nope.yaml]\n" + BASE},
        ["spec.yaml: extends[0]: base spec 'nope.yaml' not found"],
    ),
    (
        "extends-cycle",
        {
            "spec.yaml": "extends: [a.yaml]\n" + BASE,
            "a.yaml": "extends: [b.yaml]\n",
            "b.yaml": "extends: [a.yaml]\n",
        },
        ["b.yaml: extends[0]: extends cycle: spec.yaml -> a.yaml -> b.yaml -> a.yaml"],
    ),
    (
        "self-extends",
        {"spec.yaml": "extends: [spec.yaml]\n" + BASE},
        ["spec.yaml: extends[0]: extends cycle"],
    ),
    (
        "remove-nothing",
        {"spec.yaml": BASE.replace("nodePools:\n", "nodePools:\n  - {name: ghost, $remove: true}\n")},
        ["spec.yaml: nodePools[0]: $remove: nothing inherited to remove"],
    ),
    ("missing-cluster", {"spec.yaml": "queues: []\n"}, ["spec.yaml: <root>: 'cluster' is required"]),
    (
        "unknown-field",
        {"spec.yaml": BASE.replace("platforms: [kubernetes]", "platforms: [kubernetes], colour: red")},
        ["spec.yaml: cluster: unknown field(s) 'colour'"],
    ),
    (
        "bad-platform",
        {"spec.yaml": BASE.replace("platforms: [kubernetes]", "platforms: [mesos]")},
        ["spec.yaml: cluster.platforms[0]: 'mesos' is not one of 'kubernetes', 'yarn', 'standalone'"],
    ),
    (
        "cluster-name-not-dns",
        {"spec.yaml": BASE.replace("name: demo", "name: Demo_1")},
        ["spec.yaml: cluster.name: 'Demo_1' must be a DNS-1123 label"],
    ),
    (
        "queue-name-not-dns",
        {"spec.yaml": BASE.replace("name: leaf, parent", "name: Leaf.Q, parent")},
        ["spec.yaml: queues[1].name: 'Leaf.Q' must be a DNS-1123 label"],
    ),
    (
        "duplicate-queue",
        {"spec.yaml": BASE.replace("queues:\n", "queues:\n  - {name: leaf}\n")},
        ["spec.yaml: queues[2].name: duplicate name 'leaf' (first defined at queues[0])"],
    ),
    (
        "duplicate-priority-class",
        {
            "spec.yaml": BASE.replace(
                "  - {name: high, value: 1000}\n",
                "  - {name: high, value: 1000}\n  - {name: high, value: 5}\n",
            )
        },
        ["spec.yaml: priorityClasses[1].name: duplicate name 'high'"],
    ),
    (
        "bad-quantity",
        {"spec.yaml": BASE.replace("memory: 10Gi", "memory: 10GB")},
        ["spec.yaml: queues[0].capability.memory: '10GB' must be a non-negative Kubernetes quantity"],
    ),
    (
        "bad-resource-name",
        {"spec.yaml": BASE.replace("nvidia.com/gpu: 4", "nvidia.com/GPU count: 4")},
        [
            "spec.yaml: queues[0].capability.nvidia.com/GPU count: key 'nvidia.com/GPU count' must be a Kubernetes resource name"
        ],
    ),
    (
        "weight-out-of-range",
        {"spec.yaml": BASE.replace("name: leaf, parent: top", "name: leaf, parent: top, weight: 70000")},
        ["spec.yaml: queues[1].weight: 70000 is greater than the maximum of 65535"],
    ),
    (
        "undefined-parent",
        {"spec.yaml": BASE.replace("parent: top", "parent: nowhere")},
        ["spec.yaml: queues[1].parent: parent queue 'nowhere' is not defined in queues"],
    ),
    (
        "queue-cycle",
        {"spec.yaml": BASE.replace("- {name: top, ", "- {name: top, parent: leaf, ")},
        ["spec.yaml: queues[0].parent: parent cycle: 'top' → 'leaf' → 'top'"],
    ),
    (
        "queue-self-parent",
        {"spec.yaml": BASE.replace("parent: top", "parent: leaf")},
        ["spec.yaml: queues[1].parent: a queue cannot be its own parent"],
    ),
    (
        "queue-too-deep",
        {
            "spec.yaml": BASE.replace(
                "queues:\n",
                "queues:\n"
                + "".join(
                    f"  - {{name: q{i}, parent: {'top' if i == 1 else f'q{i - 1}'}}}\n" for i in range(1, 6)
                ),
            ).replace("name: leaf, parent: top", "name: leaf, parent: q5")
        },
        [
            "spec.yaml: queues[4].parent: queue depth 6 exceeds Volcano's limit of 5",
            "spec.yaml: queues[6].parent: queue depth 7",
        ],
    ),
    (
        "declared-root",
        {"spec.yaml": BASE.replace("queues:\n", "queues:\n  - {name: root}\n")},
        ["spec.yaml: queues[0].name: 'root' is Volcano's implicit root queue"],
    ),
    (
        "job-in-root",
        {"spec.yaml": BASE.replace("queue: leaf,", "queue: root,")},
        ["spec.yaml: flink.clusters[0].queue: jobs cannot be submitted to the root queue"],
    ),
    (
        "job-in-parent-queue",
        {"spec.yaml": BASE.replace("queue: leaf,", "queue: top,")},
        [
            "spec.yaml: flink.clusters[0].queue: queue 'top' has child queues; jobs may only run in leaf queues"
        ],
    ),
    (
        "undefined-queue",
        {"spec.yaml": BASE.replace("queue: leaf,", "queue: missing,")},
        ["spec.yaml: flink.clusters[0].queue: queue 'missing' is not defined (defined: leaf, top)"],
    ),
    (
        "undefined-priority-class",
        {"spec.yaml": BASE.replace("priorityClass: high", "priorityClass: low")},
        ["spec.yaml: flink.clusters[0].priorityClass: PriorityClass 'low' is not defined (defined: high)"],
    ),
    (
        "deserved-over-capability",
        {"spec.yaml": BASE.replace("deserved: {cpu: 5}", "deserved: {cpu: 50}")},
        ["spec.yaml: queues[0].deserved.cpu: deserved 50 exceeds capability 10"],
    ),
    (
        "guarantee-over-deserved",
        {"spec.yaml": BASE.replace("deserved: {cpu: 5}", "deserved: {cpu: 5}, guarantee: {cpu: 6}")},
        ["spec.yaml: queues[0].guarantee.cpu: guarantee 6 exceeds deserved 5"],
    ),
    (
        "guarantee-over-capability-units",
        {"spec.yaml": BASE.replace("deserved: {cpu: 5}", "guarantee: {memory: 11Gi}")},
        ["spec.yaml: queues[0].guarantee.memory: guarantee 11Gi exceeds capability 10Gi"],
    ),
    (
        "partial-gpu-capability",
        {
            "spec.yaml": "volcano: {version: '1.8'}\n"
            + BASE.replace(
                "capability: {cpu: 10, memory: 10Gi, pods: 10, nvidia.com/gpu: 4}",
                "capability: {cpu: 10, nvidia.com/gpu: 4}",
            )
        },
        ["spec.yaml: queues[0].capability: a capability that limits GPUs must also set memory, pods"],
    ),
    (
        "children-deserved-exceed-parent",
        {"spec.yaml": BASE.replace("deserved: {cpu: 2}", "deserved: {cpu: 6}")},
        ["spec.yaml: queues[0].deserved.cpu: children's deserved cpu add up to 6, more than this queue's 5"],
    ),
    (
        "child-capability-over-parent",
        {"spec.yaml": BASE.replace("deserved: {cpu: 2}", "deserved: {cpu: 2}, capability: {cpu: 20}")},
        ["spec.yaml: queues[1].capability.cpu: capability 20 exceeds the capability of parent 'top' (10)"],
    ),
    (
        "priority-value-too-high",
        {"spec.yaml": BASE.replace("value: 1000", "value: 2000000000")},
        ["spec.yaml: priorityClasses[0].value: 2000000000 is greater than the maximum of 1000000000"],
    ),
    (
        "priority-system-prefix",
        {
            "spec.yaml": BASE.replace("name: high, value", "name: system-high, value").replace(
                "priorityClass: high", "priorityClass: system-high"
            )
        },
        ["spec.yaml: priorityClasses[0].name: PriorityClass names starting with 'system-' are reserved"],
    ),
    (
        "two-global-defaults",
        {
            "spec.yaml": BASE.replace(
                "  - {name: high, value: 1000}\n",
                "  - {name: high, value: 1000, globalDefault: true}\n  - {name: low, value: 1, globalDefault: true}\n",
            )
        },
        [
            "spec.yaml: priorityClasses[0].globalDefault: at most one PriorityClass may be globalDefault (found: high, low)",
            "spec.yaml: priorityClasses[1].globalDefault: at most one PriorityClass may be globalDefault",
        ],
    ),
    (
        "bad-image-latest",
        {"spec.yaml": BASE + "nodeImage: {baseImage: 'flink:latest'}\n"},
        ["spec.yaml: nodeImage.baseImage: 'flink:latest' must be an image reference pinned"],
    ),
    (
        "error-in-base-names-base-file",
        {
            "spec.yaml": "extends: [base.yaml]\n" + BASE,
            "base.yaml": "priorityClasses:\n  - {name: low, value: 'ten'}\n",
        },
        ["base.yaml: priorityClasses[0].value: 'ten' is not of type integer"],
    ),
    (
        "undefined-queue-from-defaults-points-at-defaults",
        {
            "spec.yaml": BASE.replace("flink:\n", "flink:\n  defaults: {queue: nowhere}\n").replace(
                "queue: leaf, ", ""
            )
        },
        ["spec.yaml: flink.defaults.queue: queue 'nowhere' is not defined"],
    ),
    (
        "non-leaf-queue-from-defaults-points-at-defaults",
        {
            "spec.yaml": BASE.replace("flink:\n", "flink:\n  defaults: {queue: top}\n").replace(
                "queue: leaf, ", ""
            )
        },
        ["spec.yaml: flink.defaults.queue: queue 'top' has child queues"],
    ),
]


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_spec(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    write_spec: WriteSpec,
    files: dict[str, str],
    expected: list[str],
) -> None:
    for name, text in files.items():
        write_spec(text, name)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert main(["render", "spec.yaml", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    findings = err.splitlines()[:-1]
    assert findings and all(FINDING_LINE.match(line) for line in findings), err
    assert all(FINDING_LINE.match(line).group("code") for line in findings), err  # type: ignore[union-attr]
    plain = without_tags(err)
    for line in expected:
        assert line in plain, f"expected {line!r} in:\n{err}"
    assert "Traceback" not in err
    assert not out.exists(), "no output directory may be written for an invalid spec"
    assert not list(tmp_path.glob(".out.tmp-*")), "no temporary directory may be left behind"
    assert main(["validate", "spec.yaml"]) == 1


def test_at_least_25_rules() -> None:
    assert len(CASES) >= 25


def test_all_errors_reported_at_once(
    write_spec: WriteSpec, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = (
        BASE.replace("name: demo", "name: Bad!")
        .replace("memory: 10Gi", "memory: lots")
        .replace("weight", "w")
    )
    spec = spec.replace("{name: leaf, parent: top,", "{name: leaf, parent: top, weight: 0,")
    code, lines = run_validate(write_spec(spec), capsys, monkeypatch)
    assert code == 1
    err = without_tags("\n".join(lines))
    assert "spec.yaml: cluster.name:" in err
    assert "spec.yaml: queues[0].capability.memory:" in err
    assert "spec.yaml: queues[1].weight: 0 is less than the minimum of 1" in err
    assert "accelplane: 3 errors" in err


def test_semantic_errors_all_at_once(
    write_spec: WriteSpec, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = BASE.replace("queue: leaf,", "queue: missing,").replace(
        "priorityClass: high", "priorityClass: low"
    )
    spec = spec.replace("deserved: {cpu: 5}", "deserved: {cpu: 50}")
    code, lines = run_validate(write_spec(spec), capsys, monkeypatch)
    assert code == 1
    err = "\n".join(lines)
    assert err.count("spec.yaml: ") == 3, err
