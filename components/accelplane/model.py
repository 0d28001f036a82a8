"""The typed spec model: the only input builders see.

Frozen dataclasses for every part of a spec with every default applied, quantities parsed, and the
facts about a cluster asked one way (`FlinkCluster.platform`, `FlinkCluster.uses_gpus`, …).
`accelplane.model_convert.build_model` makes one from a schema-valid merged document. Each named
entity keeps its path in the merged document so checks can report ``file: path: message``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from accelplane.errors import PathTuple
from accelplane.memo import DerivationMemo
from accelplane.quantity import Quantity

Vendor = Literal["nvidia", "amd"]
Allocation = Literal["devicePlugin", "dra"]
Platform = Literal["kubernetes", "yarn", "standalone"]
Scheduler = Literal["volcano", "yunikorn", "kueue"]
GangSchedulingStyle = Literal["Hard", "Soft"]

YUNIKORN_SCHEDULER_NAME = "yunikorn"
"""The only ``schedulerName`` YuniKorn's Kubernetes shim takes a pod for (apache/yunikorn-k8shim
``constants.SchedulerName``; ``utils.GetApplicationIDFromPod`` ignores pods of any other name)."""


DEFAULT_SCHEDULER_NAME = "default-scheduler"
"""kube-scheduler's name: Kueue gates pods until admitted and leaves placing them to it."""


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


def major_minor(version: str) -> tuple[int, int]:
    """(major, minor) of a release version string (``"1.20"``, ``"1.20.1"`` → ``(1, 20)``): how
    every version rule compares the Flink, Volcano, Kueue and Kubernetes releases a spec names."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


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
        return major_minor(self.version)


@dataclass(frozen=True)
class YuniKorn:
    """Apache YuniKorn settings (``scheduler: yunikorn``)."""

    namespace: str = "yunikorn"
    manage_queue_config: bool = True
    placeholder_timeout_seconds: int = 900
    gang_scheduling_style: GangSchedulingStyle = "Soft"
    configured: bool = False
    """True when the spec (or a base) writes a ``yunikorn`` block (a warning on a Volcano cluster)."""


@dataclass(frozen=True)
class Kueue:
    """Kueue settings (``scheduler: kueue``): Kueue admits the Flink pods by quota and kube-scheduler
    places them (docs/kueue.md)."""

    version: str = "0.19"
    expected_queueing_seconds: int = 600
    """How long a Flink pod may wait for admission: Flink's slot request and TaskManager registration
    timeouts are set above it."""
    configured: bool = False
    """True when the spec (or a base) writes a ``kueue`` block (a warning on another scheduler)."""

    @property
    def version_tuple(self) -> tuple[int, int]:
        """(major, minor) of the installed Kueue release."""
        return major_minor(self.version)


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
class MigrateFrom:
    """The cluster a moved or renamed cluster replaces, and the savepoint it starts from."""

    name: str
    namespace: str | None
    savepoint: str


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
    migrate_from: MigrateFrom | None = None
    """``migrateFrom``: the cluster this one replaces (docs/diff.md, "Moving a Flink cluster")."""
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
        return major_minor(self.version)

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
    local_dirs: tuple[str, ...] = ("/var/lib/hadoop-yarn/nm-local-dir",)
    """``localDirs``: the NodeManagers' ``yarn.nodemanager.local-dirs``, in spec order."""
    log_dirs: tuple[str, ...] = ("/var/log/hadoop-yarn/containers",)
    """``logDirs``: the NodeManagers' ``yarn.nodemanager.log-dirs``, in spec order."""
    docker_mount_list: tuple[tuple[str, str], ...] = ()
    """``docker.mounts`` as written, (path, mode) in spec order (index = the finding path's)."""
    docker_device_list: tuple[str, ...] = ()
    """``docker.allowedDevices`` as written, in spec order."""


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
    monitoring: Monitoring = field(kw_only=True)
    """GPU usage monitoring (off unless ``monitoring.enabled``)."""

    scheduler: Scheduler = "volcano"
    """The batch scheduler of the Kubernetes cluster: Volcano or Apache YuniKorn."""
    yunikorn: YuniKorn = field(default_factory=YuniKorn)
    kueue: Kueue = field(default_factory=Kueue)

    @property
    def uses_kueue(self) -> bool:
        """True when Kueue admits this Kubernetes cluster's Flink pods (kube-scheduler places them)."""
        return self.scheduler == "kueue" and self.has_platform("kubernetes")

    @property
    def uses_volcano(self) -> bool:
        """True when Volcano schedules this Kubernetes cluster's Flink pods (Queues, PodGroups)."""
        return self.scheduler == "volcano" and self.has_platform("kubernetes")

    @property
    def uses_yunikorn(self) -> bool:
        """True when Apache YuniKorn schedules this Kubernetes cluster's Flink pods (and enforces its
        queues) instead of Volcano."""
        return self.scheduler == "yunikorn" and self.has_platform("kubernetes")

    @property
    def pod_scheduler_name(self) -> str:
        """The ``schedulerName`` of every Flink pod: ``yunikorn`` (the only name YuniKorn's shim
        takes), ``default-scheduler`` under Kueue, or the configured Volcano scheduler name."""
        if self.scheduler == "kueue":
            return DEFAULT_SCHEDULER_NAME
        return YUNIKORN_SCHEDULER_NAME if self.scheduler == "yunikorn" else self.volcano.scheduler_name

    @property
    def kubernetes_version_tuple(self) -> tuple[int, int]:
        """(major, minor) of the targeted Kubernetes release."""
        return major_minor(self.kubernetes_version)

    def has_platform(self, platform: Platform) -> bool:
        """True when the cluster needs artifacts for ``platform``."""
        return platform in self.platforms

    @cached_property
    def memo(self) -> DerivationMemo:
        """Values derived from this spec that several checks and builders share (a cluster's pod
        templates, its generated Flink keys), each computed once; empty at first."""
        return DerivationMemo()

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


def total_gpus(values: ResourceList) -> Decimal:
    """Sum of every GPU-counting resource in a resource list."""
    return sum((q.value for n, q in values.items if is_gpu_resource(n)), Decimal(0))
