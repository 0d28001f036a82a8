"""Coordination-file crash safety: a failure or a kill -9 at ANY syscall of an update leaves the
previous state (or the complete new one) and the next allocation works.

Faults are injected into the real script with ``strace -e inject=...`` (Debian's strace; ``-P``
limits an injection to the syscalls that touch one path), and in-process with a writer that
fails with ENOSPC after the first 4 KiB.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.discovery import gpu_discovery as gd

from tests.support.discovery_runs import (
    Processes,
    Rec,
    boot_id,
    gpu_uuid,
    ours,
    pid_namespace,
    proc_starttime,
    read_records,
    run,
    write_records,
)

Env = Callable[..., dict[str, str]]
STRACE = shutil.which("strace")

pytestmark = pytest.mark.skipif(
    STRACE is None and os.environ.get("CI") != "true", reason="strace not installed (.ci/run installs it)"
)


def coord_args(coord: Path, owner: int) -> list[str]:
    return ["--enable-coordination-mode", "--coordination-file", str(coord), "--owner-pid", str(owner)]


def held_by(owner: int, index: int) -> Rec:
    return Rec(gpu_uuid(index), index, owner, proc_starttime(owner), boot_id(), pid_namespace())


def under_strace(coord: Path, owner: int, env: dict[str, str], path: Path, inject: str) -> subprocess.CompletedProcess[str]:
    """One allocation with a fault injected into the syscalls of the script's own process (not its
    children: no -f) that touch ``path``."""
    assert STRACE is not None, "strace is required (apt-get install strace; .ci/run does it)"
    cmd = [STRACE, "-qq", "-o", os.devnull, "-P", str(path), "-e", f"inject={inject}",
           *ours("1", *coord_args(coord, owner))]
    return run(cmd, env)


# (syscall, path it touches, error) -> the update fails cleanly and the previous state is kept.
ERRORS = [
    ("openat", ".tmp", "ENOSPC"),   # creating the new file
    ("fchmod", ".tmp", "EPERM"),
    ("write", ".tmp", "ENOSPC"),    # a full disk
    ("fsync", ".tmp", "EIO"),
    ("rename", ".tmp", "EIO"),      # rename(2) / renameat(2), whichever libc uses
]


@pytest.mark.parametrize(("syscall", "suffix", "error"), ERRORS, ids=[f"{s}-{e}" for s, _, e in ERRORS])
def test_a_failing_syscall_keeps_the_previous_state(env: Env, coord: Path, procs: Processes, syscall: str,
                                                     suffix: str, error: str) -> None:
    first = procs.sleeper().pid
    write_records(coord, [held_by(first, 0)])
    before = coord.read_bytes()
    names = "rename,renameat,renameat2" if syscall == "rename" else syscall
    r = under_strace(coord, procs.sleeper().pid, env(4), coord.with_name(coord.name + suffix),
                     f"{names}:error={error}")
    assert (r.returncode, r.stdout) == (3, ""), r.stderr
    assert "cannot write coordination file" in r.stderr and "the previous state is kept" in r.stderr
    assert coord.read_bytes() == before
    assert not coord.with_name(coord.name + ".tmp").exists()
    nxt = procs.sleeper().pid
    r = run(ours("1", *coord_args(coord, nxt)), env(4))
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr
    assert [(x.index, x.pid) for x in read_records(coord)] == [(0, first), (1, nxt)]


def test_a_failing_directory_fsync_only_warns(env: Env, coord: Path, procs: Processes) -> None:
    """The rename already made the new state visible; only its durability is in doubt."""
    write_records(coord, [held_by(procs.sleeper().pid, 0)])
    r = under_strace(coord, procs.sleeper().pid, env(4), coord.parent, "fsync:error=EIO")
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr
    assert f"cannot fsync directory {coord.parent}" in r.stderr
    assert [x.index for x in read_records(coord)] == [0, 1]


# kill -9 on entry to each syscall of the update (the syscall never runs).
KILLS = [
    ("unlink", ".tmp"),       # removing a leftover temp file
    ("openat", ".tmp"),
    ("fchmod", ".tmp"),
    ("write", ".tmp"),
    ("fsync", ".tmp"),
    ("rename", ".tmp"),
    ("fsync", ""),            # the directory fsync after the rename
]


@pytest.mark.parametrize(("syscall", "suffix"), KILLS, ids=[f"{s}{'-dir' if not x else ''}" for s, x in KILLS])
def test_kill_9_at_any_syscall_leaves_a_valid_file(env: Env, coord: Path, procs: Processes, syscall: str,
                                                  suffix: str) -> None:
    first = procs.sleeper().pid
    write_records(coord, [held_by(first, 0)])
    before = coord.read_bytes()
    coord.with_name(coord.name + ".tmp").write_bytes(b"half a file from an earlier crash")  # unlink has work
    victim = procs.sleeper().pid
    names = {"rename": "rename,renameat,renameat2", "unlink": "unlink,unlinkat"}.get(syscall, syscall)
    path = coord.with_name(coord.name + suffix) if suffix else coord.parent
    r = under_strace(coord, victim, env(4), path, f"{names}:signal=SIGKILL")
    assert r.returncode == 128 + 9 or r.returncode == -9, (r.returncode, r.stderr)
    committed = syscall == "fsync" and not suffix  # killed after the rename
    if committed:
        assert [(x.index, x.pid) for x in read_records(coord)] == [(0, first), (1, victim)]
    else:
        assert coord.read_bytes() == before  # the previous state, untouched
    nxt = procs.sleeper().pid
    r = run(ours("1", *coord_args(coord, nxt)), env(4))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("2\n" if committed else "1\n")
    assert not coord.with_name(coord.name + ".tmp").exists()  # the leftover was cleaned up


def test_enospc_after_the_first_4_kib_keeps_the_previous_state(monkeypatch: pytest.MonkeyPatch,
                                                               fake_path: Callable[..., None],
                                                               coord: Path, procs: Processes) -> None:
    """The issue's reproduction, with an injected writer: a 64-GPU node whose file is > 4 KiB."""
    fake_path(64)
    owners = procs.sleepers(40)
    write_records(coord, [held_by(o, i) for i, o in enumerate(owners)])
    before = coord.read_bytes()
    assert len(before) > 4096
    written: list[int] = []

    def full_disk(fd: int, data: bytes) -> None:
        os.write(fd, data[:4096])
        written.append(4096)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(gd, "write_all", full_disk)
    newcomer = procs.sleeper().pid
    assert gd.main(["1", *coord_args(coord, newcomer)]) == gd.EXIT_COORDINATION
    assert written == [4096]
    assert coord.read_bytes() == before
    assert not coord.with_name(coord.name + ".tmp").exists()
    monkeypatch.undo()
    fake_path(64)
    assert gd.main(["1", *coord_args(coord, newcomer)]) == 0
    assert [r.pid for r in read_records(coord)] == [*owners, newcomer]
