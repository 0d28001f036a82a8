"""Prometheus durations in the spec parse as Prometheus parses them (issue 37, item 11).

``monitoring.idleFor``, ``missingMetricsFor`` and ``queueNearCapabilityFor`` become the ``for:`` of
alerting rules, which Prometheus (and promtool) read with ``model.ParseDuration`` of
prometheus/common ``model/time.go``: units in decreasing order (``y w d h m s ms``), each at most
once, which the schema's ``promDuration`` pattern states (``1s1h``, ``30m30m``, ``5ms1ms`` are
schema errors), and a total that fits Go's ``time.Duration`` (int64 nanoseconds): each unit's
count at most ``(2^63-1) / unit / 1ms`` and the sum not overflowing. ``99999999999999999999y`` or
``293y`` match the pattern and fail there ("duration out of range"); this check refuses them
(AP7060). `tests/monitoring/test_prometheus_durations.py` compares with promtool.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import Spec

_MS = 10**6  # time.Millisecond in nanoseconds
_INT64_MAX = 2**63 - 1
UNITS: tuple[tuple[str, int], ...] = (
    ("y", 1000 * 60 * 60 * 24 * 365),
    ("w", 1000 * 60 * 60 * 24 * 7),
    ("d", 1000 * 60 * 60 * 24),
    ("h", 1000 * 60 * 60),
    ("m", 1000 * 60),
    ("s", 1000),
    ("ms", 1),
)
"""Units of ``model.ParseDuration`` in the order it requires, with their length in milliseconds."""
DURATION = re.compile("".join(f"(?:(?P<{'ms_' if u == 'ms' else u}>[0-9]+){u})?" for u, _ in UNITS))
"""prometheus/common ``durationRE`` (without ``^$``: used with fullmatch)."""

DURATION_OUT_OF_RANGE = declare(
    "AP7060", ERROR, "a Prometheus duration is longer than Prometheus can hold (about 292 years)",
    fix="use a realistic duration such as 30m",
)


def duration_ns(text: str) -> int | None:
    """The duration in nanoseconds as ``model.ParseDuration`` computes it, or None when it refuses
    it (not its syntax, or out of range: a unit's count above ``(2^63-1) / unit / 1ms``, or a total
    beyond int64). ``"0"`` is 0, as there."""
    if text == "0":
        return 0
    match = DURATION.fullmatch(text) if text else None
    if match is None:
        return None
    total = 0
    for unit, ms in UNITS:
        count = match.group("ms_" if unit == "ms" else unit)
        if count is None:
            continue
        n = min(int(count), _INT64_MAX)  # strconv.Atoi saturates at the int range
        if n > _INT64_MAX // ms // _MS:
            return None
        total += n * _MS * ms
        if total > _INT64_MAX:
            return None
    return total


def check(spec: Spec) -> Iterator[Problem]:
    """Every monitoring duration within Prometheus' range (the schema checks its syntax)."""
    m = spec.monitoring
    fields = (("idleFor", m.idle_for), ("missingMetricsFor", m.missing_metrics_for),
              ("queueNearCapabilityFor", m.queue_near_capability_for))  # fmt: skip
    for name, value in fields:
        if DURATION.fullmatch(value) and duration_ns(value) is None:
            yield Problem(
                ("monitoring", name),
                f"{value!r} is longer than a Prometheus duration can be (int64 nanoseconds, about 292 "
                "years: model.ParseDuration says \"duration out of range\"), so Prometheus refuses the alert "
                "rule; use a realistic duration such as 30m",
                DURATION_OUT_OF_RANGE,
            )
