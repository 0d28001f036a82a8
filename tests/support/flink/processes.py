"""Child processes and daemons of the harness: checked runs with diagnostics, free ports, pids and log
tails."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.support.flink.errors import HarnessError


def run_checked(
    cmd: Sequence[str],
    *,
    what: str,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(
            f"{what} timed out after {timeout:.0f}s: {shlex.join(cmd)}\n"
            f"--- stdout ---\n{_text(exc.stdout)}\n--- stderr ---\n{_text(exc.stderr)}"
        ) from exc
    if proc.returncode != 0:
        raise HarnessError(
            f"{what} failed with exit code {proc.returncode}: {shlex.join(cmd)}\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        )
    return proc


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data


def free_port() -> int:
    """A currently free TCP port on localhost (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    state = stat.rsplit(")", 1)[-1].split()[0]
    return state not in ("Z", "X")


def pid_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def read_pids(pid_file: Path) -> list[int]:
    if not pid_file.is_file():
        return []
    return [int(x) for x in pid_file.read_text().split() if x.strip().isdigit()]


def tail(path: Path, lines: int = 60) -> str:
    try:
        content = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"
    return "\n".join(content[-lines:])
