"""The typed spec model: the only input builders see.

`build_model` turns a schema-valid merged document into frozen dataclasses, applying every default
in one place (so builders never guess) and parsing quantities exactly. Each named entity keeps its
path in the merged document so checks can report ``file: path: message``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal, TypeVar

from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, declare
from accelplane.flink_options import resolve_config
from accelplane.quantity import Quantity, QuantityError
from accelplane.schema_document import schema_default

QUANTITY_INVALID = declare(
    'AP1101', ERROR, 'a quantity that does not parse',
    fix='write a Kubernetes quantity, e.g. 4Gi or 500m',
)

_T = TypeVar("_T")

Vendor = Literal["nvidia", "amd"]
Allocation = Literal["devicePlugin", "dra"]
Platform = Literal["kubernetes", "yarn", "standalone"]
Scheduler = Literal["volcano", "yunikorn"]
GangSchedulingStyle = Literal["Hard", "Soft"]

YUNIKORN_SCHEDULER_NAME = "yunikorn"
"""The only ``schedulerName`` YuniKorn's Kubernetes shim takes a pod for (apache/yunikorn-k8shim
``constants.SchedulerName``; ``utils.GetApplicationIDFromPod`` ignores pods of any other name)."""


class FlinkTarget(StrEnum):
    """Where a Flink cluster is deployed (``flink.clusters[].target``). A `StrEnum`: it equals and
    formats as the spec's string (``target == "kubernetes"`` holds), so messages and keys keep it."""

    KUBERNETES = "kubernetes"
    KUBERNETES_OPERATOR = "kubernetes-operator"
    YARN = "yarn"
    STANDALONE = "standalone"

    @property
    def on_kubernetes(self) -> bool:
        """True for native Kubernetes and the Flink Kubernetes Operator."""
        return self in (FlinkTarget.KUBERNETES, FlinkTarget.KUBERNETES_OPERATOR)

    @property
    def platform(self) -> Platform:
        """The platform whose nodes run the TaskManagers (both Kubernetes targets: ``kubernetes``)."""
        return "kubernetes" if self.on_kubernetes else self.value  # type: ignore[return-value]

VENDOR_RESOURCE = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}
GPU_RESOURCE_NAMES = frozenset(VENDOR_RESOURCE.values())


def is_gpu_resource(name: str) -> bool:
    """True for resource names that count GPUs (whole, shared or MIG slices; ``deviceclass/<class>``
    Volcano keys count the devices of a DeviceClass, and accelplane's DeviceClasses are GPU classes)."""
    return name in GPU_RESOURCE_NAMES or name.startswith(
        ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "deviceclass/")
    )


@dataclass(frozen=True)
class ResourceList:
    """Resource name → quantity, in name order."""

    items: tuple[tuple[str, Quantity], ...] = ()

    def get(self, name: str) -> Quantity | None:
        """Quantity of ``name`` or None."""
        return dict(self.items).get(name)

    def names(self) -> list[str]:
        """Resource names present."""
        return [k for k, _ in self.items]

    def as_dict(self) -> dict[str, str]:
        """Plain ``{name: quantity-as-written}`` for objects we emit."""
        return {k: str(v) for k, v in self.items}

    def __bool__(self) -> bool:
        return bool(self.items)


@dataclass(frozen=True)
class Taint:
    """A node taint."""

    key: str
    value: str
    effect: str
    path: PathTuple = field(default=(), compare=False)
    """Where the taint is written in the merged spec (for error messages; not part of its identity)."""


@dataclass(frozen=True)
class MigConfig:
    """MIG layout of a pool's GPUs."""

    strategy: Literal["none", "single", "mixed"] = "none"
    devices: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class SharingConfig:
    """GPU sharing by the NVIDIA device plugin."""

    strategy: Literal["none", "timeSlicing", "mps"] = "none"
    replicas: int = 1
    rename_by_default: bool | None = None
    """True: slices are advertised as ``<resource>.shared``; False: explicitly kept under the
    dedicated name (``nvidia.com/gpu``); None: not set (an error on a shared pool, see
    `accelplane.checks.device_plugins`)."""
    fail_requests_greater_than_one: bool = False


@dataclass(frozen=True)
class GpuSpec:
    """GPUs in each node of a pool."""

    vendor: Vendor
    per_node: int
    model: str | None = None
    allocation: Allocation = "devicePlugin"
    """How pods get these GPUs on Kubernetes: device-plugin extended resources or DRA claims."""
    memory: Quantity | None = None
    mig: MigConfig = field(default_factory=MigConfig)
    sharing: SharingConfig = field(default_factory=SharingConfig)
    allowed_devices: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodePool:
    """A group of identical nodes."""

    name: str
    path: PathTuple
    platform: Platform
    nodes: int
    cpu: Quantity | None
    memory: Quantity | None
    hosts: tuple[str, ...]
    gpu: GpuSpec | None
    labels: tuple[tuple[str, str], ...]
    taints: tuple[Taint, ...]
    description: str = ""


@dataclass(frozen=True)
class NvidiaPlugin:
    """NVIDIA device plugin settings."""

    enabled: bool | None
    image: str
    version: str
    gpu_feature_discovery: bool
    device_list_strategy: str
    mig_manager_namespace: str
    image_digest: str | None = None


@dataclass(frozen=True)
class AmdPlugin:
    """AMD device plugin settings."""

    enabled: bool | None
    image: str
    version: str
    labeller: bool
    image_digest: str | None = None
    labeller_image_digest: str | None = None


@dataclass(frozen=True)
class DevicePlugins:
    """Device plugin settings."""

    namespace: str
    nvidia: NvidiaPlugin
    amd: AmdPlugin


@dataclass(frozen=True)
class NamespaceSettings:
    """What the spec says about one Kubernetes namespace (``namespaces.<name>``)."""

    name: str
    path: PathTuple
    managed: bool


@dataclass(frozen=True)
class PriorityClass:
    """A Kubernetes PriorityClass."""

    name: str
    path: PathTuple
    value: int
    global_default: bool
    preemption_policy: str | None
    description: str | None


@dataclass(frozen=True)
class Queue:
    """A queue of the shared Volcano/YARN queue tree."""

    name: str
    path: PathTuple
    parent: str | None
    weight: int
    priority: int | None
    reclaimable: bool | None
    capability: ResourceList
    deserved: ResourceList
    guarantee: ResourceList
    description: str = ""
    gpu_models: tuple[QueueGpuModel, ...] = ()
    """YARN GPU-model partitions the queue may use (``gpuModels``), sorted by model."""

    def gpu_model(self, model: str) -> QueueGpuModel | None:
        """The queue's ``gpuModels`` entry for ``model``, None when it does not list it."""
        return next((g for g in self.gpu_models if g.model == model), None)


@dataclass(frozen=True)
class QueueGpuModel:
    """One ``gpuModels`` entry of a queue: GPUs of one model it deserves and may use at most."""

    model: str
    path: PathTuple
    deserved: int | None
    capability: int | None


@dataclass(frozen=True)
class Volcano:
    """Volcano settings."""

    namespace: str
    scheduler_name: str
    manage_scheduler_config: bool
    version: str = "1.15"

    configured: bool = False
    """True when the spec (or a base) writes a ``volcano`` block (a warning on a YuniKorn cluster)."""

    @property
    def version_tuple(self) -> tuple[int, int]:
        """(major, minor) of the installed Volcano release."""
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)


@dataclass(frozen=True)
class YuniKorn:
    """Apache YuniKorn settings (``scheduler: yunikorn``)."""

    namespace: str = "yunikorn"
    manage_queue_config: bool = True
    placeholder_timeout_seconds: int = 900
    gang_scheduling_style: GangSchedulingStyle = "Hard"
    configured: bool = False
    """True when the spec (or a base) writes a ``yunikorn`` block (a warning on a Volcano cluster)."""


@dataclass(frozen=True)
class GpuRequest:
    """GPUs per TaskManager."""

    amount: int
    pool: str | None
    vendor: Vendor | None
    model: str | None
    resource: str | None


@dataclass(frozen=True)
class ProcessResources:
    """Container resources of a Flink process."""

    cpu: Quantity
    memory: Quantity


@dataclass(frozen=True)
class TaskManager:
    """TaskManager shape."""

    replicas: int
    slots: int
    cpu: Quantity
    memory: Quantity
    gpu: GpuRequest | None

    @property
    def gpus(self) -> int:
        """GPUs per TaskManager (0 without a GPU request)."""
        return self.gpu.amount if self.gpu is not None else 0

    @property
    def uses_gpus(self) -> bool:
        """True when each TaskManager asks for at least one GPU."""
        return self.gpus > 0

    @property
    def cpu_amount(self) -> int | float:
        """CPUs per TaskManager as the number Flink's ``*.cpu.amount`` keys take (`Quantity.number`)."""
        return self.cpu.number


@dataclass(frozen=True)
class Job:
    """Application-mode job."""

    jar_uri: str | None
    entry_class: str | None
    args: tuple[str, ...]
    parallelism: int | None
    upgrade_mode: str | None


@dataclass(frozen=True)
class SlotGroup:
    """A slot sharing group of a Flink cluster's jobs and its resources per slot."""

    name: str
    path: PathTuple
    slots: int
    cpu: Quantity
    task_heap: Quantity
    managed_memory: Quantity
    gpu: Decimal
    gpu_model: str | None


@dataclass(frozen=True)
class FlinkCluster:
    """A Flink cluster with `flink.defaults` applied (by the loader, `accelplane.spec_loader`)."""

    name: str
    path: PathTuple
    version: str
    image: str | None
    config_format: str
    target: FlinkTarget
    mode: str
    namespace: str
    queue: str | None
    priority_class: str | None
    service_account: str
    job_manager: ProcessResources
    task_manager: TaskManager
    coordination: bool
    coordination_file: str
    config: tuple[tuple[str, str | int | float | bool], ...]
    job: Job | None
    from_defaults: frozenset[tuple[str, ...]] = frozenset()
    """Key paths the cluster inherited from ``flink.defaults`` (`LoadedSpec.inherited_defaults`)."""
    slot_groups: tuple[SlotGroup, ...] = ()
    config_renamed: tuple[tuple[str, str], ...] = ()
    """``config`` keys written under the name the cluster's Flink reads, as ``(that name, the key
    as the spec wrote it)`` (`accelplane.flink_options.resolve_config`); ``config`` holds the new names."""

    def field_path(self, *keys: str) -> PathTuple:
        """Merged-document path of a field (the loader's provenance then names the file and place it
        was written, ``flink.defaults`` for an inherited value); a renamed ``config`` key is
        located under the name the spec wrote."""
        if len(keys) >= 2 and keys[0] == "config":
            written = dict(self.config_renamed).get(keys[1])
            if written is not None:
                keys = ("config", written, *keys[2:])
        return (*self.path, *keys)

    @property
    def version_tuple(self) -> tuple[int, int]:
        """(major, minor) of the Flink version."""
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def platform(self) -> Platform:
        """The platform whose nodes run the TaskManagers (`FlinkTarget.platform`)."""
        return self.target.platform

    @property
    def on_kubernetes(self) -> bool:
        """True for the native-Kubernetes and operator targets."""
        return self.target.on_kubernetes

    @property
    def uses_gpus(self) -> bool:
        """True when the TaskManagers ask for GPUs (`TaskManager.uses_gpus`)."""
        return self.task_manager.uses_gpus

    @property
    def gpus_per_task_manager(self) -> int:
        """GPUs per TaskManager, 0 without GPUs (`TaskManager.gpus`)."""
        return self.task_manager.gpus


@dataclass(frozen=True)
class YarnResourceType:
    """Allocation bounds for a YARN resource type."""

    name: str
    path: PathTuple
    minimum_allocation: int | None
    maximum_allocation: int | None
    units: str | None


@dataclass(frozen=True)
class Yarn:
    """YARN GPU settings."""

    per_model_types: bool
    """Removed design (kept so a spec setting it gets a pointed error): see ``node_labels``."""
    node_labels: bool
    resource_types: tuple[YarnResourceType, ...]
    cgroups: str
    cgroups_mount_path: str
    cgroups_hierarchy: str
    nvidia_smi_path: str
    docker_enabled: bool
    docker_runtime: str
    docker_allowed_devices: tuple[str, ...]
    docker_mounts: tuple[tuple[str, str], ...] = ()
    """(host path, ``ro``/``rw``) every Flink container on YARN mounts at the same path, sorted."""
    maximum_allocation_memory: Quantity | None = None
    """``maximumAllocation.memory``: the scheduler's largest container (None: Hadoop's default)."""
    maximum_allocation_vcores: int | None = None
    """``maximumAllocation.vcores`` (None: Hadoop's default)."""


@dataclass(frozen=True)
class Discovery:
    """Where the discovery script and coordination file live on nodes."""

    install_dir: str
    coordination_file: str
    file_mode: str
    user: str
    group: str

    @property
    def script_path(self) -> str:
        """Absolute path of the installed discovery script."""
        return f"{self.install_dir}/accelplane-gpu-discovery"


@dataclass(frozen=True)
class NodeImage:
    """Node/container image settings."""

    base_image: str
    nvidia_ml_py_version: str
    image: str | None = None


@dataclass(frozen=True)
class ExporterImage:
    """A pinned GPU metrics exporter image."""

    image: str
    version: str
    digest: str | None = None

    @property
    def reference(self) -> str:
        """``repo:tag`` or ``repo:tag@digest``."""
        return f"{self.image}:{self.version}@{self.digest}" if self.digest else f"{self.image}:{self.version}"


@dataclass(frozen=True)
class Monitoring:
    """GPU usage monitoring settings (``monitoring``; docs/monitoring.md)."""

    enabled: bool
    exporters: Literal["accelplane", "external"]
    namespace: str
    prometheus_labels: tuple[tuple[str, str], ...]
    idle_threshold: float
    idle_for: str
    missing_metrics_for: str
    queue_near_capability_ratio: float
    queue_near_capability_for: str
    grafana_namespace: str
    grafana_label: str
    grafana_label_value: str
    dcgm_exporter: ExporterImage
    amd_exporter: ExporterImage
    textfile_directory: str


def _monitoring(m: dict[str, Any]) -> Monitoring:
    """The ``monitoring`` section with its schema defaults applied."""

    def get(key: str) -> Any:
        return m.get(key, schema_default(f"monitoring.{key}"))

    grafana = m.get("grafana", {})
    dcgm = m.get("dcgmExporter", {})
    amd = m.get("amdExporter", {})
    return Monitoring(
        enabled=get("enabled"),
        exporters=get("exporters"),
        namespace=get("namespace"),
        prometheus_labels=tuple(sorted(get("prometheusLabels").items())),
        idle_threshold=float(get("idleThreshold")),
        idle_for=get("idleFor"),
        missing_metrics_for=get("missingMetricsFor"),
        queue_near_capability_ratio=float(get("queueNearCapabilityRatio")),
        queue_near_capability_for=get("queueNearCapabilityFor"),
        grafana_namespace=grafana.get("namespace", schema_default("monitoring.grafana.namespace")),
        grafana_label=grafana.get("label", schema_default("monitoring.grafana.label")),
        grafana_label_value=grafana.get("labelValue", schema_default("monitoring.grafana.labelValue")),
        dcgm_exporter=ExporterImage(
            dcgm.get("image", schema_default("monitoring.dcgmExporter.image")),
            dcgm.get("version", schema_default("monitoring.dcgmExporter.version")),
            dcgm.get("imageDigest"),
        ),
        amd_exporter=ExporterImage(
            amd.get("image", schema_default("monitoring.amdExporter.image")),
            amd.get("version", schema_default("monitoring.amdExporter.version")),
            amd.get("imageDigest"),
        ),
        textfile_directory=get("textfileDirectory"),
    )


def _first_by_name(items: tuple[Any, ...]) -> dict[str, Any]:
    """``{name: item}`` keeping the first item of each name."""
    out: dict[str, Any] = {}
    for item in items:
        out.setdefault(item.name, item)
    return out


@dataclass(frozen=True)
class Spec:
    """The whole cluster spec, defaults applied."""

    name: str
    description: str
    platforms: tuple[Platform, ...]
    labels: tuple[tuple[str, str], ...]
    node_pools: tuple[NodePool, ...]
    device_plugins: DevicePlugins
    priority_classes: tuple[PriorityClass, ...]
    volcano: Volcano
    queues: tuple[Queue, ...]
    flink_clusters: tuple[FlinkCluster, ...]
    yarn: Yarn | None
    discovery: Discovery
    node_image: NodeImage | None
    namespaces: tuple[NamespaceSettings, ...] = ()
    kubernetes_version: str = "1.34"
    """Kubernetes minor release the cluster runs (``1.<minor>``)."""
    monitoring: Monitoring = field(default_factory=lambda: _monitoring({}))
    """GPU usage monitoring (off unless ``monitoring.enabled``)."""

    scheduler: Scheduler = "volcano"
    """The batch scheduler of the Kubernetes cluster: Volcano or Apache YuniKorn."""
    yunikorn: YuniKorn = field(default_factory=YuniKorn)

    @property
    def uses_yunikorn(self) -> bool:
        """True when Apache YuniKorn schedules this Kubernetes cluster's Flink pods (and enforces its
        queues) instead of Volcano."""
        return self.scheduler == "yunikorn" and self.has_platform("kubernetes")

    @property
    def pod_scheduler_name(self) -> str:
        """The ``schedulerName`` of every Flink pod: ``yunikorn`` (the only name YuniKorn's shim
        takes) or the configured Volcano scheduler name."""
        return YUNIKORN_SCHEDULER_NAME if self.scheduler == "yunikorn" else self.volcano.scheduler_name

    @property
    def kubernetes_version_tuple(self) -> tuple[int, int]:
        """(major, minor) of the targeted Kubernetes release."""
        major, minor = self.kubernetes_version.split(".")[:2]
        return int(major), int(minor)

    def has_platform(self, platform: Platform) -> bool:
        """True when the cluster needs artifacts for ``platform``."""
        return platform in self.platforms

    @cached_property
    def derived(self) -> dict[Hashable, tuple[object, Any]]:
        """What `derive` remembers: ``(name, id(owner)) → (owner, value)``. Empty at first."""
        return {}

    def derive(self, name: Hashable, owner: object, make: Callable[[], _T]) -> _T:
        """``make()``, computed once per this Spec, ``name`` and ``owner`` (an object of this spec,
        such as a Flink cluster, kept with the value so its id stays its own) and shared by every
        caller until `accelplane.builders.build_all` drops it at the end of a build, so callers
        must not modify it. For what several builders and checks derive from the same cluster (its
        pod templates, its generated Flink keys)."""
        key = (name, id(owner))
        found = self.derived.get(key)
        if found is None:
            found = self.derived[key] = (owner, make())
        value: _T = found[1]
        return value

    # Name indexes, built once per Spec (lookups run once per queue or cluster: a linear scan each
    # made validation quadratic, issue 15 §10). The first entry wins, as a scan would return it.
    @cached_property
    def _pools_by_name(self) -> dict[str, NodePool]:
        return _first_by_name(self.node_pools)

    @cached_property
    def _queues_by_name(self) -> dict[str, Queue]:
        return _first_by_name(self.queues)

    @cached_property
    def _priority_classes_by_name(self) -> dict[str, PriorityClass]:
        return _first_by_name(self.priority_classes)

    def namespace_settings(self, name: str) -> NamespaceSettings | None:
        """``namespaces.<name>`` or None."""
        return next((n for n in self.namespaces if n.name == name), None)

    def pool(self, name: str) -> NodePool | None:
        """Node pool by name (O(1))."""
        return self._pools_by_name.get(name)

    def queue(self, name: str) -> Queue | None:
        """Queue by name (O(1))."""
        return self._queues_by_name.get(name)

    def priority_class(self, name: str) -> PriorityClass | None:
        """PriorityClass by name (O(1))."""
        return self._priority_classes_by_name.get(name)

    def common_labels(self) -> dict[str, str]:
        """Labels every generated Kubernetes object carries."""
        labels = dict(self.labels)
        labels["app.kubernetes.io/managed-by"] = "accelplane"
        labels["accelplane.io/cluster"] = self.name
        return labels


class _Converter:
    """Collects quantity problems while converting the document."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def quantity(self, raw: Any, path: PathTuple) -> Quantity | None:
        if raw is None:
            return None
        try:
            return Quantity.parse(raw)
        except QuantityError as exc:
            self.problems.append(Problem(path, str(exc), QUANTITY_INVALID))
            return None

    def req_quantity(self, raw: Any, path: PathTuple) -> Quantity:
        """The quantity ``raw`` (defaults are filled in by the caller, from the schema); zero stands in
        for one that does not parse, which is a problem already (the model is then discarded)."""
        q = self.quantity(raw, path)
        return q if q is not None else Quantity.parse(0)

    def resources(self, raw: dict[str, Any] | None, path: PathTuple) -> ResourceList:
        items = []
        for name in sorted(raw or {}):
            q = self.quantity(raw[name], (*path, name))  # type: ignore[index]
            if q is not None:
                items.append((name, q))
        return ResourceList(tuple(items))


def _sorted_named(items: list[dict[str, Any]], prefix: PathTuple) -> list[tuple[PathTuple, dict[str, Any]]]:
    """Named entries with their merged-document paths, sorted by name (list order never matters)."""
    indexed = [((*prefix, i), item) for i, item in enumerate(items)]
    return sorted(indexed, key=lambda e: str(e[1]["name"]))


def _pool(b: _Converter, path: PathTuple, d: dict[str, Any]) -> NodePool:
    gpu = None
    if "gpu" in d:
        g = d["gpu"]
        mig = g.get("mig", {})
        sharing = g.get("sharing", {})
        gpu = GpuSpec(
            vendor=g["vendor"],
            per_node=g["perNode"],
            model=g.get("model"),
            allocation=g.get("allocation", schema_default("$defs.gpu.allocation")),
            memory=b.quantity(g.get("memory"), (*path, "gpu", "memory")),
            mig=MigConfig(mig.get("strategy", schema_default("$defs.gpu.mig.strategy")), tuple(sorted(mig.get("devices", {}).items()))),
            sharing=SharingConfig(
                strategy=sharing.get("strategy", schema_default("$defs.gpu.sharing.strategy")),
                replicas=sharing.get("replicas", schema_default("$defs.gpu.sharing.replicas")),
                rename_by_default=sharing.get("renameByDefault"),
                fail_requests_greater_than_one=sharing.get(
                    "failRequestsGreaterThanOne", schema_default("$defs.gpu.sharing.failRequestsGreaterThanOne")
                ),
            ),
            allowed_devices=tuple(sorted(g.get("allowedDevices", []))),
        )
    taints = tuple(
        sorted(
            (
                Taint(t["key"], t.get("value", ""), t["effect"], (*path, "taints", i))
                for i, t in enumerate(d.get("taints", []))
            ),
            key=lambda t: (t.key, t.value, t.effect),
        )
    )
    return NodePool(
        name=d["name"],
        path=path,
        platform=d.get("platform", schema_default("$defs.nodePool.platform")),
        nodes=d["nodes"],
        cpu=b.quantity(d.get("cpu"), (*path, "cpu")),
        memory=b.quantity(d.get("memory"), (*path, "memory")),
        hosts=tuple(sorted(d.get("hosts", []))),
        gpu=gpu,
        labels=tuple(sorted(d.get("labels", {}).items())),
        taints=taints,
        description=d.get("description", ""),
    )


def _flink_cluster(
    b: _Converter,
    path: PathTuple,
    c: dict[str, Any],
    inherited: frozenset[tuple[str, ...]],
    discovery: Discovery,
    node_image: NodeImage | None,
) -> FlinkCluster:
    version = str(c.get("version", schema_default("$defs.flinkSettings.version")))
    jm = c.get("jobManager", {})
    tm = c.get("taskManager", {})
    g = tm.get("gpu")
    gpu = (
        GpuRequest(g.get("amount", schema_default("$defs.gpuRequest.amount")), g.get("pool"), g.get("vendor"), g.get("model"), g.get("resource"))
        if g is not None
        else None
    )
    job = c.get("job")
    disc = c.get("discovery", {})
    major, minor = version.split(".")[:2]
    config, renamed = resolve_config((int(major), int(minor)), c.get("config", {}))
    return FlinkCluster(
        name=c["name"],
        path=path,
        version=version,
        image=c.get("image", node_image.image if node_image is not None else None),
        config_format=c.get("configFormat", schema_default("$defs.flinkSettings.configFormat")),
        target=FlinkTarget(c.get("target", schema_default("$defs.flinkSettings.target"))),
        mode=c.get("mode", schema_default("$defs.flinkSettings.mode")),
        namespace=c.get("namespace", schema_default("$defs.flinkSettings.namespace")),
        queue=c.get("queue"),
        priority_class=c.get("priorityClass"),
        service_account=c.get("serviceAccount", schema_default("$defs.flinkSettings.serviceAccount")),
        job_manager=ProcessResources(
            b.req_quantity(jm.get("cpu", schema_default("$defs.processResources.cpu")), (*path, "jobManager", "cpu")),
            b.req_quantity(
                jm.get("memory", schema_default("$defs.processResources.memory")), (*path, "jobManager", "memory")
            ),
        ),
        task_manager=TaskManager(
            replicas=tm.get("replicas", schema_default("$defs.taskManager.replicas")),
            slots=tm.get("slots", schema_default("$defs.taskManager.slots")),
            cpu=b.req_quantity(tm.get("cpu", schema_default("$defs.taskManager.cpu")), (*path, "taskManager", "cpu")),
            memory=b.req_quantity(
                tm.get("memory", schema_default("$defs.taskManager.memory")), (*path, "taskManager", "memory")
            ),
            gpu=gpu,
        ),
        coordination=disc.get("coordination", schema_default("$defs.discoverySettings.coordination")),
        coordination_file=disc.get("coordinationFile", discovery.coordination_file),
        config=tuple(config),
        config_renamed=tuple(renamed),
        job=(
            Job(
                job.get("jarURI"),
                job.get("entryClass"),
                tuple(job.get("args", [])),
                job.get("parallelism"),
                job.get("upgradeMode"),
            )
            if job is not None
            else None
        ),
        from_defaults=inherited,
        slot_groups=tuple(
            SlotGroup(
                name=g["name"],
                path=p,
                slots=g["slots"],
                cpu=b.req_quantity(g["cpu"], (*p, "cpu")),
                task_heap=b.req_quantity(g["taskHeap"], (*p, "taskHeap")),
                managed_memory=b.req_quantity(
                    g.get("managedMemory", schema_default("$defs.slotGroup.managedMemory")), (*p, "managedMemory")
                ),
                gpu=Decimal(str(g.get("gpu", schema_default("$defs.slotGroup.gpu")))),
                gpu_model=g.get("gpuModel"),
            )
            for p, g in _sorted_named(c.get("slotGroups", []), (*path, "slotGroups"))
        ),
    )


def build_model(
    data: dict[str, Any], inherited: Mapping[str, frozenset[tuple[str, ...]]] | None = None
) -> tuple[Spec | None, list[Problem]]:
    """Build the typed model from a schema-valid merged document (``flink.defaults`` already merged
    into each Flink cluster by the loader; ``inherited`` is `LoadedSpec.inherited_defaults`).

    Returns the model and the problems found while converting (unparseable quantities); the model is
    None when there are problems.
    """
    b = _Converter()
    cluster = data["cluster"]
    dp = data.get("devicePlugins", {})
    nv = dp.get("nvidia", {})
    amd = dp.get("amd", {})
    vol = data.get("volcano", {})
    yk = data.get("yunikorn", {})
    disc = data.get("discovery", {})
    discovery = Discovery(
        install_dir=disc.get("installDir", schema_default("discovery.installDir")),
        coordination_file=disc.get("coordinationFile", schema_default("discovery.coordinationFile")),
        file_mode=disc.get("fileMode", schema_default("discovery.fileMode")),
        user=disc.get("user", schema_default("discovery.user")),
        group=disc.get("group", schema_default("discovery.group")),
    )
    flink = data.get("flink", {})
    yarn = None
    if "yarn" in data or "yarn" in cluster["platforms"]:
        y = data.get("yarn", {})
        docker = y.get("docker", {})
        yarn = Yarn(
            per_model_types=y.get("perModelTypes", schema_default("yarn.perModelTypes")),
            node_labels=y.get("nodeLabels", schema_default("yarn.nodeLabels")),
            resource_types=tuple(
                YarnResourceType(
                    r["name"], p, r.get("minimumAllocation"), r.get("maximumAllocation"), r.get("units")
                )
                for p, r in _sorted_named(y.get("resourceTypes", []), ("yarn", "resourceTypes"))
            ),
            cgroups=y.get("cgroups", schema_default("yarn.cgroups")),
            cgroups_mount_path=y.get("cgroupsMountPath", schema_default("yarn.cgroupsMountPath")),
            cgroups_hierarchy=y.get("cgroupsHierarchy", schema_default("yarn.cgroupsHierarchy")),
            nvidia_smi_path=y.get("nvidiaSmiPath", schema_default("yarn.nvidiaSmiPath")),
            docker_enabled=docker.get("enabled", schema_default("yarn.docker.enabled")),
            docker_runtime=docker.get("runtime", schema_default("yarn.docker.runtime")),
            docker_allowed_devices=tuple(sorted(docker.get("allowedDevices", []))),
            docker_mounts=tuple(sorted({(m["path"], m.get("mode", schema_default("$defs.dockerMount.mode"))) for m in docker.get("mounts", [])})),
            maximum_allocation_memory=b.quantity(
                y.get("maximumAllocation", {}).get("memory"), ("yarn", "maximumAllocation", "memory")
            ),
            maximum_allocation_vcores=y.get("maximumAllocation", {}).get("vcores"),
        )
    node_image = None
    if "nodeImage" in data:
        ni = data["nodeImage"]
        node_image = NodeImage(
            base_image=ni.get("baseImage", f"flink:{schema_default('$defs.flinkSettings.version')}-java17"),
            nvidia_ml_py_version=ni.get("nvidiaMlPyVersion", schema_default("nodeImage.nvidiaMlPyVersion")),
            image=ni.get("image"),
        )
    spec = Spec(
        name=cluster["name"],
        description=cluster.get("description", ""),
        platforms=tuple(sorted(cluster["platforms"])),
        labels=tuple(sorted(cluster.get("labels", {}).items())),
        node_pools=tuple(_pool(b, p, d) for p, d in _sorted_named(data.get("nodePools", []), ("nodePools",))),
        device_plugins=DevicePlugins(
            namespace=dp.get("namespace", schema_default("devicePlugins.namespace")),
            nvidia=NvidiaPlugin(
                enabled=nv.get("enabled"),
                image=nv.get("image", schema_default("devicePlugins.nvidia.image")),
                version=nv.get("version", schema_default("devicePlugins.nvidia.version")),
                gpu_feature_discovery=nv.get("gpuFeatureDiscovery", schema_default("devicePlugins.nvidia.gpuFeatureDiscovery")),
                device_list_strategy=nv.get("deviceListStrategy", schema_default("devicePlugins.nvidia.deviceListStrategy")),
                mig_manager_namespace=nv.get("migManager", {}).get(
                    "namespace", schema_default("devicePlugins.nvidia.migManager.namespace")
                ),
                image_digest=nv.get("imageDigest"),
            ),
            amd=AmdPlugin(
                enabled=amd.get("enabled"),
                image=amd.get("image", schema_default("devicePlugins.amd.image")),
                version=amd.get("version", schema_default("devicePlugins.amd.version")),
                labeller=amd.get("labeller", schema_default("devicePlugins.amd.labeller")),
                image_digest=amd.get("imageDigest"),
                labeller_image_digest=amd.get("labellerImageDigest"),
            ),
        ),
        priority_classes=tuple(
            PriorityClass(
                name=d["name"],
                path=p,
                value=d["value"],
                global_default=d.get("globalDefault", schema_default("$defs.priorityClass.globalDefault")),
                preemption_policy=d.get("preemptionPolicy"),
                description=d.get("description"),
            )
            for p, d in _sorted_named(data.get("priorityClasses", []), ("priorityClasses",))
        ),
        volcano=Volcano(
            namespace=vol.get("namespace", schema_default("volcano.namespace")),
            scheduler_name=vol.get("schedulerName", schema_default("volcano.schedulerName")),
            manage_scheduler_config=vol.get("manageSchedulerConfig", schema_default("volcano.manageSchedulerConfig")),
            version=str(vol.get("version", schema_default("volcano.version"))),
            configured="volcano" in data,
        ),
        scheduler=data.get("scheduler", schema_default("scheduler")),
        yunikorn=YuniKorn(
            namespace=yk.get("namespace", schema_default("yunikorn.namespace")),
            manage_queue_config=yk.get("manageQueueConfig", schema_default("yunikorn.manageQueueConfig")),
            placeholder_timeout_seconds=yk.get(
                "placeholderTimeoutSeconds", schema_default("yunikorn.placeholderTimeoutSeconds")
            ),
            gang_scheduling_style=yk.get("gangSchedulingStyle", schema_default("yunikorn.gangSchedulingStyle")),
            configured="yunikorn" in data,
        ),
        queues=tuple(
            Queue(
                name=d["name"],
                path=p,
                parent=d.get("parent"),
                weight=d.get("weight", schema_default("$defs.queue.weight")),
                priority=d.get("priority"),
                reclaimable=d.get("reclaimable"),
                capability=b.resources(d.get("capability"), (*p, "capability")),
                deserved=b.resources(d.get("deserved"), (*p, "deserved")),
                guarantee=b.resources(d.get("guarantee"), (*p, "guarantee")),
                description=d.get("description", ""),
                gpu_models=tuple(
                    QueueGpuModel(m, (*p, "gpuModels", m), g.get("deserved"), g.get("capability"))
                    for m, g in sorted(d.get("gpuModels", {}).items())
                ),
            )
            for p, d in _sorted_named(data.get("queues", []), ("queues",))
        ),
        flink_clusters=tuple(
            _flink_cluster(b, p, d, (inherited or {}).get(d["name"], frozenset()), discovery, node_image)
            for p, d in _sorted_named(flink.get("clusters", []), ("flink", "clusters"))
        ),
        yarn=yarn,
        discovery=discovery,
        node_image=node_image,
        kubernetes_version=str(data.get("kubernetes", {}).get("version", schema_default("kubernetes.version"))),
        namespaces=tuple(
            NamespaceSettings(
                name, ("namespaces", name), settings.get("managed", schema_default("$defs.namespaceSettings.managed"))
            )
            for name, settings in sorted(data.get("namespaces", {}).items())
        ),
        monitoring=_monitoring(data.get("monitoring", {})),
    )
    if b.problems:
        return None, b.problems
    return spec, []


def total_gpus(values: ResourceList) -> Decimal:
    """Sum of every GPU-counting resource in a resource list."""
    return sum((q.value for n, q in values.items if is_gpu_resource(n)), Decimal(0))
