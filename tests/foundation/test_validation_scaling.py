"""Issue 15 §10: semantic checks are linear in the number of queues, clusters and pools.

Operation counts, not timings (timings live in bench/bench_scaling.py): every Python-level call
made inside accelplane's checks and derivations is counted while checking a spec of size n and of
size 2n; a linear (or n·log n) check makes about twice the calls, a quadratic one four times.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from accelplane.checks import run_checks
from accelplane.derive.queues import queue_depth, queue_depths
from accelplane.model import Spec
from accelplane.model_convert import build_model

from bench.bench_scaling import queue_spec
from bench.generate import make_spec


def _calls_during(fn: Callable[[], Any]) -> int:
    count = 0

    def profiler(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" and "/accelplane/" in frame.f_code.co_filename:
            count += 1

    sys.setprofile(profiler)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def _model(doc: dict[str, Any]) -> Spec:
    spec, problems = build_model(doc)
    assert spec is not None and not problems, problems
    return spec


def _check_calls(doc: dict[str, Any]) -> int:
    spec = _model(doc)
    return _calls_during(lambda: run_checks(spec))


@pytest.mark.parametrize(
    ("make", "n"),
    [(queue_spec, 400), (make_spec, 20)],
    ids=["queue-tree", "pools-queues-clusters"],
)
def test_checks_are_linear(make: Callable[[int], dict[str, Any]], n: int) -> None:
    small, large = _check_calls(make(n)), _check_calls(make(2 * n))
    assert large / small < 2.3, f"{small} calls for n={n}, {large} for 2n: superlinear"


def test_long_parent_chain_is_linear() -> None:
    """A single chain of parents (invalid beyond depth 5, but it must be reported fast)."""

    def chain(n: int) -> dict[str, Any]:
        queues = [{"name": "q0"}] + [{"name": f"q{i}", "parent": f"q{i - 1}"} for i in range(1, n)]
        return {"cluster": {"name": "c", "platforms": ["kubernetes"]}, "queues": queues}

    small, large = _check_calls(chain(300)), _check_calls(chain(600))
    assert large / small < 2.3, (small, large)


def test_queue_depths_agree_with_queue_depth() -> None:
    doc = {
        "cluster": {"name": "c", "platforms": ["kubernetes"]},
        "queues": [
            {"name": "a"},
            {"name": "b", "parent": "a"},
            {"name": "c", "parent": "b"},
            {"name": "x", "parent": "y"},  # cycle x <-> y
            {"name": "y", "parent": "x"},
            {"name": "z", "parent": "x"},  # hangs off the cycle
            {"name": "g", "parent": "missing"},  # gap
            {"name": "r", "parent": "root"},
        ],
    }
    spec = _model(doc)
    depths = queue_depths(spec)
    assert depths == {q.name: queue_depth(spec, q) for q in spec.queues}
    assert depths == {"a": 1, "b": 2, "c": 3, "x": None, "y": None, "z": None, "g": None, "r": 1}


def test_the_benchmark_spec_is_valid() -> None:
    """`make bench` renders `bench.generate.make_spec`: it must stay a spec accelplane accepts (a
    stock `flink:` image there made every render refuse with AP8010)."""
    errors = [p for p in run_checks(_model(make_spec(2))) if not p.is_warning]
    assert errors == []
