"""The Kubernetes API access a native-Kubernetes Flink cluster's own pods need (Flink 1.20).

Flink's JobManager and TaskManagers talk to the API server with the pod's service account
(``kubernetes.jobmanager.service-account`` / ``kubernetes.taskmanager.service-account``). Every call
goes through ``org.apache.flink.kubernetes.kubeclient.Fabric8FlinkKubeClient``; the rules below are
exactly the verbs of the calls a running cluster makes (the client that *submits* a cluster creates
the JobManager Deployment, its Services and ConfigMaps with its own credentials, not these):

* pods — ``create`` (``createTaskManagerPod``), ``delete`` (``stopPod``), ``list``
  (``getPodsWithLabels``: TaskManagers of a previous attempt), ``watch`` (``watchPodsAndDoCallback``),
  all from the ResourceManager (``KubernetesResourceManagerDriver``);
* deployments (``apps``) — ``get`` (``createTaskManagerPod`` reads the JobManager Deployment for the
  TaskManagers' owner reference), ``delete`` (``stopAndCleanupCluster`` when the application
  finishes or the session is stopped);
* configmaps, only with Kubernetes HA (``high-availability.type: kubernetes``): leader election and
  the HA state (``KubernetesLeaderElector``'s ConfigMap lock, ``KubernetesStateHandleStore``,
  ``KubernetesConfigMapSharedInformer``) — ``get``, ``list``, ``watch``, ``create``, ``update``
  (``checkAndUpdateConfigMap`` replaces with a resource-version lock), ``delete``
  (``deleteConfigMap``) and ``deletecollection`` (``deleteConfigMapsByLabels``: the shaded fabric8
  client's ``BaseOperation.deleteAll`` sends one DELETE to the collection with a label selector);
* services — ``get`` and ``update``, only with ``kubernetes.hostnetwork.enabled``: the
  ResourceManager then points the Services' target port at the port it bound
  (``updateServiceTargetPort``).

No ClusterRole: everything is in the cluster's namespace (``kubernetes.namespace``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from accelplane.derive.flink_state import ha_mode, uses_host_network
from accelplane.model import FlinkCluster, Spec

NATIVE_TARGET = "kubernetes"
PODS_RULE: dict[str, Any] = {
    "apiGroups": [""],
    "resources": ["pods"],
    "verbs": ["create", "delete", "list", "watch"],
}
DEPLOYMENTS_RULE: dict[str, Any] = {
    "apiGroups": ["apps"],
    "resources": ["deployments"],
    "verbs": ["delete", "get"],
}
HA_CONFIGMAPS_RULE: dict[str, Any] = {
    "apiGroups": [""],
    "resources": ["configmaps"],
    "verbs": ["create", "delete", "deletecollection", "get", "list", "update", "watch"],
}
HOST_NETWORK_SERVICES_RULE: dict[str, Any] = {
    "apiGroups": [""],
    "resources": ["services"],
    "verbs": ["get", "update"],
}


def native_service_accounts(spec: Spec) -> dict[tuple[str, str], list[FlinkCluster]]:
    """``(namespace, serviceAccount)`` → the native-Kubernetes clusters running as it (sorted).

    Empty when the spec has no Kubernetes platform."""
    out: dict[tuple[str, str], list[FlinkCluster]] = {}
    if not spec.has_platform("kubernetes"):
        return out
    for cluster in spec.flink_clusters:
        if cluster.target == NATIVE_TARGET:
            out.setdefault((cluster.namespace, cluster.service_account), []).append(cluster)
    return dict(sorted(out.items()))


def native_rules(clusters: Iterable[FlinkCluster]) -> list[dict[str, Any]]:
    """Role rules for a service account shared by ``clusters``: the union of what each needs."""
    clusters = list(clusters)
    rules = [dict(PODS_RULE), dict(DEPLOYMENTS_RULE)]
    if any(ha_mode(c) == "kubernetes" for c in clusters):
        rules.append(dict(HA_CONFIGMAPS_RULE))
    if any(uses_host_network(c) for c in clusters):
        rules.append(dict(HOST_NETWORK_SERVICES_RULE))
    return rules
