"""Submitting jobs with ``flink run`` and reading the output of the ``GpuProbe`` job."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.flink.errors import HarnessError
from tests.support.flink.processes import run_checked, tail


def flink_run(
    flink_home: Path,
    rest_port: int,
    jar: Path,
    main_class: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str],
    cwd: Path,
    log_dir: Path,
    parallelism: int | None = None,
    timeout: float = 180.0,
) -> str:
    """``flink run`` (attached) against the JobManager on ``localhost:<rest_port>``; returns the
    client's stdout.

    Raises :class:`HarnessError` with stdout, stderr and the tail of the newest client log in
    ``log_dir`` when the client exits non-zero or times out.
    """
    cmd = [str(flink_home / "bin" / "flink"), "run", "-m", f"localhost:{rest_port}"]
    if parallelism is not None:
        cmd += ["-p", str(parallelism)]
    cmd += ["-c", main_class, str(jar), *args]
    try:
        proc = run_checked(cmd, what="flink run", timeout=timeout, env=env, cwd=cwd)
    except HarnessError as exc:
        client_logs = sorted(log_dir.glob("flink-*-client-*.log"))
        client_tail = tail(client_logs[-1]) if client_logs else "<no client log>"
        raise HarnessError(f"{exc}\n--- client log (tail) ---\n{client_tail}") from exc
    return proc.stdout


@dataclass(frozen=True)
class ProbeReport:
    """One line of ``GpuProbe`` output (one subtask)."""

    subtask: int
    parallelism: int
    taskmanager: str
    pid: int
    host: str
    indexes: frozenset[str]


_PROBE_LINE = re.compile(
    r"^GPUPROBE subtask=(?P<subtask>\d+) parallelism=(?P<par>\d+) tm=(?P<tm>\S+) "
    r"pid=(?P<pid>\d+) host=(?P<host>\S*) indexes=(?P<idx>\S*)$"
)


def parse_gpu_probe_output(stdout: str) -> list[ProbeReport]:
    """Parse ``GpuProbe`` client output; requires the ``GPUPROBE_DONE`` trailer."""
    reports = []
    done = None
    for line in stdout.splitlines():
        match = _PROBE_LINE.match(line.strip())
        if match:
            reports.append(
                ProbeReport(
                    subtask=int(match["subtask"]),
                    parallelism=int(match["par"]),
                    taskmanager=match["tm"],
                    pid=int(match["pid"]),
                    host=match["host"],
                    indexes=frozenset(x for x in match["idx"].split(";") if x),
                )
            )
        elif line.startswith("GPUPROBE_DONE count="):
            done = int(line.split("=", 1)[1])
    if done is None or done != len(reports):
        raise HarnessError(f"incomplete GpuProbe output ({len(reports)} lines, trailer {done}):\n{stdout}")
    return reports
