"""What a Flink cluster's ``config`` says about high availability, checkpoints and savepoints.

Flink reads each option under its key, then its fallback (deprecated) keys in order; the first key
present wins. Which names a cluster's Flink reads comes from the option tables of its release
(`accelplane.flink_options.option_names`, extracted from each flink-dist): the checkpoint directory
is ``execution.checkpointing.dir`` then ``state.checkpoints.dir`` … on 1.20 and later
(``CheckpointingOptions.CHECKPOINTS_DIRECTORY``, FLINK-34482/FLIP-406), only the former names
before; the high-availability mode is ``high-availability.type`` from 1.16 on, ``high-availability``
before (``HighAvailabilityOptions.HA_MODE``). The tests compare the 1.20 derivations with Flink's
classes. ``HighAvailabilityMode.fromConfig``: unset, ``NONE`` and
``standalone`` (any case) mean no HA, ``ZOOKEEPER``/``KUBERNETES`` name the built-in services and any
other value is a factory class name (HA on).
"""

from __future__ import annotations

from typing import Literal

from accelplane.flink_options import option_names
from accelplane.model import FlinkCluster

# Each option by a name every release with a table reads (1.13 … 2.3: the option's key in some, a
# fallback key in others), so finding its names needs only the cluster's own table.
CHECKPOINTS_DIR = "state.checkpoints.dir"
"""``CheckpointingOptions.CHECKPOINTS_DIRECTORY`` (``execution.checkpointing.dir`` from 1.20)."""
SAVEPOINTS_DIR = "state.savepoints.dir"
"""``CheckpointingOptions.SAVEPOINT_DIRECTORY`` (``execution.checkpointing.savepoint-dir`` from 1.20)."""
HA_TYPE = "high-availability"
"""``HighAvailabilityOptions.HA_MODE`` (``high-availability.type`` from 1.16)."""
HA_STORAGE = "high-availability.storageDir"
"""``HighAvailabilityOptions.HA_STORAGE_PATH``."""
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


def option_keys(cluster: FlinkCluster, option: str) -> tuple[str, ...]:
    """The names the cluster's Flink reads ``option`` under, in its order (the option tables)."""
    return option_names(cluster.version_tuple, option)


def checkpoints_dir_keys(cluster: FlinkCluster) -> tuple[str, ...]:
    """Keys the cluster's Flink reads its checkpoint directory from."""
    return option_keys(cluster, CHECKPOINTS_DIR)


def savepoints_dir_keys(cluster: FlinkCluster) -> tuple[str, ...]:
    """Keys the cluster's Flink reads its default savepoint directory from."""
    return option_keys(cluster, SAVEPOINTS_DIR)


def ha_type_keys(cluster: FlinkCluster) -> tuple[str, ...]:
    """Keys the cluster's Flink reads its high-availability mode from."""
    return option_keys(cluster, HA_TYPE)


def ha_storage_keys(cluster: FlinkCluster) -> tuple[str, ...]:
    """Keys the cluster's Flink reads its high-availability storage directory from."""
    return option_keys(cluster, HA_STORAGE)


def is_set(cluster: FlinkCluster, keys: tuple[str, ...]) -> bool:
    """True when the option is set to something other than whitespace (the operator's
    ``StringUtils.isNullOrWhitespaceOnly`` test)."""
    found = config_value(cluster, keys)
    return found is not None and found[1].strip() != ""


def ha_mode(cluster: FlinkCluster) -> HaMode:
    """The cluster's high-availability mode, as Flink's ``HighAvailabilityMode.fromConfig`` reads it."""
    found = config_value(cluster, ha_type_keys(cluster))
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
