"""Acceptance: concurrent allocations on a 64-GPU node never hand one GPU to two live owners.

Rounds: env ``ACCELPLANE_DISCOVERY_ROUNDS`` (default 50; the issue requires >= 50).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.support.discovery_runs import (
    SCRIPT,
    Processes,
    gpu_uuid,
    ours,
    proc_starttime,
    read_records,
    wait_results,
)

Env = Callable[..., dict[str, str]]
GPUS = 64
ROUNDS = int(os.environ.get("ACCELPLANE_DISCOVERY_ROUNDS", "50"))


def burst(runs: Sequence[Sequence[str]], env: dict[str, str]) -> list[dict[str, object]]:
    """Run main() concurrently in one forked process per argument list (see _burst.py)."""
    r = subprocess.run([sys.executable, "-S", str(Path(__file__).with_name("_burst.py")), str(SCRIPT), json.dumps(runs)],
                       env=env, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    results: list[dict[str, object]] = json.loads(r.stdout)
    return results


# A generous time budget: these tests are about exclusivity, and a loaded CI machine must not turn
# them into tests of GPUDriver's 10 s timeout (the default budget of 9 s).
BUDGET = ("--timeout", "120")


def args_for(coord: Path, owner: int) -> list[str]:
    return ["1", "--enable-coordination-mode", "--coordination-file", str(coord), "--owner-pid", str(owner), *BUDGET]


def assert_file_matches(coord: Path, holders: dict[int, int]) -> None:
    """The file holds exactly one record per held GPU, naming the live owner that got it."""
    recs = read_records(coord)
    assert {r.index: r.pid for r in recs} == holders
    assert len(recs) == len(holders)
    for r in recs:
        assert r.key == gpu_uuid(r.index)
        assert r.start == proc_starttime(r.pid)


@pytest.mark.slow
def test_64_concurrent_allocations_never_double_allocate(env: Env, coord: Path, procs: Processes) -> None:
    e = env(GPUS)
    rng = random.Random(4)
    inode = None
    for rnd in range(ROUNDS):
        pool = procs.sleepers(GPUS + 1 + 8)  # this round's owners, all alive
        owners, extra_owner, newcomers = pool[:GPUS], pool[GPUS], pool[GPUS + 1:]
        results = burst([args_for(coord, o) for o in owners], e)
        assert all(r["rc"] == 0 for r in results), f"round {rnd}: {[r for r in results if r['rc'] != 0][:3]}"
        got = [int(str(r["out"])) for r in results]
        assert all(str(r["out"]).count("\n") == 1 for r in results)
        assert sorted(got) == list(range(GPUS)), f"round {rnd}: a GPU was handed out twice"
        holders = dict(zip(got, owners, strict=True))
        assert_file_matches(coord, holders)
        lock = coord.with_name(coord.name + ".lock")  # every allocator locks this one inode
        inode = inode or lock.stat().st_ino
        assert lock.stat().st_ino == inode

        # A 65th TaskManager gets nothing, loudly.
        [extra] = burst([args_for(coord, extra_owner)], e)
        assert (extra["rc"], extra["out"]) == (1, "")
        assert "cannot allocate 1 GPU(s): 64 eligible, 64 held by live owners" in str(extra["err"])

        # kill -9 some owners: exactly their GPUs go to the next TaskManagers.
        victims = rng.sample(range(GPUS), len(newcomers))
        freed = sorted(got[v] for v in victims)
        for v in victims:
            procs.kill_pid(owners[v])
        again = burst([args_for(coord, o) for o in newcomers], e)
        assert all(r["rc"] == 0 for r in again), again
        regot = [int(str(r["out"])) for r in again]
        assert sorted(regot) == freed
        for v in victims:
            del holders[got[v]]
        holders.update(zip(regot, newcomers, strict=True))
        assert_file_matches(coord, holders)

        procs.kill_all()  # every owner dies: the next round reclaims all 64 GPUs
    assert coord.with_name(coord.name + ".lock").stat().st_ino == inode


@pytest.mark.slow
def test_64_concurrent_real_invocations_with_the_parent_as_owner(env: Env, coord: Path, procs: Processes,
                                                                  tmp_path: Path) -> None:
    """The same, with real interpreter start-ups and the default owner (each run's parent)."""
    e = env(GPUS)
    outs = [tmp_path / f"run{i}" for i in range(GPUS + 1)]
    cmd = ours("1", "--enable-coordination-mode", "--coordination-file", str(coord), *BUDGET)
    owners = [procs.owned_run(cmd, e, out) for out in outs]
    results = wait_results(outs)
    ok = [(int(r.out), o.pid) for r, o in zip(results, owners, strict=True) if r.rc == 0]
    failed = [r for r in results if r.rc != 0]
    assert len(ok) == GPUS and sorted(g for g, _ in ok) == list(range(GPUS))
    assert len(failed) == 1 and failed[0].rc == 1 and failed[0].out == ""
    assert "cannot allocate 1 GPU(s)" in failed[0].err
    assert_file_matches(coord, dict(ok))
