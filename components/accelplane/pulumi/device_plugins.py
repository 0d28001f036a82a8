"""Device-plugin family: NVIDIA/AMD device-plugin DaemonSets, their ConfigMaps and RBAC."""

from __future__ import annotations

from typing import Any

from accelplane.pulumi.family import FamilyComponent


class DevicePlugins(FamilyComponent):
    """``accelplane:device_plugins:DevicePlugins``.

    Extra outputs: ``daemonSets`` and ``configMaps`` (``namespace/name``), ``serviceAccounts``.
    """

    def extra_outputs(self) -> dict[str, Any]:
        """DaemonSet, ConfigMap and ServiceAccount names."""
        return {
            "daemonSets": self.names_of("DaemonSet"),
            "configMaps": self.names_of("ConfigMap"),
            "serviceAccounts": self.names_of("ServiceAccount"),
        }
