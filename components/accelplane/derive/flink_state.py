"""What a Flink cluster's ``config`` says about high availability, checkpoints and savepoints.

Flink reads each option under its key, then its fallback (deprecated) keys in order; the first key
present wins. The key lists below are those of Flink 1.20's ``ConfigOption``s (``CheckpointingOptions
.CHECKPOINTS_DIRECTORY``, ``SAVEPOINT_DIRECTORY``, ``HighAvailabilityOptions.HA_MODE``,
``HA_STORAGE_PATH``), the Flink the Flink Kubernetes Operator 1.15 validates with; the tests compare
every derivation here with those classes. ``HighAvailabilityMode.fromConfig``: unset, ``NONE`` and
``standalone`` (any case) mean no HA, ``ZOOKEEPER``/``KUBERNETES`` name the built-in services and any
other value is a factory class name (HA on).
"""

from __future__ import annotations

from typing import Literal

from accelplane.model import FlinkCluster

CHECKPOINTS_DIR_KEYS = (
    "execution.checkpointing.dir",
    "state.checkpoints.dir",
    "state.backend.fs.checkpointdir",
)
SAVEPOINTS_DIR_KEYS = (
    "execution.checkpointing.savepoint-dir",
    "state.savepoints.dir",
    "savepoints.state.backend.fs.dir",
)
RENAMED_IN = (1, 20)
"""Flink 1.20 renamed the checkpoint and savepoint directory options (FLINK-34482, FLIP-406);
older Flink reads only the former names."""
HA_TYPE_KEYS = ("high-availability.type", "recovery.mode", "high-availability")
HA_STORAGE_KEYS = (
    "high-availability.storageDir",
    "high-availability.zookeeper.storageDir",
    "recovery.zookeeper.storageDir",
)
HOST_NETWORK_KEY = "kubernetes.hostnetwork.enabled"

HaMode = Literal["none", "zookeeper", "kubernetes", "factory"]


def config_value(cluster: FlinkCluster, keys: tuple[str, ...]) -> tuple[str, str] | None:
    """``(key, value as text)`` of the first of ``keys`` set in the cluster's ``config`` (Flink's
    fallback order), or None."""
    config = dict(cluster.config)
    for key in keys:
        if key in config:
            value = config[key]
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            return key, text
    return None


def checkpoints_dir_keys(cluster: FlinkCluster) -> tuple[str, ...]:
    """Keys the cluster's Flink reads its checkpoint directory from."""
    return CHECKPOINTS_DIR_KEYS if cluster.version_tuple >= RENAMED_IN else CHECKPOINTS_DIR_KEYS[1:]


def savepoints_dir_keys(cluster: FlinkCluster) -> tuple[str, ...]:
    """Keys the cluster's Flink reads its default savepoint directory from."""
    return SAVEPOINTS_DIR_KEYS if cluster.version_tuple >= RENAMED_IN else SAVEPOINTS_DIR_KEYS[1:]


def is_set(cluster: FlinkCluster, keys: tuple[str, ...]) -> bool:
    """True when the option is set to something other than whitespace (the operator's
    ``StringUtils.isNullOrWhitespaceOnly`` test)."""
    found = config_value(cluster, keys)
    return found is not None and found[1].strip() != ""


def ha_mode(cluster: FlinkCluster) -> HaMode:
    """The cluster's high-availability mode, as Flink's ``HighAvailabilityMode.fromConfig`` reads it."""
    found = config_value(cluster, HA_TYPE_KEYS)
    if found is None:
        return "none"
    value = found[1]
    if value.lower() in ("none", "standalone"):
        return "none"
    if value.upper() in ("ZOOKEEPER", "KUBERNETES"):
        return "zookeeper" if value.upper() == "ZOOKEEPER" else "kubernetes"
    return "factory"


def ha_enabled(cluster: FlinkCluster) -> bool:
    """``HighAvailabilityMode.isHighAvailabilityModeActivated``."""
    return ha_mode(cluster) != "none"


def uses_host_network(cluster: FlinkCluster) -> bool:
    """True when ``kubernetes.hostnetwork.enabled`` puts Flink's pods on the host network."""
    found = config_value(cluster, (HOST_NETWORK_KEY,))
    return found is not None and found[1].strip().lower() == "true"
