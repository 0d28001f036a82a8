"""Fixtures for the YARN tests: the compiled Hadoop harness (marker ``hadoop``)."""

from __future__ import annotations

import os

import pytest

from tests.yarn.hadoop import Probe, compile_probe


@pytest.fixture(scope="session")
def hadoop_probe(tmp_path_factory: pytest.TempPathFactory) -> Probe:
    """The Hadoop harness; fails in CI (``$CI`` set) and skips locally when pyspark or a JDK is missing."""
    probe, reason = compile_probe(tmp_path_factory.mktemp("yarn-probe"))
    if probe is None:
        if os.environ.get("CI"):
            pytest.fail(f"the hadoop extra is required in CI: {reason}")
        pytest.skip(f"Hadoop jars not available: {reason}")
    return probe
