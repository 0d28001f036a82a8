"""Coordination mode: ownership, liveness, file format, file safety, locking."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.discovery_runs import (
    END_PREFIX,
    HEADER,
    Processes,
    Rec,
    boot_id,
    dead_pid,
    gpu_uuid,
    ours,
    pid_namespace,
    proc_starttime,
    read_records,
    record_for,
    render,
    run,
    wait_results,
    write_records,
)

Env = Callable[..., dict[str, str]]


def alloc(coord: Path, owner: int, env: dict[str, str], amount: int = 1, *extra: str) -> subprocess.CompletedProcess[str]:
    return run(ours(str(amount), "--enable-coordination-mode", "--coordination-file", str(coord),
                    "--owner-pid", str(owner), *extra), env)


def release(coord: Path, owner: int, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(ours("0", "--release", "--coordination-file", str(coord), "--owner-pid", str(owner)), env)


def test_distinct_owners_get_distinct_gpus_until_none_is_left(env: Env, coord: Path, procs: Processes) -> None:
    owners = [procs.sleeper() for _ in range(5)]
    results = [alloc(coord, o.pid, env(4)) for o in owners]
    assert [r.stdout for r in results[:4]] == ["0\n", "1\n", "2\n", "3\n"]
    assert all(r.returncode == 0 and r.stderr == "" for r in results[:4])
    fifth = results[4]
    assert (fifth.returncode, fifth.stdout) == (1, "")
    assert "cannot allocate 1 GPU(s): 4 eligible, 4 held by live owners" in fifth.stderr
    recs = read_records(coord)
    assert [(r.key, r.index, r.pid) for r in recs] == [(gpu_uuid(i), i, owners[i].pid) for i in range(4)]
    assert all(r.start == proc_starttime(r.pid) and r.boot == boot_id() and r.pidns == pid_namespace()
               for r in recs)


def test_the_default_owner_is_the_parent_process(env: Env, coord: Path, procs: Processes, tmp_path: Path) -> None:
    owner = procs.owned_run(ours("2", "--enable-coordination-mode", "--coordination-file", str(coord)), env(4),
                            tmp_path / "run")
    [res] = wait_results([tmp_path / "run"])
    assert (res.rc, res.out) == (0, "0,1\n")
    assert [(r.index, r.pid, r.start) for r in read_records(coord)] == [
        (0, owner.pid, proc_starttime(owner.pid)), (1, owner.pid, proc_starttime(owner.pid))]


def test_the_same_owner_asking_again_gets_the_same_gpus(env: Env, coord: Path, procs: Processes) -> None:
    a, b = procs.sleeper(), procs.sleeper()
    assert alloc(coord, a.pid, env(4), 2).stdout == "0,1\n"
    assert alloc(coord, b.pid, env(4), 1).stdout == "2\n"
    before = coord.read_bytes()
    again = alloc(coord, a.pid, env(4), 2)
    assert (again.returncode, again.stdout, again.stderr) == (0, "0,1\n", "")
    assert coord.read_bytes() == before  # nothing written
    other = alloc(coord, a.pid, env(4), 1)
    assert (other.returncode, other.stdout) == (1, "")
    assert "already holds 2 GPU(s) (0,1) but asks for 1; release them first with --release" in other.stderr


def test_release_gives_back_only_the_owners_gpus(env: Env, coord: Path, procs: Processes) -> None:
    a, b = procs.sleeper(), procs.sleeper()
    alloc(coord, a.pid, env(4), 2)
    alloc(coord, b.pid, env(4), 1)
    r = release(coord, a.pid, env(4))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")
    assert [(x.index, x.pid) for x in read_records(coord)] == [(2, b.pid)]
    again = release(coord, a.pid, env(4))
    assert (again.returncode, again.stdout) == (0, "")
    assert alloc(coord, a.pid, env(4), 2).stdout == "0,1\n"
    # --release needs no amount and no GPU inventory (works with a broken driver).
    r = run(ours("--release", "--coordination-file", str(coord), "--owner-pid", str(b.pid)),
            env(4, FAKE_NVIDIA_SMI_FAIL="1"))
    assert (r.returncode, r.stdout) == (0, "2\n")


def test_a_killed_owners_gpus_are_reclaimed(env: Env, coord: Path, procs: Processes) -> None:
    a, b = procs.sleeper(), procs.sleeper()
    assert alloc(coord, a.pid, env(1)).stdout == "0\n"
    assert alloc(coord, b.pid, env(1)).returncode == 1
    procs.kill(a)  # kill -9 and reap
    r = alloc(coord, b.pid, env(1))
    assert (r.returncode, r.stdout) == (0, "0\n")
    assert [x.pid for x in read_records(coord)] == [b.pid]


def test_a_zombie_owner_is_dead(env: Env, coord: Path, procs: Processes) -> None:
    a, b = procs.sleeper(), procs.sleeper()
    assert alloc(coord, a.pid, env(1)).stdout == "0\n"
    os.kill(a.pid, signal.SIGKILL)  # not reaped: a zombie, as under a PID 1 that never waits
    for _ in range(500):
        if Path(f"/proc/{a.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z":
            break
        time.sleep(0.01)
    assert alloc(coord, b.pid, env(1)).stdout == "0\n"


def test_a_reused_pid_is_recognised_as_dead(env: Env, coord: Path, procs: Processes) -> None:
    # The record's PID is alive, but it is another process than the one that allocated
    # (its start time differs): the PID was reused after the owner died.
    reused, owner = procs.sleeper(), procs.sleeper()
    write_records(coord, [record_for(0, reused.pid, start=proc_starttime(reused.pid) - 1)])
    r = alloc(coord, owner.pid, env(1))
    assert (r.returncode, r.stdout) == (0, "0\n")
    assert [x.pid for x in read_records(coord)] == [owner.pid]


def test_a_live_owner_with_the_right_start_time_keeps_its_gpu(env: Env, coord: Path, procs: Processes) -> None:
    holder, owner = procs.sleeper(), procs.sleeper()
    write_records(coord, [record_for(0, holder.pid)])
    assert alloc(coord, owner.pid, env(1)).returncode == 1


def test_records_from_a_previous_boot_are_stale(env: Env, coord: Path, procs: Processes) -> None:
    # Even with a PID and start time that match a live process today.
    holder, owner = procs.sleeper(), procs.sleeper()
    write_records(coord, [record_for(0, holder.pid, boot="00000000-0000-4000-8000-000000000000")])
    assert alloc(coord, owner.pid, env(1)).stdout == "0\n"


def test_records_from_another_pid_namespace_are_never_stolen(env: Env, coord: Path, procs: Processes) -> None:
    owner = procs.sleeper()
    gone = dead_pid()
    write_records(coord, [Rec(gpu_uuid(0), 0, gone, 123, boot_id(), "1")])
    r = alloc(coord, owner.pid, env(1))
    assert (r.returncode, r.stdout) == (1, "")  # its PID means nothing here: assume alive
    write_records(coord, [Rec(gpu_uuid(0), 0, gone, 123, boot_id(), pid_namespace())])
    assert alloc(coord, owner.pid, env(1)).stdout == "0\n"  # same namespace: provably dead


@pytest.mark.parametrize("no_uuid", [False, True], ids=["uuid-keys", "index-keys"])
def test_records_for_gpu_1_and_gpu_11_never_interfere(env: Env, coord: Path, procs: Processes,
                                                         no_uuid: bool) -> None:
    e = env(16, **({"FAKE_NO_UUID": "1"} if no_uuid else {}))
    holder, newcomer, late = procs.sleeper(), procs.sleeper(), procs.sleeper()

    def key(i: int) -> str:
        return f"index:{i}" if no_uuid else gpu_uuid(i)

    records = [record_for(i, holder.pid, key=key(i)) for i in range(16) if i != 1]
    records.insert(1, Rec(key(1), 1, dead_pid(), 1, boot_id(), pid_namespace()))
    write_records(coord, records)
    line_11 = next(r.line() for r in records if r.index == 11)
    r = alloc(coord, newcomer.pid, e)
    assert (r.returncode, r.stdout) == (0, "1\n")
    assert line_11 in coord.read_text().splitlines()
    assert alloc(coord, late.pid, e).returncode == 1  # 11 is still taken: no double allocation


def test_records_of_gpus_we_cannot_see_are_kept_verbatim(env: Env, coord: Path, procs: Processes) -> None:
    owner = procs.sleeper()
    foreign = Rec("GPU-ffffffff-0000-0000-0000-000000000000", 7, dead_pid(), 5, boot_id(), pid_namespace())
    write_records(coord, [foreign])
    assert alloc(coord, owner.pid, env(4)).stdout == "0\n"
    assert read_records(coord)[0] == foreign


def test_flip108_aliases(env: Env, coord: Path, procs: Processes) -> None:
    owner = procs.sleeper()
    r = run(ours("1", "--privilege", "--assign-file", str(coord), "--check-dead", "--owner-pid", str(owner.pid)),
            env(4))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0\n", "")
    assert read_records(coord)[0].pid == owner.pid


def test_the_owner_must_be_running(env: Env, coord: Path) -> None:
    r = alloc(coord, dead_pid(), env(4))
    assert (r.returncode, r.stdout) == (2, "")
    assert "is not running" in r.stderr


# ---------------------------------------------------------------- file safety


def test_a_symlinked_coordination_file_is_refused(env: Env, tmp_path: Path, procs: Processes) -> None:
    target = tmp_path / "victim"
    target.write_text("precious\n")
    link = tmp_path / "coord"
    link.symlink_to(target)
    r = alloc(link, procs.sleeper().pid, env(4))
    assert (r.returncode, r.stdout) == (3, "")
    assert "is a symbolic link" in r.stderr
    assert target.read_text() == "precious\n"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    assert alloc(dangling, procs.sleeper().pid, env(4)).returncode == 3
    assert not (tmp_path / "nowhere").exists()


def test_a_hard_linked_coordination_file_is_refused(env: Env, coord: Path, procs: Processes) -> None:
    coord.write_text("")
    os.link(coord, coord.with_name("second-name"))
    r = alloc(coord, procs.sleeper().pid, env(4))
    assert r.returncode == 3 and "2 hard links" in r.stderr


def test_a_directory_is_refused(env: Env, coord: Path, procs: Processes) -> None:
    coord.mkdir()
    r = alloc(coord, procs.sleeper().pid, env(4))
    assert r.returncode == 3 and "not a regular file" in r.stderr


def test_a_file_owned_by_another_user_is_refused(env: Env, coord: Path, procs: Processes) -> None:
    if os.geteuid() != 0:
        pytest.skip("creating a file owned by another uid needs root")
    coord.write_text("")
    os.chown(coord, 4242, 4242)
    r = alloc(coord, procs.sleeper().pid, env(4))
    assert (r.returncode, r.stdout) == (3, "")
    assert "owned by uid 4242, not by us (uid 0)" in r.stderr and "--allow-foreign-owner" in r.stderr
    r = alloc(coord, procs.sleeper().pid, env(4), 1, "--allow-foreign-owner")
    assert (r.returncode, r.stdout) == (0, "0\n")


@pytest.mark.parametrize(("umask", "extra", "mode"), [(0o077, (), 0o660), (0o000, (), 0o660), (0o022, (), 0o660),
                                                       (0o077, ("--file-mode", "0640"), 0o640)])
def test_a_new_file_gets_a_documented_mode_whatever_the_umask(env: Env, coord: Path, procs: Processes,
                                                              umask: int, extra: tuple[str, ...], mode: int) -> None:
    cmd = ours("1", "--enable-coordination-mode", "--coordination-file", str(coord),
               "--owner-pid", str(procs.sleeper().pid), *extra)
    r = subprocess.run(cmd, env=env(4), capture_output=True, text=True, umask=umask, check=False)
    assert r.returncode == 0, r.stderr
    assert coord.stat().st_mode & 0o777 == mode


def test_a_world_writable_file_is_warned_about(env: Env, coord: Path, procs: Processes) -> None:
    coord.write_text("")
    coord.chmod(0o666)
    r = alloc(coord, procs.sleeper().pid, env(4))
    assert r.returncode == 0 and "is world-writable (mode 0666)" in r.stderr


def test_a_missing_directory_is_a_clear_error(env: Env, tmp_path: Path, procs: Processes) -> None:
    r = alloc(tmp_path / "no" / "such" / "dir", procs.sleeper().pid, env(4))
    assert r.returncode == 3 and "cannot open coordination file" in r.stderr


# ---------------------------------------------------------------- file format

GOOD = f"{gpu_uuid(0)} 0 {os.getpid()} 1 {'0' * 8}-0000-4000-8000-{'0' * 12} 4026531836 1700000000"


BAD_SUM = render([GOOD]).replace(b" 0 ", b" 1 ", 1)  # GPU index edited by hand: checksum no longer matches
_OLD = render([GOOD, GOOD.replace("GPU-", "GPU-f")])
_NEW = render([GOOD.replace(f" {os.getpid()} ", " 1 ")])
TORN = _NEW[:-3] + _OLD[len(_NEW) - 3:]  # the new content written over the old one, all but 3 bytes


@pytest.mark.parametrize(("content", "reason"), [
    (b"hello world\n", "missing header line"),
    (b"\x00\xff\xfe garbage", "not UTF-8 text"),
    (f"{HEADER}\n{GOOD}\n".encode(), "truncated (no final '# end crc32=...' line)"),
    (render([GOOD])[:-12], "truncated"),
    (render([GOOD])[:-1], "truncated"),  # no final newline
    (f"{HEADER}\n{GOOD}\n# end\n".encode(), "truncated"),
    (BAD_SUM, "checksum does not match"),
    (TORN, "checksum does not match"),
    (render([GOOD[:30]]), "line 2 is not a valid record"),
    (render([f"{GOOD} extra"]), "line 2 is not a valid record"),
    (render([GOOD.replace(" ", "  ", 1)]), "line 2 is not a valid record"),
    (render([GOOD, GOOD]), "recorded twice"),
    (render([""]), "line 2 is not a valid record"),
    (b"# accelplane-gpu-coordination v4\n# end\n", "unsupported format version"),
    (b"0 1234\n1 5678\n", "format of Flink's nvidia-gpu-discovery.sh"),
    (b"1 4242\n", "format of Flink's nvidia-gpu-discovery.sh"),
])
def test_a_corrupt_file_is_a_clear_error_and_is_left_alone(env: Env, coord: Path, procs: Processes,
                                                           content: bytes, reason: str) -> None:
    coord.write_bytes(content)
    r = alloc(coord, procs.sleeper().pid, env(4))
    assert (r.returncode, r.stdout) == (3, "")
    assert f"coordination file {coord} is unusable" in r.stderr and reason in r.stderr
    assert coord.read_bytes() == content
    assert release(coord, procs.sleeper().pid, env(4)).returncode == 3


def test_an_empty_file_is_a_fresh_file(env: Env, coord: Path, procs: Processes) -> None:
    coord.write_text("")
    assert alloc(coord, procs.sleeper().pid, env(4)).stdout == "0\n"
    assert coord.read_text().startswith(HEADER + "\n") and coord.read_text().split("\n")[-2].startswith(END_PREFIX)


@pytest.mark.slow
def test_the_lock_inode_never_changes_and_the_file_is_replaced_whole(env: Env, coord: Path,
                                                                      procs: Processes) -> None:
    """Every writer locks the same ``.lock`` inode; the data file is replaced by rename (a new
    inode per write, never rewritten in place) and no temp file is left behind."""
    e = env(4)
    alloc(coord, procs.sleeper().pid, e)
    lock = coord.with_name(coord.name + ".lock")
    lock_inode = lock.stat().st_ino
    inodes = {coord.stat().st_ino}
    for i in range(12):  # allocations, reclaims of killed owners and releases
        owner = procs.sleeper()
        r = alloc(coord, owner.pid, e, 1 + i % 2)
        if r.returncode != 0:
            for p in procs.procs[:-1]:
                procs.kill(p)
            assert alloc(coord, owner.pid, e, 1 + i % 2).returncode == 0
        inodes.add(coord.stat().st_ino)
        if i % 3 == 0:
            release(coord, owner.pid, e)
        assert lock.stat().st_ino == lock_inode
    assert len(inodes) > 1
    assert sorted(os.listdir(coord.parent)) == [coord.name, lock.name]  # no temp files, no backups


def test_the_lock_is_waited_for_within_the_time_budget(env: Env, coord: Path, procs: Processes) -> None:
    coord.write_text("")
    owner = procs.sleeper()
    with open(coord.with_name(coord.name + ".lock"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        t0 = time.monotonic()
        r = alloc(coord, owner.pid, env(4), 1, "--timeout", "1")
        took = time.monotonic() - t0
    assert (r.returncode, r.stdout) == (3, "")
    assert "timed out waiting for the lock" in r.stderr
    assert 0.9 < took < 15
    assert alloc(coord, owner.pid, env(4)).stdout == "0\n"  # lock released: works again


def test_isolated_devices_reclaims_visible_gpus_from_other_pid_namespaces(env: Env, coord: Path, procs: Processes) -> None:
    # Kubernetes: each TaskManager pod has its own PID namespace and the device plugin hands a
    # whole GPU to one container at a time. A record from another namespace for a GPU that this
    # container can see was left by a pod that is gone (e.g. a restarted TaskManager).
    owner = procs.sleeper()
    live_elsewhere = procs.sleeper()  # a live PID: the record must not be judged by PID at all
    records = [
        Rec(gpu_uuid(0), 0, live_elsewhere.pid, proc_starttime(live_elsewhere.pid), boot_id(), "1"),
        Rec("GPU-ffffffff-0000-0000-0000-000000000000", 7, live_elsewhere.pid, 5, boot_id(), "1"),
    ]
    write_records(coord, records)
    r = alloc(coord, owner.pid, env(1), 1, "--isolated-devices")
    assert (r.returncode, r.stdout) == (0, "0\n")
    kept = read_records(coord)
    assert [(x.key, x.pid) for x in kept] == [("GPU-ffffffff-0000-0000-0000-000000000000", live_elsewhere.pid), (gpu_uuid(0), owner.pid)]


def test_time_sliced_taskmanagers_with_coordination_each_get_their_gpu_and_the_file_keeps_the_last(
    env: Env, coord: Path, procs: Processes
) -> None:
    """What AP8006 states (a warning): two TaskManager pods given replicas of the same time-sliced
    GPU, both with coordination and --isolated-devices (as accelplane renders them on Kubernetes).
    Neither is refused; the second drops the first's live record, so coordination has no effect."""
    first, second = procs.sleeper(), procs.sleeper()
    write_records(coord, [Rec(gpu_uuid(0), 0, first.pid, proc_starttime(first.pid), boot_id(), "1")])
    r = alloc(coord, second.pid, env(1), 1, "--isolated-devices")
    assert (r.returncode, r.stdout) == (0, "0\n")
    assert [(x.key, x.pid) for x in read_records(coord)] == [(gpu_uuid(0), second.pid)]


def test_isolated_devices_keeps_live_owners_of_the_same_namespace(env: Env, coord: Path, procs: Processes) -> None:
    holder, owner = procs.sleeper(), procs.sleeper()
    write_records(coord, [record_for(0, holder.pid)])
    assert alloc(coord, owner.pid, env(1), 1, "--isolated-devices").returncode == 1


def check_free(coord: Path, env: dict[str, str], amount: int) -> subprocess.CompletedProcess[str]:
    return run(ours(str(amount), "--check-free", "--coordination-file", str(coord)), env)


def test_check_free_counts_live_owners_names_them_and_writes_nothing(env: Env, coord: Path, procs: Processes) -> None:
    """``--check-free`` (the start scripts' preflight): AMOUNT eligible GPUs without a live owner,
    else exit 1 naming each holder; the file is never written, a missing one is not created."""
    r = check_free(coord, env(4), 4)
    assert (r.returncode, r.stdout) == (0, "0,1,2,3\n")
    assert not coord.exists()
    a, b = procs.sleeper(), procs.sleeper()
    alloc(coord, a.pid, env(4), 2)
    alloc(coord, b.pid, env(4), 1)
    before = coord.read_bytes()
    r = check_free(coord, env(4), 1)
    assert (r.returncode, r.stdout) == (0, "3\n")
    r = check_free(coord, env(4), 2)
    assert (r.returncode, r.stdout) == (1, "")
    assert "2 GPU(s) needed but only 1 of 4 eligible are free: held by live owners" in r.stderr
    assert f"GPU 0: pid {a.pid}, sleep; GPU 1: pid {a.pid}, sleep; GPU 2: pid {b.pid}, sleep" in r.stderr
    procs.kill(a)
    r = check_free(coord, env(4), 3)
    assert (r.returncode, r.stdout) == (0, "0,1,3\n")
    assert coord.read_bytes() == before  # dead records are not even cleaned up: read-only


def test_check_free_and_release_exclude_each_other(env: Env, coord: Path) -> None:
    r = run(ours("1", "--check-free", "--release", "--coordination-file", str(coord)), env(4))
    assert r.returncode == 2 and "--check-free and --release exclude each other" in r.stderr
