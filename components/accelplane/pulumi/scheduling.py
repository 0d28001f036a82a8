"""Scheduling family: Volcano Queues, PriorityClasses, the Volcano scheduler ConfigMap, YuniKorn's
``yunikorn-configs`` ConfigMap or Kueue's ResourceFlavors, Cohorts, ClusterQueues and LocalQueues (and PodGroups when the PodGroup builder tags them ``scheduling``)."""

from __future__ import annotations

from typing import Any

from accelplane.builders.volcano import SCHEDULER_CONFIGMAP
from accelplane.derive.yunikorn import CONFIGMAP as YUNIKORN_CONFIGMAP
from accelplane.pulumi.family import FamilyComponent


class Scheduling(FamilyComponent):
    """``accelplane:scheduling:Scheduling``.

    Extra outputs: ``queueNames``, ``priorityClassNames``, ``podGroupNames`` (``namespace/name``) and
    ``schedulerConfigMap`` (``namespace/name`` of the Volcano scheduler ConfigMap, empty when the spec
    leaves it to Volcano's own installation) and ``yunikornConfigMap`` (``namespace/name`` of YuniKorn's
    queue ConfigMap, empty on a Volcano cluster or when the spec leaves it to YuniKorn's installation);
    on a Kueue cluster ``resourceFlavorNames``, ``clusterQueueNames`` and ``localQueueNames``
    (``namespace/name``), empty elsewhere.
    """

    def extra_outputs(self) -> dict[str, Any]:
        """Queue, PriorityClass and PodGroup names, and the scheduler ConfigMap."""
        configmaps = [n for n in self.names_of("ConfigMap") if n.endswith(f"/{SCHEDULER_CONFIGMAP}")]
        yunikorn = [n for n in self.names_of("ConfigMap") if n.endswith(f"/{YUNIKORN_CONFIGMAP}")]
        return {
            "queueNames": self.names_of("Queue"),
            "priorityClassNames": self.names_of("PriorityClass"),
            "podGroupNames": self.names_of("PodGroup"),
            "schedulerConfigMap": configmaps[0] if configmaps else "",
            "yunikornConfigMap": yunikorn[0] if yunikorn else "",
            "resourceFlavorNames": self.names_of("ResourceFlavor"),
            "clusterQueueNames": self.names_of("ClusterQueue"),
            "localQueueNames": self.names_of("LocalQueue"),
        }
