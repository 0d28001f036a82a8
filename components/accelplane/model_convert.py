"""From a schema-valid merged document to the typed model (`build_model`).

Every default comes from the schema (`schema_default`), so builders never guess; quantities are
parsed exactly, and one that does not parse is a problem (AP1101) rather than a traceback. Named
lists are sorted by name (list order never matters to the output) and each entity keeps its path
in the merged document.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, declare
from accelplane.flink_options import resolve_config
from accelplane.model import (
    AmdPlugin,
    DevicePlugins,
    Discovery,
    ExporterImage,
    FlinkCluster,
    FlinkTarget,
    GpuRequest,
    GpuSpec,
    Job,
    Kueue,
    MigConfig,
    MigrateFrom,
    Monitoring,
    NamespaceSettings,
    NodeImage,
    NodePool,
    NvidiaPlugin,
    PriorityClass,
    ProcessResources,
    Queue,
    QueueGpuModel,
    ResourceList,
    SharingConfig,
    SlotGroup,
    Spec,
    Taint,
    TaskManager,
    Volcano,
    Yarn,
    YarnResourceType,
    YuniKorn,
    major_minor,
)
from accelplane.quantity import Quantity, QuantityError
from accelplane.schema_document import schema_default

QUANTITY_INVALID = declare(
    'AP1101', ERROR, 'a quantity that does not parse',
    fix='write a Kubernetes quantity, e.g. 4Gi or 500m',
)


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
    config, renamed = resolve_config(major_minor(version), c.get("config", {}))
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
        migrate_from=(
            MigrateFrom(c["migrateFrom"]["name"], c["migrateFrom"].get("namespace"), c["migrateFrom"]["savepoint"])
            if "migrateFrom" in c
            else None
        ),
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
    kq = data.get("kueue", {})
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
            local_dirs=tuple(y.get("localDirs", schema_default("yarn.localDirs"))),
            log_dirs=tuple(y.get("logDirs", schema_default("yarn.logDirs"))),
            docker_mount_list=tuple(
                (m["path"], m.get("mode", schema_default("$defs.dockerMount.mode"))) for m in docker.get("mounts", [])
            ),
            docker_device_list=tuple(docker.get("allowedDevices", [])),
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
        kueue=Kueue(
            version=str(kq.get("version", schema_default("kueue.version"))),
            expected_queueing_seconds=kq.get(
                "expectedQueueingSeconds", schema_default("kueue.expectedQueueingSeconds")
            ),
            configured="kueue" in data,
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

