"""Fixtures for the GPU discovery tests: fake GPU tools on PATH, owner processes, paths."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.discovery_runs import FAKES, Processes, fake_env, flink_discovery_script
from tests.support.flink.home import FlinkHomeNotFound


@pytest.fixture(autouse=True, scope="session")
def _fakes_are_executable() -> None:
    for tool in ("nvidia-smi", "amd-smi", "rocm-smi"):
        assert os.access(FAKES / tool, os.X_OK), f"{FAKES / tool} must be executable"


@pytest.fixture
def env() -> Callable[..., dict[str, str]]:
    """``env(gpus=4, **FAKE_VARS)``: a subprocess environment with the fake tools first on PATH."""

    def make(gpus: int = 4, **extra: str) -> dict[str, str]:
        return fake_env(gpus, extra)

    return make


@pytest.fixture
def fake_path(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """For in-process tests: put the fakes on this process's PATH and scrub GPU variables."""

    def apply(gpus: int = 4, **extra: str) -> None:
        wanted = fake_env(gpus, extra)
        for key in list(os.environ):
            if key not in wanted:
                monkeypatch.delenv(key)
        for key, value in wanted.items():
            monkeypatch.setenv(key, value)

    return apply


@pytest.fixture
def procs() -> Iterator[Processes]:
    """Owner processes (sleepers, sh owners); all are SIGKILLed and reaped afterwards."""
    p = Processes()
    try:
        yield p
    finally:
        p.kill_all()


@pytest.fixture
def coord(tmp_path: Path) -> Path:
    """A coordination-file path that does not exist yet."""
    return tmp_path / "gpu-coordination"


@pytest.fixture(scope="module")
def flink_sh() -> Path:
    """Flink's shipped ``nvidia-gpu-discovery.sh`` (`flink_discovery_script`), beside its
    ``gpu-discovery-common.sh``, with the tools it runs; a failure under CI, else a skip."""
    try:
        script = flink_discovery_script()
        problem = None if (script.parent / "gpu-discovery-common.sh").is_file() else f"incomplete at {script.parent}"
    except FlinkHomeNotFound as exc:
        problem = str(exc)
    if problem is not None:
        msg = (f"Flink's discovery script not found: {problem}; set ACCELPLANE_FLINK_HOME to a Flink "
               "distribution (the pyflink directory of apache-flink, e.g. `make flink` → .venv/flink/pyflink)")
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    for tool in ("bash", "flock", "ps", "sed", "grep", "awk"):
        assert shutil.which(tool), f"Flink's script needs {tool}"
    return script
