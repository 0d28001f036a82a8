"""Coordination file formats across versions (issue 38.2): every released reader against what this
version writes (old-reads-new) and this version against every released format (new-reads-old),
with the frozen readers of tests/discovery/frozen_readers.py and the files each version wrote
(tests/discovery/formats/). The rule (docs/discovery.md, "Coordination file formats and
rollback"): this version writes v2 only, so a host rolled back to any version since the lock-file
protocol (v2, 3a42d4f) reads its file; a v1-only version refuses it (exit 3, never a guess: its
lock differs, so the two must never run on one host at once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from accelplane.discovery import gpu_discovery as gd

from tests.discovery.frozen_readers import READERS, Refused, Row

FORMATS = Path(__file__).parent / "formats"
WRITTEN_BY = {"v1": "v1.txt", "v2": "v2.txt", "v3": "v3.txt"}
"""The file each released writer leaves (v3: with owner labels, as --owner-label made it)."""


def _rows(records: list[gd.Record]) -> list[Row]:
    return [(r.key, r.index, r.pid, r.start, r.boot, r.pidns, r.stamp, r.label) for r in records]


def _current(tmp_path: Path, content: bytes) -> list[gd.Record]:
    """This version's reader (with the labels side file), through the locked file as the script reads it."""
    path = tmp_path / "coordination"
    path.write_bytes(content)
    opts = gd.Options()
    opts.coordination_file = str(path)
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        return cf.read()


@pytest.mark.parametrize("version", sorted(WRITTEN_BY))
def test_this_version_reads_every_released_format(version: str, tmp_path: Path) -> None:
    content = (FORMATS / WRITTEN_BY[version]).read_bytes()
    expected = READERS[version](content)  # what the writing version itself read back
    assert _rows(_current(tmp_path, content)) == expected


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("written", sorted(WRITTEN_BY))
def test_what_this_version_leaves_is_read_by_every_reader_since_v2(reader: str, written: str, tmp_path: Path) -> None:
    """old-reads-new: whatever file a host had (any released format), once this version has
    touched it the file is v2 with the same records (labels in the side file), which every
    released reader since v2 reads, and which v1 refuses outright."""
    records = _current(tmp_path, (FORMATS / WRITTEN_BY[written]).read_bytes())
    opts = gd.Options()
    opts.coordination_file = str(tmp_path / "coordination")
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        cf.write(records)
    left = (tmp_path / "coordination").read_bytes()
    assert left.startswith(b"# accelplane-gpu-coordination v2\n")
    if reader == "v1":
        with pytest.raises(Refused, match="unsupported header"):
            READERS[reader](left)
        return
    got = READERS[reader](left)
    assert [row[:7] for row in got] == [row[:7] for row in _rows(records)]
    # and this version reads back the labels too
    assert _rows(_current(tmp_path, left)) == _rows(records)


def test_a_v3_file_is_rewritten_as_v2_at_the_first_locked_access(tmp_path: Path) -> None:
    """A host upgraded from a v3-writing build: the first allocation/release/export converts the
    file, so a rollback right after it finds v2 (issue 38.2: the old script exited 3 on v3)."""
    path = tmp_path / "coordination"
    path.write_bytes((FORMATS / "v3.txt").read_bytes())
    opts = gd.Options()
    opts.coordination_file = str(path)
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        records = cf.read()
    left = path.read_bytes()
    assert READERS["v2"](left) == [(*row[:7], "-") for row in _rows(records)]
    assert [r.label for r in records] == ["sessions-v100", "-", "batch.gpu"]
    # --check-free writes nothing, not even the conversion
    path.write_bytes((FORMATS / "v3.txt").read_bytes())
    opts.check_free = True
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        cf.read()
    assert path.read_bytes() == (FORMATS / "v3.txt").read_bytes()


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("written", sorted(WRITTEN_BY))
def test_released_pairs_are_as_documented(reader: str, written: str) -> None:
    """The released versions among themselves (the table in docs/discovery.md): a reader reads
    every format up to its own and refuses newer ones; none misreads."""
    content = (FORMATS / WRITTEN_BY[written]).read_bytes()
    if written > reader:
        with pytest.raises(Refused):
            READERS[reader](content)
    else:
        assert len(READERS[reader](content)) == 3


def test_labels_apply_only_to_the_exact_owner(tmp_path: Path) -> None:
    """A label left in the side file for an owner an older version (which never writes the side
    file) has since replaced is not applied to the new owner's record."""
    opts = gd.Options()
    opts.coordination_file = str(tmp_path / "coordination")
    mine = gd.Record("GPU-a", 0, os.getpid(), 5, "b", "1", 0, "cluster-a")
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        cf.write([mine])
    # an older version replaced the owner (new pid), writing only the v2 file
    other = gd.Record("GPU-a", 0, os.getpid(), 6, "b", "1", 0)
    (tmp_path / "coordination").write_bytes(gd.render_records([other]))
    assert [r.label for r in _current(tmp_path, gd.render_records([other]))] == ["-"]
