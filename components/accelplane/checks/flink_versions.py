"""Checks that every ``config`` key a Flink cluster sets exists in the cluster's Flink version.

The model already writes a key under the name the version reads where Flink renamed it
(`accelplane.flink_options.resolve_config`: ``execution.checkpointing.dir`` reaches a 1.18 cluster
as ``state.checkpoints.dir``). What is left: keys that some Flink release declares but this one
has no option for (the value would be silently ignored), and a key set under both its old and new
name (two values for one option). Keys no release's flink-dist declares (connectors, the Table
API, user options) are never reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.flink_options import key_fate
from accelplane.model import Spec

KEY_NOT_IN_VERSION = declare(
    "AP4501",
    ERROR,
    "a config key that the cluster's Flink version has no option for (its value would be ignored)",
    fix="remove the key, or set the Flink version to one that has it",
)
KEY_SET_TWICE = declare(
    "AP4502",
    ERROR,
    "a config key set under two names that the cluster's Flink reads as one option",
    fix="keep only the name the cluster's Flink version reads",
)


def _span(versions: tuple[str, ...]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]} … {versions[-1]}"


def check(spec: Spec) -> Iterator[Problem]:
    """Problems of config keys against each cluster's Flink version."""
    for c in spec.flink_clusters:
        keys = {k for k, _ in c.config}
        for key in sorted(keys):
            fate = key_fate(c.version_tuple, key)
            if fate.fate == "absent":
                yield Problem(
                    c.field_path("config", key),
                    f"Flink {c.version} (flink-dist {fate.table}) has no option {key!r}, so Flink would "
                    f"ignore its value; it exists in Flink {_span(fate.known_in)}: remove it or set "
                    "version to a release that has it",
                    KEY_NOT_IN_VERSION,
                )
            elif fate.fate == "renamed":  # not renamed by the model: the new name is set as well
                yield Problem(
                    c.field_path("config", key),
                    f"Flink {c.version} reads {key!r} as {fate.name!r}, which config sets as well: two "
                    f"values for one option; keep only {fate.name!r}",
                    KEY_SET_TWICE,
                )
