"""Namespaces, service accounts and MIG layouts a fresh cluster gets from the stack.

* ``namespaces.<name>``: must be a namespace the stack's objects live in, and one accelplane could
  create (not a system, Volcano or GPU Operator namespace, which always come from elsewhere);
* a native-Kubernetes cluster's service account (which accelplane creates with its Role) must not be
  the job service account the Flink Kubernetes Operator's Helm chart creates for an operator cluster
  in the same namespace (``jobServiceAccount``): two owners of one object;
* least privilege (issue 26): a native-Kubernetes cluster may not run as the namespace's
  ``default`` service account (AP6501: accelplane binds its Role, which creates and deletes pods and
  writes ConfigMaps, to the account; ``default`` is the account of every pod in the namespace that
  names none, so all of them would get those rights); Flink clusters do not belong in ``kube-system``
  (AP6502: hostPath TaskManagers and a Role next to the control plane's components) and should not
  run in another namespace of the system or of an installation accelplane knows (AP6503, a warning:
  ``kube-public``, ``kube-node-lease``, the Volcano and the GPU Operator namespaces);
* MIG pools: the pool name is the MIG manager layout name, so it cannot be ``all-disabled``; a pool
  label ``nvidia.com/mig.config`` must name the pool (accelplane derives it).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.flink_rbac import native_service_accounts
from accelplane.derive.mig_parted import ALL_DISABLED, MIG_CONFIG_LABEL, mig_config_name, mig_pools
from accelplane.derive.namespaces import external_namespace_owner, namespace_uses
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import Spec

NAMESPACE_UNUSED = declare(
    'AP6101', WARNING, 'namespace settings for a namespace no object of the stack lives in',
    fix='remove the entry or fix the name', whole_spec=True,
)
NAMESPACE_EXTERNAL = declare(
    'AP6102', WARNING, 'namespace settings for a namespace another component creates (never accelplane)',
    fix='remove the entry',
)
SERVICE_ACCOUNT_OPERATOR_CLASH = declare(
    'AP6001', ERROR, "a native cluster's service account is the operator's job service account",
    fix='give the cluster its own service account',
)
MIG_POOL_NAME_RESERVED = declare(
    'AP3051', ERROR, 'a MIG pool is named after the layout that turns MIG off',
    fix='rename the pool',
)
MIG_CONFIG_LABEL_MISMATCH = declare(
    'AP3052', ERROR, "a pool's nvidia.com/mig.config label differs from its derived layout",
    fix='remove the label or set it to the derived layout',
)
DEFAULT_SERVICE_ACCOUNT = declare(
    "AP6501", ERROR,
    "a native-Kubernetes Flink cluster runs as the namespace's default service account, so accelplane's "
    "Role (create/delete pods, write ConfigMaps) would be bound to every pod that names no account",
    fix="give the cluster its own serviceAccount, e.g. flink",
)  # fmt: skip
FLINK_IN_KUBE_SYSTEM = declare(
    "AP6502", ERROR,
    "a Flink cluster in kube-system puts hostPath TaskManagers and a Role next to the control plane",
    fix="use a namespace of its own, e.g. flink",
)  # fmt: skip
FLINK_IN_SYSTEM_NAMESPACE = declare(
    "AP6503", WARNING,
    "a Flink cluster runs in a namespace of the system or of another installation",
    fix="use a namespace of its own, e.g. flink",
)  # fmt: skip

DEFAULT_ACCOUNT = "default"
KUBE_SYSTEM = "kube-system"
APPLICATION_NAMESPACE = "default"
"""The namespace Kubernetes puts workloads into when they name none: a system namespace
accelplane never creates, but no place of the system's components, so Flink may run there."""


def _check_settings(spec: Spec) -> Iterator[Problem]:
    used = {u.name for u in namespace_uses(spec)}
    for settings in spec.namespaces:
        owner = external_namespace_owner(spec, settings.name)
        if settings.name not in used:
            shown = ", ".join(sorted(used)) or "none"
            yield Problem(
                settings.path,
                f"no object of this stack lives in namespace {settings.name!r} (used: {shown}); remove the entry", NAMESPACE_UNUSED,
            )
        elif owner is not None:
            yield Problem(
                settings.path,
                f"namespace {settings.name!r} is created by {owner}, never by accelplane; remove the entry", NAMESPACE_EXTERNAL,
            )


def _check_service_accounts(spec: Spec) -> Iterator[Problem]:
    if not spec.has_platform("kubernetes"):
        return
    operator = {
        (c.namespace, c.service_account): c for c in spec.flink_clusters if c.target == "kubernetes-operator"
    }
    for c in spec.flink_clusters:
        other = operator.get((c.namespace, c.service_account)) if c.target == "kubernetes" else None
        if other is not None:
            yield Problem(
                c.field_path("serviceAccount"),
                f"service account {c.service_account!r} in namespace {c.namespace!r} is the Flink Kubernetes "
                f"Operator's job service account for operator cluster {other.name} (its Helm chart creates it "
                "with its own Role), and accelplane would create it again for this native cluster; give this "
                "cluster another serviceAccount or another namespace", SERVICE_ACCOUNT_OPERATOR_CLASH,
            )


def _check_least_privilege(spec: Spec) -> Iterator[Problem]:
    for (namespace, account), clusters in native_service_accounts(spec).items():
        if account == DEFAULT_ACCOUNT:
            names = ", ".join(c.name for c in clusters)
            yield Problem(
                clusters[0].field_path("serviceAccount"),
                f"accelplane binds the Role of native Kubernetes cluster(s) {names} (create and delete pods, "
                f"write ConfigMaps) to this service account, and 'default' is the account of every pod in "
                f"namespace {namespace!r} that names none, so all of them would get those rights; use an "
                "account of the cluster's own, e.g. serviceAccount: flink",
                DEFAULT_SERVICE_ACCOUNT,
            )
    if not spec.has_platform("kubernetes"):
        return
    for c in spec.flink_clusters:
        if not c.on_kubernetes or c.namespace == APPLICATION_NAMESPACE:
            continue
        owner = external_namespace_owner(spec, c.namespace)
        if c.namespace == KUBE_SYSTEM:
            yield Problem(
                c.field_path("namespace"),
                "kube-system holds the control plane's components: a Flink cluster there puts hostPath "
                "TaskManagers and a Role that creates pods next to them; use a namespace of its own, "
                "e.g. namespace: flink",
                FLINK_IN_KUBE_SYSTEM,
            )
        elif owner is not None:
            yield Problem(
                c.field_path("namespace"),
                f"namespace {c.namespace!r} belongs to {owner}: a Flink cluster there shares it (and its "
                "Pod Security level and RBAC) with that installation; use a namespace of its own, "
                "e.g. namespace: flink",
                FLINK_IN_SYSTEM_NAMESPACE,
            )


def _check_mig(spec: Spec) -> Iterator[Problem]:
    for pool in mig_pools(spec):
        if pool.name == ALL_DISABLED:
            yield Problem(
                (*pool.path, "name"),
                f"a MIG pool's name is its MIG manager layout (nvidia.com/mig.config), and {ALL_DISABLED!r} is "
                "the layout that turns MIG off; rename the pool", MIG_POOL_NAME_RESERVED,
            )
        declared = dict(pool.labels).get(MIG_CONFIG_LABEL)
        if declared is not None and declared != mig_config_name(pool):
            yield Problem(
                (*pool.path, "labels", MIG_CONFIG_LABEL),
                f"the MIG manager layout of this pool is {mig_config_name(pool)!r} (derived from gpu.mig and "
                f"the pool name); remove the label or set it to {mig_config_name(pool)!r}", MIG_CONFIG_LABEL_MISMATCH,
            )


def check(spec: Spec) -> Iterator[Problem]:
    """Every namespace, service-account and MIG-layout problem."""
    yield from _check_settings(spec)
    yield from _check_service_accounts(spec)
    yield from _check_least_privilege(spec)
    yield from _check_mig(spec)
