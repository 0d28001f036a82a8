"""Components, generic mapping and ordering, exercised with hand-built bundles.

The PodGroup, device-plugin, Flink-operator and discovery builders land in parallel branches, so
these tests build such objects by hand (shaped like the real builders emit them) and check that the generic
Pulumi layer applies them — one typed resource each, right parents, ``depends_on`` derived from the
objects — without any code change.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from accelplane.artifacts import Bundle, FileArtifact, K8sObject, k8s_object
from accelplane.builders import build_all, priority, volcano
from accelplane.digests import short_sha256
from accelplane.discovery_install import CONFIGMAP_KEY, CONFIGMAP_PREFIX
from accelplane.model import Spec
from accelplane.pulumi.kinds import KINDS, UnsupportedObjectError
from accelplane.pulumi.planning import PlanError
from accelplane.pulumi.platform import GpuPlatform, GpuPlatformArgs

from tests.pulumi.conftest import ProgramRun, RunProgram
from tests.support.configmap_rollout import rollout_annotations
from tests.support.paths import REPO_ROOT
from tests.support.pulumi_program import by_name, canonical, type_token
from tests.support.specs import model_of

LABELS = {"app.kubernetes.io/managed-by": "accelplane"}
VOLCANO = "scheduling.volcano.sh/v1beta1"
# Stand-in for the discovery script (components/accelplane/discovery/gpu_discovery.py lands in another branch); the
# ConfigMap is named the way accelplane.discovery_install names it: prefix + content hash.
DISCOVERY_SCRIPT = "#!/usr/bin/env python3\nprint('0,1')\n"
DISCOVERY_CM = f"{CONFIGMAP_PREFIX}-{short_sha256(DISCOVERY_SCRIPT)}"
FLINK = "flink.apache.org/v1beta1"


@pytest.fixture(scope="module")
def prod_eu() -> Spec:
    return model_of(REPO_ROOT / "stacks" / "prod-eu.yaml")


def podgroup(name: str, queue: str, priority_class: str, family: str, namespace: str = "flink") -> K8sObject:
    return k8s_object(
        VOLCANO,
        "PodGroup",
        name,
        family=family,
        namespace=namespace,
        labels=LABELS,
        body={
            "spec": {
                "minMember": 5,
                "minResources": {"cpu": "17", "memory": "66Gi", "nvidia.com/gpu": "8"},
                "queue": queue,
                "priorityClassName": priority_class,
            }
        },
    )


def with_objects(*objects: K8sObject, files: tuple[FileArtifact, ...] = ()) -> Callable[[Spec], Bundle]:
    """A builder: the real scheduling builders' output (Queues, PriorityClasses, scheduler ConfigMap)
    plus hand-built objects/files, in canonical order. Other families' real builders are left out so
    the hand-built objects never collide with what they produce once they land."""

    def build(spec: Spec) -> Bundle:
        bundle = Bundle()
        for builder in (priority.build, volcano.build):
            bundle.extend(builder(spec))
        bundle.objects.extend(objects)
        bundle.files.extend(files)
        return bundle.sorted()

    return build


def only(*objects: K8sObject, files: tuple[FileArtifact, ...] = ()) -> Callable[[Spec], Bundle]:
    """A builder returning exactly these objects/files."""
    return lambda _spec: Bundle(list(objects), list(files)).sorted()


def run_platform(pulumi_run: RunProgram, spec: Spec, builder: Callable[[Spec], Bundle]) -> ProgramRun:
    return pulumi_run(
        {}, stack="prod-eu", program=lambda: GpuPlatform.create(spec.name, GpuPlatformArgs(spec, builder(spec)))
    )


def order_of(run: ProgramRun) -> dict[str, int]:
    return {r.urn: i for i, r in enumerate(run.registrations)}


# --- ordering ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["flink", "scheduling", "podgroups"])
def test_every_podgroup_depends_on_its_queue_and_priority_class(
    family: str, prod_eu: Spec, pulumi_run: RunProgram
) -> None:
    builder = with_objects(
        podgroup("podgroup-fraud-scoring", "streaming", "flink-critical", family),
        podgroup("podgroup-embeddings-amd", "batch", "flink-batch", family),
    )
    run = run_platform(pulumi_run, prod_eu, builder)
    names = by_name(run)
    order = order_of(run)
    podgroups = [r for r in run.kubernetes() if r.type.endswith(":PodGroup")]
    assert len(podgroups) == 2
    for pg in podgroups:
        queue = names[f"queue/{pg.inputs['spec']['queue']}"]
        priority_class = names[f"priorityclass/{pg.inputs['spec']['priorityClassName']}"]
        assert {queue.urn, priority_class.urn} <= set(pg.dependencies)
        assert order[queue.urn] < order[pg.urn] and order[priority_class.urn] < order[pg.urn]


def test_podgroups_of_example_stacks_depend_on_queue_and_priority_class(pulumi_run: RunProgram) -> None:
    """Same guarantee on the real builders' output (active once the PodGroup builder has landed)."""
    for stack in ("prod-eu",):
        run = pulumi_run({"accelplane:spec": f"stacks/{stack}.yaml"}, stack=stack)
        names = by_name(run)
        for pg in (r for r in run.kubernetes() if r.type.endswith(":PodGroup")):
            spec = pg.inputs["spec"]
            assert names[f"queue/{spec['queue']}"].urn in pg.dependencies
            if "priorityClassName" in spec:
                assert names[f"priorityclass/{spec['priorityClassName']}"].urn in pg.dependencies


def test_child_queue_depends_on_parent_queue(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    run = run_platform(pulumi_run, prod_eu, build_all)
    names = by_name(run)
    assert names["queue/gpu-platform"].urn in names["queue/streaming"].dependencies
    assert names["queue/gpu-platform"].urn in names["queue/batch"].dependencies
    assert names["queue/gpu-platform"].dependencies == []


def every_kind_bundle() -> list[K8sObject]:
    """One object of every supported kind, wired together by name like the real families will be."""
    discovery_cm = k8s_object(
        "v1",
        "ConfigMap",
        DISCOVERY_CM,
        family="discovery",
        namespace="flink",
        labels=LABELS,
        body={"immutable": True, "data": {CONFIGMAP_KEY: DISCOVERY_SCRIPT}},
    )
    plugin_cm = k8s_object(
        "v1",
        "ConfigMap",
        "nvidia-device-plugin-config",
        family="device-plugins",
        namespace="kube-system",
        labels=LABELS,
        body={"data": {"config.yaml": "version: v1\nflags:\n  migStrategy: none\n"}},
    )
    sa = k8s_object(
        "v1",
        "ServiceAccount",
        "amd-gpu-labeller",
        family="device-plugins",
        namespace="kube-system",
        labels=LABELS,
    )
    role = k8s_object(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "amd-gpu-labeller",
        family="device-plugins",
        labels=LABELS,
        body={
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]}]
        },
    )
    binding = k8s_object(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        "amd-gpu-labeller",
        family="device-plugins",
        labels=LABELS,
        body={
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "amd-gpu-labeller",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "amd-gpu-labeller", "namespace": "kube-system"}],
        },
    )
    daemonset = k8s_object(
        "apps/v1",
        "DaemonSet",
        "nvidia-device-plugin",
        family="device-plugins",
        namespace="kube-system",
        labels=LABELS,
        body={
            "spec": {
                "selector": {"matchLabels": {"name": "nvidia-device-plugin"}},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": {
                    "metadata": {
                        "labels": {"name": "nvidia-device-plugin"},
                        "annotations": rollout_annotations([plugin_cm.manifest]),
                    },
                    "spec": {
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": "amd-gpu-labeller",
                        "nodeSelector": {"accelplane.io/pool": "a100"},
                        "tolerations": [
                            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                        ],
                        "containers": [
                            {
                                "name": "nvidia-device-plugin-ctr",
                                "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
                                "env": [{"name": "CONFIG_FILE", "value": "/config/config.yaml"}],
                                "securityContext": {"allowPrivilegeEscalation": False},
                                "volumeMounts": [
                                    {"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"},
                                    {"name": "config", "mountPath": "/config"},
                                ],
                            }
                        ],
                        "volumes": [
                            {
                                "name": "device-plugin",
                                "hostPath": {"path": "/var/lib/kubelet/device-plugins"},
                            },
                            {"name": "config", "configMap": {"name": "nvidia-device-plugin-config"}},
                        ],
                    },
                },
            }
        },
    )
    deployment = k8s_object(
        "apps/v1",
        "Deployment",
        "gpu-exporter",
        family="gpu-metrics",
        namespace="kube-system",
        labels=LABELS,
        body={
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "gpu-exporter"}},
                "template": {
                    "metadata": {"labels": {"app": "gpu-exporter"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "exporter",
                                "image": "example/exporter:1.0",
                                "ports": [{"containerPort": 9400}],
                            }
                        ]
                    },
                },
            }
        },
    )
    namespace = k8s_object("v1", "Namespace", "flink", family="flink", labels=LABELS)
    flink_sa = k8s_object("v1", "ServiceAccount", "flink", family="flink", namespace="flink", labels=LABELS)
    flink_role = k8s_object(
        "rbac.authorization.k8s.io/v1",
        "Role",
        "flink",
        family="flink",
        namespace="flink",
        labels=LABELS,
        body={"rules": [{"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["*"]}]},
    )
    flink_binding = k8s_object(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "flink",
        family="flink",
        namespace="flink",
        labels=LABELS,
        body={
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "flink"},
            "subjects": [{"kind": "ServiceAccount", "name": "flink"}],
        },
    )
    pg = podgroup("podgroup-embeddings-amd", "batch", "flink-batch", "flink")
    deployment_cr = k8s_object(
        FLINK,
        "FlinkDeployment",
        "embeddings-amd",
        family="flink",
        namespace="flink",
        labels=LABELS,
        body={
            "spec": {
                "image": "flink:1.20.1-java17",
                "flinkVersion": "v1_20",
                "serviceAccount": "flink",
                "flinkConfiguration": {"taskmanager.numberOfTaskSlots": "1", "external-resources": "gpu"},
                "podTemplate": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"annotations": {"scheduling.k8s.io/group-name": "podgroup-embeddings-amd"}},
                    "spec": {
                        "schedulerName": "volcano",
                        "priorityClassName": "flink-batch",
                        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "embeddings-gpus-v1"}],
                        "containers": [{"name": "flink-main-container", "resources": {"claims": [{"name": "gpus"}]}}],
                        "volumes": [
                            {
                                "name": "gpu-discovery",
                                "configMap": {"name": DISCOVERY_CM, "defaultMode": 0o755},
                            }
                        ],
                    },
                },
                "jobManager": {"replicas": 1, "resource": {"cpu": 1, "memory": "2Gi"}},
                "taskManager": {"replicas": 2, "resource": {"cpu": 8, "memory": "32Gi"}},
                "job": {
                    "jarURI": "local:///opt/flink/usrlib/embeddings.jar",
                    "parallelism": 2,
                    "upgradeMode": "savepoint",
                },
            }
        },
    )
    session_job = k8s_object(
        FLINK,
        "FlinkSessionJob",
        "adhoc",
        family="flink",
        namespace="flink",
        labels=LABELS,
        body={
            "spec": {
                "deploymentName": "embeddings-amd",
                "job": {"jarURI": "https://example/job.jar", "parallelism": 1},
            }
        },
    )
    return [
        discovery_cm, plugin_cm, sa, role, binding, daemonset, deployment, namespace,
        flink_sa, flink_role, flink_binding, pg, deployment_cr, session_job, *dra_objects(),
        *monitoring_objects(), *kueue_objects(),
    ]  # fmt: skip


def monitoring_objects() -> list[K8sObject]:
    """A PodMonitor and a PrometheusRule shaped like ``builders/monitoring.py`` emits them."""
    monitor = k8s_object(
        "monitoring.coreos.com/v1",
        "PodMonitor",
        "dcgm-exporter",
        family="monitoring",
        namespace="monitoring",
        labels=LABELS,
        body={
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": "dcgm-exporter"}},
                "namespaceSelector": {"matchNames": ["kube-system"]},
                "podMetricsEndpoints": [{"port": "metrics", "honorLabels": True}],
            }
        },
    )
    rule = k8s_object(
        "monitoring.coreos.com/v1",
        "PrometheusRule",
        "accelplane-gpu-usage",
        family="monitoring",
        namespace="monitoring",
        labels=LABELS,
        body={
            "spec": {
                "groups": [
                    {
                        "name": "accelplane-gpu-usage",
                        "rules": [{"record": "accelplane:gpu_utilization:ratio", "expr": "DCGM_FI_DEV_GPU_UTIL / 100"}],
                    }
                ]
            }
        },
    )
    return [monitor, rule]


def kueue_objects() -> list[K8sObject]:
    """One Kueue object of each kind the Kueue builder emits (ResourceFlavor, Cohort, ClusterQueue,
    LocalQueue), as the kueue-gpus example renders them."""
    seen: dict[str, K8sObject] = {}
    for obj in build_all(model_of(REPO_ROOT / "stacks" / "kueue-gpus.yaml")).objects:
        if obj.api_version.startswith("kueue.x-k8s.io/"):
            seen.setdefault(obj.kind, obj)
    return list(seen.values())


DRA_VERSIONS = ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1")


def dra_objects() -> list[K8sObject]:
    """A DeviceClass and a ResourceClaimTemplate in every DRA API version accelplane renders (one
    per Kubernetes release line; a stack uses one), shaped like ``builders/dra.py`` emits them: the
    request is flat in v1beta1 and under ``exactly`` from v1beta2 on."""
    out: list[K8sObject] = []
    for version in DRA_VERSIONS:
        suffix = version.rsplit("/", 1)[1]
        cls = f"gpu-a100-{suffix}.accelplane.io"
        request: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": 2}
        out.append(
            k8s_object(
                version,
                "DeviceClass",
                cls,
                family="dra",
                labels=LABELS,
                body={"spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}},
            )
        )
        out.append(
            k8s_object(
                version,
                "ResourceClaimTemplate",
                f"embeddings-gpus-{suffix}",
                family="dra",
                namespace="flink",
                labels=LABELS,
                body={
                    "spec": {
                        "spec": {
                            "devices": {
                                "requests": [
                                    {"name": "gpus", **request}
                                    if suffix == "v1beta1"
                                    else {"name": "gpus", "exactly": request}
                                ]
                            }
                        }
                    }
                },
            )
        )
    return out


def test_every_supported_kind_round_trips_with_dependencies(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    objects = every_kind_bundle()
    covered = {(o.api_version, o.kind) for o in objects} | {
        ("scheduling.k8s.io/v1", "PriorityClass"),
        (VOLCANO, "Queue"),
    }
    assert covered == set(KINDS), "a kind in KINDS has no round-trip test"
    run = run_platform(pulumi_run, prod_eu, with_objects(*objects))

    # one typed resource per object, inputs exactly the manifest (wire format normalised)
    registered = {canonical(r.type, r.inputs) for r in run.kubernetes()}
    for obj in objects:
        assert canonical(type_token(obj.api_version, obj.kind), obj.manifest) in registered, obj.key

    n = by_name(run)
    order = order_of(run)

    def deps(name: str) -> set[str]:
        return {d.split("::")[-1].split(":", 1)[-1] for d in n[name].dependencies}

    cm = f"configmap/flink/{DISCOVERY_CM}"
    assert deps("daemonset/kube-system/nvidia-device-plugin") == {
        "configmap/kube-system/nvidia-device-plugin-config",
        "serviceaccount/kube-system/amd-gpu-labeller",
    }
    assert deps("clusterrolebinding/amd-gpu-labeller") == {
        "clusterrole/amd-gpu-labeller",
        "serviceaccount/kube-system/amd-gpu-labeller",
    }
    assert deps("rolebinding/flink/flink") == {
        "role/flink/flink",
        "serviceaccount/flink/flink",
        "namespace/flink",
    }
    assert deps("podgroup/flink/podgroup-embeddings-amd") == {
        "queue/batch",
        "priorityclass/flink-batch",
        "namespace/flink",
    }
    assert deps("flinkdeployment/flink/embeddings-amd") == {
        "serviceaccount/flink/flink",
        "podgroup/flink/podgroup-embeddings-amd",
        "priorityclass/flink-batch",
        cm,
        "namespace/flink",
        "resourceclaimtemplate/flink/embeddings-gpus-v1",
    }
    for suffix in ("v1beta1", "v1beta2", "v1"):
        assert deps(f"resourceclaimtemplate/flink/embeddings-gpus-{suffix}") == {
            f"deviceclass/gpu-a100-{suffix}.accelplane.io",
            "namespace/flink",
        }
    assert deps("flinksessionjob/flink/adhoc") == {"flinkdeployment/flink/embeddings-amd", "namespace/flink"}
    for r in run.kubernetes():
        for d in r.dependencies:
            assert order[d] < order[r.urn], f"{r.name} registered before its dependency {d}"

    # only immutable (content-addressed) ConfigMaps, Namespaces and the adopted Volcano scheduler
    # ConfigMap are retained when they leave the program (accelplane.lifecycle)
    retained = {r.logical for r in run.kubernetes() if r.retain_on_delete}
    assert retained == {cm, "namespace/flink", "configmap/volcano-system/volcano-scheduler-configmap"}


def test_family_components_and_parents(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    files = (
        FileArtifact("yarn/resource-types.xml", "<configuration/>\n", family="yarn"),
        FileArtifact("node/provision.sh", "#!/bin/sh\n", mode=0o755),
    )
    run = run_platform(pulumi_run, prod_eu, with_objects(*every_kind_bundle(), files=files))
    components = {r.type: r for r in run.registrations if not r.custom}
    platform = components["accelplane:index:GpuPlatform"]
    assert set(components) == {
        "accelplane:index:GpuPlatform",
        "accelplane:scheduling:Scheduling",
        "accelplane:device_plugins:DevicePlugins",
        "accelplane:flink:Flink",
        "accelplane:discovery:Discovery",
        "accelplane:dra:Dra",
        "accelplane:gpu_metrics:GpuMetrics",  # a family nobody wrote a component for
        "accelplane:monitoring:Monitoring",  # monitoring: the generic component too
        "accelplane:yarn:Yarn",  # files only
        "accelplane:node:Node",  # family taken from the file's top directory
    }
    for type_, comp in components.items():
        if comp is not platform:
            assert comp.parent == platform.urn
            assert comp.name == f"prod-eu-{type_.split(':')[1].replace('_', '-')}"
    component_by_urn = {c.urn: c for c in components.values()}
    for r in run.kubernetes():
        assert r.parent in component_by_urn and r.parent != platform.urn, r.name
    assert (
        by_name(run)["deployment/kube-system/gpu-exporter"].parent
        == components["accelplane:gpu_metrics:GpuMetrics"].urn
    )


def test_family_components_register_outputs(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    run = run_platform(pulumi_run, prod_eu, with_objects(*every_kind_bundle()))
    outputs = pulumi_outputs(run)
    assert outputs["accelplane:scheduling:Scheduling"]["queueNames"] == ["batch", "gpu-platform", "streaming"]
    assert (
        outputs["accelplane:scheduling:Scheduling"]["schedulerConfigMap"]
        == "volcano-system/volcano-scheduler-configmap"
    )
    assert outputs["accelplane:scheduling:Scheduling"]["yunikornConfigMap"] == ""
    assert outputs["accelplane:flink:Flink"]["podGroupNames"] == ["flink/podgroup-embeddings-amd"]
    assert outputs["accelplane:flink:Flink"]["flinkDeployments"] == ["flink/embeddings-amd"]
    assert outputs["accelplane:device_plugins:DevicePlugins"]["daemonSets"] == [
        "kube-system/nvidia-device-plugin"
    ]
    assert outputs["accelplane:discovery:Discovery"]["configMaps"] == [f"flink/{DISCOVERY_CM}"]
    platform = outputs["accelplane:index:GpuPlatform"]
    assert platform["podGroupNames"] == ["flink/podgroup-embeddings-amd"]
    assert platform["priorityClassNames"] == ["flink-batch", "flink-critical"]


def pulumi_outputs(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """The outputs each component registered (type token → outputs)."""
    return {r.type: r.outputs for r in run.registrations if not r.custom and r.outputs is not None}


# --- errors -----------------------------------------------------------------------------------


def test_unknown_kind_is_a_clear_error_and_registers_nothing(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    secret = k8s_object(
        "v1", "Secret", "creds", family="flink", namespace="flink", labels=LABELS, body={"data": {}}
    )
    job = k8s_object(
        "batch/v1", "Job", "warmup", family="flink", namespace="flink", labels=LABELS, body={"spec": {}}
    )
    with pytest.raises(UnsupportedObjectError) as info:
        run_platform(pulumi_run, prod_eu, with_objects(secret, job))
    message = str(info.value)
    assert "no Pulumi resource mapping for v1 Secret secret/flink/creds (family 'flink')" in message
    assert "no Pulumi resource mapping for batch/v1 Job job/flink/warmup (family 'flink')" in message
    assert "scheduling.volcano.sh/v1beta1 PodGroup" in message  # lists what is supported
    assert "components/accelplane/pulumi/kinds.py" in message


def test_program_reports_unsupported_objects_without_traceback(
    pulumi_run: RunProgram, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pulumi
    from accelplane import program

    secret = k8s_object("v1", "Secret", "creds", family="flink", namespace="flink", labels=LABELS)
    monkeypatch.setattr(
        program, "GpuPlatformArgs", lambda spec, bundle, **kw: GpuPlatformArgs(spec, with_objects(secret)(spec), **kw)
    )
    with pytest.raises(
        pulumi.RunError,
        match=r"cannot build the Pulumi program for prod-eu: no Pulumi resource mapping for v1 Secret",
    ):
        pulumi_run({"accelplane:spec": "stacks/prod-eu.yaml"}, stack="prod-eu")


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            k8s_object("v1", "ConfigMap", "x", family="flink", labels=LABELS),
            "v1 ConfigMap configmap/x (family 'flink') is namespaced but has no metadata.namespace",
        ),
        (
            k8s_object(
                "scheduling.k8s.io/v1",
                "PriorityClass",
                "p",
                family="scheduling",
                namespace="n",
                labels=LABELS,
                body={"value": 1},
            ),
            "PriorityClass priorityclass/n/p (family 'scheduling') is cluster-scoped but has metadata.namespace",
        ),
        (
            k8s_object(
                VOLCANO,
                "PodGroup",
                "pg",
                family="flink",
                namespace="flink",
                labels=LABELS,
                body={"spec": {}, "status": {}},
            ),
            "has top-level fields ['status']; a CustomResource carries only metadata and spec",
        ),
        (
            k8s_object(
                "v1", "ConfigMap", "x", family="flink", namespace="flink", labels=LABELS, body={"dataa": {}}
            ),
            "has top-level fields ['dataa'] that pulumi_kubernetes.core.v1.ConfigMap.ConfigMap does not accept",
        ),
    ],
)
def test_malformed_objects_are_clear_errors(
    obj: K8sObject, message: str, prod_eu: Spec, pulumi_run: RunProgram
) -> None:
    with pytest.raises(UnsupportedObjectError, match=re.escape(message)):
        run_platform(pulumi_run, prod_eu, only(obj))


def queue(name: str, parent: str | None, family: str) -> K8sObject:
    body: dict[str, Any] = {"spec": {"weight": 1, **({"parent": parent} if parent else {})}}
    return k8s_object(VOLCANO, "Queue", name, family=family, labels=LABELS, body=body)


def test_dependency_cycle_is_a_clear_error(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    with pytest.raises(PlanError, match=r"reference each other in a cycle: \['queue/a', 'queue/b'\]"):
        run_platform(pulumi_run, prod_eu, only(queue("a", "b", "scheduling"), queue("b", "a", "scheduling")))


def test_families_may_reference_each_other_both_ways(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    """x → y (queue a's parent b) and y → x (queue c's parent d): registered in one global order."""
    objects = (queue("a", "b", "x"), queue("d", None, "x"), queue("b", None, "y"), queue("c", "d", "y"))
    run = run_platform(pulumi_run, prod_eu, only(*objects))
    n = by_name(run)
    assert n["queue/a"].dependencies == [n["queue/b"].urn]
    assert n["queue/c"].dependencies == [n["queue/d"].urn]
    order = order_of(run)
    assert (
        order[n["queue/b"].urn] < order[n["queue/a"].urn]
        and order[n["queue/d"].urn] < order[n["queue/c"].urn]
    )


def test_family_names_must_fit_a_type_token(prod_eu: Spec, pulumi_run: RunProgram) -> None:
    with pytest.raises(
        PlanError, match="artifact family 'Device_Plugins' is not a lowercase dash-separated word"
    ):
        run_platform(pulumi_run, prod_eu, only(queue("a", None, "Device_Plugins")))


def test_every_supported_kind_is_registered_through_its_public_typed_class(
    prod_eu: Spec, pulumi_run: RunProgram
) -> None:
    """Every kind of `KINDS` (the example stacks do not use them all) becomes an instance of its
    public typed class (``apiextensions.CustomResource`` for CRD kinds): what a user's
    transformation and `GpuPlatform.get_resource` see."""
    import pulumi_kubernetes as k8s

    objects = every_kind_bundle()
    platforms: list[GpuPlatform] = []
    build = with_objects(*objects)

    def program() -> None:
        platforms.append(GpuPlatform(prod_eu.name, GpuPlatformArgs(prod_eu, build(prod_eu))))

    pulumi_run({}, stack="prod-eu", program=program)
    (platform,) = platforms
    assert {(o.api_version, o.kind) for o in objects} | {
        ("scheduling.k8s.io/v1", "PriorityClass"),
        (VOLCANO, "Queue"),
    } == set(KINDS)
    for obj in platform.bundle.objects:
        expected = KINDS[(obj.api_version, obj.kind)].resource_class or k8s.apiextensions.CustomResource
        resource = platform.get_resource(f"{obj.api_version}/{obj.kind}", obj.name, obj.namespace)
        assert type(resource) is expected, obj.key


def test_yunikorn_cluster_registers_its_queue_configmap(pulumi_run: RunProgram) -> None:
    """A YuniKorn cluster registers yunikorn-configs in the scheduling component and no Volcano
    object (no Queue, PodGroup or Volcano scheduler ConfigMap)."""
    spec = model_of(REPO_ROOT / "stacks" / "yunikorn-gpus.yaml")
    run = run_platform(pulumi_run, spec, build_all)
    outputs = pulumi_outputs(run)
    scheduling = outputs["accelplane:scheduling:Scheduling"]
    assert scheduling["yunikornConfigMap"] == "yunikorn/yunikorn-configs"
    assert (scheduling["schedulerConfigMap"], scheduling["queueNames"], scheduling["podGroupNames"]) == ("", [], [])
    assert outputs["accelplane:flink:Flink"]["podGroupNames"] == []
    assert not [r for r in run.kubernetes() if "volcano" in r.type]


def test_kueue_cluster_registers_its_queues(pulumi_run: RunProgram) -> None:
    """A Kueue cluster registers its ResourceFlavors, Cohorts, ClusterQueues and LocalQueues in the
    scheduling component and no Volcano object (no Queue, PodGroup or scheduler ConfigMap)."""
    spec = model_of(REPO_ROOT / "stacks" / "kueue-gpus.yaml")
    run = run_platform(pulumi_run, spec, build_all)
    outputs = pulumi_outputs(run)
    scheduling = outputs["accelplane:scheduling:Scheduling"]
    assert scheduling["clusterQueueNames"] == ["batch", "streaming"]
    assert scheduling["localQueueNames"] == ["flink-batch/batch", "flink/streaming"]
    assert scheduling["resourceFlavorNames"] == ["a100-nvidia-a100-sxm4-80gb", "cpu", "l4-nvidia-l4"]
    assert (scheduling["schedulerConfigMap"], scheduling["queueNames"], scheduling["podGroupNames"]) == ("", [], [])
    assert outputs["accelplane:flink:Flink"]["podGroupNames"] == []
