"""Generate large, valid cluster specs for benchmarks.

One *unit* is what one product team brings to a shared platform: a GPU node pool, a parent queue
with four leaf queues and ten Flink clusters. ``make_spec(100)`` is the top of the benchmark range:
100 pools, 500 queues, 1,000 Flink clusters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

LEAVES = 4
CLUSTERS = 10


def make_spec(units: int) -> dict[str, Any]:
    """A schema- and semantically valid Kubernetes spec with ``units`` teams."""
    pools, queues, clusters = [], [], []
    for u in range(units):
        team = f"team{u:03d}"
        pools.append(
            {
                "name": f"{team}-a100",
                "nodes": 8,
                "cpu": 96,
                "memory": "1024Gi",
                "gpu": {"vendor": "nvidia", "model": "NVIDIA A100-SXM4-80GB", "perNode": 8},
                "labels": {"accelplane.io/pool": f"{team}-a100"},
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            }
        )
        queues.append(
            {
                "name": team,
                "capability": {"cpu": 768, "memory": "8Ti", "pods": 400, "nvidia.com/gpu": 64},
                "deserved": {"cpu": 384, "memory": "4Ti", "nvidia.com/gpu": 32},
            }
        )
        for leaf in range(LEAVES):
            queues.append(
                {
                    "name": f"{team}-q{leaf}",
                    "parent": team,
                    "capability": {"cpu": 192, "memory": "2Ti", "pods": 100, "nvidia.com/gpu": 16},
                    "deserved": {"cpu": 96, "memory": "1Ti", "nvidia.com/gpu": 8},
                }
            )
        for c in range(CLUSTERS):
            clusters.append(
                {
                    "name": f"{team}-job{c}",
                    "target": "kubernetes",
                    "namespace": f"{team}",
                    "queue": f"{team}-q{c % LEAVES}",
                    "priorityClass": "flink-critical" if c % 2 else "flink-batch",
                    "jobManager": {"cpu": 1, "memory": "2Gi"},
                    "taskManager": {
                        "replicas": 2,
                        "slots": 2,
                        "cpu": 2,
                        "memory": "4Gi",
                        "gpu": {"amount": 1, "pool": f"{team}-a100"},
                    },
                    "job": {"jarURI": f"local:///opt/flink/usrlib/{team}-job{c}.jar", "entryClass": "com.example.Job"},
                }
            )
    return {
        "cluster": {"name": f"bench-{units}", "platforms": ["kubernetes"]},
        "nodePools": pools,
        "priorityClasses": [
            {"name": "flink-critical", "value": 100000, "preemptionPolicy": "PreemptLowerPriority"},
            {"name": "flink-batch", "value": 1000, "preemptionPolicy": "Never"},
        ],
        "queues": queues,
        "flink": {"defaults": {"version": "1.20", "discovery": {"coordination": True}}, "clusters": clusters},
        # the clusters run the node image (Flink + python3 + the discovery script), as the README's
        # walkthrough does: the stock flink image has no python3 (AP8010)
        "nodeImage": {"baseImage": "flink:1.20.1-java17", "image": "registry.example.com/flink-gpu:1.20.1-java17-1"},
    }


def write_spec(units: int, directory: Path) -> Path:
    """Write ``make_spec(units)`` to ``directory/bench-<units>.yaml`` and return the path."""
    path = directory / f"bench-{units}.yaml"
    path.write_text(yaml.safe_dump(make_spec(units), sort_keys=False), encoding="utf-8")
    return path
