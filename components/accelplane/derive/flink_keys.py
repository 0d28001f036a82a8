"""What a Flink cluster's configuration holds, derived once for checks, builders and reports.

Everything Flink-specific that more than one artifact needs is derived here once: the config file
format chosen by version, the key names that changed between Flink releases, memory and CPU in
Flink's own units, the external-resource (GPU) keys and the keys each target manages, which the
user may not set again in ``config``. The file itself is written by
`accelplane.builders.flink_config`; the value syntax of both formats is `accelplane.derive.flink_values`.

"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from accelplane.derive.cluster_facts import GPU_RESOURCE
from accelplane.derive.discovery_paths import flink_pid_dir
from accelplane.derive.dra import cluster_device_class
from accelplane.derive.flink_java import JAVA_OPTS_KEY, USER_JAVA_OPTS_KEYS, java_options
from accelplane.derive.flink_values import ConfigValue
from accelplane.derive.gpu_resources import (
    kubernetes_gpu_resource,
    yarn_gpu_type,
)
from accelplane.derive.images import flink_image
from accelplane.derive.monitoring import exports_owner_metrics, textfile_path
from accelplane.derive.slot_groups import gpu_resources, spans_models
from accelplane.derive.yarn_docker import (
    ENV_PREFIX,
    IMAGE_ENV,
    MOUNTS_ENV,
    RUNTIME_TYPE_ENV,
    container_mounts,
    mounts_value,
    runs_in_docker,
)
from accelplane.derive.yarn_labels import taskmanager_label
from accelplane.flink_options import option_table
from accelplane.model import FlinkCluster, FlinkTarget, Spec
from accelplane.quantity import Quantity

ConfigFormat = Literal["config.yaml", "flink-conf.yaml"]

GPU_PREFIX = f"external-resource.{GPU_RESOURCE}."
GPU_DRIVER_FACTORY = "org.apache.flink.externalresource.gpu.GPUDriverFactory"
COORDINATION_FLAG = "--enable-coordination-mode"
COORDINATION_FILE_FLAG = "--coordination-file"
FILE_MODE_FLAG = "--file-mode"
CHECK_FREE_FLAG = "--check-free"
ISOLATED_DEVICES_FLAG = "--isolated-devices"
WRONG_COORDINATION_FLAG = "--enable-coordination"
MIB = 2**20

# Directory where the native-Kubernetes client finds the pod templates (the ConfigMap
# ``accelplane-flink-<cluster>`` mounted there, or DIR/flink/<cluster>/ copied there).
POD_TEMPLATE_DIR = "/opt/flink/accelplane"
JOBMANAGER_POD_TEMPLATE = "jobmanager-pod-template.yaml"
TASKMANAGER_POD_TEMPLATE = "taskmanager-pod-template.yaml"

# Keys the Flink Kubernetes Operator refuses in spec.flinkConfiguration (DefaultValidator).
OPERATOR_FORBIDDEN_KEYS = frozenset(
    {"kubernetes.namespace", "kubernetes.cluster-id", "high-availability.cluster-id"}
)

# Other spellings Flink 1.20 reads for a key we generate (deprecated or fallback keys of the same
# ConfigOption): a user key with one of these names would silently compete with ours.
KEY_ALIASES: Mapping[str, tuple[str, ...]] = {
    "resourcemanager.taskmanager-registration.timeout": ("taskmanager.registration.timeout",),
    "kubernetes.container.image.ref": ("kubernetes.container.image",),
    "kubernetes.jobmanager.cpu.amount": ("kubernetes.jobmanager.cpu",),
    # taskmanager.cpu.cores wins over the Kubernetes/YARN CPU keys when Flink sizes a TaskManager
    # (TaskExecutorProcessUtils.getCpuCoresWithFallback, used by Flink 1.20's
    # KubernetesWorkerResourceSpecFactory and YarnWorkerResourceSpecFactory): the containers would
    # request other CPUs than the PodGroup's minResources and the queue checks assume.
    "kubernetes.taskmanager.cpu.amount": ("kubernetes.taskmanager.cpu", "taskmanager.cpu.cores"),
    "kubernetes.taskmanager.cpu": ("taskmanager.cpu.cores",),
    "yarn.containers.vcores": ("taskmanager.cpu.cores",),
    "kubernetes.jobmanager.service-account": ("kubernetes.service-account",),
    "kubernetes.taskmanager.service-account": ("kubernetes.service-account",),
    "kubernetes.pod-template-file.jobmanager": (
        "kubernetes.pod-template-file",
        "kubernetes.pod-template-file.default",
    ),
    "kubernetes.pod-template-file.taskmanager": (
        "kubernetes.pod-template-file",
        "kubernetes.pod-template-file.default",
    ),
    "jobmanager.memory.process.size": ("jobmanager.heap.size", "jobmanager.heap.mb"),
    "taskmanager.memory.process.size": ("taskmanager.heap.size", "taskmanager.heap.mb"),
}


@dataclass(frozen=True)
class GeneratedKey:
    """A key accelplane writes, its value and the spec field it comes from (for error messages)."""

    key: str
    value: ConfigValue
    source: str


def config_format(cluster: FlinkCluster) -> ConfigFormat:
    """The config file Flink reads: explicit ``configFormat``, else by version
    (``config.yaml`` from 1.19 on, ``flink-conf.yaml`` up to 1.18)."""
    if cluster.config_format in ("config.yaml", "flink-conf.yaml"):
        return cluster.config_format  # type: ignore[return-value]
    return "config.yaml" if cluster.version_tuple >= (1, 19) else "flink-conf.yaml"


def format_problem(cluster: FlinkCluster) -> str | None:
    """Why the configured ``configFormat`` cannot work with the cluster's Flink version, or None."""
    version = cluster.version_tuple
    if cluster.config_format == "flink-conf.yaml" and version >= (2, 0):
        return (
            f"Flink {cluster.version} reads only config.yaml (flink-conf.yaml support was removed in 2.0); "
            "remove configFormat or set it to config.yaml (bin/migrate-config-file.sh converts an old file)"
        )
    if cluster.config_format == "config.yaml" and version <= (1, 18):
        return (
            f"Flink {cluster.version} reads only flink-conf.yaml (config.yaml exists from 1.19 on); "
            "remove configFormat or set it to flink-conf.yaml"
        )
    return None


def flink_memory(q: Quantity) -> str:
    """A byte quantity in Flink's MemorySize syntax, with the largest exact binary unit (``2g``,
    ``1600m``); Flink's units are binary (``m`` = MiB)."""
    n = int(q.value)
    for unit, size in (("t", 2**40), ("g", 2**30), ("m", 2**20), ("k", 2**10)):
        if n % size == 0 and n >= size:
            return f"{n // size}{unit}"
    return f"{n}b"


def whole_mebibytes(q: Quantity) -> bool:
    """True when ``q`` is a whole number of MiB (what Flink requests from Kubernetes and YARN)."""
    return q.value == q.value.to_integral_value() and int(q.value) % MIB == 0 and q.value > 0


def mebibytes(q: Quantity) -> int:
    """Memory in whole MiB as Flink requests it for the container (truncated, like Flink)."""
    return int(q.value) // MIB


JOBMANAGER_REPLICAS_KEY = "kubernetes.jobmanager.replicas"


def jobmanager_replicas(cluster: FlinkCluster) -> int:
    """JobManager pods of a Kubernetes cluster: ``config.kubernetes.jobmanager.replicas`` (standby
    JobManagers, which Flink allows only with high availability), else 1.

    Flink's JobManager Deployment gets exactly this many replicas
    (``KubernetesJobManagerParameters.getReplicas``), each requesting the JobManager's CPU and
    memory, so the PodGroup's ``minResources`` counts them all; the operator takes the number from
    ``jobManager.replicas`` (its ``FlinkConfigBuilder`` overwrites the config key with it). A value
    that is not a positive integer counts as 1 here (`accelplane.checks.flink` reports it).
    """
    if not cluster.on_kubernetes:
        return 1
    for key, value in cluster.config:
        if key == JOBMANAGER_REPLICAS_KEY and not isinstance(value, bool):
            try:
                replicas = int(str(value).strip())
            except ValueError:
                return 1
            return max(replicas, 1)
    return 1


MIN_SLOTS_KEY = "slotmanager.number-of-slots.min"
"""The minimum number of slots Flink's active resource manager keeps allocated (TaskManagers it
starts without a job), ``ResourceManagerOptions.MIN_SLOT_NUM``; in the option tables from Flink 1.19."""


def session_starts_taskmanagers(cluster: FlinkCluster) -> bool:
    """True when accelplane makes a session cluster start its TaskManagers at once: an active
    resource manager (native Kubernetes, the operator's native mode, YARN) starts none until a job
    asks for slots, unless `MIN_SLOTS_KEY` is set, which the cluster's version must have (its
    option table; a version without a table is not assumed to)."""
    if cluster.mode != "session" or cluster.target == "standalone":
        return False
    table = option_table(cluster.version_tuple)
    return table is not None and MIN_SLOTS_KEY in table.owner


def started_taskmanagers(cluster: FlinkCluster) -> int:
    """TaskManagers Flink starts with the cluster (what a gang must reserve): every replica for an
    application cluster (its job asks for them) and for a session cluster that sets `MIN_SLOTS_KEY`
    (`session_starts_taskmanagers`); none for an older session cluster, which starts them only when
    a job is submitted. Standalone TaskManagers are started by their hosts' scripts: every replica."""
    if cluster.mode == "session" and cluster.target != "standalone" and not session_starts_taskmanagers(cluster):
        return 0
    return cluster.task_manager.replicas


def _session_keys(cluster: FlinkCluster) -> list[GeneratedKey]:
    """`MIN_SLOTS_KEY` = replicas × slots for a session cluster whose version has it."""
    if not session_starts_taskmanagers(cluster):
        return []
    slots = cluster.task_manager.replicas * cluster.task_manager.slots
    return [GeneratedKey(MIN_SLOTS_KEY, slots, "taskManager.replicas × slots (session cluster)")]


def _versioned(cluster: FlinkCluster, new: str, old: str, since: tuple[int, int]) -> str:
    return new if cluster.version_tuple >= since else old


def image_key(cluster: FlinkCluster) -> str:
    """``kubernetes.container.image.ref`` (Flink ≥ 1.17) or ``kubernetes.container.image``."""
    return _versioned(cluster, "kubernetes.container.image.ref", "kubernetes.container.image", (1, 17))


def cpu_key(cluster: FlinkCluster, role: Literal["jobmanager", "taskmanager"]) -> str:
    """``kubernetes.<role>.cpu.amount`` (Flink ≥ 1.17) or ``kubernetes.<role>.cpu``."""
    return _versioned(cluster, f"kubernetes.{role}.cpu.amount", f"kubernetes.{role}.cpu", (1, 17))


def pod_template_path(name: str) -> str:
    """Absolute path the native-Kubernetes client reads a pod template from."""
    return f"{POD_TEMPLATE_DIR}/{name}"


OWNER_LABEL_FLAG = "--owner-label"
METRICS_FILE_FLAG = "--metrics-file"


def discovery_args(spec: Spec, cluster: FlinkCluster) -> str | None:
    """``external-resource.gpu.param.discovery-script.args``: the coordination flags (coordination
    file and the mode a new one gets, ``discovery.fileMode``), or None without coordination.

    Flink splits the args on whitespace with no quoting; the coordination file path is restricted
    by the schema to characters without whitespace.
    """
    if not cluster.coordination:
        return None
    args = (
        f"{COORDINATION_FLAG} {COORDINATION_FILE_FLAG} {cluster.coordination_file} "
        f"{FILE_MODE_FLAG} {spec.discovery.file_mode}"
    )
    if devices_isolated_per_container(spec, cluster):
        args += f" {ISOLATED_DEVICES_FLAG}"
    if exports_owner_metrics(spec, cluster):
        # which TaskManager holds which GPU, for node-exporter's textfile collector (docs/monitoring.md)
        args += f" {OWNER_LABEL_FLAG} {cluster.name} {METRICS_FILE_FLAG} {textfile_path(spec)}"
    return args


def devices_isolated_per_container(spec: Spec, cluster: FlinkCluster) -> bool:
    """True when each TaskManager runs in its own container (own PID namespace) whose visible GPUs
    were allocated to it exclusively: Kubernetes (device plugin) and YARN with the Docker runtime
    (GPU plugin + ``nvidia-docker-v2``). The discovery script then reclaims coordination records
    that another, gone, container left for a GPU it can see (``--isolated-devices``); without it
    such records could only be cleared by a reboot, since a PID from another namespace can't be
    checked."""
    if cluster.platform == "kubernetes":
        return True
    return cluster.target == "yarn" and spec.yarn is not None and spec.yarn.docker_enabled


MODEL_FLAG = "--model"


def model_argument(model: str) -> str:
    """A GPU model as one ``--model`` word of the discovery args (Flink splits args on whitespace;
    the script compares models ignoring spaces and ``-``)."""
    return "-".join(model.split())


def _model_gpu_keys(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    """Keys of a standalone cluster whose hosts have several GPU models: one external resource per
    model (``gpu-<model>``), each with its own discovery (``--model``). ``external-resources`` is
    NOT in the file: each host's start script names the models it has on the command line
    (``-Dexternal-resources=…``), which is also what makes two names on one host work (the stock
    ``bin/taskmanager.sh`` re-passes a list from the file as one quoted name)."""
    keys = []
    args = discovery_args(spec, cluster)
    for r in gpu_resources(spec, cluster):
        prefix = f"external-resource.{r.name}."
        assert r.model is not None
        model_args = f"{MODEL_FLAG} {model_argument(r.model)}" + (f" {args}" if args else "")
        keys += [
            GeneratedKey(f"{prefix}amount", r.amount, "taskManager.gpu.amount"),
            GeneratedKey(f"{prefix}driver-factory.class", GPU_DRIVER_FACTORY, "taskManager.gpu"),
            GeneratedKey(f"{prefix}param.discovery-script.path", spec.discovery.script_path, "discovery.installDir"),
            GeneratedKey(f"{prefix}param.discovery-script.args", model_args, "discovery.coordination"),
        ]
    return keys


def _gpu_keys(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    amount = cluster.gpus_per_task_manager
    if amount == 0:
        return []
    if spans_models(spec, cluster):
        return _model_gpu_keys(spec, cluster)
    keys = [
        GeneratedKey("external-resources", (GPU_RESOURCE,), "taskManager.gpu"),
        GeneratedKey(f"{GPU_PREFIX}amount", amount, "taskManager.gpu.amount"),
        GeneratedKey(f"{GPU_PREFIX}driver-factory.class", GPU_DRIVER_FACTORY, "taskManager.gpu"),
        GeneratedKey(
            f"{GPU_PREFIX}param.discovery-script.path", spec.discovery.script_path, "discovery.installDir"
        ),
    ]
    args = discovery_args(spec, cluster)
    if args is not None:
        keys.append(GeneratedKey(f"{GPU_PREFIX}param.discovery-script.args", args, "discovery.coordination"))
    if cluster.on_kubernetes and cluster_device_class(spec, cluster) is not None:
        # DRA: the TaskManager pod template claims the GPUs (ResourceClaimTemplate); asking Flink
        # for an extended resource too would make the pod wait for a device plugin that the DRA
        # pool does not run. The runtime exposes only the claimed devices, so discovery still
        # sees exactly this TaskManager's GPUs.
        pass
    elif cluster.on_kubernetes:
        resource = kubernetes_gpu_resource(spec, cluster)
        assert resource is not None
        keys.append(GeneratedKey(f"{GPU_PREFIX}kubernetes.config-key", resource, "taskManager.gpu"))
    elif cluster.target == "yarn":
        yarn_type = yarn_gpu_type(spec, cluster)
        assert yarn_type is not None
        keys.append(GeneratedKey(f"{GPU_PREFIX}yarn.config-key", yarn_type, "taskManager.gpu"))
        keys.append(
            GeneratedKey(YARN_START_COMMAND_TEMPLATE, yarn_start_command_template(spec, cluster), "taskManager.gpu")
        )
    return keys


YARN_START_COMMAND_TEMPLATE = "yarn.container-start-command-template"
YARN_TASKMANAGER_CLASS = "org.apache.flink.yarn.YarnTaskExecutorRunner"
FLINK_YARN_START_COMMAND = "%java% %jvmmem% %jvmopts% %logging% %class% %args% %redirects%"
"""Flink's default of ``yarn.container-start-command-template`` (``YarnConfigOptions``)."""
_SAFE_WORD = re.compile(r"[A-Za-z0-9_./-]+")


def yarn_start_command_template(spec: Spec, cluster: FlinkCluster) -> str:
    """``yarn.container-start-command-template`` of a GPU cluster on YARN: Flink's default command,
    preceded by a GPU preflight that only TaskManager containers run.

    Why: a TaskManager whose discovery script is missing or fails still registers its configured
    GPU amount (Flink's ``GPUDriver`` only logs a warning). Flink builds every YARN container's
    command from this template (``Utils.getTaskManagerShellCommand`` for TaskManagers,
    ``YarnClusterDescriptor.setupApplicationMasterContainer`` for the JobManager), replacing
    ``%class%`` with the entry class; the NodeManager runs it with ``bash -c "…"`` and replaces
    ``<LOG_DIR>`` with the container's log directory. So for the TaskManager class only, the
    discovery script runs first in inventory mode (the cluster's amount, ``--isolated-devices``
    where the config passes it, no coordination file) and a failure ends the container with exit 1
    and the reason in ``taskmanager.err``; Flink's resource manager then sees the container fail.
    In coordination mode it then checks (``--check-free``, read-only) that no live owner in the
    coordination file holds the GPUs the TaskManager would get, naming the holders otherwise, and
    takes them (discovery with the TaskManager's own arguments: the owner is its parent, the shell
    that then ``exec``s the JVM, so the TaskManager's own call gets exactly those GPUs back and two
    containers starting at once cannot both get them).
    The template contains no ``"``, ``$``, backquote, backslash or ``#`` (it sits inside the
    NodeManager's double quotes and in a legacy ``flink-conf.yaml``), and the script path is
    restricted to ``[A-Za-z0-9_./-]`` by the schema (checked again here with a ValueError, never an
    ``assert`` that ``python -O`` would skip: nothing else may reach the NodeManager's shell).
    """
    discovery = [spec.discovery.script_path, str(cluster.gpus_per_task_manager)]
    if devices_isolated_per_container(spec, cluster):
        discovery.append(ISOLATED_DEVICES_FLAG)
    text = " ".join(discovery)
    command = _taskmanager_step(discovery, f"GPU discovery ({text}) failed; its messages are above")
    if not cluster.coordination:
        return command + FLINK_YARN_START_COMMAND
    command += _taskmanager_step(
        [*discovery, CHECK_FREE_FLAG, COORDINATION_FILE_FLAG, cluster.coordination_file],
        "the GPUs it would get are held by live owners in the coordination file (named above)",
    )
    # Take the GPUs now, for the shell that then becomes the JVM (exec keeps its pid and start
    # time): discovery's owner is its parent, and the TaskManager's own call (same arguments, the
    # JVM its parent) gets exactly these GPUs back. Checking and taking in one locked step of the
    # coordination file, so two containers starting at once on a NodeManager cannot both pass.
    command += _taskmanager_step(
        [spec.discovery.script_path, str(cluster.gpus_per_task_manager), *str(discovery_args(spec, cluster)).split()],
        "its GPUs could not be taken for it in the coordination file (named above)",
    )
    return command + "exec " + FLINK_YARN_START_COMMAND


def _taskmanager_step(words: list[str], refusal: str) -> str:
    """One step of the YARN start command that only TaskManager containers run: ``words`` (each
    checked against `_SAFE_WORD`, a ValueError otherwise) as a command, and when it fails the
    refusal in ``taskmanager.err`` and exit 1 before the JVM starts."""
    unsafe = [w for w in words if not _SAFE_WORD.fullmatch(w)]
    if unsafe:
        raise ValueError(f"unsafe word(s) for the YARN start command: {unsafe!r}")
    return (
        f"if [ %class% = {YARN_TASKMANAGER_CLASS} ] && ! {' '.join(words)} > /dev/null 2>> <LOG_DIR>/taskmanager.err; "
        f"then echo 'accelplane: refusing to start this GPU TaskManager: {refusal}' >> <LOG_DIR>/taskmanager.err; "
        "exit 1; fi; "
    )


def _process_keys(cluster: FlinkCluster) -> list[GeneratedKey]:
    return [
        GeneratedKey("taskmanager.numberOfTaskSlots", cluster.task_manager.slots, "taskManager.slots"),
        GeneratedKey(
            "jobmanager.memory.process.size", flink_memory(cluster.job_manager.memory), "jobManager.memory"
        ),
        GeneratedKey(
            "taskmanager.memory.process.size", flink_memory(cluster.task_manager.memory), "taskManager.memory"
        ),
    ]


def _native_kubernetes_keys(cluster: FlinkCluster) -> list[GeneratedKey]:
    keys = [
        GeneratedKey("kubernetes.cluster-id", cluster.name, "name"),
        GeneratedKey("kubernetes.namespace", cluster.namespace, "namespace"),
        GeneratedKey("kubernetes.jobmanager.service-account", cluster.service_account, "serviceAccount"),
        GeneratedKey("kubernetes.taskmanager.service-account", cluster.service_account, "serviceAccount"),
        GeneratedKey(image_key(cluster), flink_image(cluster), "image"),
        GeneratedKey(cpu_key(cluster, "jobmanager"), cluster.job_manager.cpu.number, "jobManager.cpu"),
        GeneratedKey(
            cpu_key(cluster, "taskmanager"), cluster.task_manager.cpu.number, "taskManager.cpu"
        ),
        GeneratedKey(
            "kubernetes.pod-template-file.jobmanager",
            pod_template_path(JOBMANAGER_POD_TEMPLATE),
            "pod templates",
        ),
        GeneratedKey(
            "kubernetes.pod-template-file.taskmanager",
            pod_template_path(TASKMANAGER_POD_TEMPLATE),
            "pod templates",
        ),
    ]
    if cluster.mode == "application":
        keys.append(GeneratedKey("execution.target", "kubernetes-application", "mode"))
    return keys


def _yarn_keys(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    keys = [
        GeneratedKey("yarn.application.name", cluster.name, "name"),
        GeneratedKey("yarn.appmaster.vcores", int(cluster.job_manager.cpu.value), "jobManager.cpu"),
        GeneratedKey("yarn.containers.vcores", int(cluster.task_manager.cpu.value), "taskManager.cpu"),
    ]
    if cluster.queue is not None:
        keys.append(GeneratedKey("yarn.application.queue", cluster.queue, "queue"))
    label = taskmanager_label(spec, cluster)
    if label is not None:
        keys.append(GeneratedKey("yarn.taskmanager.node-label", label, "taskManager.gpu and yarn.nodeLabels"))
    if cluster.mode == "application":
        keys.append(GeneratedKey("execution.target", "yarn-application", "mode"))
    return keys + _yarn_docker_keys(spec, cluster)


def _yarn_docker_keys(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    """The container environment that runs the cluster's JobManager and TaskManagers in Docker on
    YARN (`accelplane.derive.yarn_docker`); none without ``yarn.docker.enabled``."""
    if not runs_in_docker(spec, cluster):
        return []
    keys = []
    for role, prefix in ENV_PREFIX.items():
        keys += [
            GeneratedKey(f"{prefix}{RUNTIME_TYPE_ENV}", "docker", "yarn.docker.enabled"),
            GeneratedKey(f"{prefix}{IMAGE_ENV}", flink_image(cluster), "image"),
        ]
        mounts = container_mounts(spec, cluster, role)
        if mounts:
            keys.append(GeneratedKey(f"{prefix}{MOUNTS_ENV}", mounts_value(mounts), "yarn.docker.mounts and discovery"))
    return keys


KUEUE_TIMEOUT_MARGIN_SECONDS = 300
"""Added to ``kueue.expectedQueueingSeconds`` for Flink's slot request and TaskManager registration
timeouts (Flink's own defaults of both are 5 minutes)."""


def _kueue_keys(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    """Under Kueue each TaskManager pod waits gated until admitted: Flink's slot request and
    TaskManager registration timeouts (5 minutes by default) are raised above the expected queueing
    time so a queued TaskManager does not fail the job. Milliseconds without a unit: both the Long
    (ms) form of ``slot.request.timeout`` before Flink 1.19 and the Duration form parse it."""
    if not (spec.uses_kueue and cluster.on_kubernetes and cluster.queue is not None):
        return []
    millis = (spec.kueue.expected_queueing_seconds + KUEUE_TIMEOUT_MARGIN_SECONDS) * 1000
    source = "kueue.expectedQueueingSeconds"
    return [
        GeneratedKey("resourcemanager.taskmanager-registration.timeout", millis, source),
        GeneratedKey("slot.request.timeout", millis, source),
    ]


def slot_group_keys(cluster: FlinkCluster) -> list[GeneratedKey]:
    """Keys that make Flink honour slot group resources (none without ``slotGroups``).

    * ``jobmanager.scheduler: default``: the adaptive scheduler (and so reactive mode) and the
      adaptive batch scheduler, which Flink 1.20 picks for batch jobs when the key is unset,
      ignore slot sharing group resources; only the DefaultScheduler requests fine-grained slots.
    * ``fine-grained.shuffle-mode.all-blocking: true``: fine-grained resource management refuses
      batch jobs with pipelined edges between slot sharing groups; all-blocking makes batch jobs
      schedulable (streaming jobs are unaffected).
    * ``taskmanager.cpu.cores`` on standalone: otherwise a standalone TaskManager offers as many CPU
      cores as it has slots, not ``taskManager.cpu``.
    """
    if not cluster.slot_groups:
        return []
    keys = [
        GeneratedKey("jobmanager.scheduler", "default", "slotGroups"),
        GeneratedKey("fine-grained.shuffle-mode.all-blocking", True, "slotGroups"),
    ]
    if cluster.target == "standalone":
        keys.append(GeneratedKey("taskmanager.cpu.cores", cluster.task_manager.cpu.number, "taskManager.cpu"))
    return keys


def generated_keys(spec: Spec, cluster: FlinkCluster) -> tuple[GeneratedKey, ...]:
    """Every key accelplane writes for the cluster (for the operator: into ``flinkConfiguration``);
    derived once per spec and cluster (`Spec.memo`: the checks and the builders both need it)."""
    return spec.memo.get_or_make("generated_keys", cluster, lambda: tuple(_generated_keys(spec, cluster)))


def java_options_key(cluster: FlinkCluster) -> list[GeneratedKey]:
    """``env.java.opts.all``: the JVM options of the cluster's Flink distribution (its Java 17
    ``--add-opens``/``--add-exports`` list, which accelplane's config file would otherwise drop)
    followed by the spec's ``config.env.java.opts.all``/``env.java.opts``; none before Flink 1.18
    (`accelplane.derive.flink_java`)."""
    value = java_options(cluster, flink_image(cluster) if cluster.on_kubernetes else None)
    if value is None:
        return []
    return [GeneratedKey(JAVA_OPTS_KEY, value, "version (Flink's default JVM options) and config.env.java.opts.all")]


def _generated_keys(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    """`generated_keys`, derived."""
    keys = [GeneratedKey("taskmanager.numberOfTaskSlots", cluster.task_manager.slots, "taskManager.slots")]
    keys += java_options_key(cluster)
    if cluster.target == "kubernetes-operator":
        return keys + _session_keys(cluster) + _kueue_keys(spec, cluster) + slot_group_keys(cluster) + _gpu_keys(spec, cluster)
    keys = _process_keys(cluster) + java_options_key(cluster) + _session_keys(cluster) + _kueue_keys(spec, cluster)
    if cluster.target == "kubernetes":
        keys += _native_kubernetes_keys(cluster)
    elif cluster.target == "yarn":
        keys += _yarn_keys(spec, cluster)
    if cluster.job is not None and cluster.job.parallelism is not None:
        keys.append(GeneratedKey("parallelism.default", cluster.job.parallelism, "job.parallelism"))
    keys += _pid_dir_key(spec, cluster)
    if cluster.migrate_from is not None:
        # Flink >= 1.20 reads execution.state-recovery.path (execution.savepoint.path before)
        key = "execution.state-recovery.path" if cluster.version_tuple >= (1, 20) else "execution.savepoint.path"
        keys.append(GeneratedKey(key, cluster.migrate_from.savepoint, "migrateFrom.savepoint"))
    return keys + slot_group_keys(cluster) + _gpu_keys(spec, cluster)


PID_DIR_KEY = "env.pid.dir"


def _pid_dir_key(spec: Spec, cluster: FlinkCluster) -> list[GeneratedKey]:
    """``env.pid.dir`` of a standalone GPU cluster in coordination mode that does not set it: its
    own directory the Flink user owns (`flink_pid_dir`), never Flink's default ``/tmp``, where any
    local user could plant the pid file the start script gives GPUs to (and kills on failure)."""
    if cluster.target != FlinkTarget.STANDALONE or not cluster.coordination or not cluster.uses_gpus:
        return []
    if PID_DIR_KEY in dict(cluster.config):
        return []
    return [GeneratedKey(PID_DIR_KEY, flink_pid_dir(spec, cluster), "discovery.coordinationFile")]


@dataclass(frozen=True)
class ManagedKey:
    """A key the user may not set in ``config``: who sets it, and from which spec field."""

    source: str
    by_operator: bool = False

    def origin(self) -> str:
        """Phrase for error messages."""
        if self.by_operator:
            return f"set by the Flink Kubernetes Operator from the FlinkDeployment that accelplane builds from {self.source}"
        return f"generated by accelplane from {self.source}"


def managed_keys(spec: Spec, cluster: FlinkCluster) -> dict[str, ManagedKey]:
    """Keys the user may not set in ``config``, with the spec field that controls each.

    The generated keys and their Flink aliases; for the operator also the keys it derives from the
    FlinkDeployment (cluster id, namespace, HA cluster id, image, resources, service account, pod
    templates).
    """
    managed: dict[str, ManagedKey] = {}
    owned: list[tuple[GeneratedKey, bool]] = [(k, False) for k in generated_keys(spec, cluster)]
    if cluster.target == "kubernetes-operator":
        native = _process_keys(cluster) + _native_kubernetes_keys(cluster)
        owned += [(k, True) for k in native if k.key != "execution.target"]
        owned.append((GeneratedKey("high-availability.cluster-id", cluster.name, "name"), True))
    for k, by_operator in owned:
        if k.key == JAVA_OPTS_KEY:
            continue  # the spec's JVM options are added to the distribution's (`java_options_key`)
        for key in (k.key, *KEY_ALIASES.get(k.key, ())):
            managed.setdefault(key, ManagedKey(k.source, by_operator))
    return managed


def managed_prefixes(cluster: FlinkCluster) -> tuple[str, ...]:
    """Key prefixes the user may not set in ``config`` (the GPU resource's keys when it has GPUs)."""
    return (GPU_PREFIX, f"external-resource.{GPU_RESOURCE}-") if cluster.uses_gpus else ()


def effective_config(spec: Spec, cluster: FlinkCluster) -> dict[str, ConfigValue]:
    """Generated keys plus the user's ``config`` keys, sorted by key (checks guarantee no clash;
    the user's JVM options are already part of the generated ``env.java.opts.all`` when there is one)."""
    values: dict[str, ConfigValue] = {k.key: k.value for k in generated_keys(spec, cluster)}
    merged_java = JAVA_OPTS_KEY in values
    for key, value in cluster.config:
        if merged_java and key in USER_JAVA_OPTS_KEYS:
            continue
        values.setdefault(key, value)
    return dict(sorted(values.items()))
