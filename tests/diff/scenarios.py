"""Realistic changes to a rendered tree, for the golden tests.

The base tree (``fixtures/base``) holds what a prod-eu render looks like across every family. Its
``kubernetes/`` objects were rendered by the real builders (Volcano, PriorityClasses, device
plugins) from prod-eu with the a100 pool in MIG ``single`` mode and then frozen, so the goldens
do not move when builders evolve; artifacts of families still being built are hand-made but
realistic (PodGroup, discovery ConfigMap, Flink ``config.yaml`` and legacy ``flink-conf.yaml``, pod
template, YARN XML and ``container-executor.cfg``, Dockerfile, shell script) and pass their real
validators (test_fixtures.py). Each scenario edits a copy the way the corresponding spec change
would.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from accelplane.diff.changes import Tree
from accelplane.diff.trees import read_tree

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BASE_DIR = FIXTURES / "base"


def base_tree() -> Tree:
    """The base rendered tree (read from disk like any rendered directory)."""
    return read_tree(BASE_DIR)


def edit(tree: Tree, path: str, old: str, new: str, count: int = 1) -> None:
    """Replace ``old`` by ``new`` in one file; the text must occur exactly ``count`` times."""
    text, mode = tree[path]
    assert isinstance(text, str)
    assert text.count(old) == count, f"{path}: {old!r} occurs {text.count(old)} times, expected {count}"
    tree[path] = (text.replace(old, new), mode)


def move(tree: Tree, old: str, new: str) -> None:
    """Rename a file."""
    tree[new] = tree.pop(old)


def bump_gpu_amount(tree: Tree) -> None:
    """fraud-scoring: taskManager.gpu.amount 2 → 4 (Flink key, pod template limit, PodGroup)."""
    edit(
        tree,
        "flink/fraud-scoring/config.yaml",
        "external-resource.gpu.amount: 2",
        "external-resource.gpu.amount: 4",
    )
    edit(tree, "flink/fraud-scoring/pod-template-taskmanager.yaml", "nvidia.com/gpu: 2", "nvidia.com/gpu: 4")
    edit(
        tree,
        "kubernetes/podgroup_flink_podgroup-fraud-scoring.yaml",
        "nvidia.com/gpu: '8'",
        "nvidia.com/gpu: '16'",
    )


def add_queue(tree: Tree) -> None:
    """A new leaf queue ``research`` under gpu-platform; batch gives up 4 deserved GPUs."""
    tree["kubernetes/queue__research.yaml"] = (
        "apiVersion: scheduling.volcano.sh/v1beta1\n"
        "kind: Queue\n"
        "metadata:\n"
        "  labels:\n"
        "    accelplane.io/cluster: prod-eu\n"
        "    app.kubernetes.io/managed-by: accelplane\n"
        "    team: data-platform\n"
        "  name: research\n"
        "spec:\n"
        "  capability:\n"
        "    cpu: '64'\n"
        "    memory: 512Gi\n"
        "    nvidia.com/gpu: '8'\n"
        "    pods: '50'\n"
        "  deserved:\n"
        "    cpu: '32'\n"
        "    memory: 256Gi\n"
        "    nvidia.com/gpu: '4'\n"
        "  parent: gpu-platform\n"
        "  weight: 1\n",
        0o644,
    )
    edit(tree, "kubernetes/queue__batch.yaml", "    nvidia.com/gpu: '8'\n", "    nvidia.com/gpu: '4'\n")


def change_mig_strategy(tree: Tree) -> None:
    """a100 pool: MIG single → mixed (3g.40gb): a new content-hashed plugin config that both NVIDIA
    DaemonSets mount, GFD's MIG_STRATEGY, the streaming queue and fraud-scoring move to the MIG
    resource."""
    old_cm = "kubernetes/configmap_kube-system_nvidia-device-plugin-a100-9cdc9c9651.yaml"
    new_cm = "kubernetes/configmap_kube-system_nvidia-device-plugin-a100-5d1e7c0b2a.yaml"
    move(tree, old_cm, new_cm)
    edit(tree, new_cm, "migStrategy: single", "migStrategy: mixed")
    edit(tree, new_cm, "9cdc9c9651", "5d1e7c0b2a")
    for ds in ("nvidia-device-plugin-a100", "gpu-feature-discovery-a100"):
        edit(tree, f"kubernetes/daemonset_kube-system_{ds}.yaml", "a100-9cdc9c9651", "a100-5d1e7c0b2a")
    edit(
        tree,
        "kubernetes/daemonset_kube-system_gpu-feature-discovery-a100.yaml",
        "- name: MIG_STRATEGY\n              value: single",
        "- name: MIG_STRATEGY\n              value: mixed",
    )
    edit(
        tree,
        "kubernetes/queue__streaming.yaml",
        "    nvidia.com/gpu: ",
        "    nvidia.com/mig-3g.40gb: ",
        count=3,
    )
    edit(
        tree,
        "flink/fraud-scoring/config.yaml",
        "external-resource.gpu.kubernetes.config-key: nvidia.com/gpu",
        "external-resource.gpu.kubernetes.config-key: nvidia.com/mig-3g.40gb",
    )
    edit(
        tree,
        "flink/fraud-scoring/pod-template-taskmanager.yaml",
        "nvidia.com/gpu: 2",
        "nvidia.com/mig-3g.40gb: 2",
    )


def change_yarn_type(tree: Tree) -> None:
    """A resource type rename yarn.io/gpu → yarn.io/gpu-teslav100sxm232gb (RM, NM and Flink)."""
    for path in ("yarn/resource-types.xml", "yarn/node-resources-v100.xml"):
        text, _ = tree[path]
        assert isinstance(text, str)
        edit(tree, path, "yarn.io/gpu", "yarn.io/gpu-teslav100sxm232gb", count=text.count("yarn.io/gpu"))
    edit(
        tree,
        "flink/sessions-v100/flink-conf.yaml",
        "yarn.config-key: yarn.io/gpu    # one YARN resource type for every model",
        "yarn.config-key: yarn.io/gpu-teslav100sxm232gb    # per-model type (yarn.perModelTypes)",
    )


def rename_flink_cluster(tree: Tree) -> None:
    """Flink cluster fraud-scoring → fraud-detection (files move, PodGroup renamed)."""
    for name in ("config.yaml", "pod-template-taskmanager.yaml"):
        move(tree, f"flink/fraud-scoring/{name}", f"flink/fraud-detection/{name}")
    edit(
        tree, "flink/fraud-detection/config.yaml", "cluster-id: fraud-scoring", "cluster-id: fraud-detection"
    )
    edit(
        tree,
        "flink/fraud-detection/pod-template-taskmanager.yaml",
        "fraud-scoring",
        "fraud-detection",
        count=2,
    )
    old = "kubernetes/podgroup_flink_podgroup-fraud-scoring.yaml"
    new = "kubernetes/podgroup_flink_podgroup-fraud-detection.yaml"
    move(tree, old, new)
    edit(tree, new, "fraud-scoring", "fraud-detection", count=2)


def upgrade_node_software(tree: Tree) -> None:
    """Device plugin v0.20.0 → v0.21.0, a new discovery script (content-hashed ConfigMap), a
    PriorityClass value change, Docker devices in container-executor.cfg, node image and script."""
    edit(
        tree,
        "kubernetes/daemonset_kube-system_nvidia-device-plugin-a100.yaml",
        "k8s-device-plugin:v0.20.0",
        "k8s-device-plugin:v0.21.0",
    )
    old = "kubernetes/configmap_flink_accelplane-gpu-discovery-3f9a2c41d0.yaml"
    new = "kubernetes/configmap_flink_accelplane-gpu-discovery-8be1d07a52.yaml"
    move(tree, old, new)
    edit(tree, new, "TIMEOUT_S = 8", "TIMEOUT_S = 9")
    edit(tree, new, "3f9a2c41d0", "8be1d07a52")
    edit(tree, "flink/fraud-scoring/pod-template-taskmanager.yaml", "3f9a2c41d0", "8be1d07a52")
    edit(tree, "kubernetes/priorityclass__flink-critical.yaml", "value: 100000", "value: 200000")
    edit(
        tree,
        "yarn/container-executor.cfg",
        "/dev/nvidia-uvm-tools\n",
        "/dev/nvidia-uvm-tools,/dev/nvidia-modeset\n",
    )
    edit(tree, "yarn/container-executor.cfg", "[cgroups]\n", "[cgroups]\nenable-mount=false\n")
    edit(tree, "node-image/Dockerfile", "nvidia-ml-py==12.575.51", "nvidia-ml-py==12.580.82")
    edit(
        tree,
        "node/install-discovery.sh",
        "chmod 0660",
        "chown flink:flink /var/lib/accelplane/gpu-coordination\nchmod 0660",
    )


SCENARIOS: dict[str, Callable[[Tree], None]] = {
    "bump-gpu-amount": bump_gpu_amount,
    "add-queue": add_queue,
    "change-mig-strategy": change_mig_strategy,
    "change-yarn-type": change_yarn_type,
    "rename-flink-cluster": rename_flink_cluster,
    "upgrade-node-software": upgrade_node_software,
}


def scenario_tree(name: str) -> Tree:
    """The base tree with scenario ``name`` applied."""
    tree = dict(base_tree())
    SCENARIOS[name](tree)
    return tree
