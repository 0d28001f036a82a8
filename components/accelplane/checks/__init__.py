"""Semantic checks on the typed model, beyond what JSON Schema can say.

Each check module exposes ``check(spec) -> Iterable[Problem]``; `run_checks` runs them all so every
problem is reported at once. Later artifact families register their own module in `CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from accelplane.checks import (
    device_plugins,
    discovery_paths,
    dra,
    flink,
    flink_accepts,
    flink_state,
    flink_versions,
    gpu_models,
    host_accounts,
    kueue,
    mig,
    mig_layout,
    migration,
    monitoring,
    namespaces,
    node_fit,
    prometheus_durations,
    references,
    scheduling,
    shared_hosts,
    slot_groups,
    spec_strings,
    textfile_directory,
    yarn,
    yarn_docker,
    yarn_numbers,
    yarn_partitions,
    yarn_queue_fit,
    yarn_queue_numbers,
    yunikorn,
)
from accelplane.errors import Problem
from accelplane.model import Spec

Check = Callable[[Spec], Iterable[Problem]]

CHECKS: tuple[Check, ...] = (
    scheduling.check,
    migration.check,
    yunikorn.check,
    kueue.check,
    references.check,
    device_plugins.check,
    mig_layout.check,
    dra.check,
    gpu_models.check,
    discovery_paths.check,
    host_accounts.check,
    shared_hosts.check,
    yarn.check,
    yarn_numbers.check,
    yarn_queue_numbers.check,
    yarn_docker.check,
    yarn_partitions.check,
    yarn_queue_fit.check,
    flink.check,
    node_fit.check,
    slot_groups.check,
    mig.check,
    flink_state.check,
    flink_accepts.check,
    flink_versions.check,
    namespaces.check,
    monitoring.check,
    textfile_directory.check,
    prometheus_durations.check,
    spec_strings.check,
)


def run_checks(spec: Spec) -> list[Problem]:
    """Run every semantic check; return all problems found (empty when the spec is consistent)."""
    problems: list[Problem] = []
    for check in CHECKS:
        problems.extend(check(spec))
    return problems
