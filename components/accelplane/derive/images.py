"""The container image a Flink cluster runs (one place, read by the Flink config and YARN Docker)."""

from __future__ import annotations

from accelplane.model import FlinkCluster


def flink_image(cluster: FlinkCluster) -> str:
    """The Flink image of the cluster's pods and containers (``flink:<version>-java17`` when unset)."""
    return cluster.image or f"flink:{cluster.version}-java17"
