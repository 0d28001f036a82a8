"""The discovery script's GPU-owner metrics on YARN/standalone hosts: what the coordination file
records (format v2, owner labels in the ``.labels`` side file), the node-exporter textfile it writes (parsed by
prometheus_client's text parser), written atomically (a crash mid-write leaves the previous file),
and the Flink config that asks for it."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
from accelplane.discovery import gpu_discovery as gd
from prometheus_client.parser import text_string_to_metric_families

from tests.support.discovery_runs import SCRIPT, fake_env
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for

YARN = REPO_ROOT / "stacks" / "yarn-analytics.yaml"


def _opts(tmp_path: Path, label: str | None = "sessions-v100") -> gd.Options:
    opts = gd.Options()
    opts.coordination = True
    opts.coordination_file = str(tmp_path / "coordination")
    opts.owner_pid = os.getpid()
    if label is not None:
        opts.owner_label = label
    opts.metrics_file = str(tmp_path / "accelplane-gpu-owners.prom")
    return opts


def _samples(path: Path) -> list[dict[str, str]]:
    families = list(text_string_to_metric_families(path.read_text()))
    assert [f.name for f in families] == ["accelplane_gpu_owner"]
    assert families[0].type == "gauge"
    assert all(s.value == 1 for s in families[0].samples)
    return [dict(s.labels) for s in families[0].samples]


GPUS = [gd.Gpu(0, "GPU-aaaa"), gd.Gpu(1, "GPU-bbbb"), gd.Gpu(2, "MIG-cccc", parent=1, mig_index=0)]


def test_allocation_and_release_rewrite_the_metrics(tmp_path: Path) -> None:
    opts = _opts(tmp_path)
    chosen = gd.allocate(GPUS, 2, opts, gd.Log(), gd.Deadline(5))
    assert [g.key for g in chosen] == ["GPU-aaaa", "GPU-bbbb"]
    text = (tmp_path / "coordination").read_text()
    assert text.startswith(gd.FILE_HEADER + "\n")  # v2 always: an older version rolled back to reads it
    assert [r.label for r in gd.parse_records(text.encode(), "c")] == ["-"] * 2
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        assert [r.label for r in cf.read()] == ["sessions-v100"] * 2
    host = os.uname().nodename
    assert _samples(tmp_path / "accelplane-gpu-owners.prom") == [
        {"flink_cluster": "sessions-v100", "gpu_index": str(i), "gpu_uuid": key, "host": host, "pid": str(os.getpid())}
        for i, key in ((0, "GPU-aaaa"), (1, "GPU-bbbb"))
    ]
    gd.release(opts, gd.Log(), gd.Deadline(5))
    assert _samples(tmp_path / "accelplane-gpu-owners.prom") == []
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_without_an_owner_label_the_file_stays_v2(tmp_path: Path) -> None:
    opts = _opts(tmp_path, label=None)
    opts.metrics_file = None
    gd.allocate(GPUS, 1, opts, gd.Log(), gd.Deadline(5))
    assert (tmp_path / "coordination").read_text().startswith(gd.FILE_HEADER + "\n")


def test_export_metrics_leaves_out_dead_owners(tmp_path: Path) -> None:
    opts = _opts(tmp_path)
    gd.allocate(GPUS, 1, opts, gd.Log(), gd.Deadline(5))
    records = gd.parse_records((tmp_path / "coordination").read_bytes(), "c")
    dead = gd.Record("MIG-cccc", 2, records[0].pid, records[0].start + 1, records[0].boot, records[0].pidns, 0, "x")
    (tmp_path / "coordination").write_bytes(gd.render_records([*records, dead]))
    exporter = _opts(tmp_path)
    exporter.export_metrics = True
    assert gd.run(exporter, gd.Log()) == 0
    assert [s["gpu_uuid"] for s in _samples(tmp_path / "accelplane-gpu-owners.prom")] == ["GPU-aaaa"]


def test_label_values_are_escaped(tmp_path: Path) -> None:
    record = gd.Record("GPU-a", 0, 1, 1, "b", "1", 0, "c")
    text = gd.render_metrics([record], 'odd"host\\\nname')
    (tmp_path / "m.prom").write_text(text)
    assert _samples(tmp_path / "m.prom")[0]["host"] == 'odd"host\\\nname'


def test_a_crash_mid_write_leaves_the_previous_file(tmp_path: Path) -> None:
    """A writer killed after writing half its data (before the rename) leaves the previous file
    whole; its leftover is a ``.tmp`` file, which the textfile collector never reads (``*.prom``)."""
    path = tmp_path / "accelplane-gpu-owners.prom"
    before = [gd.Record("GPU-a", 0, 1, 1, "b", "1", 0, "c")]
    gd.write_metrics(str(path), before, gd.Log())
    previous = path.read_text()
    pid = os.fork()
    if pid == 0:  # the writer: dies with SIGKILL in the middle of its write
        real_write_all = gd.write_all

        def half_then_die(fd: int, data: bytes) -> None:
            real_write_all(fd, data[: len(data) // 2])
            os.kill(os.getpid(), 9)

        gd.write_all = half_then_die  # type: ignore[assignment]
        gd.write_metrics(str(path), [*before, gd.Record("GPU-b", 1, 2, 2, "b", "1", 0, "c")], gd.Log())
        os._exit(0)  # not reached
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
    assert path.read_text() == previous
    leftovers = [p.name for p in tmp_path.iterdir() if p != path]
    assert leftovers and all(name.endswith(".tmp") and not name.endswith(".prom") for name in leftovers)
    _samples(path)


def test_a_failed_write_warns_and_keeps_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "accelplane-gpu-owners.prom"
    gd.write_metrics(str(path), [], gd.Log())
    previous = path.read_text()

    def enospc(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gd.os, "fsync", enospc)
    gd.write_metrics(str(path), [gd.Record("GPU-a", 0, 1, 1, "b", "1", 0, "c")], gd.Log())
    assert path.read_text() == previous
    assert list(tmp_path.iterdir()) == [path]
    assert "cannot write metrics file" in capsys.readouterr().err


def test_the_yarn_stack_asks_the_script_for_owner_metrics() -> None:
    config = files_for(YARN)["flink/sessions-v100/config.yaml"][0]
    assert (
        "--owner-label sessions-v100 --metrics-file /var/lib/prometheus/node-exporter/accelplane-gpu-owners.prom"
        in config
    )


@pytest.mark.parametrize(
    "line",
    [
        "GPU-a 0 1 1 b 1 7",  # v3 records carry the label field
        "GPU-a 0 1 1 b 1 7 ",  # an empty label
        "GPU-a 0 1 1 b 1 7 bad/label",
        "GPU-a 0 1 1 b 1 7 " + "x" * 64,
        "GPU-a 0 1 1 b 1 7 lab el",
    ],
)
def test_a_malformed_v3_record_is_refused(line: str) -> None:
    body = f"{gd.FILE_HEADER_V3}\n{line}\n".encode()
    content = body + (gd._end_line(body) + "\n").encode()
    with pytest.raises(gd.DiscoveryError, match="line 2 is not a valid record"):
        gd.parse_records(content, "c")


def test_a_v2_file_is_read_and_rewritten_with_labels(tmp_path: Path) -> None:
    """An upgrade: the v2 file of an older version is read; labels go to the side file."""
    opts = _opts(tmp_path)
    old = gd.Record("GPU-bbbb", 1, 1, 1, "0000-dead", "-", 0)  # from another boot
    (tmp_path / "coordination").write_bytes(gd.render_records([old]))
    assert (tmp_path / "coordination").read_text().startswith(gd.FILE_HEADER + "\n")
    gd.allocate(GPUS, 1, opts, gd.Log(), gd.Deadline(5))
    with gd.CoordinationFile(opts, gd.Log(), gd.Deadline(5)) as cf:
        records = cf.read()
    assert [(r.key, r.label) for r in records] == [("GPU-aaaa", "sessions-v100")]  # the stale record reclaimed
    assert (tmp_path / "coordination.labels").read_text().startswith(gd.LABELS_HEADER + "\n")


def test_export_writes_the_metrics_under_the_coordination_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37.14: --export-metrics wrote the file after letting go of the lock, so an export that
    read earlier could overwrite the file a later allocation wrote (0 series while 2 were held).
    Now the metrics are written while the lock is held, in the order of coordination changes."""
    opts = _opts(tmp_path)
    gd.allocate(GPUS, 1, opts, gd.Log(), gd.Deadline(5))
    seen: list[bool] = []
    real = gd.write_metrics

    def probe(path: str, records: list[gd.Record], log: gd.Log) -> None:
        fd = os.open(str(tmp_path / "coordination.lock"), os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(False)
        except BlockingIOError:
            seen.append(True)
        finally:
            os.close(fd)
        real(path, records, log)

    monkeypatch.setattr(gd, "write_metrics", probe)
    exporter = _opts(tmp_path)
    exporter.export_metrics = True
    assert gd.run(exporter, gd.Log()) == 0
    assert seen == [True]


def test_an_undecodable_host_name_never_breaks_an_allocation(tmp_path: Path) -> None:
    """Issue 37.15: a host name that is not UTF-8 made write_metrics raise outside its try (exit 70,
    nothing on stdout) after the GPUs were recorded, so the TaskManager started without GPUs while
    the file said it held them. Run for real in a UTS namespace whose host name is b'gpu\\xff'."""
    metrics = tmp_path / "owners.prom"
    env = fake_env(2)
    proc = subprocess.run(
        ["unshare", "--uts", "--", sys.executable, "-c",
         "import socket, subprocess, sys; socket.sethostname(b'gpu\\xff-01');"
         "sys.exit(subprocess.call(sys.argv[1:]))",
         sys.executable, str(SCRIPT), "1", "--enable-coordination-mode", "--coordination-file",
         str(tmp_path / "coordination"), "--owner-label", "c1", "--metrics-file", str(metrics)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "0\n"), proc.stderr
    assert _samples(metrics)[0]["host"] == "gpu\ufffd-01"
