"""Fixtures for the YARN tests: the compiled Hadoop harness (marker ``hadoop``)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.flink.home import FlinkHomeNotFound, find_flink_home
from tests.yarn.hadoop import (
    JARS_ENV,
    FlinkProbe,
    Probe,
    compile_flink_probe,
    compile_probe,
    compiled_java_probe,
)


@pytest.fixture(scope="session")
def hadoop_probe(tmp_path_factory: pytest.TempPathFactory) -> Probe:
    """The Hadoop harness. Without pyspark or a JDK it fails in CI (``$CI`` set) or when
    ``$ACCELPLANE_PYSPARK_JARS`` names jars that are not there, and skips otherwise."""
    probe, reason = compile_probe(tmp_path_factory.mktemp("yarn-probe"))
    if probe is None:
        if os.environ.get("CI") or os.environ.get(JARS_ENV):
            pytest.fail(f"the hadoop extra is required here: {reason}")
        pytest.skip(f"Hadoop jars not available: {reason}")
    return probe


@pytest.fixture(scope="session")
def flink_yarn_probe(tmp_path_factory: pytest.TempPathFactory) -> FlinkProbe:
    """Flink's YARN request path (flink-dist) with Hadoop's classes; fails in CI when missing."""
    try:
        home = find_flink_home()
    except FlinkHomeNotFound as exc:
        probe, reason = None, str(exc)
    else:
        probe, reason = compile_flink_probe(tmp_path_factory.mktemp("flink-yarn-probe"), home)
    if probe is None:
        if os.environ.get("CI") or os.environ.get(JARS_ENV):
            pytest.fail(f"Flink and the hadoop extra are required here: {reason}")
        pytest.skip(f"Flink or Hadoop jars not available: {reason}")
    return probe


VectorProbe = Callable[..., list[list[str]]]


@pytest.fixture(scope="module")
def queue_vector(tmp_path_factory: pytest.TempPathFactory) -> VectorProbe:
    """`QueueVectorProbe` (tests/yarn/java): queue vectors, container fits and AM limits with
    Hadoop's own classes; ``run(*commands, conf_dir=None)`` → its records."""
    classpath = compiled_java_probe(Path(__file__).parent / "java" / "QueueVectorProbe.java",
                                    tmp_path_factory.mktemp("queue-vector"))

    def run(*args: str, conf_dir: Path | None = None) -> list[list[str]]:
        cp = os.pathsep.join([*([str(conf_dir)] if conf_dir else []), classpath])
        proc = subprocess.run(
            ["java", "-cp", cp, "QueueVectorProbe", *args], capture_output=True, text=True, timeout=120, check=True
        )
        return [line.split("\t") for line in proc.stdout.splitlines()]

    return run
