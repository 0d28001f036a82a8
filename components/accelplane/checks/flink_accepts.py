"""Flink settings whose value Flink only accepts in a few forms (issue 37, item 13).

``high-availability.type`` (``high-availability`` before Flink 1.17): Flink's
``HighAvailabilityMode.fromConfig`` maps ``standalone`` (any case) to none, takes ``none``,
``zookeeper`` and ``kubernetes`` in any case (``valueOf(value.toUpperCase())``), and treats any other
value as the fully qualified class name of a ``HighAvailabilityServicesFactory``, which
``HighAvailabilityServicesUtils`` then loads. ``kubernetes'`` (a stray quote) is therefore not
Kubernetes HA but a class that does not exist: the JobManager fails to start, and accelplane
rendered a Role without the ConfigMap rights Kubernetes HA needs. A value that is neither a mode
nor a Java class name (dot-separated identifiers) is refused (AP4060). Surrounding whitespace is
AP1502's (`accelplane.checks.spec_strings`), one finding per root cause.

``job.jarURI`` is checked by the schema's pattern: Flink (and its Kubernetes operator) parse it
with ``java.net.URI``, which refuses NUL, quotes, backticks, spaces, ``<>{}|\\^`` and malformed
``%`` escapes (tests/flink/test_flink_accepts.py runs ``java.net.URI`` on the same corpus).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelplane.derive.flink_state import config_value, ha_type_keys
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import Spec

HA_MODES = frozenset({"none", "standalone", "zookeeper", "kubernetes"})
"""Values ``HighAvailabilityMode.fromConfig`` reads as a mode (compared ignoring case)."""
JAVA_CLASS_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)+")
"""A fully qualified Java class name (a package, then the class), what Flink loads otherwise."""

HA_TYPE_NOT_ACCEPTED = declare(
    "AP4060", ERROR,
    "the high-availability mode is neither none, zookeeper, kubernetes nor a factory class name, so Flink "
    "tries to load a class of that name and the JobManager fails",
    fix="write kubernetes, zookeeper or none (or the fully qualified name of a HighAvailabilityServicesFactory)",
)  # fmt: skip


def check(spec: Spec) -> Iterator[Problem]:
    """Every cluster's high-availability mode is one Flink accepts."""
    for cluster in spec.flink_clusters:
        found = config_value(cluster, ha_type_keys(cluster))
        if found is None:
            continue
        key, value = found
        if value != value.strip():
            continue  # AP1502
        if value.lower() in HA_MODES or JAVA_CLASS_NAME.fullmatch(value):
            continue
        yield Problem(
            cluster.field_path("config", key),
            f"{value!r} is not a high-availability mode (none, zookeeper, kubernetes) and not a Java class "
            "name: Flink would try to load a HighAvailabilityServicesFactory of that name and the "
            "JobManager would fail to start (and accelplane cannot tell which Role it needs); write "
            "kubernetes, zookeeper or none",
            HA_TYPE_NOT_ACCEPTED,
        )
