"""Hadoop 3.5's own classes read the rendered YARN files exactly as the spec means them.

Runs `YarnConfProbe` (tests/yarn/java) with the hadoop-client jars that PyPI pyspark ships:
ResourceUtils loads ``resource-types.xml`` from the classpath like the ResourceManager does and
each ``node-resources`` file like a NodeManager does; Hadoop's Configuration parser reads every
XML file; yarn-default.xml of the same release proves every yarn-site key exists.
One command: ``pytest -m hadoop tests/yarn`` (needs ``pip install '.[hadoop]'`` and a JDK).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.builders.yarn import (
    node_resources_properties,
    resource_types_properties,
    resourcemanager_site_properties,
    yarn_site_properties,
)
from accelplane.derive.gpu_resources import yarn_gpu_type
from accelplane.derive.yarn_capacity import plan_queues
from accelplane.derive.yarn_labels import cluster_labels, pool_label
from accelplane.derive.yarn_types import (
    container_gpu_request,
    needed_types,
    node_amounts,
    type_bounds,
    yarn_gpu_clusters,
    yarn_pools,
)
from accelplane.errors import SpecErrors
from accelplane.names import is_valid_yarn_resource_name
from accelplane.pipeline import load_validated
from accelplane.render import write_tree

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.specs import model_of
from tests.support.yarn_specs import BASE, parse_configuration, without_gpu_models
from tests.yarn.hadoop import Probe

pytestmark = pytest.mark.hadoop

LONG_MAX = str(2**63 - 1)
ABSOLUTE = BASE.replace(
    "  - {name: stream, weight: 2, gpuModels: {Tesla V100-SXM2-32GB: {}}}\n"
    "  - {name: batch, weight: 1, gpuModels: {Tesla T4: {}, AMD Instinct MI300X: {}}}\n",
    "  - {name: stream, weight: 2, capability: {cpu: 200, memory: 2Ti, pods: 50, nvidia.com/gpu: 16}, "
    "gpuModels: {Tesla V100-SXM2-32GB: {deserved: 6}}}\n"
    "  - {name: batch, weight: 1}\n"
    "  - {name: nightly, parent: batch, priority: 5, gpuModels: {Tesla T4: {deserved: 4, capability: 8}}}\n"
    "  - {name: adhoc, parent: batch, reclaimable: false, capability: {cpu: 100, memory: 1Ti, pods: 10, amd.com/gpu: 4}, "
    "gpuModels: {AMD Instinct MI300X: {}, Tesla T4: {}}}\n",
)
SPECS = {
    "base": BASE,
    "absolute-queues": ABSOLUTE,
    "no-labels": without_gpu_models(BASE).replace("  nodeLabels: true\n", "").replace(
        "gpu: {amount: 2, model: Tesla V100-SXM2-32GB}", "gpu: {amount: 2}"
    ),
    "cgroups-v1-no-docker": BASE.replace("cgroups: v2", "cgroups: v1").replace(
        "docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}",
        "docker: {enabled: false}",
    ),
}
YARN_STACKS = [p for p in EXAMPLE_SPECS if "yarn" in model_of(p).platforms]


@pytest.mark.parametrize(
    "name", [*(p.stem for p in EXAMPLE_SPECS if "yarn" in model_of(p).platforms), *SPECS]
)
def test_hadoop_reads_rendered_files_as_intended(
    name: str, hadoop_probe: Probe, write_spec, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    path = next((p for p in YARN_STACKS if p.stem == name), None) or write_spec(SPECS[name], f"{name}.yaml")
    spec = model_of(path)
    out = write_tree(files_for(path), tmp_path / "out") / "yarn"
    pools = yarn_pools(spec)
    plan = plan_queues(spec)
    site_keys = sorted(
        {p.name for pool in pools for p in yarn_site_properties(spec, pool)}
        | {p.name for p in resourcemanager_site_properties(spec)}
    )
    vectors = [p.value for p in plan.properties if p.value.startswith("[")]
    xml_files = sorted(out.rglob("*.xml"))
    args = ["types"]
    for pool in pools:
        args += ["node", pool.name, str(out / "node-resources" / f"{pool.name}.xml")]
    for f in xml_files:
        args += ["conf", str(f)]
    for key in site_keys:
        args += ["known", key]
    for v in vectors:
        args += ["vector", v]
    labels = cluster_labels(spec)
    if labels:
        # the RM's label manager started from the RM fragment, the labels added as
        # `yarn rmadmin -addToClusterNodeLabels` would, every NodeManager's reported partition put on a node
        store = tmp_path / "label-store"
        store.mkdir()
        args += ["labelsrm", str(out / "resourcemanager" / "yarn-site.xml"), str(store)]
        args += ["labels", (out / "resourcemanager" / "cluster-node-labels.txt").read_text().strip()]
        for pool in pools:
            args += ["partition", pool.name, str(out / "yarn-site" / f"{pool.name}.xml")]
    records = hadoop_probe.run(*args, conf_dir=out)
    assert [r for r in records if r[0] == "error"] == []

    # resource-types.xml: exactly the needed GPU types, countable, no units, the spec's bounds
    types = {r[1]: r[2:] for r in records if r[0] == "type"}
    assert set(types) == {"memory-mb", "vcores", *needed_types(spec)}
    bounds = type_bounds(spec)
    for t in needed_types(spec):
        b = bounds.get(t)
        lo = str(b.minimum_allocation) if b and b.minimum_allocation is not None else "0"
        hi = str(b.maximum_allocation) if b and b.maximum_allocation is not None else LONG_MAX
        assert types[t] == ["", "COUNTABLE", lo, hi], t

    # node-resources/<pool>.xml: the amounts NodeManagers report, every type declared
    for pool in pools:
        got = {
            r[2]: int(r[3])
            for r in records
            if r[0] == "node" and r[1] == pool.name and r[2] not in ("memory-mb", "vcores")
        }
        assert got == node_amounts(spec, pool), pool.name

    # every XML file: Hadoop's parser sees exactly the properties the stdlib parser sees
    for f in xml_files:
        hadoop = sorted((r[2], r[3]) for r in records if r[0] == "prop" and r[1] == str(f))
        assert hadoop == sorted(parse_configuration(f.read_text())), f
    rt = sorted((p.name, p.value) for p in resource_types_properties(spec))
    assert sorted(parse_configuration((out / "resource-types.xml").read_text())) == rt
    for pool in pools:
        nr = [(p.name, p.value) for p in node_resources_properties(spec, pool)]
        assert parse_configuration((out / "node-resources" / f"{pool.name}.xml").read_text()) == nr

    # yarn-site keys exist in this Hadoop's yarn-default.xml; vectors only name known resources
    assert {r[1]: r[2] for r in records if r[0] == "known"} == dict.fromkeys(site_keys, "true")
    assert len([r for r in records if r[0] == "vector"]) == sum(v.count("=") for v in vectors)

    # node labels: enabled, distributed, exclusive, and each NodeManager in its pool's partition
    if labels:
        assert [r[1:] for r in records if r[0] == "labelsrm"] == [["true", "distributed"]]
        assert sorted(r[1:] for r in records if r[0] == "label") == [[lb, "true"] for lb in labels]
        for pool in pools:
            want = pool_label(spec, pool)
            (reported,) = [r for r in records if r[0] == "partition" and r[1] == pool.name]
            assert reported[2:] == (["config", want] if want else ["", ""]), pool.name
            (on_node,) = [r for r in records if r[0] == "nodelabels" and r[1] == pool.name]
            assert on_node[2:] == ([want] if want else []), pool.name

    # Flink on YARN: the config-key type and everything a TaskManager requests is declared with a
    # maximum-allocation (as Hadoop read it) no smaller than the TaskManager's GPU amount
    for c in yarn_gpu_clusters(spec):
        assert yarn_gpu_type(spec, c) in types
        for t, amount in container_gpu_request(spec, c).items():
            assert int(types[t][3]) >= amount, (c.name, t)


BAD_RESOURCE_TYPES = {
    "units-on-builtin-gpu": ("yarn.io/gpu", "G", "Defined mandatory resource type=yarn.io/gpu"),
    "units-on-builtin-fpga": ("yarn.io/fpga", "k", "Defined mandatory resource type=yarn.io/fpga"),
    "reserved-memory": ("memory", None, "Attempt to re-define mandatory resource 'memory'"),
    "reserved-memory-mb": ("memory-mb", None, "Attempt to re-define mandatory resource 'memory-mb'"),
    "reserved-vcores": ("vcores", None, "Attempt to re-define mandatory resource 'vcores'"),
    "two-slashes": ("com/acme/gpu", None, "'com/acme/gpu' is not a valid resource name"),
    "leading-digit": ("1gpu", None, "'1gpu' is not a valid resource name"),
    "parentheses": ("yarn.io/gpu-nvidiaa100(80gb)", None, "is not a valid resource name"),
}


def _types_xml(name: str, units: str | None) -> str:
    props = [("yarn.resource-types", name)] + (
        [(f"yarn.resource-types.{name}.units", units)] if units else []
    )
    body = "".join(f"<property><name>{n}</name><value>{v}</value></property>" for n, v in props)
    return f"<?xml version='1.0'?><configuration>{body}</configuration>"


def test_hadoop_rejects_the_resource_types_our_checks_reject(
    hadoop_probe: Probe, tmp_path: Path, write_spec: Callable[..., Path]
) -> None:
    args = []
    for case, (name, units, _) in BAD_RESOURCE_TYPES.items():
        f = tmp_path / f"{case}.xml"
        f.write_text(_types_xml(name, units))
        args += ["typesfile", str(f)]
        # the same entry in a spec is reported by checks.yarn at that entry
        entry = f"    - {{name: '{name}'{', units: ' + units if units else ''}}}\n"
        types_block = BASE[BASE.index("  resourceTypes:\n") : BASE.index("flink:\n")]
        spec = write_spec(BASE.replace(types_block, "  resourceTypes:\n" + entry), f"{case}.yaml")
        with pytest.raises(SpecErrors) as exc:
            load_validated(spec)
        assert exc.value.errors, case
        assert all(e.path.startswith("yarn.resourceTypes[0].") for e in exc.value.errors), exc.value
    records = hadoop_probe.run(*args)
    verdicts = [r for r in records if r[0] in ("ok", "error")]
    assert [r[0] for r in verdicts] == ["error"] * len(BAD_RESOURCE_TYPES)
    for error, (case, (_, _, expected)) in zip(verdicts, BAD_RESOURCE_TYPES.items(), strict=True):
        assert "YarnRuntimeException" in error[2] and expected in error[2], case


LEGAL = [
    "yarn.io/gpu",
    "yarn.io/gpu-teslav100sxm232gb",
    "yarn.io/gpu-teslat4",
    "acme.com/gpu",
    "a",
    "Gpu_2.x-y",
    "my-ns.example-1/g",
    "yarn.io/gpu-nvidiaa10080gbpcie",
    "x1/y",
]
ILLEGAL = [
    "com/acme/gpu",
    "1gpu",
    "gpu type",
    "yarn.io/gpu-nvidiaa100(80gb)",
    "yarn.io/",
    "/gpu",
    "yarn.io/-gpu",
    "ns..x/gpu",
    "ns/gpu/x",
    "gpu=1",
    "ümlaut/gpu",
]


def test_name_rule_agrees_with_hadoop(hadoop_probe: Probe, tmp_path: Path) -> None:
    args = []
    for i, name in enumerate(LEGAL + ILLEGAL):
        f = tmp_path / f"n{i}.xml"
        f.write_text(_types_xml(name, None).replace("&", "&amp;"), encoding="utf-8")
        args += ["typesfile", str(f)]
    records = hadoop_probe.run(*args)
    verdicts = [r[0] == "ok" for r in records if r[0] in ("ok", "error")]
    assert verdicts == [True] * len(LEGAL) + [False] * len(ILLEGAL)
    assert [is_valid_yarn_resource_name(n) for n in LEGAL + ILLEGAL] == verdicts


def test_hadoop_rejects_the_node_labels_our_checks_reject(hadoop_probe: Probe, tmp_path: Path) -> None:
    """NodeLabelUtil (through CommonNodeLabelsManager) and `is_valid_label` agree."""
    from accelplane.derive.yarn_labels import is_valid_label, label_for_model

    site = tmp_path / "rm.xml"
    site.write_text(
        "<?xml version='1.0'?><configuration><property><name>yarn.node-labels.enabled</name>"
        "<value>true</value></property></configuration>"
    )
    store = tmp_path / "store"
    store.mkdir()
    names = [
        label_for_model("Tesla V100-SXM2-32GB"),
        label_for_model("AMD Instinct MI300X OAM"),
        "gpu_a100",
        label_for_model("NVIDIA A100 (80GB)"),
        label_for_model("H100 SXM5 80GB.x"),
        "-gpu",
        "x" * 256,
    ]
    args = ["labelsrm", str(site), str(store)]
    for n in names:
        args += ["labels", n]
    records = hadoop_probe.run(*args)
    verdicts = [r[0] == "ok" for r in records if r[0] in ("ok", "error") and r[1] == "labels"]
    assert verdicts == [is_valid_label(n) for n in names] == [True, True, True, False, False, False, False]


def test_hadoop_reads_the_per_partition_capacities_intended(
    hadoop_probe: Probe, write_spec, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The two-model cluster (A100, T4, CPU-only NodeManagers; a CPU-only queue and GPU queues):
    Hadoop's Configuration reads the rendered capacity-scheduler.xml, and the per-partition figures
    follow from what it read by CapacitySchedulerConfiguration's rules (accessible labels: blank
    entries dropped, unset inherits the parent's, root's is ``*``; a label's capacity is 0 unless
    set). The ResourceManager classes themselves (hadoop-yarn-server-resourcemanager) are not in
    the hadoop-client jars that pyspark ships, so the scheduler cannot be started here."""
    from tests.yarn.test_partitions import TWO_MODELS

    out = write_tree(files_for(write_spec(TWO_MODELS)), tmp_path / "out") / "yarn"
    xml = out / "capacity-scheduler.xml"
    vectors = sorted({v for _, v in parse_configuration(xml.read_text()) if v.startswith("[")})
    records = hadoop_probe.run("conf", str(xml), *[a for v in vectors for a in ("vector", v)], conf_dir=out)
    assert [r for r in records if r[0] == "error"] == []
    conf = {r[2]: r[3] for r in records if r[0] == "prop"}
    prefix = "yarn.scheduler.capacity."

    def labels(queue: str) -> set[str]:
        value = conf.get(f"{prefix}{queue}.accessible-node-labels")
        if value is None:
            return {"*"} if queue == "root" else labels(queue.rsplit(".", 1)[0])
        return {x.strip() for x in value.split(",") if x.strip()}

    def gpus(queue: str, label: str, what: str) -> int:
        value = conf.get(f"{prefix}{queue}.accessible-node-labels.{label}.{what}", "[yarn.io/gpu=0]")
        return dict((k, int(v)) for k, v in (p.split("=") for p in value.strip("[]").split(",")))["yarn.io/gpu"]

    a100, t4 = "gpu-nvidiaa100sxm480gb", "gpu-teslat4"
    queues = ["root.etl", "root.ml", "root.ml.sessions", "root.ml.batch"]
    assert {q: labels(q) for q in queues} == {
        "root.etl": set(),
        "root.ml": {a100, t4},
        "root.ml.sessions": {a100},
        "root.ml.batch": {t4},
    }
    assert {(q, lb): (gpus(q, lb, "capacity"), gpus(q, lb, "maximum-capacity")) for q in queues for lb in labels(q)} == {
        ("root.ml", a100): (16, 16),
        ("root.ml", t4): (8, 8),
        ("root.ml.sessions", a100): (12, 16),
        ("root.ml.batch", t4): (6, 8),
    }
    # every vector names only memory, vcores and declared resource types (as Hadoop parses them)
    assert len([r for r in records if r[0] == "vector"]) == sum(v.count("=") for v in vectors)


def test_hadoop_reads_a_gpu_queue_without_gpu_models_in_every_partition(
    hadoop_probe: Probe, write_spec, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """#39 item 2: a leaf queue with GPU amounts and no gpuModels may use every GPU partition (as
    Hadoop's Configuration reads the rendered file), its shares split by the partitions' GPUs, and
    each partition's children capacities still add up to the parent's (CapacityScheduler's rule)."""
    from tests.yarn.test_partitions import BARE

    out = write_tree(files_for(write_spec(BARE)), tmp_path / "out") / "yarn"
    xml = out / "capacity-scheduler.xml"
    vectors = sorted({v for _, v in parse_configuration(xml.read_text()) if v.startswith("[")})
    records = hadoop_probe.run("conf", str(xml), *[a for v in vectors for a in ("vector", v)], conf_dir=out)
    assert [r for r in records if r[0] == "error"] == []
    conf = {r[2]: r[3] for r in records if r[0] == "prop"}
    prefix = "yarn.scheduler.capacity."
    a100, t4 = "gpu-nvidiaa100sxm480gb", "gpu-teslat4"
    assert conf[f"{prefix}root.etl.accessible-node-labels"] == f"{a100},{t4}"

    def gpus(queue: str, label: str) -> int:
        value = conf.get(f"{prefix}{queue}.accessible-node-labels.{label}.capacity", "[yarn.io/gpu=0]")
        return dict((k, int(v)) for k, v in (p.split("=") for p in value.strip("[]").split(",")))["yarn.io/gpu"]

    assert {lb: (gpus("root.etl", lb), gpus("root.ml", lb)) for lb in (a100, t4)} == {a100: (3, 13), t4: (1, 7)}
