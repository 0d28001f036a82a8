"""Over-asking on a real standalone Flink 1.20.5 cluster (marker ``flink``): the keys
docs/gpu-slots.md ("Over-asking on standalone") tells a user to set make a job whose GPU group no
TaskManager can serve reach ``FAILED`` in bounded time, with ``NoResourceAvailableException`` as
the cause, although the job enables checkpointing (whose default restart strategy,
``exponential-delay`` with 2147483647 attempts, would restart it forever).

The cluster: one TaskManager without GPUs; ``resourcemanager.standalone.start-up-time`` short, so
unfulfillable requests fail at once after it (``StandaloneResourceManager``); the restart strategy
``exponential-delay`` bounded by ``attempts-before-reset-backoff`` (short back-offs for the test).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.flink.errors import HarnessError
from tests.support.flink.home import require_flink_home
from tests.support.flink.java import build_java_job
from tests.support.flink.standalone import FlinkStandalone

pytestmark = pytest.mark.flink

JOB_SOURCE = Path(__file__).resolve().parent / "java" / "OverAskJob.java"

DOCUMENTED_KEYS = {
    "resourcemanager.standalone.start-up-time": "1 s",
    "restart-strategy.type": "exponential-delay",
    "restart-strategy.exponential-delay.attempts-before-reset-backoff": "2",
}
FAST_BACKOFF = {
    "restart-strategy.exponential-delay.initial-backoff": "1 s",
    "restart-strategy.exponential-delay.max-backoff": "2 s",
}


def test_an_over_asking_gpu_job_fails_in_bounded_time_with_the_documented_keys(tmp_path: Path) -> None:
    flink_home = require_flink_home()
    jar = build_java_job(JOB_SOURCE, "OverAskJob", flink_home, tmp_path / "java")
    cluster = FlinkStandalone(
        flink_home,
        tmp_path / "flink",
        {"jobmanager.scheduler": "default", **DOCUMENTED_KEYS, **FAST_BACKOFF},
        taskmanager_slots=2,
        java_cache_dir=tmp_path / "java",
    )
    with cluster:
        cluster.start(taskmanagers=1)
        time.sleep(2)  # past the start-up period
        with pytest.raises(HarnessError) as failed:
            cluster.submit_jar(jar, "OverAskJob", timeout=240)
        jobs = cluster.rest.get_json("/jobs/overview")["jobs"]
    assert "NoResourceAvailableException" in str(failed.value)
    assert "Could not acquire the minimum required resources" in str(failed.value)
    # FAILED at all is the point: with Flink's default the job restarts forever.
    assert [j["state"] for j in jobs] == ["FAILED"]
