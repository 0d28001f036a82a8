"""capacity-scheduler.xml: the queue tree of the shared queue model, capacities that add up."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from accelplane.derive.yarn_capacity import (
    RESOURCE_CALCULATOR,
    distribute,
    format_percent,
    plan_queues,
    queue_mode,
    queue_paths,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.support.specs import WriteSpec, model_of
from tests.support.yarn_specs import BASE, parse_configuration, yarn_files

CS = "yarn.scheduler.capacity."
POOLS = """\
nodePools:
  - {name: g, platform: yarn, nodes: 4, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}}
"""


def _spec(queues: str, pools: str = POOLS) -> str:
    return f"cluster: {{name: q, platforms: [yarn]}}\n{pools}queues:\n{queues}"


def _props(write_spec: WriteSpec, text: str) -> dict[str, str]:
    return dict(parse_configuration(yarn_files(write_spec(text))["capacity-scheduler.xml"]))


@given(st.integers(0, 10**6), st.lists(st.integers(1, 65535), min_size=1, max_size=12))
def test_distribute_adds_up_exactly_and_is_fair(total: int, weights: list[int]) -> None:
    named = [(f"q{i:02d}", w) for i, w in enumerate(weights)]
    parts = distribute(total, named)
    assert sum(parts.values()) == total
    for name, w in named:
        exact = Fraction(total * w, sum(weights))
        assert exact - 1 < parts[name] <= exact + 1
    assert distribute(total, list(reversed(named))) == parts  # input order never matters


def test_equal_weights_split_100_deterministically() -> None:
    assert distribute(10_000, [("c", 1), ("a", 1), ("b", 1)]) == {"a": 3334, "b": 3333, "c": 3333}
    assert [format_percent(h) for h in (3334, 3333, 7500, 3350, 10_000, 0)] == [
        "33.34",
        "33.33",
        "75",
        "33.5",
        "100",
        "0",
    ]


def test_weights_1_1_1_give_capacities_that_sum_to_exactly_100(write_spec: WriteSpec) -> None:
    props = _props(write_spec, _spec("  - {name: a}\n  - {name: b}\n  - {name: c}\n"))
    assert props[f"{CS}resource-calculator"] == RESOURCE_CALCULATOR
    assert props[f"{CS}root.queues"] == "a,b,c"
    caps = [props[f"{CS}root.{q}.capacity"] for q in "abc"]
    assert caps == ["33.34", "33.33", "33.33"]
    assert sum(Decimal(c) for c in caps) == 100
    assert all(props[f"{CS}root.{q}.maximum-capacity"] == "100" for q in "abc")


def test_every_parent_sums_to_100_in_a_deep_tree(write_spec: WriteSpec) -> None:
    queues = "".join(
        f"  - {{name: {n}, weight: {w}{', parent: ' + p if p else ''}}}\n"
        for n, w, p in [
            ("eng", 7, None),
            ("ops", 3, None),
            ("sci", 5, None),
            ("ml", 1, "eng"),
            ("etl", 1, "eng"),
            ("web", 1, "eng"),
            ("gpu", 2, "ml"),
            ("cpu", 9, "ml"),
            ("x", 13, "ml"),
        ]
    )
    props = _props(write_spec, _spec(queues))
    parents = {k.removesuffix(".queues"): v.split(",") for k, v in props.items() if k.endswith(".queues")}
    assert parents == {
        f"{CS}root": ["eng", "ops", "sci"],
        f"{CS}root.eng": ["etl", "ml", "web"],
        f"{CS}root.eng.ml": ["cpu", "gpu", "x"],
    }
    for parent, children in parents.items():
        assert sum(Decimal(props[f"{parent}.{c}.capacity"]) for c in children) == 100, parent
        for c in children:
            assert re.fullmatch(r"\d+(\.\d\d?)?", props[f"{parent}.{c}.capacity"])
    assert props[f"{CS}root.eng.capacity"] == "46.67"  # 7 of 15
    assert queue_paths(model_of(write_spec(_spec(queues), "again.yaml")))["gpu"] == "root.eng.ml.gpu"


def test_no_queues_means_one_default_queue(write_spec: WriteSpec) -> None:
    props = _props(write_spec, "cluster: {name: q, platforms: [yarn]}\n")
    assert props == {
        f"{CS}resource-calculator": RESOURCE_CALCULATOR,
        f"{CS}root.queues": "default",
        f"{CS}root.default.capacity": "100",
        f"{CS}root.default.maximum-capacity": "100",
    }


def test_priority_and_reclaimable_map_to_scheduler_settings(write_spec: WriteSpec) -> None:
    props = _props(write_spec, _spec("  - {name: a, priority: 10, reclaimable: false}\n  - {name: b}\n"))
    assert props[f"{CS}root.ordering-policy"] == "priority-utilization"
    assert props[f"{CS}root.a.priority"] == "10"
    assert props[f"{CS}root.a.disable_preemption"] == "true"
    assert f"{CS}root.b.priority" not in props and f"{CS}root.b.disable_preemption" not in props


def test_mode_is_percentage_unless_a_queue_limits_what_yarn_schedules(write_spec: WriteSpec) -> None:
    assert (
        queue_mode(model_of(write_spec(_spec("  - {name: a, capability: {pods: 10}}\n"), "p.yaml")))
        == "percentage"
    )
    gpu_limit = "  - {name: a, deserved: {nvidia.com/gpu: 2}}\n  - {name: b}\n"
    assert queue_mode(model_of(write_spec(_spec(gpu_limit), "g.yaml"))) == "absolute"
    # no YARN node pools: nothing to size absolute amounts from, weights only
    assert queue_mode(model_of(write_spec(_spec(gpu_limit, pools=""), "n.yaml"))) == "percentage"


VECTOR = re.compile(r"^\[(memory=\d+),(vcores=\d+)((?:,[\w./-]+=\d+)*)\]$")


def _vector(text: str) -> dict[str, int]:
    assert VECTOR.match(text), text
    return {k: int(v) for k, v in (kv.split("=") for kv in text[1:-1].split(","))}


def test_absolute_mode_vectors_are_consistent(write_spec: WriteSpec) -> None:
    queues = (
        "  - {name: stream, weight: 3, capability: {cpu: 100, memory: 400Gi, pods: 9, nvidia.com/gpu: 12},"
        " deserved: {nvidia.com/gpu: 8}}\n"
        "  - {name: batch, weight: 1}\n"
        "  - {name: nightly, parent: batch, weight: 1}\n"
        "  - {name: adhoc, parent: batch, weight: 2, deserved: {cpu: 4}}\n"
    )
    spec = model_of(write_spec(_spec(queues)))
    plan = plan_queues(spec)
    assert plan.mode == "absolute" and plan.infeasible == []
    props = {p.name: p.value for p in plan.properties}
    root = {"memory": 4 * 128 * 1024, "vcores": 128, "yarn.io/gpu": 16}
    mins = {q: _vector(props[f"{CS}{p}.capacity"]) for q, p in queue_paths(spec).items()}
    maxes = {q: _vector(props[f"{CS}{p}.maximum-capacity"]) for q, p in queue_paths(spec).items()}
    assert maxes["stream"] == {"memory": 400 * 1024, "vcores": 100, "yarn.io/gpu": 12}
    assert mins["stream"]["yarn.io/gpu"] == 8  # deserved
    assert mins["batch"]["yarn.io/gpu"] == 8  # what is left, by weight
    assert mins["stream"]["vcores"] == 96 and mins["batch"]["vcores"] == 32  # 3:1 of 128
    assert mins["adhoc"]["vcores"] == 4 and mins["nightly"]["vcores"] == 28
    assert maxes["batch"] == root
    for q in mins:
        assert mins[q]["memory"] >= 1
        assert all(mins[q][d] <= maxes[q][d] for d in mins[q]), q
    for parent, children in (("root", ("stream", "batch")), ("batch", ("nightly", "adhoc"))):
        pmin = root if parent == "root" else mins[parent]
        for d in root:
            assert sum(mins[c][d] for c in children) <= pmin[d], (parent, d)


def test_example_yarn_stack_uses_absolute_gpu_capacities() -> None:
    from tests.conftest import STACKS_DIR

    spec = model_of(STACKS_DIR / "yarn-analytics.yaml")
    plan = plan_queues(spec)
    assert plan.mode == "absolute" and plan.infeasible == []
    props = {p.name: p.value for p in plan.properties}
    v100 = "accessible-node-labels.gpu-teslav100sxm232gb."
    t4 = "accessible-node-labels.gpu-teslat4."
    # analytics: 16 of the 24 V100s (6 nodes × 4) and 2/3 of those nodes' memory and vcores
    assert _vector(props[f"{CS}root.analytics.{v100}capacity"]) == {
        "memory": 6 * 512 * 1024 * 16 // 24, "vcores": 6 * 64 * 16 // 24, "yarn.io/gpu": 16
    }
    assert _vector(props[f"{CS}root.analytics.{v100}maximum-capacity"])["yarn.io/gpu"] == 24
    # T4s (10 nodes × 2): analytics deserves 8 (at most 12), inference gets the 12 left (weight share)
    assert _vector(props[f"{CS}root.analytics.{t4}capacity"])["yarn.io/gpu"] == 8
    assert _vector(props[f"{CS}root.analytics.{t4}maximum-capacity"])["yarn.io/gpu"] == 12
    assert _vector(props[f"{CS}root.inference.{t4}capacity"]) == {
        "memory": 10 * 256 * 1024 * 12 // 20, "vcores": 10 * 32 * 12 // 20, "yarn.io/gpu": 12
    }
    # only the models a queue lists; the CPU-only queue uses no GPU partition at all
    assert props[f"{CS}root.analytics.accessible-node-labels"] == "gpu-teslat4,gpu-teslav100sxm232gb"
    assert props[f"{CS}root.inference.accessible-node-labels"] == "gpu-teslat4"
    assert props[f"{CS}root.adhoc.accessible-node-labels"] == " "
    assert not [k for k in props if k.startswith(f"{CS}root.adhoc.accessible-node-labels.")]
    assert not [k for k in props if k.startswith(f"{CS}root.inference.{v100}")]
    # the default partition (CPU-only NodeManagers) has no GPUs
    assert _vector(props[f"{CS}root.analytics.capacity"])["yarn.io/gpu"] == 0


LABELLED_ABSOLUTE = BASE.replace(
    "  - {name: stream, weight: 2, gpuModels: {Tesla V100-SXM2-32GB: {}}}\n",
    "  - {name: stream, weight: 2, capability: {cpu: 200, memory: 2Ti, pods: 50, nvidia.com/gpu: 6}, "
    "gpuModels: {Tesla V100-SXM2-32GB: {deserved: 4}}}\n"
    "  - {name: nightly, parent: batch, gpuModels: {Tesla T4: {deserved: 8}}}\n"
    "  - {name: adhoc, parent: batch}\n",
)


def _labels(value: str) -> set[str]:
    """``accessible-node-labels`` as CapacitySchedulerConfiguration.getAccessibleNodeLabels reads it:
    comma-separated, blank entries dropped (so ``" "`` is no label)."""
    return {x.strip() for x in value.split(",") if x.strip()}


def _check_label_rules(files: dict[str, str]) -> int:
    """Hadoop's CapacityScheduler rules for node labels, on the parsed file (CapacitySchedulerConfiguration
    is not in the hadoop-client jars): every queue states its labels (an unset list would inherit root's
    ``*``), a subset of the cluster's and of its parent's; per label and parent, the capacities of the
    children that may use it add up to 100 % (percentages) or at most the parent's (absolute vectors,
    every dimension); a queue's capacity never exceeds its maximum; a queue without the label has no
    capacity in it."""
    props = dict(parse_configuration(files["capacity-scheduler.xml"]))
    cluster = {x.split("(")[0] for x in files["resourcemanager/cluster-node-labels.txt"].strip().split(",")}
    children: dict[str, list[str]] = {}
    for key, value in props.items():
        m = re.fullmatch(re.escape(CS) + r"(.+)\.queues", key)
        if m:
            children[m[1]] = [f"{m[1]}.{c}" for c in value.split(",")]
    checked = 0
    for parent, kids in children.items():
        parent_labels = cluster if parent == "root" else _labels(props[f"{CS}{parent}.accessible-node-labels"])
        for kid in kids:
            own = _labels(props[f"{CS}{kid}.accessible-node-labels"])
            assert own <= cluster and own <= parent_labels, kid
        for label in sorted(parent_labels):
            users = [k for k in kids if label in _labels(props[f"{CS}{k}.accessible-node-labels"])]
            for k in kids:
                has = f"{CS}{k}.accessible-node-labels.{label}.capacity" in props
                assert has == (k in users), (k, label)
            if not users:
                continue
            caps = [props[f"{CS}{k}.accessible-node-labels.{label}.capacity"] for k in users]
            maxes = [props[f"{CS}{k}.accessible-node-labels.{label}.maximum-capacity"] for k in users]
            if caps[0].startswith("["):
                vectors = [_vector(c) for c in caps]
                if parent != "root":
                    pvec = _vector(props[f"{CS}{parent}.accessible-node-labels.{label}.capacity"])
                    for dim, total in pvec.items():
                        assert sum(v[dim] for v in vectors) <= total, (parent, label, dim)
                for c, mx in zip(vectors, maxes, strict=True):
                    assert all(c[d] <= _vector(mx)[d] for d in c), (label, c, mx)
            else:
                assert sum(Decimal(c) for c in caps) == 100, (parent, label, caps)
            checked += 1
    return checked


def test_node_label_capacities_follow_hadoops_rules(write_spec: WriteSpec) -> None:
    from tests.conftest import STACKS_DIR

    checked = 0
    for path in (
        STACKS_DIR / "yarn-analytics.yaml",
        write_spec(BASE, "base.yaml"),
        write_spec(LABELLED_ABSOLUTE, "absolute.yaml"),
    ):
        checked += _check_label_rules(yarn_files(path))
    assert checked >= 8
    assert queue_mode(model_of(write_spec(LABELLED_ABSOLUTE, "again.yaml"))) == "absolute"


def test_base_spec_queue_capacities(write_spec: WriteSpec) -> None:
    props = _props(write_spec, BASE)
    assert props[f"{CS}root.stream.capacity"] == "66.67"
    assert props[f"{CS}root.batch.capacity"] == "33.33"
