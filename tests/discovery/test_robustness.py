"""Hostile environments get a bounded, clear outcome: a hanging NVML, a tool that prints forever,
impossible records, a huge sparse file, an inventory that lists one GPU twice."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.discovery_runs import Processes, boot_id, gpu_uuid, ours, pid_namespace, render, run

Env = Callable[..., dict[str, str]]


def coord_args(coord: Path, owner: int) -> list[str]:
    return ["--enable-coordination-mode", "--coordination-file", str(coord), "--owner-pid", str(owner)]


def hanging_pynvml(tmp_path: Path) -> str:
    """A ``pynvml`` whose nvmlInit never returns (a wedged driver); returns its PYTHONPATH."""
    d = tmp_path / "hang"
    d.mkdir()
    (d / "pynvml.py").write_text("import time\n\ndef nvmlInit():\n    time.sleep(1000)\n")
    return str(d)


def test_a_hanging_nvml_init_honours_the_timeout_and_falls_back(env: Env, tmp_path: Path) -> None:
    e = env(4, PYTHONPATH=hanging_pynvml(tmp_path))
    t0 = time.monotonic()
    r = run(ours("1", "--timeout", "4"), e, timeout=30)
    took = time.monotonic() - t0
    assert (r.returncode, r.stdout, r.stderr) == (0, "0\n", "")  # nvidia-smi answered in the time left
    assert took < 4.5  # NVML got half of the budget, not 30 s


def test_a_hanging_nvml_alone_fails_within_the_timeout(env: Env, tmp_path: Path) -> None:
    e = env(4, PYTHONPATH=hanging_pynvml(tmp_path))
    t0 = time.monotonic()
    r = run(ours("1", "--backend", "nvml", "--timeout", "2"), e, timeout=30)
    took = time.monotonic() - t0
    assert (r.returncode, r.stdout) == (4, "")
    assert "NVML did not answer within" in r.stderr
    assert took < 2.5  # and the abandoned thread does not keep the process alive


def _limit_memory() -> None:
    limit = 512 << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_an_nvidia_smi_that_prints_forever_is_cut_off(env: Env) -> None:
    """Under a 512 MiB address-space limit: reading everything would die of MemoryError (exit 70)."""
    r = subprocess.run(ours("1", "--vendor", "nvidia"), env=env(4, FAKE_NVIDIA_SMI_FLOOD="1"),
                       capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory, check=False)
    assert (r.returncode, r.stdout) == (4, "")
    assert f"nvidia-smi printed more than {4 << 20} bytes; stopped reading and killed it" in r.stderr


def test_a_record_with_an_impossible_pid_is_refused_clearly(env: Env, coord: Path, procs: Processes) -> None:
    for pid in (2**63, 2**22 + 1, 10**40):
        coord.write_bytes(render([f"{gpu_uuid(0)} 0 {pid} 1 {boot_id()} {pid_namespace()} 1700000000"]))
        r = run(ours("1", *coord_args(coord, procs.sleeper().pid)), env(4))
        assert (r.returncode, r.stdout) == (3, ""), r.stderr
        assert "is not a valid record" in r.stderr or f"pid {pid} is outside 1..{2**22}" in r.stderr
        assert "internal error" not in r.stderr


def test_a_5000_digit_field_is_refused_not_parsed(env: Env, coord: Path, procs: Processes) -> None:
    coord.write_bytes(render([f"{gpu_uuid(0)} 0 1 {'9' * 5000} {boot_id()} {pid_namespace()} 1700000000"]))
    r = run(ours("1", *coord_args(coord, procs.sleeper().pid)), env(4))
    assert (r.returncode, r.stdout) == (3, "")
    assert "line 2 is not a valid record" in r.stderr


def test_a_2_gb_sparse_coordination_file_is_refused_without_reading_it(env: Env, coord: Path,
                                                                      procs: Processes) -> None:
    with open(coord, "wb") as f:
        f.truncate(2 << 30)
    t0 = time.monotonic()
    r = subprocess.run(ours("1", *coord_args(coord, procs.sleeper().pid)), env=env(4), capture_output=True,
                       text=True, timeout=60, preexec_fn=_limit_memory, check=False)
    assert (r.returncode, r.stdout) == (3, "")
    assert f"it is {2 << 30} bytes; a coordination file is never larger than {1 << 20}" in r.stderr
    assert time.monotonic() - t0 < 10
    assert os.path.getsize(coord) == 2 << 30  # left alone for inspection


def test_an_inventory_listing_one_uuid_twice_is_refused_before_writing(env: Env, coord: Path,
                                                                      procs: Processes) -> None:
    r = run(ours("1", *coord_args(coord, procs.sleeper().pid)), env(4, FAKE_SAME_UUID="1"))
    assert (r.returncode, r.stdout) == (4, "")
    assert f"nvidia-smi reported the same GPU {gpu_uuid(0)} twice (indexes 0 and 1)" in r.stderr
    assert not coord.exists()
    r = run(ours("2"), env(4, FAKE_SAME_UUID="1"))  # without coordination too: a clear refusal
    assert r.returncode == 4


def test_a_hanging_nvidia_tool_never_hands_out_amd_gpus_instead(env: Env, tmp_path: Path) -> None:
    """A loaded or wedged NVIDIA node whose tool does not answer in time: exit 4, not the AMD fakes'
    GPUs (which would mix vendors' records in one coordination file)."""
    slow = tmp_path / "bin"
    slow.mkdir()
    (slow / "nvidia-smi").write_text("#!/bin/sh\nexec sleep 60\n")
    (slow / "nvidia-smi").chmod(0o755)
    e = env(4)
    e["PATH"] = f"{slow}:{e['PATH']}"
    r = run(ours("1", "--timeout", "2"), e, timeout=30)
    assert (r.returncode, r.stdout) == (4, "")
    assert "amd-smi: not tried, an NVIDIA backend is present but did not answer" in r.stderr
