"""``migrateFrom`` (docs/diff.md, "Moving a Flink cluster"): the savepoint must reach a job that
can start from it.

* A cluster cannot migrate from itself (same name and namespace): nothing moves, and the savepoint
  would only be read if the FlinkDeployment were created again.
* An operator cluster in session mode has no ``job``, so the operator has no
  ``job.initialSavepointPath`` to start from: the savepoint has no effect (submit the job with it).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.errors import Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.model import FlinkTarget, Spec

MIGRATE_FROM_ITSELF = declare(
    "AP1604", ERROR, "a Flink cluster's migrateFrom names the cluster itself",
    fix="name the cluster this one replaces (another name or namespace), or remove migrateFrom",
)
MIGRATE_WITHOUT_JOB = declare(
    "AP1605", WARNING, "migrateFrom on an operator cluster without a job: the savepoint is not used",
    fix="give the cluster an application-mode job, or submit the session job from the savepoint and remove migrateFrom",
)


def check(spec: Spec) -> Iterator[Problem]:
    """Problems of every cluster's ``migrateFrom``."""
    for c in spec.flink_clusters:
        m = c.migrate_from
        if m is None:
            continue
        if m.name == c.name and (m.namespace or c.namespace) == c.namespace:
            yield Problem(
                c.field_path("migrateFrom", "name"),
                f"migrateFrom names cluster {c.namespace}/{c.name} itself; name the cluster it replaces",
                MIGRATE_FROM_ITSELF,
            )
        elif c.target is FlinkTarget.KUBERNETES_OPERATOR and not (
            c.mode == "application" and c.job is not None and c.job.jar_uri is not None
        ):
            yield Problem(
                c.field_path("migrateFrom", "savepoint"),
                f"cluster {c.name} has no application job, so the operator has no job.initialSavepointPath "
                "to start from; the savepoint is not used",
                MIGRATE_WITHOUT_JOB,
            )
