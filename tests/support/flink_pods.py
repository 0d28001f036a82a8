"""The pods Flink itself creates on Kubernetes, built by Flink's own code (no API server).

Given a Flink configuration file and the JobManager/TaskManager pod templates, this runs
``tests/support/flink/java/PodFactoryProbe.java`` against the distribution's ``lib/flink-dist-*.jar``
(found by :func:`tests.support.flink.home.find_flink_home`). The probe drives Flink's real
native-Kubernetes client path:

* JobManager: ``GlobalConfiguration.loadConfiguration`` on the config file (its *name* picks the
  parser: ``config.yaml`` or legacy ``flink-conf.yaml``), ``KubernetesClusterClientFactory
  .getClusterSpecification``, then ``KubernetesClusterDescriptor.deployApplicationCluster`` (when
  ``execution.target`` is ``kubernetes-application``) or ``deploySessionCluster``; the descriptor
  applies its configuration changes, loads the template with ``KubernetesUtils
  .loadPodFromTemplateFile`` and runs ``KubernetesJobManagerFactory
  .buildKubernetesJobManagerSpecification`` (all decorators). Its ``FlinkKubeClient`` records the
  specification instead of creating it; template parsing goes through the real
  ``Fabric8FlinkKubeClient`` (an offline fabric8 client).
* TaskManager: what ``KubernetesResourceManagerDriver`` does inside that JobManager, with the
  configuration and TaskManager template the JobManager would read from the ``flink-config-<id>``
  and ``pod-template-<id>`` ConfigMaps it was given: default worker from
  ``KubernetesWorkerResourceSpecFactory``, ``TaskExecutorProcessUtils
  .processSpecFromWorkerResourceSpec``, ``KubernetesTaskManagerParameters``,
  ``KubernetesTaskManagerFactory.buildTaskManagerKubernetesPod``.

The two ``kubernetes.pod-template-file.*`` keys are pointed at the given templates (the client reads
them from its own file system, where ``/opt/flink/accelplane/`` holds our files); in application
mode without ``pipeline.jars`` the probe sets ``local:///opt/flink/usrlib/accelplane-placeholder.jar``
(what ``flink run-application local://…`` adds) and without ``execution.target`` it sets
``kubernetes-session`` (what ``kubernetes-session.sh`` sets). Nothing else is changed.

Entry points
------------
* :func:`flink_pods` -- one cluster: ``(jobmanager pod, taskmanager pod)``.
* :func:`build_flink_pods` -- many clusters in ONE JVM (about 5 s start-up + well under a second per
  cluster); returns :class:`FlinkPods` with the Deployment, the ConfigMaps/Services, Flink's
  cluster specification and TaskManager process size too.
* :func:`operator_case` -- the inputs the Flink Kubernetes Operator hands to the same factories for
  a ``FlinkDeployment`` (native mode), see its docstring.

Results are memoised per process by input digest, and the probe jar is compiled once per process
(content-addressed, :func:`tests.support.flink.java.build_java_job`; pass ``cache_dir`` to share
it across processes).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.flink.errors import HarnessError
from tests.support.flink.home import find_flink_home
from tests.support.flink.java import FAST_JVM_FLAGS, JAVA_SOURCES_DIR, build_java_job
from tests.support.flink.processes import run_checked

POD_FACTORY_SOURCE = JAVA_SOURCES_DIR / "PodFactoryProbe.java"
CONFIG_FILE_NAMES = ("config.yaml", "flink-conf.yaml")

Template = str | Mapping[str, Any] | None


@dataclass(frozen=True)
class FlinkPodsCase:
    """One cluster's inputs: config file text, its file name (selects Flink's parser) and the
    pod templates (YAML text or a parsed manifest; None = no template)."""

    config_text: str
    jobmanager_template: Template = None
    taskmanager_template: Template = None
    config_file: str = "config.yaml"

    def digest(self) -> str:
        """Content digest (memoisation key)."""
        h = hashlib.sha256()
        for part in (self.config_file, self.config_text, _template_text(self.jobmanager_template),
                     _template_text(self.taskmanager_template)):
            h.update((part or "").encode() + b"\0")
        return h.hexdigest()


@dataclass(frozen=True)
class FlinkPods:
    """What Flink creates for one cluster.

    ``jobmanager`` is the ``v1/Pod`` the JobManager Deployment's ReplicaSet creates (the
    Deployment's pod template as a Pod, ``generateName`` from the Deployment name, namespace from
    ``kubernetes.namespace``); ``taskmanager`` the first TaskManager pod
    (``<cluster-id>-taskmanager-1-1``) with its namespace set likewise (the namespaced client
    adds it). ``cluster_specification`` is Flink's ``ClusterSpecification`` (``masterMemoryMB``,
    ``taskManagerMemoryMB``, ``slotsPerTaskManager``); ``taskmanager_process`` the process spec the
    resource manager requests (``totalProcessMemoryMB``, ``cpuCores``); ``mode`` is
    ``application`` or ``session`` (from ``execution.target``).
    """

    mode: str
    jobmanager: dict[str, Any]
    taskmanager: dict[str, Any]
    jobmanager_deployment: dict[str, Any]
    accompanying_resources: list[dict[str, Any]]
    cluster_specification: dict[str, int]
    taskmanager_process: dict[str, float]


_MEMO: dict[str, FlinkPods] = {}


def _template_text(template: Template) -> str | None:
    if template is None:
        return None
    if isinstance(template, str):
        return template
    return yaml.safe_dump(dict(template), sort_keys=False)


def _namespace(config: Mapping[str, Any]) -> str:
    return str(config.get("kubernetes.namespace", "default"))


def _pods_from(result: Mapping[str, Any], namespace: str) -> FlinkPods:
    deployment = result["jobManagerDeployment"]
    template = deployment["spec"]["template"]
    jm_meta = {k: v for k, v in template.get("metadata", {}).items() if k != "name"}
    jobmanager = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": f"{deployment['metadata']['name']}-", "namespace": namespace, **jm_meta},
        "spec": template["spec"],
    }
    taskmanager = dict(result["taskManagerPod"])
    taskmanager["metadata"] = {**taskmanager["metadata"], "namespace": namespace}
    return FlinkPods(
        mode=result["mode"],
        jobmanager=jobmanager,
        taskmanager=taskmanager,
        jobmanager_deployment=deployment,
        accompanying_resources=list(result["accompanyingResources"]),
        cluster_specification=dict(result["clusterSpecification"]),
        taskmanager_process=dict(result["taskExecutorProcess"]),
    )


def build_flink_pods(
    cases: Sequence[FlinkPodsCase],
    *,
    flink_home: Path | None = None,
    cache_dir: Path | None = None,
    timeout: float = 300.0,
) -> list[FlinkPods]:
    """The pods Flink builds for every case, in order, from ONE JVM run for the uncached cases.

    Raises :class:`HarnessError` naming the case when Flink refuses one (with Flink's stack trace),
    and :class:`tests.support.flink.home.FlinkHomeNotFound` without a distribution (tests call
    ``require_flink_home()`` first to get fail-in-CI / skip-elsewhere semantics).
    """
    for case in cases:
        if case.config_file not in CONFIG_FILE_NAMES:
            raise ValueError(f"config_file must be one of {CONFIG_FILE_NAMES}, not {case.config_file!r}")
    pending = {c.digest(): c for c in cases if c.digest() not in _MEMO}
    if pending:
        home = flink_home or find_flink_home()
        jar = build_java_job(POD_FACTORY_SOURCE, "PodFactoryProbe", home, cache_dir)
        with tempfile.TemporaryDirectory(prefix="accelplane-flink-pods-") as tmp:
            root = Path(tmp)
            manifest = []
            namespaces: dict[str, str] = {}
            for digest, case in pending.items():
                case_dir = root / digest[:16]
                conf_dir = case_dir / "conf"
                conf_dir.mkdir(parents=True)
                (conf_dir / case.config_file).write_text(case.config_text, encoding="utf-8")
                entry: dict[str, str | None] = {"id": digest, "confDir": str(conf_dir)}
                for key, template, name in (
                    ("jobManagerTemplate", case.jobmanager_template, "jobmanager-pod-template.yaml"),
                    ("taskManagerTemplate", case.taskmanager_template, "taskmanager-pod-template.yaml"),
                ):
                    text = _template_text(template)
                    if text is None:
                        entry[key] = None
                        continue
                    path = case_dir / name
                    path.write_text(text, encoding="utf-8")
                    entry[key] = str(path)
                manifest.append(entry)
                namespaces[digest] = _namespace(_flat_config(case))
            cases_file = root / "cases.json"
            results_file = root / "results.jsonl"
            cases_file.write_text(json.dumps(manifest), encoding="utf-8")
            classpath = os.pathsep.join([str(jar), str(home / "lib") + os.sep + "*"])
            env = dict(os.environ)
            env.pop("FLINK_CONF_DIR", None)
            run_checked(
                ["java", *FAST_JVM_FLAGS, "-cp", classpath, "PodFactoryProbe", str(cases_file), str(results_file)],
                what=f"Flink PodFactoryProbe on {len(manifest)} cluster(s)",
                timeout=timeout,
                env=env,
            )
            for line in results_file.read_text(encoding="utf-8").splitlines():
                result = json.loads(line)
                digest = result["id"]
                if result.get("error"):
                    raise HarnessError(
                        f"Flink could not build the pods of case {digest[:16]} "
                        f"(config_file={pending[digest].config_file}):\n{result['error']}"
                    )
                _MEMO[digest] = _pods_from(result, namespaces[digest])
    return [copy.deepcopy(_MEMO[c.digest()]) for c in cases]  # callers may mutate their copy


def _flat_config(case: FlinkPodsCase) -> dict[str, Any]:
    """Keys of a case's config file (enough to read the namespace: both formats are flat here)."""
    if case.config_file == "config.yaml":
        data = yaml.safe_load(case.config_text) or {}
        return dict(data) if isinstance(data, Mapping) else {}
    out: dict[str, Any] = {}
    for line in case.config_text.splitlines():
        line = line.split("#", 1)[0]
        if ": " in line:
            key, value = line.split(": ", 1)
            out[key.strip()] = value.strip()
    return out


def flink_pods(
    config_yaml_text: str,
    jm_template: Template,
    tm_template: Template,
    *,
    config_file: str = "config.yaml",
    flink_home: Path | None = None,
    cache_dir: Path | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(jobmanager pod, taskmanager pod)`` exactly as Flink's native Kubernetes code builds them
    from this config file text (``config_file`` names it: ``config.yaml`` or the legacy
    ``flink-conf.yaml``) and these pod templates (YAML text or parsed manifests).

    One JVM per call; to check many clusters, call :func:`build_flink_pods` once with all of them
    (results are memoised, so a later :func:`flink_pods` on the same inputs costs nothing).
    """
    (pods,) = build_flink_pods(
        [FlinkPodsCase(config_yaml_text, jm_template, tm_template, config_file)],
        flink_home=flink_home,
        cache_dir=cache_dir,
    )
    return pods.jobmanager, pods.taskmanager


# --------------------------------------------------------------------------------------------
# Flink Kubernetes Operator (native mode)
# --------------------------------------------------------------------------------------------

#: Source of the rules :func:`operator_case` follows (apache/flink-kubernetes-operator).
OPERATOR_CONFIG_BUILDER = (
    "flink-kubernetes-operator/src/main/java/org/apache/flink/kubernetes/operator/config/"
    "FlinkConfigBuilder.java (buildFrom)"
)
_FLINK_MEMORY = re.compile(r"^\s*\d+\s*([kmgt]b?|bytes?|[kmgt]ibytes|[kmgt]ilobytes|)?\s*$", re.IGNORECASE)
_HA_OFF = {"", "none", "NONE"}


def _operator_memory(value: str) -> str:
    """``parseResourceMemoryString``: Flink ``MemorySize`` syntax is kept (same bytes), anything
    else is read as a Kubernetes quantity and passed on as a byte count."""
    if _FLINK_MEMORY.match(value):
        return value
    from accelplane.quantity import parse_quantity  # the project's exact Kubernetes quantity parser

    text = value.strip().replace(" ", "").upper().removesuffix("B")
    text = text[:-1] + "i" if text.endswith("I") else text
    return str(int(parse_quantity(text)))


def _merge_into(to: Any, frm: Any) -> Any:
    """``FlinkUtils.mergePodTemplates`` (mergeByName=false): objects merged recursively, arrays
    merged index by index, scalars replaced."""
    if isinstance(to, dict) and isinstance(frm, dict):
        out = dict(to)
        for key, value in frm.items():
            out[key] = _merge_into(out[key], value) if key in out else value
        return out
    if isinstance(to, list) and isinstance(frm, list):
        merged = list(to)
        for i, value in enumerate(frm):
            merged[i:i + 1] = [_merge_into(merged[i], value)] if i < len(merged) else [value]
        return merged
    return frm


def _version_at_least(flink_version: str, minor: int) -> bool:
    major, _, rest = flink_version.removeprefix("v").partition("_")
    return (int(major), int(rest or 0)) >= (1, minor)


def operator_case(deployment: Mapping[str, Any]) -> FlinkPodsCase:
    """The configuration and pod templates the Flink Kubernetes Operator gives Flink's
    ``KubernetesClusterDescriptor`` for a native-mode ``FlinkDeployment``.

    Follows ``FlinkConfigBuilder.buildFrom`` (:data:`OPERATOR_CONFIG_BUILDER`): the
    ``flinkConfiguration`` map, its defaults (ClusterIP REST service, ``web.cancel.enable: false``,
    for jobs ``pipeline.name``, ``execution.shutdown-on-application-finish: false``, retained
    externalized checkpoints, a 5 min checkpoint interval for ``last-state``), ``image`` (the
    version-dependent key), ``imagePullPolicy``, ``serviceAccount`` (``kubernetes.service-account``),
    the pod templates (``spec.podTemplate`` merged with each role's, ``ephemeralStorage`` added to
    the main container), each role's ``resource`` (process memory, ``kubernetes.<role>.cpu.amount``),
    ``jobManager.replicas``, the job (``execution.target: kubernetes-application``,
    ``pipeline.jars``, ``parallelism.default`` = replicas × slots when ``taskManager.replicas`` is
    set, entry class and args) or ``kubernetes-session``, then namespace and cluster id.

    Not modelled: the operator's own default configuration (its ``flink-conf.yaml``/``config.yaml``
    ConfigMap; every key we emit overrides it), log configuration files, and the JobManager startup
    probe newer operator releases add to the main container (it does not touch scheduling fields).
    """
    spec = deployment["spec"]
    meta = deployment["metadata"]
    version = str(spec.get("flinkVersion", "v1_20"))
    new_keys = _version_at_least(version, 17)
    conf: dict[str, Any] = {str(k): str(v) for k, v in (spec.get("flinkConfiguration") or {}).items()}
    conf.setdefault("kubernetes.rest-service.exposed.type", "ClusterIP")
    conf.setdefault("web.cancel.enable", "false")
    job = spec.get("job")
    if job is not None:
        conf.setdefault("pipeline.name", meta["name"])
        if job.get("upgradeMode") == "last-state":
            conf.setdefault("execution.checkpointing.interval", "5 min")
        conf["execution.shutdown-on-application-finish"] = "false"
        if conf.get("high-availability.type", conf.get("high-availability", "NONE")) not in _HA_OFF:
            conf.setdefault("execution.submit-failed-job-on-application-error", "true")
        conf.setdefault("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
    if spec.get("image"):
        conf["kubernetes.container.image.ref" if new_keys else "kubernetes.container.image"] = spec["image"]
    if spec.get("imagePullPolicy"):
        conf["kubernetes.container.image.pull-policy"] = spec["imagePullPolicy"]
    if spec.get("serviceAccount") is not None:
        conf["kubernetes.service-account"] = spec["serviceAccount"]

    common = spec.get("podTemplate")
    templates: dict[str, dict[str, Any] | None] = {}
    for role in ("jobManager", "taskManager"):
        role_spec = spec.get(role)
        template = common if role_spec is None else (
            _merge_into(common, role_spec.get("podTemplate")) if common and role_spec.get("podTemplate")
            else role_spec.get("podTemplate") or common
        )
        storage = ((role_spec or {}).get("resource") or {}).get("ephemeralStorage")
        if storage:
            template = _with_ephemeral_storage(template, storage)
        templates[role] = template
    for role, prefix in (("jobManager", "jobmanager"), ("taskManager", "taskmanager")):
        resource = (spec.get(role) or {}).get("resource") or {}
        if resource.get("memory") is not None:
            conf[f"{prefix}.memory.process.size"] = _operator_memory(str(resource["memory"]))
        if resource.get("cpu") is not None:
            conf[f"kubernetes.{prefix}.cpu.amount" if new_keys else f"kubernetes.{prefix}.cpu"] = str(
                float(resource["cpu"])
            )
    jm_replicas = (spec.get("jobManager") or {}).get("replicas", 1)
    if jm_replicas > 0:
        conf["kubernetes.jobmanager.replicas"] = str(jm_replicas)
    tm_replicas = (spec.get("taskManager") or {}).get("replicas")
    if tm_replicas:
        conf["kubernetes.internal.taskmanager.replicas"] = str(tm_replicas)  # standalone-only key
    if job is not None:
        conf["execution.target"] = "kubernetes-application"
        if job.get("jarURI") is not None:
            conf["pipeline.jars"] = [job["jarURI"]]
        slots = int(conf.get("taskmanager.numberOfTaskSlots", "1"))
        conf["parallelism.default"] = str(tm_replicas * slots if tm_replicas else job.get("parallelism", 0))
        if job.get("entryClass") is not None:
            conf["$internal.application.main"] = job["entryClass"]
        if job.get("args") is not None:
            conf["$internal.application.program-args"] = [str(a) for a in job["args"]]
    else:
        conf["execution.target"] = "kubernetes-session"
    conf["kubernetes.namespace"] = meta["namespace"]
    conf["kubernetes.cluster-id"] = meta["name"]
    if conf.get("high-availability.type", conf.get("high-availability", "NONE")) not in _HA_OFF:
        conf["high-availability.cluster-id"] = meta["name"]
    lines = [
        f"{json.dumps(k)}: " + (json.dumps(v) if isinstance(v, str) else "[" + ", ".join(map(json.dumps, v)) + "]")
        for k, v in conf.items()
    ]
    jm, tm = templates["jobManager"], templates["taskManager"]
    return FlinkPodsCase("\n".join(lines) + "\n", jm, tm if tm != jm else jm, "config.yaml")


def _with_ephemeral_storage(template: Mapping[str, Any] | None, storage: str) -> dict[str, Any]:
    """``FlinkConfigBuilder.applyResourceToPodTemplate``: ephemeral-storage request and limit on
    the main container (added when the template has none)."""
    pod: dict[str, Any] = json.loads(json.dumps(template or {}))
    containers = pod.setdefault("spec", {}).setdefault("containers", [])
    main = next((c for c in containers if c.get("name") == "flink-main-container"), None)
    if main is None:
        main = {"name": "flink-main-container"}
        containers.append(main)
    resources = main.setdefault("resources", {})
    for kind in ("limits", "requests"):
        resources.setdefault(kind, {})["ephemeral-storage"] = storage
    return pod
