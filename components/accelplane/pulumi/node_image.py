"""Node-side families: the GPU discovery script ConfigMaps (``discovery``) and the node image build
context / host provisioning files (``node-image``), which no Kubernetes API receives."""

from __future__ import annotations

from typing import Any

from accelplane.pulumi.family import FamilyComponent


class Discovery(FamilyComponent):
    """``accelplane:discovery:Discovery``: content-addressed, immutable discovery-script ConfigMaps.

    Extra output: ``configMaps`` (``namespace/name``; the name carries the script's content hash).
    """

    def extra_outputs(self) -> dict[str, Any]:
        """Discovery ConfigMap names."""
        return {"configMaps": self.names_of("ConfigMap")}


class NodeImage(FamilyComponent):
    """``accelplane:node_image:NodeImage``: node image context and host files (digests in ``files``),
    plus any ConfigMaps the family emits (``configMaps``)."""

    def extra_outputs(self) -> dict[str, Any]:
        """ConfigMap names."""
        return {"configMaps": self.names_of("ConfigMap")}
