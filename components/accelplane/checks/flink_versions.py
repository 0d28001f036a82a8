"""Checks that every ``config`` key a Flink cluster sets exists in the cluster's Flink version.

The model already writes a key under the name the version reads where Flink renamed it
(`accelplane.flink_options.resolve_config`: ``execution.checkpointing.dir`` reaches a 1.18 cluster
as ``state.checkpoints.dir``). What is left: keys that some Flink release declares but this one
has no option for (the value would be silently ignored), and a key set under both its old and new
name (two values for one option). Keys no release's flink-dist declares (connectors, the Table
API, plugins, user options) are not errors; one that is a near miss of a name the cluster's version
reads (``state.checkpoint.dir`` for ``state.checkpoints.dir``) is a warning with a did-you-mean
(`accelplane.flink_options.near_miss`; families with user-defined parts are left alone, and
``lint.ignore`` silences the code for a plugin key that happens to be one).
"""

from __future__ import annotations

from collections.abc import Iterator

from accelplane.errors import PathTuple, Problem
from accelplane.findings import ERROR, WARNING, declare
from accelplane.flink_options import key_fate, near_miss
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


KEY_NEAR_MISS = declare(
    "AP4570",
    WARNING,
    "a config key no Flink release declares that is a near miss of one the cluster's Flink reads (a typo?)",
    fix="write the key the message names (or lint.ignore the code for a plugin's or your own key)",
)


def _span(versions: tuple[str, ...]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]} … {versions[-1]}"


def check(spec: Spec) -> Iterator[Problem]:
    """Problems of config keys against each cluster's Flink version; a near miss written once (in
    ``flink.defaults.config``) is one finding naming every cluster that inherits it."""
    typos: dict[tuple[str, str, str], tuple[PathTuple, list[str]]] = {}
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
            elif fate.fate == "unknown" and (meant := near_miss(c.version_tuple, key)) is not None:
                where = "defaults" if ("config", key) in c.from_defaults else c.name
                typos.setdefault((where, key, meant), (c.field_path("config", key), []))[1].append(c.name)
            elif fate.fate == "renamed":  # not renamed by the model: the new name is set as well
                yield Problem(
                    c.field_path("config", key),
                    f"Flink {c.version} reads {key!r} as {fate.name!r}, which config sets as well: two "
                    f"values for one option; keep only {fate.name!r}",
                    KEY_SET_TWICE,
                )
    for (_, key, meant), (path, clusters) in typos.items():
        yield Problem(
            path,
            f"no Flink release declares {key!r}, so Flink would not read it in cluster(s) {', '.join(clusters)} "
            f"(only a plugin or your own code could); did you mean {meant!r}? Write {meant!r} instead",
            KEY_NEAR_MISS,
        )
