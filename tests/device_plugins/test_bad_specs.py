"""Bad specs: ``accelplane validate`` exits 1 and prints exact ``file: path: message`` lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from accelplane.checks.device_plugins import untolerated_pool_taints
from accelplane.derive import device_plugin_placement as dp_placement
from accelplane.model_convert import build_model

from tests.support.device_plugin_specs import pool, spec_doc, tm_cluster
from tests.support.specs import expect_errors, expect_findings, run_validate, write_spec

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
CAP = {"cpu": 8, "memory": "8Gi", "pods": 10}


CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "time-slicing with replicas 1",
        spec_doc([pool("t4", sharing={"strategy": "timeSlicing", "replicas": 1})]),
        [
            "nodePools[0].gpu.sharing.replicas: time-slicing needs replicas >= 2 (the device plugin rejects "
            "'number of replicas must be >= 2'; got 1); use sharing.strategy none for exclusive GPUs"
        ],
    ),
    (
        "MPS with default replicas",
        spec_doc([pool("l4", sharing={"strategy": "mps"})]),
        [
            "nodePools[0].gpu.sharing.replicas: MPS needs replicas >= 2 (the device plugin rejects "
            "'number of replicas must be >= 2'; got 1); use sharing.strategy none for exclusive GPUs"
        ],
    ),
    (
        "mps and timeSlicing in upstream's shape",
        spec_doc([pool("t4", sharing={"timeSlicing": {"replicas": 4}, "mps": {"replicas": 4}})]),
        [
            "nodePools[0].gpu.sharing: unknown field(s) 'mps', 'timeSlicing'; allowed: "
            "failRequestsGreaterThanOne, renameByDefault, replicas, strategy"
        ],
    ),
    (
        "mps and timeSlicing as a list of strategies",
        spec_doc([pool("t4", sharing={"strategy": ["timeSlicing", "mps"], "replicas": 4})]),
        [
            "nodePools[0].gpu.sharing.strategy: ['timeSlicing', 'mps'] is not one of 'none', 'timeSlicing', 'mps'"
        ],
    ),
    (
        "MPS on MIG GPUs",
        spec_doc(
            [
                pool(
                    "a100",
                    mig={"strategy": "mixed", "devices": {"1g.10gb": 7}},
                    sharing={"strategy": "mps", "replicas": 2},
                )
            ]
        ),
        [
            "nodePools[0].gpu.sharing.strategy: sharing with MPS is not supported on MIG-enabled GPUs "
            "(mig.strategy mixed); use timeSlicing, or mig.strategy none"
        ],
    ),
    (
        "failRequestsGreaterThanOne with MPS, sharing options without a strategy",
        spec_doc(
            [
                pool("l4", sharing={"strategy": "mps", "replicas": 4, "failRequestsGreaterThanOne": True}),
                pool("t4", sharing={"replicas": 4, "renameByDefault": True}),
            ]
        ),
        [
            "nodePools[0].gpu.sharing.failRequestsGreaterThanOne: failRequestsGreaterThanOne applies to "
            "time-slicing only; the MPS plugin always refuses a request for more than one replica (remove it)",
            "nodePools[1].gpu.sharing: sharing.replicas, sharing.renameByDefault has no effect without "
            "sharing.strategy timeSlicing or mps; set the strategy or remove them",
        ],
    ),
    (
        "MIG single with two profiles, mixed with none, too many slices, profiles without strategy",
        spec_doc(
            [
                pool("a", mig={"strategy": "single", "devices": {"1g.10gb": 3, "2g.20gb": 2}}),
                pool("b", mig={"strategy": "mixed"}),
                pool("c", mig={"strategy": "mixed", "devices": {"3g.40gb": 2, "2g.20gb": 1}}),
                pool("d", mig={"devices": {"1g.10gb": 7}}),
            ]
        ),
        [
            "nodePools[0].gpu.mig.devices: mig.strategy single needs exactly one MIG profile in mig.devices "
            "(every MIG device of a node must be identical and is advertised as nvidia.com/gpu; found 2: "
            "1g.10gb, 2g.20gb); use mixed for several profiles",
            "nodePools[1].gpu.mig.devices: mig.strategy mixed needs at least one MIG profile in mig.devices "
            "(e.g. {1g.10gb: 7}); each profile is advertised as nvidia.com/mig-<profile>",
            "nodePools[2].gpu.mig.devices: the MIG profiles use 8 compute slices per GPU, more than the 7 a "
            "MIG GPU has; reduce the instance counts",
            "nodePools[3].gpu.mig.devices: MIG profiles (1g.10gb) are only used with mig.strategy single or "
            "mixed; set the strategy or remove mig.devices",
        ],
    ),
    (
        "AMD pool with MIG and sharing",
        spec_doc(
            [
                pool(
                    "mi300",
                    "amd",
                    mig={"strategy": "single", "devices": {"1g.10gb": 1}},
                    sharing={"strategy": "timeSlicing", "replicas": 2},
                )
            ]
        ),
        [
            "nodePools[0].gpu.mig: MIG is an NVIDIA feature; the ROCm device plugin advertises whole "
            "amd.com/gpu devices (remove gpu.mig from this AMD pool)",
            "nodePools[0].gpu.sharing.strategy: the ROCm device plugin cannot share GPUs (time-slicing and MPS "
            "are NVIDIA device plugin features); remove gpu.sharing from this AMD pool",
        ],
    ),
    (
        "mixed-MIG names requested under single",
        spec_doc(
            [pool("a100", per_node=8, mig={"strategy": "single", "devices": {"1g.10gb": 7}})],
            queues=[{"name": "q", "capability": {**CAP, "nvidia.com/mig-1g.10gb": 8}}],
            clusters=[tm_cluster("emb", {"amount": 1, "pool": "a100", "resource": "nvidia.com/mig-1g.10gb"})],
        ),
        [
            "flink.clusters[0].taskManager.gpu.resource: nvidia.com/mig-1g.10gb is not provided by any "
            "Kubernetes node pool's device plugin (pool 'a100' advertises 56 nvidia.com/gpu); "
            "nvidia.com/mig-<profile> resources exist only with mig.strategy mixed, pool 'a100' uses single "
            "(every slice is advertised as nvidia.com/gpu)",
            "queues[0].capability.nvidia.com/mig-1g.10gb: nvidia.com/mig-1g.10gb is not advertised by any "
            "Kubernetes node pool's device plugin, so this queue limit means nothing (advertised: "
            "nvidia.com/gpu); nvidia.com/mig-<profile> resources exist only with mig.strategy mixed, pool "
            "'a100' uses single (every slice is advertised as nvidia.com/gpu)",
        ],
    ),
    (
        "a Flink GPU request no pool provides",
        spec_doc(
            [pool("a100", per_node=8), pool("t4", sharing={"strategy": "timeSlicing", "replicas": 2})],
            clusters=[
                tm_cluster("amd-job", {"amount": 1, "vendor": "amd"}),
                tm_cluster("shared-job", {"amount": 1, "pool": "t4", "resource": "nvidia.com/gpu.shared"}),
                tm_cluster("h100-job", {"amount": 1, "model": "NVIDIA H100 80GB HBM3"}),
            ],
        ),
        [
            "flink.clusters[0].taskManager.gpu.vendor: no Kubernetes node pool has amd GPUs, so no device "
            "plugin provides amd.com/gpu (Kubernetes GPU pools: a100, t4)",
            "flink.clusters[1].taskManager.gpu.resource: nvidia.com/gpu.shared is not provided by any "
            "Kubernetes node pool's device plugin (pool 't4' advertises 8 nvidia.com/gpu); <resource>.shared "
            "names exist only on pools with sharing.renameByDefault: true",
            "flink.clusters[2].taskManager.gpu.model: no Kubernetes node pool has 'NVIDIA H100 80GB HBM3' GPUs, "
            "so no device plugin provides nvidia.com/gpu (Kubernetes GPU pools: a100, t4)",
        ],
    ),
    (
        "more GPUs per TaskManager than a node has, shared replicas limited to one",
        spec_doc(
            [
                pool("a100", per_node=8),
                pool("l4", per_node=2, sharing={"strategy": "mps", "replicas": 4, "renameByDefault": True}),
                pool(
                    "t4",
                    sharing={"strategy": "timeSlicing", "replicas": 2, "failRequestsGreaterThanOne": True},
                ),
            ],
            clusters=[
                tm_cluster("big", {"amount": 9, "pool": "a100"}),
                tm_cluster("mps-job", {"amount": 2, "pool": "l4"}),
                tm_cluster("ts-job", {"amount": 2, "pool": "t4"}),
            ],
        ),
        [
            "flink.clusters[0].taskManager.gpu.amount: 9 nvidia.com/gpu per TaskManager exceed what one node "
            "offers (pool 'a100': 8); a TaskManager never spans nodes",
            "flink.clusters[1].taskManager.gpu.amount: pool 'l4' shares its GPUs and its device plugin (MPS "
            "always refuses a request for more than 1 nvidia.com/gpu.shared per container), so these "
            "TaskManagers would fail admission; request 1",
            "flink.clusters[2].taskManager.gpu.amount: pool 't4' shares its GPUs and its device plugin "
            "(time-slicing with failRequestsGreaterThanOne refuses a request for more than 1 nvidia.com/gpu "
            "per container), so these TaskManagers would fail admission; request 1",
        ],
    ),
    (
        "Kubernetes cluster on a YARN pool",
        {
            **spec_doc(
                [pool("a100"), pool("v100", platform="yarn", labels={})],
                clusters=[tm_cluster("k8s-job", {"amount": 1, "pool": "v100"})],
                platforms=("kubernetes", "yarn"),
            ),
            "yarn": {"cgroups": "v1"},  # YARN isolates the GPUs: no cgroups-v2 warning among these lines
        },
        [
            "flink.clusters[0].taskManager.gpu.pool: pool 'v100' is a yarn pool; TaskManagers of a kubernetes "
            "cluster need a kubernetes pool"
        ],
    ),
    (
        "a pool without labels cannot be selected",
        spec_doc([pool("a100", labels={}), pool("mi300", "amd", labels={})]),
        [
            "nodePools[0].labels: pool 'a100' has no labels, so DaemonSet nvidia-device-plugin-a100 cannot "
            "select its nodes (it would run nowhere); add a label only its nodes carry, e.g. "
            "accelplane.io/pool: a100",
            "nodePools[1].labels: pool 'mi300' has no labels, so DaemonSet amdgpu-device-plugin cannot select "
            "its nodes (it would run nowhere); add a label only its nodes carry, e.g. accelplane.io/pool: mi300",
        ],
    ),
    (
        "pools selected by NFD/GFD labels",
        spec_doc(
            [
                pool("a100", labels={"feature.node.kubernetes.io/pci-10de.present": "true"}),
                pool("t4", labels={"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.present": "true"}),
            ]
        ),
        [
            "nodePools[0].labels.feature.node.kubernetes.io/pci-10de.present: label "
            "'feature.node.kubernetes.io/pci-10de.present' is written on nodes by Node/GPU Feature Discovery "
            "or the AMD labeller, which may not run (or need the device plugin first); select pools by labels "
            "you put on the nodes yourself",
            "nodePools[1].labels.nvidia.com/gpu.product: label 'nvidia.com/gpu.product' is written on nodes by "
            "Node/GPU Feature Discovery or the AMD labeller, which may not run (or need the device plugin "
            "first); select pools by labels you put on the nodes yourself",
        ],
    ),
    (
        "another pool carries every label of a GPU pool",
        spec_doc(
            [
                pool("a100", labels={"gpu": "true"}, taints=[GPU_TAINT]),
                pool("a100-big", labels={"gpu": "true", "size": "big"}, taints=[GPU_TAINT]),
                {"name": "cpu", "nodes": 3, "labels": {"gpu": "true", "size": "small"}},
                {
                    "name": "tainted",
                    "nodes": 3,
                    "labels": {"gpu": "true"},
                    "taints": [{"key": "x", "effect": "NoSchedule"}],
                },
            ],
            device_plugins={"nvidia": {"gpuFeatureDiscovery": False}},
        ),
        [
            "nodePools[1].labels: nodes of pool 'a100-big' carry every label of pool 'a100' and no taint keeps "
            "DaemonSet(s) nvidia-device-plugin-a100 (meant for 'a100') off them, so they would run there too; "
            "give pool 'a100' a label that 'a100-big' lacks",
            "nodePools[2].labels: nodes of pool 'cpu' carry every label of pool 'a100' and no taint keeps "
            "DaemonSet(s) nvidia-device-plugin-a100 (meant for 'a100') off them, so they would run there too; "
            "give pool 'a100' a label that 'cpu' lacks",
        ],
    ),
    (
        "device plugin enabled without pools",
        spec_doc([pool("a100")], device_plugins={"amd": {"enabled": True}}),
        [
            "devicePlugins.amd.enabled: no Kubernetes node pool has AMD GPUs, so the device-plugin DaemonSet "
            "would have 0 desired pods; add such a pool or remove enabled"
        ],
    ),
    (
        "GFD product label that cannot exist",
        spec_doc([pool("x", model="NVIDIA " + "Y" * 60)]),
        [
            "nodePools[0].gpu.model: GPU Feature Discovery would label these nodes nvidia.com/gpu.product="
            f"'NVIDIA-{'Y' * 60}', which is not a valid Kubernetes label value (at most 63 characters, "
            "alphanumeric at both ends), so the label never appears; use the model name nvidia-smi reports"
        ],
    ),
    (
        "queue names a GPU resource no pool advertises",
        spec_doc(
            [pool("t4", sharing={"strategy": "timeSlicing", "replicas": 2, "renameByDefault": True})],
            queues=[
                {
                    "name": "q",
                    "capability": {**CAP, "nvidia.com/gpu": 8, "nvidia.com/gpu.shared": 8},
                    "deserved": {"nvidia.com/gpu": 4},
                    "guarantee": {"amd.com/gpu": 1},
                }
            ],
        ),
        [
            "queues[0].capability.nvidia.com/gpu: nvidia.com/gpu is not advertised by any Kubernetes node "
            "pool's device plugin, so this queue limit means nothing (advertised: nvidia.com/gpu.shared)",
            "queues[0].deserved.nvidia.com/gpu: nvidia.com/gpu is not advertised by any Kubernetes node pool's "
            "device plugin, so this queue limit means nothing (advertised: nvidia.com/gpu.shared)",
            "queues[0].guarantee.amd.com/gpu: amd.com/gpu is not advertised by any Kubernetes node pool's "
            "device plugin, so this queue limit means nothing (advertised: nvidia.com/gpu.shared)",
        ],
    ),
]


@pytest.mark.parametrize(("doc", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_spec(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    doc: dict[str, Any],
    expected: list[str],
) -> None:
    expect_findings(write_spec(tmp_path, doc), capsys, monkeypatch, [f"spec.yaml: {e}" for e in expected])


def test_duplicate_strategy_key_is_a_yaml_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_spec(
        tmp_path,
        "cluster: {name: dup, platforms: [kubernetes]}\n"
        "nodePools:\n"
        "  - name: t4\n"
        "    nodes: 1\n"
        "    labels: {accelplane.io/pool: t4}\n"
        "    gpu:\n"
        "      vendor: nvidia\n"
        "      perNode: 1\n"
        "      sharing:\n"
        "        strategy: timeSlicing\n"
        "        strategy: mps\n"
        "        replicas: 4\n",
    )
    expect_errors(
        path,
        capsys,
        monkeypatch,
        ["spec.yaml: line 11, column 9: invalid YAML: duplicate key 'strategy' (first at line 10, column 9)"],
    )


def test_untolerated_pool_taint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tolerations are derived from the pools' taints, so no spec produces a DaemonSet that does not
    tolerate its own pool; the check guards that derivation. Simulate a regression of it (only the
    upstream base tolerations) and the spec is rejected with the taint's path."""
    monkeypatch.setattr(dp_placement, "merged_tolerations", lambda base, pools: list(base))
    doc = spec_doc(
        [pool("a100", taints=[GPU_TAINT, {"key": "dedicated", "value": "flink", "effect": "NoExecute"}])],
        device_plugins={"nvidia": {"gpuFeatureDiscovery": False}},
    )
    expect_findings(
        write_spec(tmp_path, doc),
        capsys,
        monkeypatch,
        [
            "spec.yaml: nodePools[0].taints[1]: taint dedicated=flink:NoExecute is not tolerated by DaemonSet "
            "nvidia-device-plugin-a100, so it never runs on pool 'a100' and the pool's GPUs are never advertised"
        ],
    )


def test_untolerated_pool_taints_function() -> None:
    spec, _ = build_model(spec_doc([pool("a100", taints=[{"key": "k", "effect": "NoSchedule"}])]))
    assert spec is not None
    a100 = spec.node_pools[0]
    ok = dp_placement.Placement("ds", (a100,), ({"key": "k", "operator": "Exists"},))
    bad = dp_placement.Placement("ds", (a100,), ({"key": "k", "operator": "Equal", "value": "v"},))
    assert list(untolerated_pool_taints(spec, ok)) == []
    [problem] = untolerated_pool_taints(spec, bad)
    assert problem.path == ("nodePools", 0, "taints", 0)
    assert problem.message.startswith("taint k:NoSchedule is not tolerated by DaemonSet ds")


def test_example_stacks_are_valid(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import EXAMPLE_SPECS

    for spec in EXAMPLE_SPECS:
        rc, lines = run_validate(spec, capsys, monkeypatch)
        assert (rc, lines) == (0, []), spec
