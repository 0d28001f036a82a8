"""GPU discovery outcomes scraped from TaskManager logs.

Where GPU discovery outcomes appear
-----------------------------------
In ``<log dir>/flink-<ident>-taskexecutor-<n>-<host>.log`` (see
:func:`parse_discovery_log` for the exact lines matched):

* ``INFO  org.apache.flink.runtime.externalresource.ExternalResourceUtils [] -
  Enabled external resources: [gpu]``
* success: ``INFO  org.apache.flink.externalresource.gpu.GPUDriver [] -
  Discover GPU resources: [GPU Device(0), GPU Device(1)].``
* script failure: ``WARN  org.apache.flink.externalresource.gpu.GPUDriver [] -
  Discovery script exit with 1.`` followed by ``STDOUT: ...`` and
  ``STDERR: ...`` lines, then ``WARN  ...ExternalResourceUtils [] - Failed to
  retrieve information of external resource gpu.`` with the stack trace
  ``org.apache.flink.util.FlinkException: Discovery script exit with non-zero
  return code: 1.``; the TaskManager starts anyway, without GPUs.
* driver not created (script missing / not executable / not configured):
  ``WARN  ...ExternalResourceUtils [] - Could not instantiate driver with
  factory org.apache.flink.externalresource.gpu.GPUDriverFactory for gpu.
  <exception>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d[ T][\d:,.]+\s+(?P<level>[A-Z]+)\s+(?P<logger>\S+)\s+\[[^\]]*\]\s+-\s(?P<msg>.*)$"
)
TM_LOG_NAME = re.compile(r"^flink-.*-taskexecutor-(?P<n>\d+)-.*\.log$")
_GPU_DEVICE = re.compile(r"GPU Device\(([^)]*)\)")


@dataclass(frozen=True)
class DiscoveryOutcome:
    """GPU discovery result of one TaskManager, as its log tells it.

    ``gpu_indexes`` is the set of ``GPUInfo`` indexes the driver produced
    (``None`` when no ``Discover GPU resources`` line was logged);
    ``failures`` every failure message in log order, each followed by
    `` (<exception line>)`` when a stack trace follows it (e.g.
    ``Discovery script exit with 1.`` then ``Failed to retrieve information of
    external resource gpu. (org.apache.flink.util.FlinkException: Discovery
    script exit with non-zero return code: 1.)``); ``lines`` every
    discovery-related log line (with the STDOUT/STDERR continuation lines and
    the exception line of failures), in log order.
    """

    log_file: Path
    taskmanager_number: int
    resource_id: str | None
    enabled_resources: str | None
    gpu_indexes: frozenset[str] | None
    failures: tuple[str, ...]
    lines: tuple[str, ...]

    @property
    def failure(self) -> str | None:
        """The first failure message (``None`` when there was none)."""
        return self.failures[0] if self.failures else None

    @property
    def ok(self) -> bool:
        """GPUs were discovered and nothing failed."""
        return self.gpu_indexes is not None and not self.failures


def parse_discovery_log(text: str, log_file: Path, resource: str = "gpu") -> DiscoveryOutcome:
    """Extract the GPU discovery outcome from one TaskManager log.

    Matched (logger abbreviated; the log layout is Flink's default
    ``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n``):

    * ``ExternalResourceUtils - Enabled external resources: [gpu]``
    * ``GPUDriver - Discover GPU resources: [GPU Device(0), GPU Device(1)].``
    * ``GPUDriver - Discovery script exit with <rc>.`` + ``STDOUT: ...`` +
      ``STDERR: ...`` continuation lines
    * ``ExternalResourceUtils - Failed to retrieve information of external
      resource gpu.`` + the exception line of the stack trace below it
    * ``ExternalResourceUtils - Could not instantiate driver with factory ...``,
      ``Could not find factory class ...``, ``Could not find driver class name
      ...``, ``The amount of the ... should be ...``,
      ``GPUDriver - The output of the discovery script should only contain one
      single line...``
    """
    match = TM_LOG_NAME.match(log_file.name)
    number = int(match.group("n")) if match else -1
    resource_id: str | None = None
    enabled: str | None = None
    indexes: frozenset[str] | None = None
    failures: list[str] = []
    lines: list[str] = []
    raw = text.splitlines()
    failure_markers = (
        "Discovery script exit with",
        f"Failed to retrieve information of external resource {resource}",
        "Could not instantiate driver with factory",
        "Could not find factory class",
        "Could not find driver class name",
        "Will ignore that resource",
        "Could not found legal amount configuration",
    )
    i = 0
    while i < len(raw):
        line = raw[i]
        parsed = _LOG_LINE.match(line)
        i += 1
        if not parsed:
            continue
        msg = parsed.group("msg")
        if msg.startswith("Starting TaskManager with ResourceID: "):
            resource_id = msg.split(": ", 1)[1].strip()
            continue
        if msg.startswith("Enabled external resources: "):
            enabled = msg.split(": ", 1)[1].strip()
            lines.append(line)
            continue
        # continuation lines (STDOUT/STDERR of the script, stack traces)
        continuation: list[str] = []
        while i < len(raw) and not _LOG_LINE.match(raw[i]):
            continuation.append(raw[i])
            i += 1
        if msg.startswith("Discover GPU resources: "):
            found = frozenset(v.strip() for v in _GPU_DEVICE.findall(msg))
            indexes = found if indexes is None else indexes | found
            lines.append(line)
        elif any(marker in msg for marker in failure_markers) or (
            "discovery script" in msg.lower() and parsed.group("level") in ("WARN", "ERROR")
        ):
            lines.append(line)
            kept = [c for c in continuation if c.startswith(("STDOUT:", "STDERR:"))]
            exception = next((c for c in continuation if re.match(r"^[\w.$]+(Exception|Error)", c)), None)
            if exception:
                kept.append(exception)
            lines.extend(kept)
            failures.append(msg if not exception else f"{msg} ({exception})")
    return DiscoveryOutcome(
        log_file=log_file,
        taskmanager_number=number,
        resource_id=resource_id,
        enabled_resources=enabled,
        gpu_indexes=indexes,
        failures=tuple(failures),
        lines=tuple(lines),
    )
