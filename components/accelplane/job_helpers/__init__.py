"""Job-side helpers that build Flink slot sharing groups from a rendered ``slot-groups.json``.

Shipped inside the package (so in the wheel) because they are versioned with the group file format
accelplane writes (`accelplane.derive.slot_groups.GROUP_FILE_FORMAT`):

* ``java/io/accelplane/flink/SlotGroups.java`` and ``GpuDevices.java``: Java DataStream jobs copy
  them into their sources (they need only Flink's classes); `java_sources` returns them.
* ``pyflink_slot_groups.py``: one stdlib-only module for PyFlink jobs.
"""

from __future__ import annotations

from pathlib import Path

HELPER_DIR = Path(__file__).resolve().parent
JAVA_DIR = HELPER_DIR / "java"
PYFLINK_MODULE = HELPER_DIR / "pyflink_slot_groups.py"


def java_sources() -> list[Path]:
    """The Java helper source files, sorted."""
    return sorted(JAVA_DIR.rglob("*.java"))
