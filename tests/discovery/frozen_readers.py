"""The coordination-file readers of every released format, frozen (test use only).

Each is this project's own ``parse_records`` as it was at the last commit that wrote its format,
reduced to what decides accept/refuse and the records read (messages shortened; no I/O). They
stand in for an older script a host is rolled back to, so the rollback rule in docs/discovery.md
("Coordination file formats and rollback") is tested against what those versions really accept,
without git at test time:

* ``v1``: 5f07ee34 (parent of 3a42d4f), ``components/accelplane/discovery/gpu_discovery.py``
  ``parse_records``: reads only v1; locks the data file itself and rewrites it in place.
* ``v2``: 0d2660ef (parent of a72bc94): reads v1 and v2; locks ``<file>.lock``, replaces by rename.
* ``v3``: 113aeab: reads v1, v2 and v3 (v3 = v2 + an owner label per record); writes v3 when a
  record carries a label.

A reader returns ``(key, index, pid, start, boot, pidns, stamp, label)`` tuples or raises
`Refused` (what the script turns into exit 3).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable

Row = tuple[str, int, int, int, str, str, int, str]

_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:._-")
_BOOT_ID_CHARS = frozenset("0123456789abcdef-")
_END = "# end crc32="
_PID_MAX = 1 << 22
_DIGITS = 20


class Refused(Exception):
    """The frozen reader refuses the file (the script exits 3)."""


def _digits(s: str) -> bool:
    return s.isdigit() and s.isascii()


def _framed_lines(content: bytes, headers: tuple[str, ...]) -> list[str]:
    text = content.decode("utf-8")
    lines = text.split("\n")
    if lines[0] not in headers:
        raise Refused(f"unsupported header {lines[0]!r}")
    if lines[-1] != "" or len(lines) < 3 or not lines[-2].startswith(_END):
        raise Refused("truncated")
    body_len = len(content) - len(lines[-2]) - 1
    if lines[-2] != f"{_END}{binascii.crc32(content[:body_len]):08x}":
        raise Refused("checksum")
    return lines


def read_v1(content: bytes) -> list[Row]:
    """5f07ee34: only ``v1``; no field length bounds yet."""
    if not content:
        return []
    lines = _framed_lines(content, ("# accelplane-gpu-coordination v1",))
    rows, keys = [], set()
    for line in lines[1:-2]:
        f = line.split(" ")
        ok = (
            len(f) == 7 and bool(f[0]) and _KEY_CHARS.issuperset(f[0])
            and all(_digits(x) for x in (f[1], f[2], f[3], f[6])) and int(f[2]) > 0
            and bool(f[4]) and _BOOT_ID_CHARS.issuperset(f[4]) and (f[5] == "-" or _digits(f[5]))
        )  # fmt: skip
        if not ok or f[0] in keys:
            raise Refused(f"bad record {line!r}")
        keys.add(f[0])
        rows.append((f[0], int(f[1]), int(f[2]), int(f[3]), f[4], f[5], int(f[6]), "-"))
    return rows


def _record(f: list[str], label: str) -> Row:
    ok = (
        len(f) == 7 and bool(f[0]) and len(f[0]) <= 200 and _KEY_CHARS.issuperset(f[0])
        and all(_digits(x) and len(x) <= _DIGITS for x in (f[1], f[2], f[3], f[6]))
        and len(f[4]) <= 64 and len(f[5]) <= _DIGITS and bool(f[4]) and _BOOT_ID_CHARS.issuperset(f[4])
        and (f[5] == "-" or _digits(f[5]))
    )  # fmt: skip
    if not ok or not 0 < int(f[2]) <= _PID_MAX:
        raise Refused(f"bad record {' '.join(f)!r}")
    return (f[0], int(f[1]), int(f[2]), int(f[3]), f[4], f[5], int(f[6]), label)


def read_v2(content: bytes) -> list[Row]:
    """0d2660ef: ``v2`` and ``v1``."""
    if not content:
        return []
    lines = _framed_lines(content, ("# accelplane-gpu-coordination v2", "# accelplane-gpu-coordination v1"))
    rows, keys = [], set()
    for line in lines[1:-2]:
        row = _record(line.split(" "), "-")
        if row[0] in keys:
            raise Refused("duplicate")
        keys.add(row[0])
        rows.append(row)
    return rows


def read_v3(content: bytes) -> list[Row]:
    """113aeab: ``v3`` (label field), ``v2`` and ``v1``."""
    if not content:
        return []
    v3 = "# accelplane-gpu-coordination v3"
    lines = _framed_lines(
        content, (v3, "# accelplane-gpu-coordination v2", "# accelplane-gpu-coordination v1")
    )
    rows, keys = [], set()
    for line in lines[1:-2]:
        f = line.split(" ")
        label = "-"
        if lines[0] == v3:
            label = f.pop() if len(f) == 8 else ""
            if not label or (label != "-" and (len(label) > 63 or not _KEY_CHARS.issuperset(label))):
                raise Refused(f"bad label {line!r}")
        row = _record(f, label)
        if row[0] in keys:
            raise Refused("duplicate")
        keys.add(row[0])
        rows.append(row)
    return rows


READERS: dict[str, Callable[[bytes], list[Row]]] = {"v1": read_v1, "v2": read_v2, "v3": read_v3}
"""Every released reader by the newest format it reads."""

LOCK_PROTOCOL = {"v1": "flock on the data file, rewritten in place", "v2": "flock on <file>.lock, rename",
                 "v3": "flock on <file>.lock, rename"}  # fmt: skip
"""How each version locks: v1 and later versions never exclude each other (different locks)."""
