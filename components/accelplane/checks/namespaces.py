"""Namespaces, service accounts and MIG layouts a fresh cluster gets from the stack.

* ``namespaces.<name>``: must be a namespace the stack's objects live in, and one accelplane could
  create (not a system, Volcano or GPU Operator namespace, which always come from elsewhere);
* a native-Kubernetes cluster's service account (which accelplane creates with its Role) must not be
  the job service account the Flink Kubernetes Operator's Helm chart creates for an operator cluster
  in the same namespace (``jobServiceAccount``): two owners of one object;
* MIG pools: the pool name is the MIG manager layout name, so it cannot be ``all-disabled``; a pool
  label ``nvidia.com/mig.config`` must name the pool (accelplane derives it).
"""

from __future__ import annotations

from collections.abc import Iterator

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
    yield from _check_mig(spec)
