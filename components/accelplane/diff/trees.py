"""Load one side of a diff as a rendered file tree ``{relpath: (text, mode)}``.

A side is, in this order of precedence:

* an existing directory: a rendered tree (the ``.accelplane-render`` marker is ignored);
* an existing file: a cluster spec, validated and rendered in-process;
* ``REV:path``: the spec (or rendered directory) at ``path`` in git revision ``REV``. The whole
  tree of that revision is materialised into a temporary directory with ``git archive`` so the
  spec's ``extends`` bases come from the same revision; the spec is then rendered with the
  *current* code. Like git, ``path`` is relative to the repository root unless it starts with
  ``./`` or ``../`` (then relative to the current directory).
"""

from __future__ import annotations

import os
import stat
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from accelplane.diff.changes import Tree
from accelplane.errors import SpecError, SpecErrors, UsageError
from accelplane.model import Spec
from accelplane.render import MARKER
from accelplane.spec_loader import display_path

SideKind = Literal["spec", "directory", "git"]


@dataclass(frozen=True)
class Side:
    """One side of a diff: its label as the user wrote it, its files and (for specs) its model."""

    label: str
    kind: SideKind
    files: Tree
    model: Spec | None = None
    warnings: tuple[SpecError, ...] = ()  # the spec's warnings (printed by `accelplane diff`)


def read_tree(directory: str | os.PathLike[str]) -> Tree:
    """A rendered directory on disk in the shape of `accelplane.render.bundle_files`.

    Text files are decoded as UTF-8 (others are kept as bytes); the render marker and ``.git`` are
    skipped; modes are the permission bits. Nothing outside the tree is ever read: a symbolic link
    (to a file or a directory) is not followed but shown as ``<symbolic link to TARGET>``, and
    anything that is not a regular file (FIFO, socket, device) as ``<not a regular file>``, so a
    planted link to ``/etc/shadow`` or a FIFO can neither leak nor hang the diff.
    """
    root = Path(directory)
    files: Tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        links = sorted(d for d in dirnames if (here / d).is_symlink())
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and d not in links)
        for filename in sorted([*filenames, *links]):
            full = here / filename
            rel = full.relative_to(root).as_posix()
            if rel == MARKER:
                continue
            files[rel] = _read_entry(full)
    return dict(sorted(files.items()))


def _read_entry(path: Path) -> tuple[str | bytes, int]:
    """One tree entry without following a symbolic link at its last component."""
    st = path.lstat()
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return f"<symbolic link to {os.readlink(path)}>\n", mode
    if not stat.S_ISREG(st.st_mode):
        return "<not a regular file>\n", mode
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # replaced since lstat
            return "<not a regular file>\n", mode
        data = fh.read()
    try:
        return data.decode("utf-8"), mode
    except UnicodeDecodeError:
        return data, mode


def _load_and_render(
    path: str | os.PathLike[str], root: Path | None = None
) -> tuple[Tree, Spec, list[Path], tuple[SpecError, ...]]:
    from accelplane.pipeline import render_spec

    rendered = render_spec(path, root)
    files: Tree = dict(rendered.files)
    return files, rendered.model, list(rendered.validated.loaded.files), rendered.validated.warnings


def render_spec(path: str | os.PathLike[str]) -> tuple[Tree, Spec]:
    """Validate and render a spec in-process (raises `SpecErrors`)."""
    files, model, _, _ = _load_and_render(path)
    return files, model


def load_side(arg: str, cwd: str | os.PathLike[str] | None = None) -> Side:
    """Resolve a command-line side (directory, spec file or ``REV:path``) to a `Side`."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    path = base / arg
    if path.is_dir():
        return Side(arg, "directory", read_tree(path))
    if path.is_file():
        files, model, _, warnings = _load_and_render(arg if cwd is None else path)  # errors name the file as typed
        return Side(arg, "spec", files, model, warnings)
    if path.exists():
        raise UsageError(f"{arg}: not a regular file or directory")
    rev, sep, rel = arg.partition(":")
    if sep and rev and rel:
        return git_side(arg, rev, rel, base)
    raise UsageError(f"{arg}: no such file or directory (and not of the form REV:path)")


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise UsageError("git is not installed (needed for REV:path)") from None


def _repo_relative(rel: str, top: Path, cwd: Path, arg: str) -> PurePosixPath:
    if rel.startswith(("./", "../")) or rel in (".", ".."):
        full = (cwd / rel).resolve()
        try:
            return PurePosixPath(full.relative_to(top).as_posix())
        except ValueError:
            raise UsageError(f"{arg}: {rel} is outside the repository {top}") from None
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts:
        raise UsageError(f"{arg}: path must be relative to the repository root (or start with ./)")
    return pure


def git_side(arg: str, rev: str, rel: str, cwd: Path) -> Side:
    """Materialise revision ``rev`` and load ``rel`` from it (spec → rendered, directory → read)."""
    top_proc = _git(["rev-parse", "--show-toplevel"], cwd)
    if top_proc.returncode != 0:
        raise UsageError(f"{arg}: not inside a git repository ({top_proc.stderr.strip()})")
    top = Path(top_proc.stdout.strip()).resolve()
    verify = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], top)
    if verify.returncode != 0:
        raise UsageError(f"{arg}: unknown revision {rev!r}")
    commit = verify.stdout.strip()
    relpath = _repo_relative(rel, top, cwd.resolve(), arg)
    with tempfile.TemporaryDirectory(prefix="accelplane-diff-") as tmp_name:
        tmp = Path(tmp_name).resolve()
        _archive(commit, top, tmp, arg)
        target = tmp / relpath
        if not target.exists():
            raise UsageError(f"{arg}: {relpath} does not exist in revision {rev}")
        if target.is_dir():
            return Side(arg, "git", read_tree(target))
        try:
            files, model, sources, warnings = _load_and_render(target, root=tmp)  # bases: this revision's tree
        except SpecErrors as exc:
            raise SpecErrors(_relabel(exc.errors, tmp, rev)) from None
        outside = sorted(str(p) for p in sources if not p.resolve().is_relative_to(tmp))
        if outside:
            raise UsageError(
                f"{arg}: extends files outside the repository, which a git revision cannot provide: "
                + ", ".join(outside)
            )
        return Side(arg, "git", files, model, tuple(_relabel(list(warnings), tmp, rev)))


def _archive(commit: str, top: Path, dest: Path, arg: str) -> None:
    """``git archive <commit> | tar -x -C dest`` without a shell (tar safety filter ``data``)."""
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                ["git", "archive", "--format=tar", commit],
                cwd=top,
                stdout=subprocess.PIPE,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise UsageError("git is not installed (needed for REV:path)") from None
        assert proc.stdout is not None
        try:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                tar.extractall(dest, filter="data")
            while proc.stdout.read(1 << 16):  # drain the end-of-archive padding (no SIGPIPE)
                pass
        except tarfile.TarError as exc:
            proc.kill()
            proc.wait()
            raise UsageError(f"{arg}: cannot read git archive: {exc}") from None
        finally:
            proc.stdout.close()
        if proc.wait() != 0:
            err.seek(0)
            message = err.read().decode("utf-8", "replace").strip()
            raise UsageError(f"{arg}: git archive failed (exit {proc.returncode}): {message}")


def _relabel(errors: list[SpecError], tmp: Path, rev: str) -> list[SpecError]:
    """Name files inside the materialised revision ``REV:relpath`` instead of the temp path."""
    prefix = display_path(tmp)

    def rename(text: str) -> str:
        candidate = Path(os.path.abspath(text))
        try:
            return f"{rev}:{candidate.relative_to(tmp).as_posix()}"
        except ValueError:
            return text

    out = []
    for e in errors:
        message = e.message.replace(prefix + os.sep, f"{rev}:").replace(str(tmp) + os.sep, f"{rev}:")
        out.append(SpecError(rename(e.file), e.path, message, e.finding))
    return out
