"""CLI conventions: one exit-code scheme for every subcommand (as the table in docs/reference.md says), Pulumi
stack files in `validate`, `merged`, and I/O failures (full disk, read-only disk, a file in the way)
reported without a traceback and without half-written output."""

from __future__ import annotations

import errno
import os
import pathlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from accelplane.cli import main

from tests.support.paths import REPO_ROOT

PROD = str(REPO_ROOT / "stacks" / "prod-eu.yaml")
BAD = "cluster: {name: c, platforms: [kubernetes]}\nqueues: [{name: q, weight: 0}]\n"


def _readme_exit_codes() -> dict[str, str]:
    text = (REPO_ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        match = re.match(r"`accelplane (\w+)", cells[0]) if len(cells) == 3 else None
        if match:
            out[match[1]] = cells[2]
    return out


def test_every_subcommand_follows_the_readme_exit_codes(
    write_spec: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = str(write_spec(BAD))
    out = str(tmp_path / "out")
    unwritable = str(tmp_path / "file")
    Path(unwritable).write_text("x")
    # "different" without a day-2 refusal (exit 3, docs/diff.md): two rendered trees, one file changed
    rendered_a, rendered_b = tmp_path / "rendered-a", tmp_path / "rendered-b"
    for tree in (rendered_a, rendered_b):
        assert main(["render", PROD, "-o", str(tree)]) == 0
    changed = next(p for p in sorted(rendered_b.rglob("*.yaml")) if p.is_file())
    changed.write_text(changed.read_text() + "# changed\n")
    capsys.readouterr()
    cases = {
        # command: (ok, invalid spec or "different", usage or I/O error)
        "validate": (["validate", PROD], ["validate", bad], ["validate"]),
        "render": (
            ["render", PROD, "-o", out],
            ["render", bad, "-o", out],
            ["render", PROD, "-o", unwritable + "/x"],
        ),
        "report": (["report", PROD], ["report", bad], ["report", PROD, "--svg", unwritable + "/x.svg"]),
        "merged": (
            ["merged", PROD],
            ["merged", str(write_spec("extends: [gone.yaml]\n", "m.yaml"))],
            ["merged"],
        ),
        "diff": (
            ["diff", PROD, PROD],
            ["diff", str(rendered_a), str(rendered_b)],
            ["diff", PROD, bad],
        ),
        "schema": (["schema"], None, ["schema", "--bogus"]),
    }
    documented = _readme_exit_codes()
    assert set(cases) <= set(documented), documented
    for command, (ok, no, error) in cases.items():
        codes = []
        for argv in (ok, no, error):
            if argv is None:
                continue
            try:
                codes.append(main(argv))
            except SystemExit as exc:  # argparse usage errors
                codes.append(int(exc.code or 0))
            assert "Traceback" not in capsys.readouterr().err
        expected = [0, 1, 2] if no is not None else [0, 2]
        assert codes == expected, (command, codes)
        for code in expected:
            assert str(code) in documented[command], (command, documented[command])


def test_validate_recognises_pulumi_stack_files(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO_ROOT)
    stacks = sorted(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "stacks").glob("*.yaml"))
    assert any(os.path.basename(s).startswith("Pulumi.") for s in stacks)
    assert main(["validate", *stacks, "Pulumi.yaml"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "stacks/Pulumi.prod-eu.yaml: Pulumi stack file for stacks/prod-eu.yaml" in out
    assert "Pulumi.yaml: Pulumi project file, not a cluster spec (skipped)" in out
    assert out.count("stacks/prod-eu.yaml: ok") == 1  # named twice, validated once


def test_a_stack_file_alone_validates_its_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.x.yaml").write_text("config:\n  accelplane:spec: specs/x.yaml\n")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "x.yaml").write_text(BAD)
    (tmp_path / "stacks" / "Pulumi.y.yaml").write_text("config: {}\n")
    assert (
        main(
            [
                "validate",
                str(tmp_path / "stacks" / "Pulumi.x.yaml"),
                str(tmp_path / "stacks" / "Pulumi.y.yaml"),
            ]
        )
        == 1
    )
    captured = capsys.readouterr()
    assert f"{tmp_path}/specs/x.yaml: queues[0].weight: error AP1006: 0 is less than the minimum of 1" in captured.err
    assert f"{tmp_path}/stacks/Pulumi.y.yaml: config.accelplane:spec: error AP1211: missing" in captured.err


def test_merged_names_the_file_of_every_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from accelplane.spec_loader import load_spec

    monkeypatch.chdir(REPO_ROOT)
    assert main(["merged", "stacks/prod-eu.yaml"]) == 0
    text = capsys.readouterr().out
    assert yaml.safe_load(text) == load_spec("stacks/prod-eu.yaml").data  # loads back exactly
    lines = text.splitlines()
    assert any(
        re.match(r'\s+preemptionPolicy: "Never"  # stacks/base/gpu-platform\.yaml$', ln) for ln in lines
    )
    assert any(re.match(r"^cluster:  # stacks/prod-eu\.yaml$", ln) for ln in lines)
    values = [ln for ln in lines[1:] if not ln.rstrip().endswith(":") and ln.strip() != "-"]
    assert values and all("  # " in ln for ln in values), "every value names its file"


def test_merged_shows_the_path_inside_the_base_when_it_differs(
    write_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_spec("queues: [{name: a}, {name: b, weight: 3}]\n", "base.yaml")
    write_spec(
        'extends: [base.yaml]\ncluster: {name: c, platforms: [kubernetes], description: "x\\u001b[2J"}\n'
    )
    monkeypatch.chdir(write_spec("", "x.yaml").parent)
    assert main(["merged", "spec.yaml"]) == 0
    text = capsys.readouterr().out
    assert "    weight: 3  # base.yaml queues[1].weight" not in text  # same index: no path
    assert "    weight: 3  # base.yaml" in text
    assert "\x1b" not in text and '"x\\u001b[2J"' in text
    # an entry merged by name can sit at another index than in its base: then the path is shown
    write_spec("extends: [base.yaml]\nqueues: [{name: a, $remove: true}]\n", "removed.yaml")
    assert main(["merged", "removed.yaml"]) == 0
    assert "    weight: 3  # base.yaml queues[1].weight" in capsys.readouterr().out


def _inject(monkeypatch: pytest.MonkeyPatch, error: int, after: int) -> None:
    """Make the ``after``-th file write fail with ``error``, as a full or read-only disk does."""
    from accelplane import render

    real = render._write_file
    count = {"n": 0}

    def failing(path: pathlib.Path, text: str, mode: int) -> None:
        count["n"] += 1
        if count["n"] > after:
            raise OSError(error, os.strerror(error), str(path))
        real(path, text, mode)

    monkeypatch.setattr(render, "_write_file", failing)


@pytest.mark.parametrize(("error", "after"), [(errno.ENOSPC, 5), (errno.EROFS, 0), (errno.EDQUOT, 1)])
def test_render_onto_a_full_or_read_only_disk(
    error: int,
    after: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _inject(monkeypatch, error, after)
    out = tmp_path / "out"
    assert main(["render", PROD, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"accelplane: {out}: cannot write: {os.strerror(error)}")
    assert "Traceback" not in captured.err and captured.out == ""
    assert os.listdir(tmp_path) == []  # nothing half-written, no temporary directory left


def test_render_onto_a_read_only_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def read_only(*_: object, **__: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path))

    monkeypatch.setattr(os, "mkdir", read_only)
    assert main(["render", PROD, "--out", str(tmp_path / "out")]) == 2
    assert f"cannot write: {os.strerror(errno.EROFS)}" in capsys.readouterr().err


def test_render_below_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("mine")
    assert main(["render", PROD, "--out", str(tmp_path / "file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"accelplane: {tmp_path}/file/sub: cannot write: a part of the path is a file, not a directory\n"
    )
    assert (tmp_path / "file").read_text() == "mine"
