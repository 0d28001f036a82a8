"""A YARN Flink cluster's containers fit its queue, and its queue's AM limit admits every JobManager.

`accelplane.checks.yarn_queue_fit` (AP5085: a container larger than the queue's maximum-capacity
is never allocated; AP5086: the JobManagers of a queue's clusters exceed its guaranteed capacity,
so even ``maximum-am-resource-percent`` 1.0 leaves some ACCEPTED) and
`accelplane.derive.yarn_am_limit` (the ``maximum-am-resource-percent`` written per leaf queue).
Each finding's one fix is applied and the fixed spec validates; Hadoop's own ``Configuration``
reads the written percent (marker ``hadoop``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from accelplane.checks import run_checks
from accelplane.derive.yarn_am_limit import am_limits, capacity_scheduler_properties
from accelplane.derive.yarn_capacity import plan_queues
from accelplane.model_convert import build_model
from accelplane.render import write_tree
from accelplane.schema import validate_document
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.specs import findings_of, model_of, write_spec
from tests.support.yarn_specs import BASE, parse_configuration, yarn_files
from tests.yarn.conftest import VectorProbe
from tests.yarn.hadoop import Probe

CS = "yarn.scheduler.capacity."
CODES = {"AP5085", "AP5086"}

SPEC = """\
cluster: {{name: q, platforms: [yarn]}}
nodePools:
  - {{name: g, platform: yarn, nodes: {nodes}, cpu: {cpu}, memory: {memory}, gpu: {{vendor: nvidia, perNode: 4}}}}
queues:
{queues}flink:
  clusters:
{clusters}"""


def _cluster(name: str, queue: str, jm: str = "2Gi", tm: str = "4Gi", gpus: int = 1, jm_cpu: int = 1) -> str:
    return (
        f"    - {{name: {name}, target: yarn, queue: {queue}, jobManager: {{memory: {jm}, cpu: {jm_cpu}}}, "
        f"taskManager: {{cpu: 1, memory: {tm}, gpu: {{amount: {gpus}}}}}}}\n"
    )


def _spec(
    tmp_path: Path,
    queues: str,
    clusters: str,
    nodes: int = 4,
    cpu: int = 32,
    memory: str = "128Gi",
    name: str = "spec.yaml",
) -> Path:
    return write_spec(tmp_path, SPEC.format(queues=queues, clusters=clusters, nodes=nodes, cpu=cpu, memory=memory), name)


def _findings(path: Path) -> list[tuple[str, str, str, str]]:
    """(code, severity, path, message) of every AP5085/AP5086 finding."""
    return sorted(
        (e.finding.code, e.finding.severity, e.path, e.message)
        for e in findings_of(path)
        if e.finding is not None and e.finding.code in CODES
    )


def _errors(path: Path) -> list[str]:
    return [f"{e.finding.code if e.finding else ''} {e.path}: {e.message}" for e in findings_of(path) if not e.is_warning]


def _am_percents(path: Path) -> dict[str, tuple[str, str]]:
    """Every rendered ``maximum-am-resource-percent``: key → (value, description)."""
    import xml.etree.ElementTree as ET

    text = yarn_files(path)["capacity-scheduler.xml"]
    parse_configuration(text)  # strict shape
    out = {}
    for prop in ET.fromstring(text):
        name = prop.findtext("name") or ""
        if name.endswith("maximum-am-resource-percent"):
            out[name] = (prop.findtext("value") or "", prop.findtext("description") or "")
    return out


# --- AP5085: a container larger than its queue's maximum --------------------------------------------


def test_jobmanager_and_taskmanager_over_the_queue_capability_is_one_finding(tmp_path: Path) -> None:
    queues = "  - {name: stream, capability: {cpu: 16, memory: 1Gi, nvidia.com/gpu: 0}}\n  - {name: batch}\n"
    path = _spec(tmp_path, queues, _cluster("s", "stream"))
    found = _findings(path)
    assert [f[:3] for f in found] == [("AP5085", "error", "flink.clusters[0].queue")]
    message = found[0][3]
    assert "JobManager container [memory=2048,vcores=1]" in message
    assert "TaskManager container [memory=4096,vcores=1,yarn.io/gpu=1]" in message
    assert "memory (MiB) 4096 > 1024, yarn.io/gpu 1 > 0" in message
    assert "AbstractCSQueue.accept" in message and "ACCEPTED" in message
    assert message.endswith(
        "raise capability.memory to at least 4Gi and capability.nvidia.com/gpu to at least 1 on queue 'stream'"
    )
    # the one fix: the spec validates and renders a maximum that holds both containers
    fixed = _spec(
        tmp_path,
        queues.replace("memory: 1Gi, nvidia.com/gpu: 0", "memory: 4Gi, nvidia.com/gpu: 1"),
        _cluster("s", "stream"),
        name="fixed.yaml",
    )
    assert _errors(fixed) == []
    props = dict(parse_configuration(yarn_files(fixed)["capacity-scheduler.xml"]))
    assert props[f"{CS}root.stream.maximum-capacity"] == "[memory=4096,vcores=16,yarn.io/gpu=1]"


def test_a_gpu_capability_of_zero_names_only_the_gpus(tmp_path: Path) -> None:
    queues = "  - {name: stream, capability: {nvidia.com/gpu: 0}}\n  - {name: batch}\n"
    found = _findings(_spec(tmp_path, queues, _cluster("s", "stream", gpus=2)))
    assert [f[:3] for f in found] == [("AP5085", "error", "flink.clusters[0].queue")]
    assert "JobManager" not in found[0][3]
    assert found[0][3].endswith("raise capability.nvidia.com/gpu to at least 2 on queue 'stream'")


def test_a_parent_capability_is_the_fix_when_the_leaf_sets_none(tmp_path: Path) -> None:
    queues = (
        "  - {name: team, capability: {memory: 1536Mi}}\n"
        "  - {name: stream, parent: team}\n  - {name: adhoc, parent: team}\n  - {name: batch}\n"
    )
    found = _findings(_spec(tmp_path, queues, _cluster("s", "stream", tm="1Gi")))
    assert [f[:3] for f in found] == [("AP5085", "error", "flink.clusters[0].queue")]
    # 2 GiB JobManager over 1536 MiB; the 1 GiB TaskManager fits
    assert "TaskManager" not in found[0][3]
    assert found[0][3].endswith("raise capability.memory to at least 2Gi on queue 'team'")


def test_the_request_is_normalized_to_the_minimum_allocation_step(tmp_path: Path) -> None:
    """1536 MiB is requested as 2048 MiB (SchedulerUtils.normalizeRequest, step 1024 MiB), so a
    queue maximum of 1800 MiB holds no such container."""
    queues = "  - {name: stream, capability: {memory: 1800Mi}}\n  - {name: batch}\n"
    found = _findings(_spec(tmp_path, queues, _cluster("s", "stream", jm="1536Mi", tm="1Gi")))
    assert [f[0] for f in found] == ["AP5085"]
    assert "[memory=2048,vcores=1]" in found[0][3] and "2048 > 1800" in found[0][3]


def test_each_cluster_of_a_too_small_queue_gets_its_own_finding(tmp_path: Path) -> None:
    queues = "  - {name: stream, capability: {memory: 1Gi}}\n  - {name: batch}\n"
    clusters = _cluster("a", "stream", tm="1Gi") + _cluster("b", "stream", tm="1Gi") + _cluster("c", "batch")
    found = _findings(_spec(tmp_path, queues, clusters))
    assert [f[:3] for f in found] == [
        ("AP5085", "error", "flink.clusters[0].queue"),
        ("AP5085", "error", "flink.clusters[1].queue"),
    ]


def test_a_capability_below_one_core_stays_ap5080s(tmp_path: Path) -> None:
    queues = "  - {name: stream, capability: {cpu: 500m, memory: 64Gi, nvidia.com/gpu: 4}}\n  - {name: batch}\n"
    path = _spec(tmp_path, queues, _cluster("s", "stream"))
    codes = [e.finding.code for e in findings_of(path) if e.finding is not None and not e.is_warning]
    assert codes == ["AP5080"]


def test_gpu_model_capability_in_its_partition(tmp_path: Path) -> None:
    """With node labels the TaskManagers run in their model's partition, whose GPU maximum is
    ``gpuModels.<model>.capability``; the JobManager runs in the default partition."""
    spec = BASE.replace(
        "{name: stream, weight: 2, gpuModels: {Tesla V100-SXM2-32GB: {}}}",
        "{name: stream, weight: 2, capability: {memory: 64Gi}, gpuModels: {Tesla V100-SXM2-32GB: {capability: 1}}}",
    )
    found = _findings(write_spec(tmp_path, spec))
    assert [f[:3] for f in found] == [("AP5085", "error", "flink.clusters[0].queue")]
    message = found[0][3]
    assert "in node partition gpu-teslav100sxm232gb (yarn.io/gpu 2 > 1)" in message and "JobManager" not in message
    assert message.endswith(
        "raise gpuModels.Tesla V100-SXM2-32GB.capability to at least 2 on queue 'stream'"
    )
    fixed = write_spec(tmp_path, spec.replace("{capability: 1}", "{capability: 2}"), "fixed.yaml")
    assert [e for e in _errors(fixed) if "AP508" in e] == []


def test_percentage_mode_maxima_are_the_whole_partition(tmp_path: Path) -> None:
    """Weights only: maximum-capacity is 100 for every queue, so no container exceeds its queue's
    maximum (one larger than a NodeManager is node fit's finding, AP3513/AP3514)."""
    queues = "  - {name: stream, weight: 1}\n  - {name: batch, weight: 99}\n"
    path = _spec(tmp_path, queues, _cluster("s", "stream", jm="4Gi", tm="8Gi", gpus=4), nodes=1, cpu=8, memory="16Gi")
    assert _findings(path) == []


# --- AP5086 and the written maximum-am-resource-percent ---------------------------------------------

TWO_QUEUES = "  - {name: stream, weight: 1}\n  - {name: batch, weight: 9}\n"
FOUR_CLUSTERS = (
    _cluster("a", "stream", jm="4Gi")
    + _cluster("b", "stream", jm="4Gi")
    + _cluster("c", "batch")
    + _cluster("d", "batch")
)


def test_jobmanagers_over_the_queue_capacity_is_one_error_at_the_queue(tmp_path: Path) -> None:
    path = _spec(tmp_path, TWO_QUEUES, FOUR_CLUSTERS, nodes=1, cpu=16, memory="64Gi")
    found = _findings(path)
    assert [f[:3] for f in found] == [("AP5086", "error", "queues[0]")]
    message = found[0][3]
    assert "Flink clusters a, b in YARN queue 'stream' need 8192 MiB and 2 vcores together" in message
    assert "[memory=6553,vcores=1] in the default partition" in message
    assert "AbstractLeafQueue.activateApplications" in message
    assert message.endswith("raise its weight to at least 2 (its siblings weigh 9 in all)")
    fixed = _spec(
        tmp_path, TWO_QUEUES.replace("weight: 1}", "weight: 2}"), FOUR_CLUSTERS, nodes=1, cpu=16, memory="64Gi",
        name="fixed.yaml",
    )
    assert _errors(fixed) == []
    percents = _am_percents(fixed)
    # stream: 2 of 11 → [memory=11914,vcores=2]; 8192/11914 and 2/2 → 1
    assert percents[f"{CS}root.stream.maximum-am-resource-percent"][0] == "1"
    # batch: 9 of 11 → [memory=53621,vcores=13]; 4096 MiB → 0.08, 2 vcores → 0.1539 → 0.16
    value, description = percents[f"{CS}root.batch.maximum-am-resource-percent"]
    assert value == "0.16"
    assert description == (
        "admits the JobManagers (ApplicationMasters) of Flink clusters c, d at once: 4096 MiB and 2 vcores "
        "of the queue's guaranteed [memory=53621,vcores=13]"
    )


def test_absolute_mode_fix_is_deserved(tmp_path: Path) -> None:
    queues = "  - {name: stream, deserved: {cpu: 1, memory: 6Gi}}\n  - {name: batch}\n"
    clusters = _cluster("a", "stream") + _cluster("b", "stream", jm="3Gi") + _cluster("c", "stream")
    found = _findings(_spec(tmp_path, queues, clusters))
    assert [f[:3] for f in found] == [("AP5086", "error", "queues[0]")]
    assert "need 7168 MiB and 3 vcores together" in found[0][3]
    assert found[0][3].endswith("give queue 'stream' deserved memory: 7Gi, cpu: 3 at least")
    fixed = _spec(tmp_path, queues.replace("cpu: 1, memory: 6Gi", "cpu: 3, memory: 7Gi"), clusters, name="fixed.yaml")
    assert _errors(fixed) == []
    assert _am_percents(fixed)[f"{CS}root.stream.maximum-am-resource-percent"][0] == "1"


def test_one_cluster_is_never_held_back_by_the_am_limit(tmp_path: Path) -> None:
    """Hadoop activates the first application of a queue whatever its AM limit."""
    queues = "  - {name: stream, deserved: {cpu: 1, memory: 1Gi}}\n  - {name: batch}\n"
    path = _spec(tmp_path, queues, _cluster("a", "stream", jm="4Gi", jm_cpu=2))
    assert _findings(path) == []
    value, description = _am_percents(path)[f"{CS}root.stream.maximum-am-resource-percent"]
    assert value == "1" and "the first application of a queue starts whatever the limit" in description


def test_several_clusters_raise_the_percent_above_the_default(tmp_path: Path) -> None:
    """Five 2 GiB JobManagers in a queue of 4 nodes × 32 vcores / 128 GiB by weight 1 of 2:
    [memory=262144,vcores=64]; 10240/262144 = 0.04 and 5/64 = 0.079 → 0.08 → Hadoop's 0.1 stays."""
    queues = "  - {name: stream}\n  - {name: batch}\n"
    clusters = "".join(_cluster(n, "stream") for n in "abcde")
    path = _spec(tmp_path, queues, clusters)
    assert _am_percents(path)[f"{CS}root.stream.maximum-am-resource-percent"] == (
        "0.1",
        "admits the JobManagers (ApplicationMasters) of Flink clusters a, b, c, d, e at once: 10240 MiB and 5 "
        "vcores of the queue's guaranteed [memory=262144,vcores=64] (Hadoop's default 0.1 is enough)",
    )
    # four more JobManagers with 4 vcores each: 21 of 64 vcores → 0.33
    more = clusters + "".join(_cluster(n, "stream", jm_cpu=4) for n in "fghi")
    path = _spec(tmp_path, queues, more, name="more.yaml")
    assert _am_percents(path)[f"{CS}root.stream.maximum-am-resource-percent"][0] == "0.33"
    model = model_of(path)
    (group,) = am_limits(model, plan_queues(model))
    assert group.needed == Decimal("0.33") and group.ams == {"memory": 18432, "vcores": 21}


def test_the_yarn_example_renders_the_percent_for_its_queue() -> None:
    path = next(p for p in EXAMPLE_SPECS if p.stem == "yarn-analytics")
    assert _am_percents(path) == {
        f"{CS}root.analytics.maximum-am-resource-percent": (
            "0.1",
            "admits the JobManagers (ApplicationMasters) of Flink cluster sessions-v100 at once: 2048 MiB and 1 "
            "vcore of the queue's guaranteed [memory=471859,vcores=115] (Hadoop's default 0.1 is enough)",
        )
    }


def test_an_am_in_a_gpu_partition_gets_the_per_partition_key(tmp_path: Path) -> None:
    spec = BASE.replace(
        "      queue: stream\n",
        "      queue: stream\n      config: {yarn.application.node-label: gpu-teslav100sxm232gb}\n",
    )
    path = write_spec(tmp_path, spec)
    assert [e for e in _errors(path) if "AP508" in e] == []
    keys = set(_am_percents(path))
    assert keys == {f"{CS}root.stream.accessible-node-labels.gpu-teslav100sxm232gb.maximum-am-resource-percent"}


@pytest.mark.hadoop
def test_hadoop_reads_the_written_percents(hadoop_probe: Probe, tmp_path: Path) -> None:
    """Hadoop's Configuration.getFloat (what getMaximumApplicationMasterResourcePerQueuePercent
    calls) reads every written percent as the value accelplane computed."""
    path = _spec(
        tmp_path, TWO_QUEUES.replace("weight: 1}", "weight: 2}"), FOUR_CLUSTERS, nodes=1, cpu=16, memory="64Gi"
    )
    out = write_tree(files_for(path), tmp_path / "out") / "yarn"
    xml = out / "capacity-scheduler.xml"
    keys = sorted(_am_percents(path))
    args = [a for k in keys for a in ("amfloat", str(xml), k)]
    records = hadoop_probe.run(*args)
    assert [r for r in records if r[0] == "error"] == []
    assert {r[1]: r[2] for r in records if r[0] == "amfloat"} == {
        f"{CS}root.batch.maximum-am-resource-percent": "0.16",
        f"{CS}root.stream.maximum-am-resource-percent": "1.0",
    }


# --- random specs against an oracle of Hadoop's two rules --------------------------------------------


@st.composite
def _fit_spec(draw: st.DrawFn) -> dict[str, Any]:
    """One GPU pool, two leaf queues (weights, or capabilities/deserved: both modes), 1-4 YARN
    Flink clusters of random container sizes."""
    nodes, cpu, memory_gi = draw(st.integers(1, 3)), draw(st.sampled_from([4, 8, 16])), draw(st.sampled_from([8, 16, 64]))
    queues: list[dict[str, Any]] = []
    for name in ("a", "b"):
        q: dict[str, Any] = {"name": name, "weight": draw(st.integers(1, 9))}
        if draw(st.booleans()):
            q["capability"] = {
                "cpu": draw(st.integers(1, 16)),
                "memory": f"{draw(st.sampled_from([1, 2, 3, 6, 12, 32]))}Gi",
                "nvidia.com/gpu": draw(st.integers(0, 4)),
            }
        if draw(st.integers(0, 2)) == 0:
            q["deserved"] = {"cpu": draw(st.integers(1, 4)), "memory": f"{draw(st.sampled_from([1, 2, 4]))}Gi"}
        queues.append(q)
    clusters = [
        {
            "name": f"c{i}",
            "target": "yarn",
            "queue": draw(st.sampled_from(["a", "b"])),
            "jobManager": {"memory": f"{draw(st.sampled_from([1024, 1536, 2048, 4096]))}Mi", "cpu": draw(st.integers(1, 3))},
            "taskManager": {"cpu": 1, "memory": "1Gi", "gpu": {"amount": draw(st.integers(1, 2))}},
        }
        for i in range(draw(st.integers(1, 4)))
    ]
    return {
        "cluster": {"name": "fit", "platforms": ["yarn"]},
        "nodePools": [
            {"name": "g", "platform": "yarn", "nodes": nodes, "cpu": cpu, "memory": f"{memory_gi}Gi",
             "gpu": {"vendor": "nvidia", "perNode": 4}},
        ],
        "queues": queues,
        "yarn": {"cgroups": "v1", "maximumAllocation": {"memory": "64Gi", "vcores": 16}},
        "flink": {"clusters": clusters},
    }  # fmt: skip


def _vector(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (kv.split("=") for kv in text.strip("[]").split(","))}


def _oracle(doc: dict[str, Any], props: dict[str, str]) -> tuple[set[str], set[str]]:
    """Hadoop's two rules on written ``capacity-scheduler.xml`` properties (independent of
    accelplane's derive code): (clusters with a container over their queue's maximum-capacity,
    queues whose JobManagers cannot all be active at once at maximum-am-resource-percent 1.0).
    Containers: memory rounded up to 1024 MiB, vcores as asked (SchedulerUtils.normalizeRequest)."""
    pool = doc["nodePools"][0]
    offer = {"memory": pool["nodes"] * int(pool["memory"].removesuffix("Gi")) * 1024, "vcores": pool["nodes"] * pool["cpu"]}
    over, blocked = set(), set()
    ams: dict[str, list[dict[str, int]]] = {}
    for c in doc["flink"]["clusters"]:
        jm_mib = int(c["jobManager"]["memory"].removesuffix("Mi"))
        jm = {"memory": -(-jm_mib // 1024) * 1024, "vcores": c["jobManager"]["cpu"]}
        tm = {"memory": 1024, "vcores": 1, "yarn.io/gpu": c["taskManager"]["gpu"]["amount"]}
        maximum = props[f"{CS}root.{c['queue']}.maximum-capacity"]
        if maximum.startswith("["):
            limit = _vector(maximum)
            if any(v > limit.get(d, v) for container in (jm, tm) for d, v in container.items()):
                over.add(c["name"])
        ams.setdefault(c["queue"], []).append(jm)
    for queue, jms in ams.items():
        if len(jms) < 2:
            continue  # the first application is activated whatever the limit
        capacity = props[f"{CS}root.{queue}.capacity"]
        have = (
            _vector(capacity)
            if capacity.startswith("[")
            else {d: int(v * Decimal(capacity) / 100) for d, v in offer.items()}
        )
        if any(sum(j[d] for j in jms) > have[d] for d in ("memory", "vcores")):
            blocked.add(queue)
    return over, blocked


def _am_admits_all(doc: dict[str, Any], props: dict[str, str]) -> bool:
    """With the written percents, every queue's JobManagers fit its AM limit at once
    (``multiplyAndNormalizeUp``: ceil of guaranteed × percent, rounded up to 1024 MiB / 1 vcore)."""
    pool = doc["nodePools"][0]
    offer = {"memory": pool["nodes"] * int(pool["memory"].removesuffix("Gi")) * 1024, "vcores": pool["nodes"] * pool["cpu"]}
    for queue in ("a", "b"):
        jms = [c for c in doc["flink"]["clusters"] if c["queue"] == queue]
        if len(jms) < 2:
            continue
        percent = float(props.get(f"{CS}root.{queue}.maximum-am-resource-percent", "0.1"))
        capacity = props[f"{CS}root.{queue}.capacity"]
        have = (
            _vector(capacity)
            if capacity.startswith("[")
            else {d: int(v * Decimal(capacity) / 100) for d, v in offer.items()}
        )
        step = {"memory": 1024, "vcores": 1}
        need = {
            "memory": sum(-(-int(c["jobManager"]["memory"].removesuffix("Mi")) // 1024) * 1024 for c in jms),
            "vcores": sum(c["jobManager"]["cpu"] for c in jms),
        }
        for d in need:
            limit = -(-math.ceil(have[d] * percent) // step[d]) * step[d]
            if need[d] > limit:
                return False
    return True


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fit_spec())
def test_random_specs_the_findings_fire_exactly_where_hadoop_would_block(doc: dict[str, Any]) -> None:
    assert validate_document(doc) == [], validate_document(doc)
    model, problems = build_model(doc)
    assert model is not None, problems
    found = [p for p in run_checks(model) if p.finding is not None and p.finding.code in CODES]
    plan = plan_queues(model)
    if plan.infeasible:  # the queue tree itself is reported (AP5031, ...): nothing more about it
        event("infeasible plan")
        assert found == []
        return
    props = {p.name: p.value for p in capacity_scheduler_properties(model, plan)}
    over, blocked = _oracle(doc, props)
    names = [c["name"] for c in doc["flink"]["clusters"]]
    assert sorted(p.path for p in found if p.finding and p.finding.code == "AP5085") == [
        ("flink", "clusters", names.index(n), "queue") for n in sorted(over)
    ]
    queues = [q["name"] for q in doc["queues"]]
    ap5086 = sorted(p.path for p in found if p.finding and p.finding.code == "AP5086")
    expected = sorted(("queues", queues.index(q)) for q in blocked if not any(
        c["queue"] == q and c["name"] in over for c in doc["flink"]["clusters"]
    ))
    assert ap5086 == expected
    event("AP5085" if over else "fits")
    event("AP5086" if ap5086 else "AMs fit")
    if not found:
        assert _am_admits_all(doc, props)


def test_taskmanagers_without_one_partition_stay_the_placement_checks(tmp_path: Path) -> None:
    """GPU TaskManagers whose candidate pools span partitions have no node label (AP5013): their
    container is not also compared with the default partition's maximum."""
    spec = BASE.replace(
        "{name: stream, weight: 2, gpuModels: {Tesla V100-SXM2-32GB: {}}}",
        "{name: stream, weight: 2, capability: {memory: 64Gi}, gpuModels: {Tesla V100-SXM2-32GB: {}}}",
    ).replace("gpu: {amount: 2, model: Tesla V100-SXM2-32GB}", "gpu: {amount: 2}")
    codes = {e.finding.code for e in findings_of(write_spec(tmp_path, spec)) if e.finding and not e.is_warning}
    assert "AP5013" in codes and "AP5085" not in codes


def test_gpus_no_pool_provides_stay_the_placement_checks(tmp_path: Path) -> None:
    """A TaskManager asking for more GPUs than the whole partition has is not the queue's fault
    (AP5023: no NodeManager has that many; no capability could give them)."""
    queues = "  - {name: stream, capability: {memory: 64Gi, nvidia.com/gpu: 2}}\n  - {name: batch}\n"
    path = _spec(tmp_path, queues, _cluster("s", "stream", gpus=5), nodes=1)
    codes = {e.finding.code for e in findings_of(path) if e.finding and not e.is_warning}
    assert "AP5085" not in codes and codes & {"AP5023", "AP5021"}


@pytest.mark.hadoop
def test_hadoop_computes_an_am_limit_that_admits_them_all(queue_vector: VectorProbe, tmp_path: Path) -> None:
    """Hadoop's own DominantResourceCalculator (``multiplyAndNormalizeUp`` of the written capacity
    vector by the written percent, then ``fitsIn``, as calculateAndGetAMResourceLimitPerPartition and
    activateApplications do): the written percent (8 of 12 vcores → 0.67) admits all JobManagers,
    0.58 (12 × 0.58 = 6.96 → 7 vcores) does not, and before the fix (AP5086) not even 1.0 does.
    Hadoop rounds the limit up, so 0.66 would do too: accelplane's whole-percent ceiling errs on the
    side of admitting."""
    queues = "  - {name: stream, deserved: {cpu: 12, memory: 24Gi}}\n  - {name: batch}\n"
    clusters = "".join(_cluster(n, "stream", jm="3Gi", jm_cpu=2) for n in "abcd")  # 12 GiB, 8 vcores
    path = _spec(tmp_path, queues, clusters)
    assert _errors(path) == []
    props = dict(parse_configuration(yarn_files(path)["capacity-scheduler.xml"]))
    capacity = props[f"{CS}root.stream.capacity"]
    percent = props[f"{CS}root.stream.maximum-am-resource-percent"]
    assert (capacity, percent) == ("[memory=24576,vcores=12,yarn.io/gpu=8]", "0.67")
    small = _spec(tmp_path, queues.replace("cpu: 12, memory: 24Gi", "cpu: 6, memory: 24Gi"), clusters, name="small.yaml")
    assert [f[0] for f in _findings(small)] == ["AP5086"]
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "resource-types.xml").write_text(yarn_files(path)["resource-types.xml"], encoding="utf-8")
    got = queue_vector(
        "amlimit", capacity, percent, "12288", "8",
        "amlimit", capacity, "0.58", "12288", "8",
        "amlimit", capacity.replace("vcores=12", "vcores=6"), "1", "12288", "8",
        conf_dir=conf,
    )  # fmt: skip
    assert [r[3:] for r in got] == [["17408", "9", "true"], ["14336", "7", "false"], ["24576", "6", "false"]], got


def test_without_queues_root_default_holds_the_jobmanagers(tmp_path: Path) -> None:
    """No queues: every cluster runs in root.default (100 % of the cluster). Its percent is written;
    JobManagers larger than the whole default partition are one finding at the last cluster."""
    spec = (
        "cluster: {name: q, platforms: [yarn]}\n"
        "nodePools:\n  - {name: g, platform: yarn, nodes: 1, cpu: 4, memory: 16Gi, gpu: {vendor: nvidia, perNode: 4}}\n"
        "flink:\n  clusters:\n"
        + "".join(_cluster(n, "x").replace("queue: x, ", "") for n in "ab")
    )
    path = write_spec(tmp_path, spec)
    assert _errors(path) == []
    assert _am_percents(path) == {
        f"{CS}root.default.maximum-am-resource-percent": (
            "0.5",
            "admits the JobManagers (ApplicationMasters) of Flink clusters a, b at once: 4096 MiB and 2 vcores "
            "of the queue's guaranteed [memory=16384,vcores=4]",
        )
    }
    crowded = write_spec(tmp_path, spec + _cluster("c", "x", jm_cpu=3).replace("queue: x, ", ""), "crowded.yaml")
    found = _findings(crowded)
    assert [f[:3] for f in found] == [("AP5086", "error", "flink.clusters[2]")]
    assert found[0][3].endswith("give the YARN node pools of the default partition at least cpu: 5 in all")


def test_the_fit_checks_are_linear_in_queues_and_clusters() -> None:
    """Operation counts (tests/foundation/test_validation_scaling.py): one leaf queue and one YARN
    Flink cluster per n; twice n makes about twice the calls (the share index, the queue paths, the
    partition totals and the GPU types are each computed once per spec)."""
    from accelplane.checks import yarn_queue_fit

    from tests.foundation.test_validation_scaling import _calls_during

    def doc(n: int) -> dict[str, Any]:
        return {
            "cluster": {"name": "c", "platforms": ["yarn"]},
            "nodePools": [
                {"name": "g", "platform": "yarn", "nodes": 100, "cpu": 64, "memory": "512Gi",
                 "gpu": {"vendor": "nvidia", "perNode": 4}},
            ],
            "queues": [{"name": f"q{i}", "capability": {"memory": "64Gi", "cpu": 64}} for i in range(n)],
            "yarn": {"cgroups": "v1"},
            "flink": {"clusters": [
                {"name": f"c{i}", "target": "yarn", "queue": f"q{i}", "taskManager": {"cpu": 1, "gpu": {"amount": 1}}}
                for i in range(n)
            ]},
        }  # fmt: skip

    def calls(n: int) -> int:
        model, problems = build_model(doc(n))
        assert model is not None, problems
        return _calls_during(lambda: list(yarn_queue_fit.check(model)))

    small, large = calls(50), calls(100)
    assert large / small < 2.3, (small, large)
