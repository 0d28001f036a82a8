"""The ``yunikorn-configs`` ConfigMap: Apache YuniKorn's queue configuration derived from the queue model.

YuniKorn's Kubernetes shim watches this ConfigMap in its own namespace and hands ``queues.yaml`` to
the core, which parses and validates it (apache/yunikorn-core ``configs.ParseAndValidateConfig``)
and keeps the previous configuration when the new one is rejected. The document itself is
`accelplane.derive.yunikorn.scheduler_config`; `accelplane.checks.yunikorn` rejects the specs
whose document YuniKorn would reject.
"""

from __future__ import annotations

from accelplane.artifacts import Bundle, k8s_object
from accelplane.derive.yunikorn import CONFIGMAP, QUEUES_KEY, scheduler_config
from accelplane.model import Spec
from accelplane.yaml_io import dump_yaml

FAMILY = "scheduling"


def queues_yaml(spec: Spec) -> str:
    """Text of ``queues.yaml`` for this spec."""
    return dump_yaml(scheduler_config(spec))


def build(spec: Spec) -> Bundle:
    """The ConfigMap, on a YuniKorn Kubernetes cluster that lets accelplane manage it."""
    bundle = Bundle()
    if not spec.uses_yunikorn or not spec.yunikorn.manage_queue_config:
        return bundle
    bundle.objects.append(
        k8s_object(
            "v1",
            "ConfigMap",
            CONFIGMAP,
            family=FAMILY,
            namespace=spec.yunikorn.namespace,
            labels=spec.common_labels(),
            body={"data": {QUEUES_KEY: queues_yaml(spec)}},
        )
    )
    return bundle
