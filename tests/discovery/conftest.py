"""Fixtures for the GPU discovery tests: fake GPU tools on PATH, owner processes, paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ._support import FAKES, Processes, fake_env


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
