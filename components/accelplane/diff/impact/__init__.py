"""The short "what does this change do to the cluster" summary, derived from the artifact diffs.

One module per category (`queues`, `flink`, `node_wide`, `yarn`, `pulumi`, `day2`); every rule is generic
over file kinds, so families that land later are covered. `impacts` runs them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from accelplane.diff.changes import ArtifactDiff
from accelplane.diff.impact.common import CATEGORY_TITLES, Impact
from accelplane.diff.impact.day2 import day2_impacts
from accelplane.diff.impact.flink import flink_impacts
from accelplane.diff.impact.node_wide import node_impacts
from accelplane.diff.impact.pulumi import pulumi_impacts
from accelplane.diff.impact.queues import queue_impacts
from accelplane.diff.impact.yarn import yarn_impacts
from accelplane.diff.impact.yarn_day2 import yarn_day2_impacts
from accelplane.diff.values import same
from accelplane.model import Spec


def impacts(
    artifacts: list[ArtifactDiff],
    manifests: Iterable[Any] = (),
    old: Spec | None = None,
    new: Spec | None = None,
) -> list[Impact]:
    """The impact summary of a diff, ordered by category then subject (duplicates removed).

    ``manifests`` are every Kubernetes object of both sides (new side last), used to find which
    DaemonSets read a changed ConfigMap; ``old``/``new`` are the models when a side came from a
    spec, used to name the pools a DaemonSet covers.
    """
    found = [
        *queue_impacts(artifacts),
        *flink_impacts(artifacts),
        *node_impacts(artifacts, list(manifests), old, new),
        *yarn_impacts(artifacts),
        *yarn_day2_impacts(artifacts),
        *pulumi_impacts(artifacts),
        *day2_impacts(artifacts, list(manifests), old, new),
    ]
    order = list(CATEGORY_TITLES)
    unique: list[Impact] = []
    for item in found:
        if not any(same(item.to_json(), u.to_json()) for u in unique):
            unique.append(item)
    return sorted(unique, key=lambda i: (order.index(i.category), i.subject, i.message))
