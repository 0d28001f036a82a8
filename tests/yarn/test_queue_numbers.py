"""A queue's YARN capacity vectors carry the numbers the spec says (`accelplane.checks.yarn_queue_numbers`).

In absolute mode a queue's ``capability``/``deserved`` become ``[memory=…,vcores=…,yarn.io/gpu=…]``
vectors; cpu and GPUs are written rounded down. A capability below one core becomes ``vcores=0``
(AP5080, error: no container fits), any other fraction is a warning naming what is written
(AP5081), memory below 1 MiB is AP5032's (the vector without memory), and vcores beyond a Java int
wrap (AP5082). The Hadoop tests read the vectors with Hadoop's own classes (`QueueVectorProbe`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.derive.yarn_capacity import plan_queues, queue_paths
from accelplane.model_convert import build_model
from accelplane.spec_loader import load_spec

from tests.support.specs import findings_of, model_of, write_spec
from tests.support.yarn_specs import parse_configuration, yarn_files

CS = "yarn.scheduler.capacity."
SPEC = """\
cluster: {{name: q, platforms: [yarn]}}
nodePools:
  - {{name: g, platform: yarn, nodes: {nodes}, cpu: {cpu}, memory: 128Gi, gpu: {{vendor: nvidia, perNode: 4}}}}
queues:
{queues}flink:
  clusters:
    - {{name: s, target: yarn, queue: {leaf}, taskManager: {{cpu: 1, gpu: {{amount: 1}}}}}}
"""


def _spec(tmp_path: Path, queues: str, leaf: str = "stream", nodes: int = 4, cpu: int = 32, name: str = "spec.yaml") -> Path:
    return write_spec(tmp_path, SPEC.format(queues=queues, leaf=leaf, nodes=nodes, cpu=cpu), name)


def _findings(path: Path) -> list[tuple[str, str, str, str]]:
    """(code, severity, path, message) of every coded finding of the queue-number rules and AP5032."""
    rules = {"AP5080", "AP5081", "AP5082", "AP5060", "AP5032"}
    return sorted(
        (e.finding.code, e.finding.severity, e.path, e.message)
        for e in findings_of(path)
        if e.finding is not None and e.finding.code in rules
    )


def _unchecked_plan(path: Path) -> dict[str, str]:
    """The capacity-scheduler properties accelplane computes for a spec without running the checks
    (what main rendered for it)."""
    model, problems = build_model(load_spec(path).data)
    assert model is not None, problems
    return {p.name: p.value for p in plan_queues(model).properties}


# --- the findings --------------------------------------------------------------------------------

BELOW_ONE_CORE = "  - {name: stream, capability: {cpu: 500m, memory: 64Gi, nvidia.com/gpu: 4}}\n  - {name: batch}\n"


def test_capability_below_one_core_is_an_error_with_one_fix(tmp_path: Path) -> None:
    found = _findings(_spec(tmp_path, BELOW_ONE_CORE))
    assert [f[:3] for f in found] == [("AP5080", "error", "queues[0].capability.cpu")]
    message = found[0][3]
    assert "'stream'" in message and "500m" in message and "vcores=0" in message
    assert message.endswith("write whole cores, e.g. cpu: 1")
    # main wrote exactly that (the queue in the default partition; the GPU partition has no labels)
    assert _unchecked_plan(tmp_path / "spec.yaml")[f"{CS}root.stream.maximum-capacity"].startswith(
        "[memory=65536,vcores=0,"
    )


def test_parent_capability_below_one_core_is_one_finding(tmp_path: Path) -> None:
    queues = (
        "  - {name: team, capability: {cpu: 900m}}\n"
        "  - {name: stream, parent: team}\n  - {name: adhoc, parent: team}\n  - {name: batch}\n"
    )
    found = _findings(_spec(tmp_path, queues))
    assert [f[:3] for f in found] == [("AP5080", "error", "queues[0].capability.cpu")], found


@pytest.mark.parametrize(
    ("queues", "expected", "writes"),
    [
        (
            "  - {name: stream, capability: {cpu: 2500m}}\n  - {name: batch}\n",
            ("AP5081", "warning", "queues[0].capability.cpu"),
            "accelplane writes 2 in its maximum-capacity",
        ),
        (
            "  - {name: stream, deserved: {cpu: 500m}}\n  - {name: batch}\n",
            ("AP5081", "warning", "queues[0].deserved.cpu"),
            "accelplane writes 0 in its capacity",
        ),
        (
            "  - {name: stream, deserved: {nvidia.com/gpu: 1500m}}\n  - {name: batch}\n",
            ("AP5081", "warning", "queues[0].deserved.nvidia.com/gpu"),
            "accelplane counts it as 1 in its capacity",
        ),
    ],
    ids=["capability-2500m", "deserved-500m", "deserved-gpu-1500m"],
)
def test_other_fractions_warn_naming_what_is_written(
    queues: str, expected: tuple[str, str, str], writes: str, tmp_path: Path
) -> None:
    found = _findings(_spec(tmp_path, queues))
    assert [f[:3] for f in found] == [expected], found
    assert writes in found[0][3]


def test_memory_below_one_mib_is_reported_once_by_ap5032_naming_the_value(tmp_path: Path) -> None:
    queues = "  - {name: stream, capability: {memory: 1000Ki}}\n  - {name: batch}\n"
    found = _findings(_spec(tmp_path, queues))
    assert [f[:3] for f in found] == [("AP5032", "error", "queues[0].capability.memory")], found
    assert "capability memory 1000Ki is less than 1 MiB" in found[0][3]


def test_whole_values_and_percentage_mode_have_no_finding(tmp_path: Path) -> None:
    whole = "  - {name: stream, capability: {cpu: 2, memory: 61G}, deserved: {cpu: 1}}\n  - {name: batch}\n"
    assert _findings(_spec(tmp_path, whole, name="whole.yaml")) == []
    # percentage mode (no queue limits what YARN schedules): no vector, nothing truncated
    pods = "  - {name: stream, capability: {pods: 10}}\n  - {name: batch}\n"
    assert _findings(_spec(tmp_path, pods, name="pods.yaml")) == []


def test_a_spec_fixed_as_the_message_says_validates_and_renders(tmp_path: Path) -> None:
    fixed = _spec(tmp_path, BELOW_ONE_CORE.replace("cpu: 500m", "cpu: 1"))
    model_of(fixed)
    props = dict(parse_configuration(yarn_files(fixed)["capacity-scheduler.xml"]))
    paths = queue_paths(model_of(fixed))
    assert props[f"{CS}{paths['stream']}.maximum-capacity"] == "[memory=65536,vcores=1,yarn.io/gpu=4]"


def test_vcores_beyond_a_java_int_are_one_error(tmp_path: Path) -> None:
    # each pool is in range (AP5060 would name it), their total is not: 2 × 2^30 = 2^31 vcores
    queues = "  - {name: stream, capability: {cpu: 8}}\n  - {name: batch}\n"
    found = _findings(_spec(tmp_path, queues, nodes=2, cpu=2**30))
    assert [f[:3] for f in found] == [("AP5082", "error", "nodePools")], found
    assert "2147483648 in the default partition" in found[0][3]
    # a pool itself over the bound: AP5060 at the pool, not again for the vectors
    found = _findings(_spec(tmp_path, queues, nodes=2, cpu=2**31, name="pool.yaml"))
    assert [f[:3] for f in found] == [("AP5060", "error", "nodePools[0].cpu")], found


# --- Hadoop's own classes --------------------------------------------------------------------------

Probe = Callable[..., list[list[str]]]
"""`queue_vector` (tests/yarn/conftest.py)."""


def _conf_dir(spec: Path, out: Path) -> Path:
    """The rendered ``yarn/`` files (``resource-types.xml`` declares ``yarn.io/gpu``)."""
    out.mkdir()
    for name, text in yarn_files(spec).items():
        if "/" not in name:
            (out / name).write_text(text, encoding="utf-8")
    return out


@pytest.mark.hadoop
def test_hadoop_reads_vcores_0_and_no_container_fits(queue_vector: Probe, tmp_path: Path) -> None:
    """What main wrote for ``capability: {cpu: 500m}``: Hadoop keeps ``vcores=0`` as the queue's
    maximum, and a 1-vcore container (the smallest YARN makes) does not fit it in the
    DominantResourceCalculator's ``Resources.fitsIn`` — AbstractCSQueue.accept refuses every
    allocation, so the application stays ACCEPTED. With the fix (cpu: 1) it fits."""
    written = _unchecked_plan(_spec(tmp_path, BELOW_ONE_CORE))[f"{CS}root.stream.maximum-capacity"]
    fixed = _spec(tmp_path, BELOW_ONE_CORE.replace("cpu: 500m", "cpu: 1"), name="fixed.yaml")
    rendered = dict(parse_configuration(yarn_files(fixed)["capacity-scheduler.xml"]))[
        f"{CS}root.stream.maximum-capacity"
    ]
    conf = _conf_dir(fixed, tmp_path / "conf")
    got = queue_vector("vector", written, "fits", "1024", "1", written, "fits", "1024", "1", rendered, conf_dir=conf)
    assert got == [
        ["vector", written, "65536", "0", "yarn.io/gpu=4"],
        ["fits", written, "false"],
        ["fits", rendered, "true"],
    ]


@pytest.mark.hadoop
def test_hadoop_refuses_fractions_and_wraps_vcores_past_an_int(queue_vector: Probe) -> None:
    """Why accelplane cannot write the fraction as is and why the bounds are Hadoop's: Long.valueOf
    throws for ``0.5`` and past 2^63-1 (the ResourceManager does not start), vcores past 2^31-1 wrap
    negative, and a vector without memory is ignored (AP5032)."""
    past_long = "[memory=9223372036854775808,vcores=1]"
    got = queue_vector(
        "vector", "[memory=4096,vcores=0.5]",
        "vector", past_long,
        "vector", "[memory=9223372036854775807,vcores=2147483647]",
        "vector", "[memory=4096,vcores=2147483648]",
        "vector", "[memory=0,vcores=4]",
    )  # fmt: skip
    assert got == [
        ["error", "[memory=4096,vcores=0.5]", "java.lang.NumberFormatException"],
        ["error", past_long, "java.lang.NumberFormatException"],
        ["vector", "[memory=9223372036854775807,vcores=2147483647]", "9223372036854775807", "2147483647"],
        ["vector", "[memory=4096,vcores=2147483648]", "4096", "-2147483648"],
        ["vector", "[memory=0,vcores=4]", "none"],
    ]
