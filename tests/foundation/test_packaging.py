"""Templates and schemas are found from a clone (editable) and from a built wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from accelplane.package_data import data_dir

from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # builds and installs the wheel


def test_clone_uses_top_level_data_directories() -> None:
    assert data_dir("templates") == REPO_ROOT / "templates"
    assert data_dir("schemas") == REPO_ROOT / "schemas"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
            str(REPO_ROOT),
        ],
        check=True,
    )
    (whl,) = out.glob("accelplane-*.whl")
    return whl


def test_wheel_contains_templates_schemas_and_entry_point(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "accelplane/_data/schemas/spec.schema.json" in names
    assert "accelplane/_data/templates/volcano/volcano-scheduler.conf.j2" in names
    assert "accelplane/flink_options/1.20.tsv" in names  # Flink's option keys per release
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "accelplane = accelplane.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_renders_from_another_directory(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
    )
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    spec = REPO_ROOT / "stacks" / "prod-eu.yaml"
    env = {**os.environ, "PYTHONPATH": str(site)}
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import accelplane, accelplane.package_data as r; print(accelplane.__file__); print(r.data_dir('templates'))",
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    module_file, templates = probe.stdout.split()
    assert module_file.startswith(str(site)), "the wheel, not the clone, must be imported"
    assert templates == str(site / "accelplane" / "_data" / "templates")
    proc = subprocess.run(
        [sys.executable, "-m", "accelplane.cli", "render", str(spec), "--out", "out", "-q"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert (workdir / "out" / "kubernetes" / "queue__streaming.yaml").is_file()
