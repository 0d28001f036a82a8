"""Kueue's objects: ResourceFlavors, Cohorts, ClusterQueues and LocalQueues (``kueue.x-k8s.io/v1beta2``)
and the manager configuration snippet the Kueue installation must carry.

The data is `accelplane.derive.kueue`'s; `accelplane.checks.kueue` rejects the specs whose objects
Kueue's webhooks or CRD rules would reject. Kueue itself (its manager Deployment and webhooks) is
installed beforehand, with the ``pod`` integration and a ``managedJobsNamespaceSelector`` that
covers the Flink namespaces (``kueue/manager-config.yaml``, docs/kueue.md).
"""

from __future__ import annotations

from accelplane.artifacts import Bundle, FileArtifact, k8s_object
from accelplane.derive.kueue import (
    API_VERSION,
    cluster_queue_spec,
    cluster_queues,
    cohort_queues,
    cohort_spec,
    local_queues,
    manager_values,
    resource_flavors,
)
from accelplane.model import Spec
from accelplane.yaml_io import dump_yaml

FAMILY = "scheduling"

MANAGER_CONFIG_FILE = "kueue/manager-config.yaml"

MANAGER_CONFIG_HEADER = """\
# Kueue manager configuration this cluster's Flink pods need (docs/kueue.md). Merge these keys into
# the Configuration the Kueue installation uses (Helm chart kueue: managerConfig.
# controllerManagerConfigYaml; kustomize: the manager-config ConfigMap), keeping its other keys:
# * integrations.frameworks must list "pod": Kueue's default is batch/job only
#   (apis/config/v1beta2/defaults.go:120-122 at v0.19.2), so plain Flink pods would run unmanaged;
# * managedJobsNamespaceSelector: the Flink namespaces (the default leaves out only kube-system and
#   kueue-system, so every other namespace's labelled pods are managed too);
# * manageJobsWithoutQueueName: false keeps pods without kueue.x-k8s.io/queue-name unmanaged.
# waitForPodsReady (on by default since v0.19, 30 minutes) evicts a pod not Ready in time; Flink
# then starts a new TaskManager.
"""


def build(spec: Spec) -> Bundle:
    """Every Kueue object of the spec (nothing unless Kueue admits this cluster's pods)."""
    bundle = Bundle()
    if not spec.uses_kueue:
        return bundle
    labels = spec.common_labels()
    for name, body, _pool in resource_flavors(spec):
        bundle.objects.append(
            k8s_object(API_VERSION, "ResourceFlavor", name, family=FAMILY, labels=labels, body={"spec": body})
        )
    for q in cohort_queues(spec):
        bundle.objects.append(
            k8s_object(API_VERSION, "Cohort", q.name, family=FAMILY, labels=labels, body={"spec": cohort_spec(q)})
        )
    for q in cluster_queues(spec):
        bundle.objects.append(
            k8s_object(
                API_VERSION, "ClusterQueue", q.name, family=FAMILY, labels=labels,
                body={"spec": cluster_queue_spec(spec, q)},
            )
        )
    for namespace, queue in local_queues(spec):
        bundle.objects.append(
            k8s_object(
                API_VERSION, "LocalQueue", queue, family=FAMILY, namespace=namespace, labels=labels,
                body={"spec": {"clusterQueue": queue}},
            )
        )
    bundle.files.append(
        FileArtifact(MANAGER_CONFIG_FILE, MANAGER_CONFIG_HEADER + dump_yaml(manager_values(spec)), family=FAMILY)
    )
    return bundle
