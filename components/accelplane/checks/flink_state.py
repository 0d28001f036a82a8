"""Checkpoints, savepoints, high availability and the Flink Kubernetes Operator's admission rules.

The operator rules are those of Flink Kubernetes Operator **1.15.0** (release tag ``release-1.15.0``,
commit 79d730bab4d8403f3a447fb027f879f5cbdc59ad), ``flink-kubernetes-operator/src/main/java/org/
apache/flink/kubernetes/operator/validation/DefaultValidator.java``, that a spec can break; the
operator refuses such a FlinkDeployment and never starts the cluster:

* ``validateJobSpec``: upgrade modes ``savepoint`` and ``last-state`` need a checkpoint directory
  (``execution.checkpointing.dir``, formerly ``state.checkpoints.dir``); ``savepoint`` also a
  savepoint directory (``execution.checkpointing.savepoint-dir``, formerly ``state.savepoints.dir``),
  as do periodic savepoints (``kubernetes.operator.periodic.savepoint.interval``) and the last-state
  checkpoint age limit (``kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age``);
* ``validateFlinkDeploymentConfig``: rollbacks (``kubernetes.operator.deployment.rollback.enabled``)
  need HA; the cluster health check needs JobManager deployment recovery;
* ``validateFlinkVersion``: ``flinkVersion`` must be a ``FlinkVersion`` the operator knows
  (``v1_13`` … ``v2_4``) and supports (``isSupported``: 1.15 or newer; the lower bound is checked
  in `accelplane.checks.flink`);
* job vs. session: a session FlinkDeployment has no job, an application one needs ``jarURI``
  (`accelplane.checks.flink`).

``last-state`` also needs high availability here: operators up to 1.9 rejected it in
``validateJobSpec`` ("Job could not be upgraded with last-state while HA disabled"); 1.10+ accept it,
but ``ApplicationReconciler.getJobUpgrade`` then fails every upgrade whose JobManager is gone
("HA metadata not available to make stateful upgrades"), so the mode would not do what it says.

For every target, Flink itself refuses to start a JobManager with ZooKeeper or Kubernetes HA but
no ``high-availability.storageDir`` (``BlobUtils.createBlobStoreFromConfig``).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.derive.flink_state import (
    checkpoints_dir_keys,
    config_value,
    ha_enabled,
    ha_mode,
    ha_storage_keys,
    ha_type_keys,
    is_set,
    savepoints_dir_keys,
)
from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkCluster, Spec

OPERATOR_FLINK_TOO_NEW = declare(
    'AP4020', ERROR, 'the Flink Kubernetes Operator does not know this Flink version',
    fix='use a version the operator supports or target kubernetes',
)
UPGRADE_NEEDS_CHECKPOINTS = declare(
    'AP4021', ERROR, 'upgradeMode restores from checkpoints but no checkpoint directory is set',
    fix='set the checkpoint directory the message names',
)
UPGRADE_NEEDS_SAVEPOINTS = declare(
    'AP4022', ERROR, 'upgradeMode savepoint without a savepoint directory',
    fix='set the savepoint directory the message names',
)
LAST_STATE_NEEDS_HA = declare(
    'AP4023', ERROR, 'upgradeMode last-state without high availability',
    fix='enable HA or use upgradeMode savepoint',
)
SAVEPOINTS_NEED_DIRECTORY = declare(
    'AP4024', ERROR, 'a savepoint setting without a savepoint directory',
    fix='set the savepoint directory the message names',
)
ROLLBACK_NEEDS_HA = declare(
    'AP4025', ERROR, 'rollbacks without high availability',
    fix='set config.high-availability.type',
)
HEALTH_CHECK_NEEDS_RECOVERY = declare(
    'AP4026', ERROR, 'the cluster health check without JobManager recovery',
    fix='set the recovery key the message names to true',
)
NATIVE_UPGRADE_MODE_IGNORED = declare(
    'AP4103', WARNING, 'upgradeMode on a native Kubernetes cluster has no effect',
    fix='remove it or use target kubernetes-operator',
)
HA_NEEDS_STORAGE_DIR = declare(
    'AP4027', ERROR, 'high availability without high-availability.storageDir',
    fix='set config.high-availability.storageDir',
)

OPERATOR_VERSION = "1.15.0"
OPERATOR_SOURCE = f"Flink Kubernetes Operator {OPERATOR_VERSION} DefaultValidator"
NEWEST_OPERATOR_FLINK = (2, 4)
PERIODIC_SAVEPOINT_KEY = "kubernetes.operator.periodic.savepoint.interval"
CHECKPOINT_AGE_KEY = "kubernetes.operator.job.upgrade.last-state.max.allowed.checkpoint.age"
ROLLBACK_KEY = "kubernetes.operator.deployment.rollback.enabled"
HEALTH_CHECK_KEY = "kubernetes.operator.cluster.health-check.enabled"
JM_RECOVERY_KEY = "kubernetes.operator.jm-deployment-recovery.enabled"


def _flag(c: FlinkCluster, key: str, default: bool) -> bool:
    found = config_value(c, (key,))
    return default if found is None else found[1].strip().lower() == "true"


def _dir_hint(keys: tuple[str, ...]) -> str:
    """``config.<current name>`` and, when this Flink has one, the former name it still reads."""
    return f"config.{keys[0]}" + (f" (or its former name {keys[1]})" if len(keys) > 2 else "")


def _check_operator(c: FlinkCluster) -> Iterator[Problem]:
    if c.version_tuple > NEWEST_OPERATOR_FLINK:
        yield Problem(
            c.field_path("version"),
            f"the {OPERATOR_SOURCE} knows Flink up to {NEWEST_OPERATOR_FLINK[0]}.{NEWEST_OPERATOR_FLINK[1]} "
            f"(flinkVersion v{NEWEST_OPERATOR_FLINK[0]}_{NEWEST_OPERATOR_FLINK[1]}); use a Flink version it "
            "supports or target kubernetes", OPERATOR_FLINK_TOO_NEW,
        )
    mode = c.job.upgrade_mode if c.job is not None else None
    mode_path = c.field_path("job", "upgradeMode")
    if mode in ("savepoint", "last-state") and not is_set(c, checkpoints_dir_keys(c)):
        yield Problem(
            mode_path,
            f"upgradeMode {mode} restores from checkpoints: set {_dir_hint(checkpoints_dir_keys(c))}; the "
            f"{OPERATOR_SOURCE} rejects the FlinkDeployment without it", UPGRADE_NEEDS_CHECKPOINTS,
        )
    has_savepoint_dir = is_set(c, savepoints_dir_keys(c))
    if mode == "savepoint" and not has_savepoint_dir:
        yield Problem(
            mode_path,
            f"upgradeMode savepoint takes a savepoint on every upgrade: set {_dir_hint(savepoints_dir_keys(c))}; "
            f"the {OPERATOR_SOURCE} rejects the FlinkDeployment without it", UPGRADE_NEEDS_SAVEPOINTS,
        )
    if mode == "last-state" and not ha_enabled(c):
        yield Problem(
            mode_path,
            "upgradeMode last-state restores from the HA metadata; without high availability "
            "(config.high-availability.type: kubernetes and config.high-availability.storageDir) the "
            "operator cannot upgrade a job whose JobManager is gone; enable HA or use upgradeMode savepoint", LAST_STATE_NEEDS_HA,
        )
    if not has_savepoint_dir:
        for key, what in (
            (PERIODIC_SAVEPOINT_KEY, "periodic savepoints"),
            (CHECKPOINT_AGE_KEY, "the checkpoint age limit"),
        ):
            if config_value(c, (key,)) is not None:
                yield Problem(
                    c.field_path("config", key),
                    f"{what} need a savepoint directory: set {_dir_hint(savepoints_dir_keys(c))}; the "
                    f"{OPERATOR_SOURCE} rejects the FlinkDeployment without it", SAVEPOINTS_NEED_DIRECTORY,
                )
    if _flag(c, ROLLBACK_KEY, False) and not ha_enabled(c):
        yield Problem(
            c.field_path("config", ROLLBACK_KEY),
            f"rollbacks need high availability (config.high-availability.type); the {OPERATOR_SOURCE} "
            "rejects the FlinkDeployment without it", ROLLBACK_NEEDS_HA,
        )
    if _flag(c, HEALTH_CHECK_KEY, False) and not _flag(c, JM_RECOVERY_KEY, True):
        yield Problem(
            c.field_path("config", HEALTH_CHECK_KEY),
            f"the cluster health check needs {JM_RECOVERY_KEY}: true; the {OPERATOR_SOURCE} rejects the "
            "FlinkDeployment otherwise", HEALTH_CHECK_NEEDS_RECOVERY,
        )


def check(spec: Spec) -> Iterator[Problem]:
    """Every checkpoint/savepoint/HA problem and every operator admission problem of the spec."""
    for c in spec.flink_clusters:
        if c.target == "kubernetes-operator":
            yield from _check_operator(c)
        elif c.target == "kubernetes" and c.job is not None and c.job.upgrade_mode is not None:
            yield Problem(
                c.field_path("job", "upgradeMode"),
                "upgradeMode is a Flink Kubernetes Operator setting and native Kubernetes (target "
                "kubernetes) would ignore it; remove it or use target kubernetes-operator", NATIVE_UPGRADE_MODE_IGNORED,
            )
        if ha_mode(c) in ("zookeeper", "kubernetes") and not is_set(c, ha_storage_keys(c)):
            found = config_value(c, ha_type_keys(c))
            assert found is not None
            yield Problem(
                c.field_path("config", found[0]),
                f"{ha_mode(c)} high availability keeps its metadata in high-availability.storageDir; Flink "
                "refuses to start the JobManager without it: set config.high-availability.storageDir", HA_NEEDS_STORAGE_DIR,
            )
