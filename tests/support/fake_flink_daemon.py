"""A fake ``bin/taskmanager.sh`` for running rendered start scripts without Java (test use only).

Like Flink's ``bin/flink-daemon.sh start`` (apache/flink ``flink-dist/src/main/flink-bin/bin/
flink-daemon.sh``, release-1.20): the daemon runs in the background and its pid is appended to
``$FLINK_PID_DIR/flink-$FLINK_IDENT_STRING-taskexecutor.pid`` (``$USER`` when no ident string is
set). The "daemon" is a process whose command line is a TaskManager JVM's (``java`` running
``TaskManagerRunner --configDir $FLINK_CONF_DIR``, as the start script checks) that sleeps until
`stop_all` (it must be alive: the start script takes the TaskManager's GPUs for its pid). Each start also appends its arguments to a record file.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

SCRIPT = """#!/bin/bash
# fake bin/taskmanager.sh (tests only): record the arguments, start a daemon like flink-daemon.sh
printf '%s\\n' "$*" >> '{record}'
dir="${{FLINK_PID_DIR:-/tmp}}"
mkdir -p "$dir"
# what flink-daemon.sh runs: "$JAVA_RUN" ... TaskManagerRunner --configDir "$FLINK_CONF_DIR" ...
(exec -a java python3 -c 'import time; time.sleep(600)' \\
  org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "${{FLINK_CONF_DIR:-}}" "$@" \\
  </dev/null >/dev/null 2>&1) &
echo $! >> "$dir/flink-${{FLINK_IDENT_STRING:-$USER}}-taskexecutor.pid"
"""


def install_fake_taskmanager(home: Path, record: Path) -> Path:
    """Write ``home/bin/taskmanager.sh`` (executable); returns its path."""
    path = home / "bin" / "taskmanager.sh"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCRIPT.format(record=record), encoding="utf-8")
    path.chmod(0o755)
    return path


def started_pids(pid_dir: Path) -> list[int]:
    """Pids the fake started, from every pid file in ``pid_dir``, in start order."""
    pids: list[int] = []
    for f in sorted(pid_dir.glob("flink-*-taskexecutor.pid")):
        pids += [int(line) for line in f.read_text().split()]
    return pids


def stop_all(pid_dir: Path) -> None:
    """Stop every daemon the fake started below ``pid_dir`` and forget them (flink-daemon's stop-all)."""
    if not pid_dir.is_dir():
        return
    for pid in started_pids(pid_dir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for f in pid_dir.glob("flink-*-taskexecutor.pid"):
        f.unlink()


def on_host(name: str) -> list[str]:
    """Command prefix that runs a command in its own UTS namespace whose host name is ``name``
    (``unshare --uts``; the start scripts check ``uname -n``)."""
    return ["unshare", "--uts", "--", "sh", "-c", 'hostname -- "$1" && shift && exec "$@"', "sh", name]
