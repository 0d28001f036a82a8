"""ServiceAccount, Role and RoleBinding for the native-Kubernetes Flink clusters (target ``kubernetes``).

One set per ``(namespace, serviceAccount)`` the native clusters run as, all three named after the
service account: the Role grants exactly what Flink's own JobManager and TaskManagers call
(`accelplane.derive.flink_rbac`), in that namespace only — no ClusterRole. The clusters' config
names the account (``kubernetes.jobmanager.service-account`` / ``kubernetes.taskmanager.service-account``).

Operator clusters (target ``kubernetes-operator``) run as the job service account the Flink
Kubernetes Operator's Helm chart creates with its Role in every watched namespace
(``jobServiceAccount.name``, default ``flink``; ``rbac.jobRole``): accelplane renders none for them.
"""

from __future__ import annotations

from accelplane.artifacts import Bundle, k8s_object
from accelplane.derive.flink_rbac import native_rules, native_service_accounts
from accelplane.model import Spec

FAMILY = "flink"
RBAC_API = "rbac.authorization.k8s.io/v1"
COMPONENT = {"app.kubernetes.io/component": "flink-native-rbac"}


def build(spec: Spec) -> Bundle:
    """The service accounts and RBAC of every native-Kubernetes Flink cluster."""
    bundle = Bundle()
    for (namespace, account), clusters in native_service_accounts(spec).items():
        labels = {**spec.common_labels(), **COMPONENT}
        annotations = {"accelplane.io/flink-clusters": ",".join(sorted(c.name for c in clusters))}
        bundle.objects.append(
            k8s_object(
                "v1", "ServiceAccount", account, family=FAMILY, namespace=namespace, labels=labels,
                annotations=annotations,
            )
        )  # fmt: skip
        bundle.objects.append(
            k8s_object(
                RBAC_API, "Role", account, family=FAMILY, namespace=namespace, labels=labels,
                annotations=annotations, body={"rules": native_rules(clusters)},
            )
        )  # fmt: skip
        bundle.objects.append(
            k8s_object(
                RBAC_API,
                "RoleBinding",
                account,
                family=FAMILY,
                namespace=namespace,
                labels=labels,
                annotations=annotations,
                body={
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
                    "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
                },
            )
        )
    return bundle
