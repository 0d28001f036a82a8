"""``FlinkDeployment`` (``flink.apache.org/v1beta1``) for clusters with target ``kubernetes-operator``.

The operator takes the cluster id and namespace from ``metadata`` (it refuses
``kubernetes.cluster-id``/``kubernetes.namespace`` in ``flinkConfiguration``), image, service
account and process resources from the spec fields, and pod templates from
``jobManager.podTemplate``/``taskManager.podTemplate`` — it has no annotations field there, so the
Volcano PodGroup annotation travels in the pod templates. ``flinkConfiguration`` is a string map
(the operator hands the strings to Flink's ``Configuration`` as they are; lists ``;``-separated).
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import K8sObject, k8s_object
from accelplane.builders.pod_templates import Role, flink_cluster_labels, pod_template
from accelplane.derive.flink_keys import (
    effective_config,
    jobmanager_replicas,
    mebibytes,
)
from accelplane.derive.flink_values import operator_value
from accelplane.derive.images import flink_image
from accelplane.lifecycle import FLINK_DEPLOYMENT_WAIT_FOR, WAIT_FOR_ANNOTATION
from accelplane.model import FlinkCluster, ProcessResources, Spec
from accelplane.yaml_io import Represented, represented

FLINK_DEPLOYMENT_API = "flink.apache.org/v1beta1"
DEPLOYMENT_MODE = "native"


def operator_flink_version(cluster: FlinkCluster) -> str:
    """The operator's ``flinkVersion`` enum value (``1.20`` → ``v1_20``)."""
    major, minor = cluster.version_tuple
    return f"v{major}_{minor}"


def _resource(p: ProcessResources) -> dict[str, Any]:
    return {"cpu": float(p.cpu.number), "memory": f"{mebibytes(p.memory)}m"}


def embedded_pod_template(spec: Spec, cluster: FlinkCluster, role: Role) -> Represented:
    """The pod template of ``role`` as the operator's ``podTemplate`` field takes it, represented as
    YAML once (`accelplane.yaml_io.represented`): the FlinkDeployment embeds it and the cluster's
    pod template file is the same mapping, so both documents reuse one representation. Made once
    per spec, cluster and role (`Spec.memo`); callers must not modify it."""

    def make() -> Represented:
        template = pod_template(spec, cluster, role)
        return represented({k: template[k] for k in ("apiVersion", "kind", "metadata", "spec")})

    return spec.memo.get_or_make(("embedded_pod_template", role), cluster, make)


def flink_deployment_spec(spec: Spec, cluster: FlinkCluster) -> dict[str, Any]:
    """The ``spec`` of the cluster's FlinkDeployment."""
    body: dict[str, Any] = {
        "image": flink_image(cluster),
        "flinkVersion": operator_flink_version(cluster),
        "serviceAccount": cluster.service_account,
        "mode": DEPLOYMENT_MODE,
        "flinkConfiguration": {k: operator_value(v) for k, v in effective_config(spec, cluster).items()},
        "jobManager": {
            "replicas": jobmanager_replicas(cluster),
            "resource": _resource(cluster.job_manager),
            "podTemplate": embedded_pod_template(spec, cluster, "jobmanager"),
        },
        "taskManager": {
            "replicas": cluster.task_manager.replicas,
            "resource": _resource(ProcessResources(cluster.task_manager.cpu, cluster.task_manager.memory)),
            "podTemplate": embedded_pod_template(spec, cluster, "taskmanager"),
        },
    }
    job = cluster.job
    if cluster.mode == "application" and job is not None and job.jar_uri is not None:
        job_body: dict[str, Any] = {"jarURI": job.jar_uri, "state": "running"}
        if job.entry_class is not None:
            job_body["entryClass"] = job.entry_class
        if job.args:
            job_body["args"] = list(job.args)
        if job.parallelism is not None:
            job_body["parallelism"] = job.parallelism
        job_body["upgradeMode"] = job.upgrade_mode or "stateless"
        if cluster.migrate_from is not None:
            # used only when the FlinkDeployment is first deployed (SpecDiff IGNORE afterwards)
            job_body["initialSavepointPath"] = cluster.migrate_from.savepoint
        body["job"] = job_body
    return body


def flink_deployment(spec: Spec, cluster: FlinkCluster, family: str) -> K8sObject:
    """The FlinkDeployment manifest, annotated so `pulumi up` waits for the operator's reconcile
    (``pulumi.com/waitFor``, `accelplane.lifecycle.FLINK_DEPLOYMENT_WAIT_FOR`)."""
    labels = flink_cluster_labels(spec, cluster)
    return k8s_object(
        FLINK_DEPLOYMENT_API,
        "FlinkDeployment",
        cluster.name,
        family=family,
        namespace=cluster.namespace,
        labels=labels,
        annotations={WAIT_FOR_ANNOTATION: FLINK_DEPLOYMENT_WAIT_FOR},
        body={"spec": flink_deployment_spec(spec, cluster)},
    )
