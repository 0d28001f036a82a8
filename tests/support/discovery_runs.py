"""Helpers shared by the discovery tests and the discovery benchmark (no pytest import here)."""

from __future__ import annotations

import binascii
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.fake_nvidia_smi import FAKE_NVIDIA_SMI, fake_gpu_uuid
from tests.support.flink.home import find_flink_home, flink_gpu_discovery_script
from tests.support.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "components" / "accelplane" / "discovery" / "gpu_discovery.py"
FAKES = FAKE_NVIDIA_SMI.parent  # the fake GPU tools: nvidia-smi, amd-smi, rocm-smi
HEADER = "# accelplane-gpu-coordination v2"
END_PREFIX = "# end crc32="

# Variables that would make a test depend on the machine it runs on.
_SCRUBBED = (
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER", "ACCELPLANE_GPU_DISCOVERY_BACKEND", "ACCELPLANE_GPU_DISCOVERY_ROOT", "PYTHONPATH",
)

# -S: no site-packages, so the NVML backend is "not installed" and the fake nvidia-smi on PATH
# answers even on a machine with real GPUs; it is also how the script runs on a bare node.
PYTHON_CMD = (sys.executable, "-S")


def fake_env(gpus: int = 4, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment with the fakes first on PATH and nothing machine-specific."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED and not k.startswith("FAKE_")}
    env["PATH"] = f"{FAKES}{os.pathsep}{env.get('PATH', os.defpath)}"
    env["FAKE_GPU_COUNT"] = str(gpus)
    env["ACCELPLANE_GPU_DISCOVERY_ROOT"] = str(FAKES / "no-such-root")  # no real /sys, /dev GPUs
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def gpu_uuid(index: int) -> str:
    """The UUID the fake nvidia-smi prints for host GPU ``index``."""
    return fake_gpu_uuid(index)


def ours(*args: str) -> list[str]:
    return [*PYTHON_CMD, str(SCRIPT), *args]


def run(cmd: Sequence[str], env: Mapping[str, str], timeout: float = 60,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), env=dict(env), capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, stdin=subprocess.DEVNULL, check=False)


def proc_starttime(pid: int) -> int:
    data = Path(f"/proc/{pid}/stat").read_bytes()
    return int(data[data.rfind(b")") + 2:].split()[19])


def boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def pid_namespace() -> str:
    link = os.readlink("/proc/self/ns/pid")
    return link[link.find("[") + 1:link.rfind("]")]


@dataclass(frozen=True)
class Rec:
    """One record of our coordination file."""

    key: str
    index: int
    pid: int
    start: int
    boot: str
    pidns: str
    stamp: int = 1_700_000_000

    def line(self) -> str:
        return f"{self.key} {self.index} {self.pid} {self.start} {self.boot} {self.pidns} {self.stamp}"


def record_for(index: int, pid: int, *, start: int | None = None, boot: str | None = None,
               pidns: str | None = None, key: str | None = None) -> Rec:
    """A record as our script would write it for ``pid`` (override fields to fake history)."""
    return Rec(key or gpu_uuid(index), index, pid, proc_starttime(pid) if start is None else start,
               boot or boot_id(), pidns or pid_namespace())


def render(lines: Iterable[str]) -> bytes:
    """A coordination file with these record lines and a correct checksum."""
    body = "".join(f"{line}\n" for line in [HEADER, *lines]).encode()
    return body + f"{END_PREFIX}{binascii.crc32(body):08x}\n".encode()


def write_records(path: Path, records: Iterable[Rec]) -> None:
    path.write_bytes(render(r.line() for r in records))


def read_records(path: Path) -> list[Rec]:
    lines = path.read_text().split("\n")
    assert lines[0] == HEADER and lines[-2].startswith(END_PREFIX) and lines[-1] == "", path.read_text()
    out = []
    for line in lines[1:-2]:
        k, i, p, s, b, n, t = line.split(" ")
        out.append(Rec(k, int(i), int(p), int(s), b, n, int(t)))
    return out


def flink_records(path: Path) -> list[tuple[int, int]]:
    """Records of Flink's script: ``<index> <pid>`` lines."""
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            idx, pid = line.split()
            out.append((int(idx), int(pid)))
    return out


def dead_pid() -> int:
    """A pid that belongs to no process right now (a child that already exited and was reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # ESRCH: it exited while we read
        return False
    return state not in (b"Z", b"X")


class Processes:
    """Spawns owner processes and always kills and reaps them."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.pool_pids: list[int] = []

    def sleeper(self) -> subprocess.Popen[bytes]:
        """A live process to name with ``--owner-pid``."""
        p = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def owned_run(self, cmd: Sequence[str], env: Mapping[str, str], out: Path) -> subprocess.Popen[bytes]:
        """Run ``cmd`` as the child of its own long-lived owner (``sh``, which then execs sleep).

        The owner's pid is the returned process's pid; ``cmd`` sees it as its parent, exactly as
        the discovery script sees the TaskManager JVM. Results land in out.{out,err,rc}."""
        shell = ('"$0" "$@" >"$OUT.out" 2>"$OUT.err"; echo $? >"$OUT.rc.tmp"; mv "$OUT.rc.tmp" "$OUT.rc"; '
                 "exec sleep 1000")
        p = subprocess.Popen(["sh", "-c", shell, *cmd], env={**env, "OUT": str(out)}, stdin=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def sleepers(self, n: int) -> list[int]:
        """``n`` live processes started by ONE shell (cheap), as pids; kill them with kill_pid()."""
        script = 'i=0; while [ "$i" -lt "$0" ]; do sleep 1000 >/dev/null & echo $!; i=$((i+1)); done; exec >&-; wait'
        p = subprocess.Popen(["sh", "-c", script, str(n)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        self.procs.append(p)
        assert p.stdout is not None
        pids = [int(line) for line in p.stdout]
        assert len(pids) == n
        self.pool_pids.extend(pids)
        return pids

    def kill_pid(self, pid: int) -> None:
        """SIGKILL a pooled sleeper and wait until its shell has reaped it."""
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while alive(pid):
            assert time.monotonic() < deadline, f"{pid} did not die"
            time.sleep(0.001)

    def kill(self, p: subprocess.Popen[bytes]) -> None:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
        p.wait()

    def kill_all(self) -> None:
        for pid in self.pool_pids:
            self.kill_pid(pid)
        self.pool_pids.clear()
        for p in self.procs:
            self.kill(p)
        self.procs.clear()


@dataclass(frozen=True)
class Result:
    rc: int
    out: str
    err: str


def wait_results(outs: Sequence[Path], timeout: float = 120) -> list[Result]:
    """Wait until every owned_run() finished; return their results in order."""
    deadline = time.monotonic() + timeout
    pending = list(outs)
    while pending:
        pending = [o for o in pending if not Path(f"{o}.rc").exists()]
        if pending:
            assert time.monotonic() < deadline, f"{len(pending)} runs did not finish: {pending[:3]}"
            time.sleep(0.01)
    return [Result(int(Path(f"{o}.rc").read_text()), Path(f"{o}.out").read_text(), Path(f"{o}.err").read_text())
            for o in outs]


def flink_discovery_script() -> Path:
    """Flink's shipped discovery script in the Flink distribution the harness finds
    (``$ACCELPLANE_FLINK_HOME``, else ``.venv/flink/pyflink`` from ``make flink``)."""
    return flink_gpu_discovery_script(find_flink_home())
