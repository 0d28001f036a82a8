"""Issue 15 §5: `render` replaces DIR crash-safely, cleans up after an interrupted render, and never
discards files a user added to DIR without being told to.

Fault injection: a forked child renders with a `sys.addaudithook` hook that SIGKILLs it at the k-th
file-system operation (open for writing, mkdir, chmod, rename, renameat2 via ctypes, rmtree,
unlink …), for every k, with and without ``RENAME_EXCHANGE``. After every kill the parent checks
that DIR is the old or the new render (or, without exchange, that the old one is recoverable), and
that the next render recovers, leaves nothing behind and produces the new tree.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from accelplane import render
from accelplane.cli import main
from accelplane.errors import UsageError
from accelplane.render import MARKER, write_tree

from tests.support.paths import REPO_ROOT

OLD = {"a.txt": ("old a\n", 0o644), "sub/b.txt": ("old b\n", 0o644), "gone.txt": ("x\n", 0o600)}
NEW = {"a.txt": ("new a\n", 0o644), "sub/b.txt": ("new b\n", 0o755), "sub/deep/c.txt": ("c\n", 0o644)}

MUTATING = {
    "os.mkdir",
    "os.chmod",
    "os.rename",
    "os.remove",
    "os.rmdir",
    "shutil.rmtree",
    "tempfile.mkdtemp",
    "ctypes.call_function",
    "ctypes.dlsym",
}


def _is_mutation(event: str, args: tuple[Any, ...]) -> bool:
    if event == "open":
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
        return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)) or any(c in mode for c in "wax+")
    return event in MUTATING


def _render_in_child(out: Path, kill_at: int | None, exchange: bool) -> int:
    """Fork; the child renders NEW into ``out`` and is SIGKILLed at mutation ``kill_at``. Returns
    the number of mutations the child saw when it was not killed (via its exit status)."""
    pid = os.fork()
    if pid == 0:  # child
        try:
            count = 0
            active = False

            def hook(event: str, args: tuple[Any, ...]) -> None:
                nonlocal count
                if active and _is_mutation(event, args):
                    count += 1
                    if count == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)

            if not exchange:

                def no_exchange(a: Path, b: Path) -> None:
                    raise OSError(errno.EINVAL, "no RENAME_EXCHANGE here")

                render.exchange = no_exchange  # type: ignore[assignment]
            sys.addaudithook(hook)
            active = True
            write_tree(NEW, out)
            active = False
            os._exit(min(count, 250))
        except BaseException:
            os._exit(255)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return -1
    code = os.WEXITSTATUS(status)
    assert code != 255, "render failed in the child"
    return code


def _tree(directory: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.name != MARKER:
            out[path.relative_to(directory).as_posix()] = (path.read_text(), path.stat().st_mode & 0o777)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2-exchange", "two-renames"])
def test_kill_9_at_every_step_leaves_dir_or_a_recoverable_state(tmp_path: Path, exchange: bool) -> None:
    out = tmp_path / "parent" / "DIR"
    write_tree(OLD, out)
    total = _render_in_child(out, None, exchange)
    assert _tree(out) == NEW
    assert total >= 10, total
    states = set()
    for k in range(1, total + 1):
        write_tree(OLD, out, force=True)
        assert _render_in_child(out, k, exchange) == -1
        if out.exists():
            state = "old" if _tree(out) == OLD else "new" if _tree(out) == NEW else "broken"
        else:
            state = "missing"
        states.add(state)
        assert state != "broken", f"killed at step {k}: DIR is neither render"
        if exchange:
            assert state != "missing", f"killed at step {k}: DIR is missing"
        else:
            assert state != "missing" or render._leftovers(out, "old"), (
                f"killed at step {k}: nothing to recover"
            )
        notes: list[str] = []
        write_tree(NEW, out, note=notes.append)
        assert _tree(out) == NEW
        assert sorted(p.name for p in out.parent.iterdir()) == ["DIR"], f"leftovers after step {k}"
        if state == "missing":
            assert any("restored the previous render" in n for n in notes)
    assert "old" in states and "new" in states
    if not exchange:
        assert "missing" in states  # the window the exchange closes, recovered above


def test_leftovers_from_an_older_interrupted_render_are_cleaned(tmp_path: Path) -> None:
    out = tmp_path / "DIR"
    write_tree(OLD, out)
    old = tmp_path / ".DIR.old-abc123"
    out.rename(old)
    (tmp_path / ".DIR.tmp-def456" / "kubernetes").mkdir(parents=True)
    (tmp_path / ".other.tmp-1").mkdir()  # not ours: another DIR's
    notes: list[str] = []
    assert main(["render", str(REPO_ROOT / "stacks/edge-standalone.yaml"), "--out", str(out), "-q"]) == 0
    write_tree(NEW, out, note=notes.append, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.tmp-1", "DIR"]
    assert _tree(out) == NEW


def test_recovery_notes_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "DIR"
    spec = str(REPO_ROOT / "stacks/edge-standalone.yaml")
    assert main(["render", spec, "--out", str(out), "-q"]) == 0
    out.rename(tmp_path / ".DIR.old-zzz")
    (tmp_path / ".DIR.tmp-yyy").mkdir()
    assert main(["render", spec, "--out", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "restored the previous render from .DIR.old-zzz" in err
    assert "removed .DIR.tmp-yyy left by an interrupted render" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DIR"]


def test_user_files_block_a_re_render_until_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "DIR"
    spec = str(REPO_ROOT / "stacks/edge-standalone.yaml")
    assert main(["render", spec, "--out", str(out), "-q"]) == 0
    (out / "notes.md").write_text("my notes\n")
    (out / "node").joinpath("provision.sh").write_text("#!/bin/sh\n# hand edit\n")
    (out / "link").symlink_to("/etc/passwd")
    before = _tree(out)
    capsys.readouterr()
    assert main(["render", spec, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "2 files not written by accelplane (link, notes.md)" in err
    assert "1 file changed since the last render (node/provision.sh)" in err
    assert "--force" in err
    assert _tree(out) == before and (out / "link").is_symlink()

    assert main(["render", spec, "--out", str(out), "-q", "--force"]) == 0
    err = capsys.readouterr().err
    for rel in ("link", "notes.md", "node/provision.sh"):
        assert f"--force: discarding {rel}" in err
    assert not (out / "notes.md").exists() and not (out / "link").exists()
    assert main(["render", spec, "--out", str(out), "-q"]) == 0  # clean again


def test_marker_without_file_list_is_replaced_with_a_note(tmp_path: Path) -> None:
    out = tmp_path / "DIR"
    out.mkdir()
    (out / MARKER).write_text(render.MARKER_TEXT)
    (out / "x.yaml").write_text("a: 1\n")
    notes: list[str] = []
    write_tree(NEW, out, note=notes.append)
    assert _tree(out) == NEW
    assert any("older accelplane without a file list" in n for n in notes)


def test_foreign_directory_is_never_replaced(tmp_path: Path) -> None:
    out = tmp_path / "DIR"
    out.mkdir()
    (out / "important").write_text("x")
    with pytest.raises(UsageError, match="not written by accelplane render"):
        write_tree(NEW, out)
    assert (out / "important").read_text() == "x"
