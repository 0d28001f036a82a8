"""Flink family: FlinkDeployments (operator target), PodGroups, pod-template ConfigMaps, and the
Flink configuration files that reach Flink outside any Kubernetes API (recorded as digests)."""

from __future__ import annotations

from typing import Any

from accelplane.pulumi.family import FamilyComponent


class Flink(FamilyComponent):
    """``accelplane:flink:Flink``.

    Extra outputs: ``flinkDeployments``, ``podGroupNames`` and ``configMaps`` (``namespace/name``).
    """

    def extra_outputs(self) -> dict[str, Any]:
        """FlinkDeployment, PodGroup and ConfigMap names."""
        return {
            "flinkDeployments": self.names_of("FlinkDeployment"),
            "podGroupNames": self.names_of("PodGroup"),
            "configMaps": self.names_of("ConfigMap"),
        }
