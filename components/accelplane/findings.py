"""Stable finding codes: what each check can report, how severe it is, and the one fix.

Every check module declares the findings it can emit at import time::

    QUEUE_WEIGHT_IGNORED = declare(
        "AP2101", WARNING,
        "queue weight has no effect under Volcano's capacity plugin",
        fix="remove `weight` or enable the proportion plugin",
    )

and attaches one to each `Problem` it yields (``Problem(path, message, QUEUE_WEIGHT_IGNORED)``).
An *error* is what a consumer rejects or what breaks at run time; a *warning* is valid but without
effect, keeps an upstream default the user may not expect, or is likely unintended. `REGISTRY`
holds every declared finding; the docs table of codes is generated from it.

Code ranges (one per family, so modules never collide):
AP1xxx spec, schema and loader · AP2xxx queues and scheduling (Volcano AP20xx–AP24xx, YuniKorn
AP25xx) · AP3xxx GPUs: device plugins, DRA, MIG, model names, node fit (AP35xx) · AP4xxx Flink
(config keys per version AP45xx, runtime AP48xx) · AP5xxx YARN (partitions AP55xx) · AP6xxx
namespaces, service accounts and least privilege · AP7xxx monitoring · AP8xxx discovery and node
images.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How bad a finding is: errors block validate/render/up, warnings are printed and proceed."""

    ERROR = "error"
    WARNING = "warning"


ERROR = Severity.ERROR
WARNING = Severity.WARNING

_CODE = re.compile(r"AP[1-9][0-9]{3}")


@dataclass(frozen=True)
class Finding:
    """One kind of problem a check reports: its stable code, severity, meaning and fix."""

    code: str
    severity: Severity
    summary: str
    fix: str
    whole_spec: bool = False  # asserts something of the whole spec ("no pool advertises …"): left
    # out when parts of an invalid spec were dropped (`accelplane.salvage`), since what was dropped
    # may be exactly what it misses

    @property
    def is_warning(self) -> bool:
        """True for a warning (printed, fatal only with ``--strict``)."""
        return self.severity is Severity.WARNING


REGISTRY: dict[str, Finding] = {}


def declare(code: str, severity: Severity, summary: str, *, fix: str, whole_spec: bool = False) -> Finding:
    """Register and return the finding ``code``; a code may be declared only once.

    ``whole_spec``: the finding claims something about the whole spec (nothing provides, uses or
    advertises X), so it is not reported for a spec checked only in part after a schema error.
    """
    if not _CODE.fullmatch(code):
        raise ValueError(f"finding code {code!r} is not of the form AP1234")
    known = REGISTRY.get(code)
    if known is not None:
        raise ValueError(f"finding code {code} is declared twice ({known.summary!r})")
    found = Finding(code, severity, summary, fix, whole_spec)
    REGISTRY[code] = found
    return found
