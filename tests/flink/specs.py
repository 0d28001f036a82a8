"""Small spec documents for the Flink tests (write them with `tests.support.specs.write_spec`)."""

from __future__ import annotations

import copy
from typing import Any

A100_POOL: dict[str, Any] = {
    "name": "a100",
    "nodes": 2,
    "cpu": 96,
    "memory": "1024Gi",
    "gpu": {"vendor": "nvidia", "model": "NVIDIA A100-SXM4-80GB", "perNode": 8},
    "labels": {"accelplane.io/pool": "a100"},
    "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
}

KUBERNETES: dict[str, Any] = {
    "cluster": {"name": "test", "platforms": ["kubernetes"]},
    "nodePools": [A100_POOL],
    "priorityClasses": [{"name": "flink-critical", "value": 100000}],
    "queues": [
        {"name": "streaming", "capability": {"cpu": 64, "memory": "512Gi", "pods": 50, "nvidia.com/gpu": 16}}
    ],
    "flink": {
        "clusters": [
            {
                "name": "job1",
                "target": "kubernetes",
                "version": "1.20",
                "image": "registry.example.internal/flink-gpu:1.20.5-py3",
                "namespace": "flink",
                "queue": "streaming",
                "priorityClass": "flink-critical",
                "jobManager": {"cpu": 1, "memory": "2Gi"},
                "taskManager": {
                    "replicas": 2,
                    "slots": 2,
                    "cpu": 4,
                    "memory": "8Gi",
                    "gpu": {"amount": 2, "pool": "a100"},
                },
            }
        ]
    },
}

STANDALONE: dict[str, Any] = {
    "cluster": {"name": "edge", "platforms": ["standalone"]},
    "nodePools": [
        {
            "name": "hosts",
            "platform": "standalone",
            "nodes": 1,
            "hosts": ["gpu-host-1.example.internal"],
            "gpu": {"vendor": "nvidia", "perNode": 4},
        }
    ],
    "flink": {
        "clusters": [
            {
                "name": "edge-gpu",
                "target": "standalone",
                "mode": "session",
                "version": "1.20",
                "jobManager": {"cpu": 1, "memory": "1Gi"},
                "taskManager": {
                    "replicas": 2,
                    "slots": 1,
                    "cpu": 1,
                    "memory": "1Gi",
                    "gpu": {"amount": 2, "pool": "hosts"},
                },
            }
        ]
    },
}


def variant(base: dict[str, Any], **cluster: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with the first Flink cluster's fields updated (``None`` deletes)."""
    data = copy.deepcopy(base)
    target = data["flink"]["clusters"][0]
    for key, value in cluster.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value
    return data
