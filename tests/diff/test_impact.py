"""Impact summary rules on small hand-made trees."""

from __future__ import annotations

import textwrap

from accelplane.diff import compare_trees
from accelplane.diff.changes import Tree


def objects(*docs: str) -> Tree:
    """A tree with one Kubernetes object per file."""
    return {f"kubernetes/{i}.yaml": (textwrap.dedent(d).lstrip("\n"), 0o644) for i, d in enumerate(docs)}


def messages(old: Tree, new: Tree, category: str) -> list[str]:
    return [i.message for i in compare_trees(old, new).impacts if i.category == category]


QUEUE = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {{name: {name}}}
spec:
  weight: 1
  capability: {{cpu: '8', nvidia.com/gpu: '{cap}'}}
  guarantee: {{resource: {{nvidia.com/gpu: '{g}'}}}}
"""


def test_queue_gpu_changes_only() -> None:
    old = objects(QUEUE.format(name="a", cap=8, g=2), QUEUE.format(name="gone", cap=4, g=1))
    new = objects(
        QUEUE.format(name="a", cap=8, g=4).replace("cpu: '8'", "cpu: '16'"),
        QUEUE.format(name="new", cap=2, g=1),
    )
    assert messages(old, new, "queues") == [
        "queue a: nvidia.com/gpu guarantee 2 → 4",
        "queue gone removed (had nvidia.com/gpu capability 4, guarantee 1)",
        "queue new added: nvidia.com/gpu capability 2, guarantee 1",
    ]
    cpu_only = objects(QUEUE.format(name="a", cap=8, g=2).replace("cpu: '8'", "cpu: '16'"))
    assert messages(objects(QUEUE.format(name="a", cap=8, g=2)), cpu_only, "queues") == []


def test_yarn_capacity_scheduler_gpu_properties() -> None:
    xml = "<configuration><property><name>yarn.scheduler.capacity.root.analytics.capacity</name><value>[memory=1024,vcores=8,yarn.io/gpu={}]</value></property></configuration>\n"
    old: Tree = {"yarn/capacity-scheduler.xml": (xml.format(4), 0o644)}
    new: Tree = {"yarn/capacity-scheduler.xml": (xml.format(8), 0o644)}
    assert messages(old, new, "queues") == [
        "YARN yarn.scheduler.capacity.root.analytics.capacity: [memory=1024,vcores=8,yarn.io/gpu=4] → "
        "[memory=1024,vcores=8,yarn.io/gpu=8] (yarn/capacity-scheduler.xml)"
    ]


PODGROUP = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {{name: pg-{n}, namespace: flink}}
spec: {{minMember: {m}, queue: streaming, minResources: {{cpu: '4', nvidia.com/gpu: '{g}'}}}}
"""


def test_podgroups_and_flink_keys_anywhere() -> None:
    old = objects(PODGROUP.format(n="a", m=3, g=4), PODGROUP.format(n="backfill", m=2, g=2))
    new = objects(
        PODGROUP.format(n="a", m=5, g=8),
        PODGROUP.format(n="embeddings", m=2, g=2).replace("streaming", "batch"),
    )
    assert messages(old, new, "flink") == [
        'PodGroup flink/pg-a: spec.minMember 3 → 5; spec.minResources["nvidia.com/gpu"] 4 → 8',
        "PodGroup flink/pg-backfill removed (was queue streaming, minMember 2, nvidia.com/gpu 2)",
        "PodGroup flink/pg-embeddings added (queue batch, minMember 2, nvidia.com/gpu 2)",
    ]
    deployment = """
    apiVersion: flink.apache.org/v1beta1
    kind: FlinkDeployment
    metadata: {{name: emb, namespace: flink}}
    spec:
      flinkConfiguration: {{external-resource.gpu.amount: '{a}', taskmanager.numberOfTaskSlots: '1'}}
    """
    assert messages(objects(deployment.format(a=2)), objects(deployment.format(a=4)), "flink") == [
        'FlinkDeployment flink/emb: spec.flinkConfiguration["external-resource.gpu.amount"] 2 → 4'
    ]
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: flink-config-x, namespace: flink}}\ndata:\n  config.yaml: |\n    external-resource.gpu.amount: {a}\n    parallelism.default: 1\n"
    assert messages(objects(cm.format(a=1)), objects(cm.format(a=2)), "flink") == [
        'ConfigMap flink/flink-config-x: data["config.yaml"] :: external-resource.gpu.amount 1 → 2'
    ]


def test_added_flink_config_file_reports_its_gpu_keys() -> None:
    new: Tree = {
        "flink/new/config.yaml": ("external-resources: gpu\nexternal-resource.gpu.amount: 1\n", 0o644)
    }
    assert messages({}, new, "flink") == [
        "Flink cluster new added (flink/new/config.yaml: external-resource.gpu.amount: 1, external-resources: gpu)"
    ]


DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: plugin, namespace: kube-system}}
spec:
  selector: {{matchLabels: {{app: {sel}}}}}
  updateStrategy: {{type: {strategy}}}
  template:
    metadata: {{labels: {{app: {sel}}}}}
    spec:
      nodeSelector: {{pool: a}}
      containers: [{{name: c, image: "img:1", envFrom: [{{configMapRef: {{name: plugin-env}}}}]}}]
"""
ENV = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: plugin-env, namespace: kube-system}}\ndata: {{SHARING: '{s}'}}\n"


def test_daemonsets_and_the_configmaps_they_read() -> None:
    ds = DAEMONSET.format(sel="p", strategy="RollingUpdate")
    old = objects(ds, ENV.format(s="none"))
    assert messages(old, objects(ds, ENV.format(s="timeSlicing")), "node-wide") == [
        "ConfigMap kube-system/plugin-env (read by DaemonSet kube-system/plugin): data.SHARING none → timeSlicing; "
        "applies by restarting those pods on every node matching pool=a"
    ]
    # only the update strategy: no pod restarts
    assert (
        messages(
            old, objects(DAEMONSET.format(sel="p", strategy="OnDelete"), ENV.format(s="none")), "node-wide"
        )
        == []
    )
    assert messages({}, objects(ds), "node-wide") == [
        "DaemonSet kube-system/plugin added: starts pods on every node matching pool=a"
    ]
    assert messages(objects(ds), {}, "node-wide") == [
        "DaemonSet kube-system/plugin removed: stops its pods on every node matching pool=a"
    ]


def test_pulumi_replacements_and_immutable_fields() -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}, namespace: flink}}\n{imm}data: {{script: '{v}'}}\n"
    immutable = cm.format(n="disc", imm="immutable: true\n", v=1)
    assert messages(
        objects(immutable), objects(cm.format(n="disc", imm="immutable: true\n", v=2)), "pulumi"
    ) == [
        "ConfigMap flink/disc: data of an immutable ConfigMap changed under the same name — Kubernetes refuses "
        "the update and Pulumi replaces it, but immutable ConfigMaps are retained on delete, so the re-create "
        'fails ("already exists") until the old one is deleted by hand; a content-hashed name avoids this'
    ]
    # mutable ConfigMaps are updated in place (enableConfigMapMutable)
    assert (
        messages(
            objects(cm.format(n="conf", imm="", v=1)), objects(cm.format(n="conf", imm="", v=2)), "pulumi"
        )
        == []
    )
    hashed_old = cm.format(n="disc-0123456789", imm="immutable: true\n", v=1)
    hashed_new = cm.format(n="disc-abcdef0123", imm="immutable: true\n", v=2)
    assert messages(objects(hashed_old), objects(hashed_new), "pulumi") == [
        "ConfigMap flink/disc-0123456789 → ConfigMap flink/disc-abcdef0123: name changed (content-hashed name) — "
        "a new immutable ConfigMap is created; the old one is retained in the cluster (retain_on_delete) for pods "
        "that still mount it — delete it by hand once unused"
    ]
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: hi}}\nvalue: 10\npreemptionPolicy: {p}\n"
    # immutable in Kubernetes; accelplane replaces it (replaceOnChanges + deleteBeforeReplace, issue 41)
    assert messages(objects(pc.format(p="Never")), objects(pc.format(p="PreemptLowerPriority")), "pulumi") == []
    (line,) = messages(objects(pc.format(p="Never")), objects(pc.format(p="PreemptLowerPriority")), "day2")
    assert line.startswith("PriorityClass hi: preemptionPolicy is immutable — replaced (replaceOnChanges, ")
    old_ds = DAEMONSET.format(sel="p", strategy="RollingUpdate")
    new_ds = DAEMONSET.format(sel="q", strategy="RollingUpdate")
    assert messages(objects(old_ds), objects(new_ds), "pulumi") == [
        "DaemonSet kube-system/plugin: spec.selector changed — replaced under Pulumi (delete and recreate)"
    ]
    moved = old_ds.replace("namespace: kube-system", "namespace: gpu-operator")
    assert messages(objects(old_ds), objects(moved), "pulumi") == [
        "DaemonSet kube-system/plugin → DaemonSet gpu-operator/plugin: namespace changed — replaced "
        "(new URN: Pulumi creates the new object, then deletes the old one)"
    ]


def test_yarn_daemons() -> None:
    types = "<configuration><property><name>yarn.resource-types</name><value>yarn.io/gpu</value></property></configuration>\n"
    assert messages({}, {"yarn/resource-types.xml": (types, 0o644)}, "yarn") == [
        "yarn/resource-types.xml added: restart the ResourceManager and NodeManagers"
    ]
    site = "<configuration><property><name>yarn.nodemanager.resource-plugins</name><value>{}</value></property></configuration>\n"
    assert messages(
        {"yarn/yarn-site.xml": (site.format(""), 0o644)},
        {"yarn/yarn-site.xml": (site.format("yarn.io/gpu"), 0o644)},
        "yarn",
    ) == [
        "yarn/yarn-site.xml: yarn.nodemanager.resource-plugins  → yarn.io/gpu; restarts the NodeManagers using it"
    ]


def test_namespaces_are_never_deleted_and_pod_security_changes_are_called_out() -> None:
    ns = """\
        apiVersion: v1
        kind: Namespace
        metadata:
          name: {name}
          labels: {{pod-security.kubernetes.io/enforce: {level}}}
        """
    old = objects(ns.format(name="flink", level="privileged"), ns.format(name="inference", level="baseline"))
    new = objects(ns.format(name="flink", level="baseline"))
    assert messages(old, new, "pulumi") == [
        "Namespace flink: Pod Security level privileged → baseline; new pods that need more than the new "
        "level are rejected (running pods keep running)",
        "Namespace inference: leaves the program but stays in the cluster with everything in it (Namespaces "
        "are retain_on_delete); delete it by hand if that is intended",
    ]


YUNIKORN_CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {{name: yunikorn-configs, namespace: yunikorn}}
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: platform
                parent: true
                resources:
                  max: {{nvidia.com/gpu: '{cap}', vcore: '64'}}
                queues:
{children}
"""
YUNIKORN_CHILD = """\
                  - name: {name}
                    resources:
                      guaranteed: {{nvidia.com/gpu: '{g}', vcore: '{cpu}'}}
"""


def _yunikorn(cap: int, *children: tuple[str, int, int]) -> Tree:
    text = "".join(YUNIKORN_CHILD.format(name=n, g=g, cpu=c) for n, g, c in children)
    return objects(YUNIKORN_CONFIGMAP.format(cap=cap, children=text.rstrip("\n")))


def test_yunikorn_queue_gpu_changes() -> None:
    old = _yunikorn(8, ("streaming", 4, 8), ("gone", 1, 4))
    new = _yunikorn(16, ("streaming", 2, 8), ("batch", 2, 4))
    assert messages(old, new, "queues") == [
        "YuniKorn queue root.platform: nvidia.com/gpu max 8 → 16",
        "YuniKorn queue root.platform.batch added: nvidia.com/gpu guaranteed 2",
        "YuniKorn queue root.platform.gone removed (had nvidia.com/gpu guaranteed 1)",
        "YuniKorn queue root.platform.streaming: nvidia.com/gpu guaranteed 4 → 2",
    ]
    # CPU-only changes are no GPU impact (as for Volcano queues)
    assert messages(_yunikorn(8, ("a", 1, 8)), _yunikorn(8, ("a", 1, 16)), "queues") == []
    # a queue's GPUs are a queue impact only, not a Flink GPU request
    assert messages(old, new, "flink") == []


def test_a_coordination_file_change_says_to_stop_the_taskmanagers_first() -> None:
    """Issue 38.1c: changing coordinationFile while TaskManagers run gave new ones the GPUs the old
    ones hold, and the diff showed only a config value."""
    cfg = "external-resources: gpu\nexternal-resource.gpu.amount: 1\nexternal-resource.gpu.param.discovery-script.args: --enable-coordination-mode --coordination-file {} --file-mode 0660\n"
    old: Tree = {"flink/edge/config.yaml": (cfg.format("/var/lib/accelplane/a"), 0o644)}
    new: Tree = {"flink/edge/config.yaml": (cfg.format("/var/lib/accelplane/b"), 0o644)}
    found = messages(old, new, "flink")
    assert any(
        m.startswith("coordination file /var/lib/accelplane/a → /var/lib/accelplane/b: stop this cluster's "
                     "TaskManagers on every host BEFORE starting any with the new config")
        for m in found
    ), found
    assert not [m for m in messages(old, old, "flink") if "coordination file" in m]
