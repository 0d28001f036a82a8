"""The pods Flink's own native-Kubernetes code builds from every rendered Kubernetes Flink cluster.

For each example stack and each Flink cluster on Kubernetes, ``tests/support/flink_pods.py`` runs
Flink 1.20's ``KubernetesClusterDescriptor`` / ``KubernetesJobManagerFactory`` /
``KubernetesTaskManagerFactory`` (flink-dist, no API server) on the rendered config file and pod
templates -- for ``target: kubernetes-operator`` on what the operator's ``FlinkConfigBuilder``
derives from the rendered FlinkDeployment -- and checks the resulting JobManager and TaskManager
pods (all clusters in one JVM):

* ``kubernetes-validate --strict`` accepts them (and the JobManager Deployment, ConfigMaps and
  Services Flink creates beside them);
* every field of our templates survives, except exactly the ones Flink is documented to override
  (:data:`FLINK_OVERRIDES`, see docs/flink.md "What Flink keeps, drops and overrides"): the Volcano
  binding (``schedulerName``, the PodGroup annotation, ``priorityClassName``), placement
  (node selector / affinity, tolerations), the discovery ConfigMap volume, the coordination
  hostPath and its init container;
* the main containers request what the PodGroup's ``minResources`` (and with it the queue checks,
  which use the same numbers) assume: JobManager + replicas × TaskManager CPU, memory and GPUs, as
  Flink computes them from its configuration -- on a DRA pool the GPUs are the devices of the
  TaskManager's resource claim, which Flink keeps in the pod (``spec.resourceClaims`` and the main
  container's ``resources.claims``) and does not also request as an extended resource; the
  PodGroup exists in the pods' namespace with the cluster's queue.

Every cluster is built with the one distribution installed here (Flink 1.20.5), also the example
cluster that names Flink 2.1 (prod-eu/ad-hoc): its pod template and resource handling is the same
code path, but 2.x-only changes would not show.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.derive.kueue import pod_requests
from accelplane.derive.pod_security import LEVELS, pod_level
from accelplane.model import FlinkCluster
from accelplane.quantity import parse_quantity

from tests.conftest import EXAMPLE_SPECS
from tests.flink.specs import KUBERNETES, variant
from tests.support.flink.home import require_flink_home
from tests.support.flink_pods import FlinkPods, FlinkPodsCase, build_flink_pods, operator_case
from tests.support.render import files_for
from tests.support.specs import error_lines, model_of, write_spec
from tests.support.validators import validate_core_object
from tests.support.yunikorn import parse_task_groups

pytestmark = pytest.mark.flink

GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_GROUPS = "yunikorn.apache.org/task-groups"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_MANAGED_LABEL = "kueue.x-k8s.io/managed"
KUEUE_PARENT_ANNOTATION = "kueue.x-k8s.io/pod-suspending-parent"

#: Template fields Flink replaces (path -> why). Anything else that differs is a finding.
FLINK_OVERRIDES = {
    # InitTaskManagerDecorator: the pod is named <cluster-id>-taskmanager-<attempt>-<n>.
    ("taskmanager", "metadata.name"),
}


@dataclass(frozen=True)
class RenderedCluster:
    """One Kubernetes Flink cluster of an example stack, as rendered."""

    stack: str
    name: str
    target: str
    case: FlinkPodsCase
    jobmanager_template: dict[str, Any]
    taskmanager_template: dict[str, Any]
    podgroups: tuple[dict[str, Any], ...]
    claim_templates: tuple[dict[str, Any], ...]
    replicas: int
    gpu_resource: str | None
    gpu_amount: int
    queue: str | None

    @property
    def id(self) -> str:
        return f"{self.stack}/{self.name}"

    @property
    def yunikorn(self) -> bool:
        """True when Apache YuniKorn gang-schedules the cluster (task groups, no PodGroup)."""
        return bool(self.jobmanager_template["spec"]["schedulerName"] == "yunikorn")

    @property
    def kueue(self) -> bool:
        """True when Kueue admits the cluster's pods (queue-name label, kube-scheduler, no PodGroup)."""
        return KUEUE_QUEUE_LABEL in self.jobmanager_template["metadata"].get("labels", {})


def _podgroups(objects: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(o for o in objects if o["kind"] == "PodGroup")


def _gpu(config: Mapping[str, Any]) -> tuple[str | None, int]:
    """(extended resource Flink requests or None -- none on a DRA pool --, GPUs per TaskManager)."""
    key = config.get("external-resource.gpu.kubernetes.config-key")
    return (str(key) if key else None), int(config.get("external-resource.gpu.amount", 0))


def _claim_templates(objects: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(o for o in objects if o["kind"] == "ResourceClaimTemplate")


def claimed_devices(pod: dict[str, Any], templates: tuple[dict[str, Any], ...]) -> dict[str, Decimal]:
    """``deviceclass/<class>`` → devices the pod's main container claims, through the pod's
    ``resourceClaims`` and the ResourceClaimTemplates they name (what Volcano's capacity plugin
    accounts for the pod)."""
    (main,) = [c for c in pod["spec"]["containers"] if c["name"] == "flink-main-container"]
    used = {c["name"] for c in main.get("resources", {}).get("claims", [])}
    by_name = {(t["metadata"]["namespace"], t["metadata"]["name"]): t for t in templates}
    out: dict[str, Decimal] = {}
    for claim in pod["spec"].get("resourceClaims", []):
        if claim["name"] not in used:
            continue
        template = by_name[(pod["metadata"]["namespace"], claim["resourceClaimTemplateName"])]
        for request in template["spec"]["spec"]["devices"]["requests"]:
            body = request.get("exactly", request)  # v1beta2/v1 nest it, v1beta1 does not
            key = f"deviceclass/{body['deviceClassName']}"
            out[key] = out.get(key, Decimal(0)) + Decimal(body["count"])
    return out


@functools.cache
def rendered_clusters() -> tuple[RenderedCluster, ...]:
    """Every Kubernetes Flink cluster of every example stack (rendered in-process)."""
    out: list[RenderedCluster] = []
    for spec in EXAMPLE_SPECS:
        files = files_for(spec)
        objects = [yaml.safe_load(t) for p, (t, _) in files.items() if p.startswith("kubernetes/")]
        groups = _podgroups(objects)
        claims = _claim_templates(objects)
        for path, (text, _) in sorted(files.items()):
            parts = path.split("/")
            if len(parts) != 3 or parts[0] != "flink" or parts[2] not in ("config.yaml", "flink-conf.yaml"):
                continue
            base = f"flink/{parts[1]}"
            if f"{base}/jobmanager-pod-template.yaml" not in files:
                continue  # yarn / standalone
            jm = yaml.safe_load(files[f"{base}/jobmanager-pod-template.yaml"][0])
            tm = yaml.safe_load(files[f"{base}/taskmanager-pod-template.yaml"][0])
            config = yaml.safe_load(text) if parts[2] == "config.yaml" else _legacy(text)
            model = _model_cluster(spec, parts[1])
            gpu_resource, amount = _gpu(config)
            out.append(
                RenderedCluster(
                    spec.stem, parts[1], "kubernetes", FlinkPodsCase(text, jm, tm, parts[2]),
                    jm, tm, groups, claims, model.task_manager.replicas, gpu_resource, amount, model.queue,
                )
            )
        for dep in (o for o in objects if o["kind"] == "FlinkDeployment"):
            s = dep["spec"]
            gpu_resource, amount = _gpu(s["flinkConfiguration"])
            out.append(
                RenderedCluster(
                    spec.stem, dep["metadata"]["name"], "kubernetes-operator", operator_case(dep),
                    s["jobManager"]["podTemplate"], s["taskManager"]["podTemplate"], groups, claims,
                    s["taskManager"]["replicas"], gpu_resource, amount,
                    _model_cluster(spec, dep["metadata"]["name"]).queue,
                )
            )
    return tuple(out)


def _legacy(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        if ": " in line:
            key, value = line.split(": ", 1)
            out[key.strip()] = value.strip()
    return out


def _model_cluster(spec_path: Path, cluster: str) -> FlinkCluster:
    (c,) = [c for c in model_of(spec_path).flink_clusters if c.name == cluster]
    return c


CLUSTERS = rendered_clusters()


@pytest.fixture(scope="module")
def flink_pods_by_cluster() -> dict[str, FlinkPods]:
    """Flink's pods for every cluster, from one JVM run."""
    home = require_flink_home()
    results = build_flink_pods([c.case for c in CLUSTERS], flink_home=home)
    return {c.id: r for c, r in zip(CLUSTERS, results, strict=True)}


def test_examples_cover_both_kubernetes_targets_and_gpu_kinds() -> None:
    targets = {c.target for c in CLUSTERS}
    assert targets == {"kubernetes", "kubernetes-operator"}
    resources = {c.gpu_resource for c in CLUSTERS}
    assert {"nvidia.com/gpu", "amd.com/gpu"} <= resources
    assert any(r and r.startswith("nvidia.com/mig-") for r in resources)
    assert any(c.gpu_amount and c.gpu_resource is None for c in CLUSTERS), "a cluster on a DRA pool"


cluster_param = pytest.mark.parametrize("cluster", CLUSTERS, ids=[c.id for c in CLUSTERS])
VOLCANO_CLUSTERS = [c for c in CLUSTERS if not c.yunikorn and not c.kueue]
KUEUE_CLUSTERS = [c for c in CLUSTERS if c.kueue]
kueue_param = pytest.mark.parametrize("cluster", KUEUE_CLUSTERS, ids=[c.id for c in KUEUE_CLUSTERS])
YUNIKORN_CLUSTERS = [c for c in CLUSTERS if c.yunikorn]
volcano_param = pytest.mark.parametrize("cluster", VOLCANO_CLUSTERS, ids=[c.id for c in VOLCANO_CLUSTERS])
yunikorn_param = pytest.mark.parametrize("cluster", YUNIKORN_CLUSTERS, ids=[c.id for c in YUNIKORN_CLUSTERS])


@cluster_param
def test_flink_pods_pass_kubernetes_validate_strict(
    cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]
) -> None:
    pods = flink_pods_by_cluster[cluster.id]
    validate_core_object(pods.jobmanager)
    validate_core_object(pods.taskmanager)
    validate_core_object(pods.jobmanager_deployment)
    kinds = sorted(r["kind"] for r in pods.accompanying_resources)
    assert "ConfigMap" in kinds and "Service" in kinds
    for resource in pods.accompanying_resources:
        validate_core_object(resource)
    # What the schema cannot see: Flink appends its own volumes/mounts (flink-config-volume,
    # pod-template-volume, user-artifacts-volume) to ours, so names and mount paths must not clash.
    for pod in (pods.jobmanager, pods.taskmanager):
        spec = pod["spec"]
        names = [v["name"] for v in spec.get("volumes", [])]
        assert len(names) == len(set(names)), names
        containers = [*spec.get("initContainers", []), *spec["containers"]]
        assert len({c["name"] for c in containers}) == len(containers)
        for container in containers:
            paths = [m["mountPath"] for m in container.get("volumeMounts", [])]
            assert len(paths) == len(set(paths)), paths
            assert {m["name"] for m in container.get("volumeMounts", [])} <= set(names)


def changed_fields(template: Any, actual: Any, path: str = "") -> Iterator[str]:
    """Paths of template fields that Flink dropped or changed. Lists of named items (containers,
    volumes, env, mounts) are matched by name; other list items must appear unchanged."""
    if isinstance(template, dict):
        if not isinstance(actual, dict):
            yield f"{path} (not an object)"
            return
        for key, value in template.items():
            sub = f"{path}.{key}" if path else key
            if key not in actual:
                yield f"{sub} (dropped)"
            else:
                yield from changed_fields(value, actual[key], sub)
    elif isinstance(template, list):
        if not isinstance(actual, list):
            yield f"{path} (not a list)"
            return
        for item in template:
            name = item.get("name") if isinstance(item, dict) else None
            if name is None:
                if item not in actual:
                    yield f"{path}[{item!r}] (dropped)"
                continue
            match = [a for a in actual if isinstance(a, dict) and a.get("name") == name]
            if not match:
                yield f"{path}[{name}] (dropped)"
            else:
                yield from changed_fields(item, match[0], f"{path}[{name}]")
    elif template != actual:
        yield f"{path} ({template!r} -> {actual!r})"


def _findings(role: str, template: dict[str, Any], pod: dict[str, Any]) -> list[str]:
    found = []
    for part in ("metadata", "spec"):
        for change in changed_fields(template[part], pod[part], part):
            if (role, change.split(" ")[0]) not in FLINK_OVERRIDES:
                found.append(change)
    return found


@cluster_param
def test_flink_keeps_every_template_field(
    cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]
) -> None:
    """Everything our templates say reaches the pods, except the documented overrides."""
    pods = flink_pods_by_cluster[cluster.id]
    jm_pod_template = pods.jobmanager_deployment["spec"]["template"]  # what the Deployment stamps out
    assert _findings("jobmanager", cluster.jobmanager_template, jm_pod_template) == []
    assert _findings("taskmanager", cluster.taskmanager_template, pods.taskmanager) == []
    assert pods.taskmanager["metadata"]["name"] == f"{cluster.name}-taskmanager-1-1"


@volcano_param
def test_volcano_binding_survives(cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]) -> None:
    pods = flink_pods_by_cluster[cluster.id]
    (group,) = [
        g for g in cluster.podgroups
        if g["metadata"]["name"] == cluster.jobmanager_template["metadata"]["annotations"][GROUP_ANNOTATION]
    ]
    namespace = group["metadata"]["namespace"]
    assert group["spec"].get("queue") == cluster.queue  # Volcano takes the queue from the PodGroup
    for pod, template in (
        (pods.jobmanager, cluster.jobmanager_template),
        (pods.taskmanager, cluster.taskmanager_template),
    ):
        assert pod["metadata"]["namespace"] == namespace
        assert pod["metadata"]["annotations"][GROUP_ANNOTATION] == group["metadata"]["name"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["spec"].get("priorityClassName") == group["spec"].get("priorityClassName")
        for key in ("nodeSelector", "affinity", "tolerations", "initContainers"):
            assert pod["spec"].get(key) == template["spec"].get(key), key
    tm_spec = pods.taskmanager["spec"]
    if cluster.gpu_amount:
        volumes = {v["name"]: v for v in tm_spec["volumes"]}
        assert volumes["accelplane-gpu-discovery"]["configMap"]["name"].startswith("accelplane-gpu-discovery-")
        (main,) = [c for c in tm_spec["containers"] if c["name"] == "flink-main-container"]
        mounts = {m["name"]: m for m in main["volumeMounts"]}
        assert mounts["accelplane-gpu-discovery"]["subPath"] == "accelplane-gpu-discovery"
        assert mounts["accelplane-gpu-discovery-module"]["subPath"] == "accelplane_gpu_discovery.py"
        # Flink keeps the pod-private bytecode cache, read-only for the TaskManager
        assert volumes["accelplane-gpu-discovery-bytecode"]["emptyDir"]["medium"] == "Memory"
        assert mounts["accelplane-gpu-discovery-bytecode"]["readOnly"] is True
        if "accelplane-gpu-coordination" in volumes:
            assert volumes["accelplane-gpu-coordination"]["hostPath"]["type"] == "DirectoryOrCreate"
            assert "accelplane-gpu-coordination" in mounts
            assert [c["name"] for c in tm_spec["initContainers"]] == [
                "accelplane-coordination-dir",
                "accelplane-gpu-preflight",
            ]
        else:
            assert [c["name"] for c in tm_spec["initContainers"]] == ["accelplane-gpu-preflight"]
        # Fail loudly (tests/flink/test_taskmanager_preflight.py): the preflight init container, kept
        # by Flink, asks for the main container's GPUs; kubelet hands an init container's devices on
        # to the app containers, and the pod's effective request (the larger of any init
        # container's and the app containers' sum) is still what the main container asks for.
        (pre,) = [c for c in tm_spec["initContainers"] if c["name"] == "accelplane-gpu-preflight"]
        assert pre["image"] == main["image"], "the preflight checks the image Flink runs"
        for init in tm_spec["initContainers"]:
            for name, value in init["resources"].get("limits", {}).items():
                main_value = main["resources"]["limits"].get(name)
                assert main_value is not None and parse_quantity(str(value)) <= parse_quantity(str(main_value))
        if cluster.gpu_resource is None:  # DRA: the claim carries the GPUs, Flink keeps it
            assert pre["resources"]["claims"] == main["resources"]["claims"]
            assert tm_spec["resourceClaims"] == cluster.taskmanager_template["spec"]["resourceClaims"]
            assert main["resources"]["claims"] == [{"name": "gpu"}]
            assert not any(k.endswith(("/gpu", ".shared")) for k in main["resources"]["limits"])
            devices = claimed_devices(pods.taskmanager, cluster.claim_templates)
            assert list(devices.values()) == [Decimal(cluster.gpu_amount)]
            return
        limits = main["resources"]["limits"]
        assert limits[cluster.gpu_resource] == str(cluster.gpu_amount)
        assert pre["resources"]["limits"][cluster.gpu_resource] == str(cluster.gpu_amount)
        assert main["resources"]["requests"][cluster.gpu_resource] == str(cluster.gpu_amount)


def _requests(pod: dict[str, Any]) -> dict[str, Decimal]:
    """Resource requests of the pod's main container (what Volcano's gang/queue accounting uses;
    init containers run before and are far smaller, see the TaskManager init container)."""
    (main,) = [c for c in pod["spec"]["containers"] if c["name"] == "flink-main-container"]
    requests = main["resources"]["requests"]
    limits = main["resources"]["limits"]
    assert requests == limits, "Flink's limit factors are 1.0 by default: requests == limits"
    return {name: parse_quantity(str(value)) for name, value in requests.items()}


@volcano_param
def test_podgroup_min_resources_are_what_flink_requests(
    cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]
) -> None:
    pods = flink_pods_by_cluster[cluster.id]
    jm, tm = _requests(pods.jobmanager), _requests(pods.taskmanager)
    total: dict[str, Decimal] = dict(jm)
    tm.update(claimed_devices(pods.taskmanager, cluster.claim_templates))
    for name, value in tm.items():
        total[name] = total.get(name, Decimal(0)) + cluster.replicas * value
    (group,) = [
        g for g in cluster.podgroups
        if g["metadata"]["name"] == cluster.jobmanager_template["metadata"]["annotations"][GROUP_ANNOTATION]
    ]
    min_resources = {k: parse_quantity(v) for k, v in group["spec"]["minResources"].items()}
    assert min_resources == total
    # Flink's own numbers behind the requests
    mib = Decimal(2**20)
    assert jm["memory"] == pods.cluster_specification["masterMemoryMB"] * mib
    assert tm["memory"] == pods.taskmanager_process["totalProcessMemoryMB"] * mib
    assert tm["cpu"] == Decimal(str(pods.taskmanager_process["cpuCores"]))


def test_examples_cover_yunikorn_on_both_kubernetes_targets() -> None:
    assert {c.target for c in YUNIKORN_CLUSTERS} == {"kubernetes", "kubernetes-operator"}
    assert all(c.gpu_amount for c in YUNIKORN_CLUSTERS)


@yunikorn_param
def test_yunikorn_binding_survives(cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]) -> None:
    """The pods Flink creates keep YuniKorn's scheduler name, application id and queue labels and
    gang annotations, and each fits the placeholder of its task group: YuniKorn swaps a real pod for a
    placeholder only when the pod's requests fit it (the JobManager task group exactly what Flink
    requests for it; the TaskManager group what Flink requests on the main container, GPUs included,
    and the larger init-container requests)."""
    pods = flink_pods_by_cluster[cluster.id]
    groups = {
        g.name: g
        for g in parse_task_groups(cluster.jobmanager_template["metadata"]["annotations"][TASK_GROUPS])  # type: ignore[union-attr]
    }
    for role, pod, template in (
        ("jobmanager", pods.jobmanager, cluster.jobmanager_template),
        ("taskmanager", pods.taskmanager, cluster.taskmanager_template),
    ):
        meta, want = pod["metadata"], template["metadata"]
        assert pod["spec"]["schedulerName"] == "yunikorn"
        for label in ("applicationId", "queue"):
            assert meta["labels"][label] == want["labels"][label]
        for key in (TASK_GROUPS, "yunikorn.apache.org/task-group-name", "yunikorn.apache.org/schedulingPolicyParameters"):
            assert meta["annotations"][key] == want["annotations"][key]
        assert GROUP_ANNOTATION not in meta["annotations"]
        group = groups[meta["annotations"]["yunikorn.apache.org/task-group-name"]]
        assert group.name == role
        requests = _requests(pod)
        if role == "jobmanager":
            assert requests == group.min_resource
            assert group.min_member == pods.jobmanager_deployment["spec"]["replicas"]
        else:
            assert group.min_member == cluster.replicas
            assert requests == {k: group.min_resource[k] for k in requests}, "the main container is the pod's request"
            assert group.node_selector == (pod["spec"].get("nodeSelector") or {})
            assert group.tolerations == pod["spec"].get("tolerations", [])


# ------------------------------------------------------------------------------------------------
# What Flink does with config keys that compete with the templates / PodGroup (the findings the
# builder and checks handle): each is shown with Flink's factories, then the spec-level handling.
# ------------------------------------------------------------------------------------------------

HA = {
    "kubernetes.jobmanager.replicas": 2,
    "high-availability.type": "kubernetes",
    "high-availability.storageDir": "s3://bucket/ha",
}
OVERRIDE_EXTRA = (
    'kubernetes.taskmanager.annotations: "scheduling.k8s.io/group-name:other,team:x"\n'
    'kubernetes.jobmanager.annotations: "scheduling.k8s.io/group-name:other"\n'
    'kubernetes.taskmanager.node-selector: "accelplane.io/pool:cpu-only,zone:a"\n'
    'kubernetes.taskmanager.tolerations: "key:spot,operator:Exists,effect:NoSchedule"\n'
)
#: name -> (spec document, lines a user appends to the rendered config.yaml)
FINDINGS: dict[str, tuple[dict[str, Any], str]] = {
    "cpu-cores": (variant(KUBERNETES), "taskmanager.cpu.cores: 6\n"),
    "standby": (variant(KUBERNETES, config=HA), ""),
    "overrides": (variant(KUBERNETES), OVERRIDE_EXTRA),
}
#: A template with every field kind the docs classify (kept / overridden), beyond what we render
#: today: pod resource claims (DRA), extra resources, pull secrets, security contexts, a sidecar.
SYNTHETIC_TEMPLATE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "t", "namespace": "elsewhere", "labels": {"app": "mine", "x": "y"},
                 "annotations": {GROUP_ANNOTATION: "pg"}},
    "spec": {
        "schedulerName": "volcano",
        "serviceAccountName": "template-sa",
        "restartPolicy": "Always",
        "hostNetwork": True,
        "imagePullSecrets": [{"name": "regcred"}],
        "securityContext": {"runAsUser": 9999, "fsGroup": 9999},
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
        "containers": [
            {
                "name": "flink-main-container",
                "image": "template-image",
                "command": ["x"],
                "args": ["y"],
                "ports": [{"name": "metrics", "containerPort": 9249}],
                "securityContext": {"allowPrivilegeEscalation": False},
                "resources": {
                    "requests": {"cpu": "100", "memory": "1Gi", "ephemeral-storage": "10Gi"},
                    "limits": {"cpu": "100", "ephemeral-storage": "10Gi"},
                    "claims": [{"name": "gpu"}],
                },
            },
            {"name": "sidecar", "image": "busybox"},
        ],
    },
}
#: What Flink changed in SYNTHETIC_TEMPLATE (docs/flink.md lists the same).
SYNTHETIC_OVERRIDES = {
    "jobmanager": {
        "metadata.labels.app",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "spec.containers[flink-main-container].image",
        "spec.containers[flink-main-container].command['x']",
        "spec.containers[flink-main-container].args['y']",
        "spec.containers[flink-main-container].resources.requests.cpu",
        "spec.containers[flink-main-container].resources.requests.memory",
        "spec.containers[flink-main-container].resources.limits.cpu",
    },
}
SYNTHETIC_OVERRIDES["taskmanager"] = SYNTHETIC_OVERRIDES["jobmanager"] | {
    "metadata.name",
    "metadata.namespace",
    "spec.restartPolicy",
}
OPERATOR_STANDBY = variant(
    KUBERNETES,
    target="kubernetes-operator",
    job={"jarURI": "local:///opt/flink/usrlib/job.jar", "upgradeMode": "last-state"},
    # last-state needs a checkpoint directory too (the operator's DefaultValidator; checks/flink_state.py)
    config={**HA, "execution.checkpointing.dir": "s3://bucket/checkpoints"},
)


def _objects(path: Path) -> list[dict[str, Any]]:
    return [yaml.safe_load(t) for p, (t, _) in files_for(path).items() if p.startswith("kubernetes/")]


def _native_case(directory: Path, data: dict[str, Any], extra: str = "") -> tuple[FlinkPodsCase, dict[str, Any]]:
    """The rendered job1 cluster of a spec document (``extra`` lines appended to its config.yaml,
    i.e. what a user would get by editing the file) and its PodGroup."""
    directory.mkdir(parents=True, exist_ok=True)
    files = files_for(write_spec(directory, data))
    (group,) = [
        yaml.safe_load(t) for p, (t, _) in files.items() if p.startswith("kubernetes/podgroup_")
    ]
    base = "flink/job1/"
    case = FlinkPodsCase(
        files[base + "config.yaml"][0] + extra,
        files[base + "jobmanager-pod-template.yaml"][0],
        files[base + "taskmanager-pod-template.yaml"][0],
    )
    return case, group


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[FlinkPods, dict[str, Any]]]:
    """Flink's pods (and the rendered PodGroup) for every finding, from one JVM run."""
    home = require_flink_home()
    root = tmp_path_factory.mktemp("findings")
    inputs = {name: _native_case(root / name, data, extra) for name, (data, extra) in FINDINGS.items()}
    objects = _objects(write_spec(root, OPERATOR_STANDBY, "operator.yaml"))
    (dep,) = [o for o in objects if o["kind"] == "FlinkDeployment"]
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    inputs["operator-standby"] = (operator_case(dep), {**group, "deployment": dep})
    base, group = _native_case(root / "synthetic", variant(KUBERNETES))
    inputs["synthetic"] = (FlinkPodsCase(base.config_text, SYNTHETIC_TEMPLATE, SYNTHETIC_TEMPLATE), group)
    results = build_flink_pods([case for case, _ in inputs.values()], flink_home=home)
    return {name: (pods, g) for (name, (_, g)), pods in zip(inputs.items(), results, strict=True)}


def _validate_errors(tmp_path: Path, data: dict[str, Any]) -> list[str]:
    return error_lines(write_spec(tmp_path, data, "checked.yaml"))


def test_what_flink_keeps_and_overrides(findings: dict[str, tuple[FlinkPods, dict[str, Any]]]) -> None:
    """docs/flink.md "What Flink keeps, drops and overrides", on a template with more field kinds
    than we render: exactly these fields change; resource claims, extra resources, pull secrets,
    security contexts, sidecars and other containers' fields survive."""
    pods, _ = findings["synthetic"]
    for role, pod in (
        ("jobmanager", pods.jobmanager_deployment["spec"]["template"]),
        ("taskmanager", pods.taskmanager),
    ):
        changed = {
            c.split(" (")[0]
            for part in ("metadata", "spec")
            for c in changed_fields(SYNTHETIC_TEMPLATE[part], pod[part], part)
        }
        assert changed == SYNTHETIC_OVERRIDES[role], role
        (main,) = [c for c in pod["spec"]["containers"] if c["name"] == "flink-main-container"]
        assert main["resources"]["claims"] == [{"name": "gpu"}]
        assert main["resources"]["requests"]["ephemeral-storage"] == "10Gi"
        assert pod["spec"]["resourceClaims"] == SYNTHETIC_TEMPLATE["spec"]["resourceClaims"]


def test_taskmanager_cpu_cores_overrides_the_kubernetes_cpu(
    tmp_path: Path, findings: dict[str, tuple[FlinkPods, dict[str, Any]]]
) -> None:
    """``taskmanager.cpu.cores`` beats ``kubernetes.taskmanager.cpu.amount`` in Flink's worker
    sizing, so the TaskManagers would request other CPUs than minResources: accelplane refuses it."""
    pods, group = findings["cpu-cores"]
    assert _requests(pods.taskmanager)["cpu"] == 6  # the spec says 4
    assert group["spec"]["minResources"]["cpu"] == "9"  # 1 + 2 × 4
    errors = _validate_errors(tmp_path, variant(KUBERNETES, config={"taskmanager.cpu.cores": 6}))
    assert len(errors) == 1 and "flink.clusters[0].config.taskmanager.cpu.cores" in errors[0]
    assert "set taskManager.cpu instead" in errors[0]


def test_standby_jobmanagers_are_counted_in_min_resources(
    findings: dict[str, tuple[FlinkPods, dict[str, Any]]],
) -> None:
    """``kubernetes.jobmanager.replicas`` becomes the Deployment's replicas (each JobManager
    requests its CPU and memory); minResources and the queue's pod count include them, and the
    operator gets them as ``jobManager.replicas``."""
    pods, group = findings["standby"]
    assert pods.jobmanager_deployment["spec"]["replicas"] == 2
    jm, tm = _requests(pods.jobmanager), _requests(pods.taskmanager)
    expected = {name: 2 * jm.get(name, Decimal(0)) + 2 * tm.get(name, Decimal(0)) for name in {*jm, *tm}}
    assert {k: parse_quantity(v) for k, v in group["spec"]["minResources"].items()} == expected
    op_pods, op_group = findings["operator-standby"]
    assert op_group["deployment"]["spec"]["jobManager"]["replicas"] == 2
    assert op_pods.jobmanager_deployment["spec"]["replicas"] == 2
    assert op_group["spec"]["minResources"] == group["spec"]["minResources"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "must be a positive integer (JobManager pods), not 0"),
        ("two", "must be a positive integer (JobManager pods), not 'two'"),
        (2, "standby JobManagers need high availability"),
    ],
)
def test_bad_jobmanager_replicas_are_refused(tmp_path: Path, value: object, message: str) -> None:
    errors = _validate_errors(tmp_path, variant(KUBERNETES, config={"kubernetes.jobmanager.replicas": value}))
    assert len(errors) == 1 and message in errors[0], errors


def test_config_annotations_and_node_selector_win_over_the_templates(
    tmp_path: Path, findings: dict[str, tuple[FlinkPods, dict[str, Any]]]
) -> None:
    """Flink merges ``kubernetes.taskmanager.annotations``/``node-selector`` over the template's
    values: a group-name annotation would leave the PodGroup, a pool label the GPU pool. Other
    annotations, selectors and tolerations are merged in and harmless; accelplane refuses the two."""
    pods, _ = findings["overrides"]
    tm = pods.taskmanager

    def annotations(pod: dict[str, Any]) -> dict[str, str]:  # without the checkov.io/skip reasons
        return {k: v for k, v in pod["metadata"]["annotations"].items() if not k.startswith("checkov.io/")}

    assert annotations(tm) == {GROUP_ANNOTATION: "other", "team": "x"}
    assert annotations(pods.jobmanager) == {GROUP_ANNOTATION: "other"}
    assert tm["spec"]["nodeSelector"] == {"accelplane.io/pool": "cpu-only", "zone": "a"}
    assert [t["key"] for t in tm["spec"]["tolerations"]] == ["nvidia.com/gpu", "spot"]
    config = {
        "kubernetes.taskmanager.annotations": "scheduling.k8s.io/group-name:other,team:x",
        "kubernetes.jobmanager.annotations": "scheduling.k8s.io/group-name:other",
        "kubernetes.taskmanager.node-selector": "accelplane.io/pool:cpu-only,zone:a",
        "kubernetes.taskmanager.tolerations": "key:spot,operator:Exists,effect:NoSchedule",
    }
    errors = _validate_errors(tmp_path, variant(KUBERNETES, config=config))
    assert sorted(e.split(": ")[1] for e in errors) == [
        "flink.clusters[0].config.kubernetes.jobmanager.annotations",
        "flink.clusters[0].config.kubernetes.taskmanager.annotations",
        "flink.clusters[0].config.kubernetes.taskmanager.node-selector",
    ], errors
    assert "accelplane.io/pool selects the GPU pool (taskManager.gpu)" in "".join(errors)
    fine = {"kubernetes.taskmanager.annotations": "team:x", "kubernetes.taskmanager.node-selector": "zone:a"}
    assert _validate_errors(tmp_path, variant(KUBERNETES, config=fine)) == []


def test_flink_pods_entry_point_returns_the_batch_result(flink_pods_by_cluster: dict[str, FlinkPods]) -> None:
    """``flink_pods(config, jm, tm)`` (the entry point other tests use) gives the same pods as the
    batch run; results are memoised, so this costs no JVM."""
    from tests.support.flink_pods import flink_pods

    cluster = CLUSTERS[0]
    jm, tm = flink_pods(
        cluster.case.config_text,
        cluster.case.jobmanager_template,
        cluster.case.taskmanager_template,
        config_file=cluster.case.config_file,
    )
    assert (jm, tm) == (flink_pods_by_cluster[cluster.id].jobmanager, flink_pods_by_cluster[cluster.id].taskmanager)


@cluster_param
def test_namespace_pod_security_admits_the_pods_flink_creates(
    cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]
) -> None:
    """The Namespace's ``pod-security.kubernetes.io/enforce`` level (derived from our templates) admits
    the pods Flink really creates, and is exactly their level: Flink's decorators add nothing that
    changes it."""
    pods = flink_pods_by_cluster[cluster.id]
    spec = next(p for p in EXAMPLE_SPECS if p.stem == cluster.stack)
    objects = [yaml.safe_load(t) for p, (t, _) in files_for(spec).items() if p.startswith("kubernetes/")]
    pairs = ((cluster.jobmanager_template, pods.jobmanager), (cluster.taskmanager_template, pods.taskmanager))
    for template, pod in pairs:
        assert pod_level(pod["spec"]) == pod_level(template["spec"]), cluster.id
    namespace = pods.taskmanager["metadata"]["namespace"]
    created = [o for o in objects if o["kind"] == "Namespace" and o["metadata"]["name"] == namespace]
    if not created:
        return  # managed elsewhere (the stack's comments say which level it needs)
    enforce = created[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
    for pod in (pods.jobmanager, pods.taskmanager):
        assert LEVELS.index(pod_level(pod["spec"])) <= LEVELS.index(enforce), (cluster.id, enforce)


def test_examples_cover_kueue_on_both_kubernetes_targets() -> None:
    assert {c.target for c in KUEUE_CLUSTERS} == {"kubernetes", "kubernetes-operator"}
    assert all(c.gpu_amount for c in KUEUE_CLUSTERS)


@kueue_param
def test_kueue_labels_and_annotations_survive(
    cluster: RenderedCluster, flink_pods_by_cluster: dict[str, FlinkPods]
) -> None:
    """The pods Flink creates keep what Kueue needs (docs/kueue.md): the JobManager pod the
    queue-name label, on the pod template only (the JobManager Deployment Flink creates carries none,
    so Kueue's ancestor walk never finds a Kueue-managed owner, reconciler.go:884-946 at v0.19.2);
    each TaskManager queue-name, ``managed: "true"`` and ``pod-suspending-parent`` (pod_webhook.go
    109-113, pod_controller.go 610-616); both run by kube-scheduler, and request exactly what
    accelplane's flavor-fit check (AP2610) assumes."""
    pods = flink_pods_by_cluster[cluster.id]
    deployment = pods.jobmanager_deployment
    assert KUEUE_QUEUE_LABEL not in deployment["metadata"].get("labels", {})
    assert deployment["spec"]["template"]["metadata"]["labels"][KUEUE_QUEUE_LABEL] == cluster.queue
    jm_meta = pods.jobmanager["metadata"]
    assert jm_meta["labels"][KUEUE_QUEUE_LABEL] == cluster.queue
    assert KUEUE_MANAGED_LABEL not in jm_meta["labels"]
    assert KUEUE_PARENT_ANNOTATION not in jm_meta.get("annotations", {})
    tm_meta = pods.taskmanager["metadata"]
    assert tm_meta["labels"][KUEUE_QUEUE_LABEL] == cluster.queue
    assert tm_meta["labels"][KUEUE_MANAGED_LABEL] == "true"
    assert tm_meta["annotations"][KUEUE_PARENT_ANNOTATION] == "flink-jobmanager"
    for pod in (pods.jobmanager, pods.taskmanager):
        assert pod["spec"]["schedulerName"] == "default-scheduler"
        assert GROUP_ANNOTATION not in pod["metadata"].get("annotations", {})
    spec = model_of(next(p for p in EXAMPLE_SPECS if p.stem == cluster.stack))
    (model,) = [c for c in spec.flink_clusters if c.name == cluster.name]
    assert _requests(pods.jobmanager) == pod_requests(spec, model, "jobmanager")
    assert _requests(pods.taskmanager) == pod_requests(spec, model, "taskmanager")
