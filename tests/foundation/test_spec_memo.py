"""`Spec.memo`: what several builders and checks derive from the same cluster (its pod templates,
its generated Flink keys) is computed once per Spec and shared."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from accelplane.builders import build_all
from accelplane.checks import run_checks
from accelplane.derive import flink_keys
from accelplane.derive.flink_keys import generated_keys

from tests.support.paths import REPO_ROOT
from tests.support.specs import model_of


def test_a_value_is_made_once_per_spec_name_and_owner() -> None:
    spec = model_of(REPO_ROOT / "stacks" / "prod-eu.yaml")
    a, b = spec.flink_clusters[0], dataclasses.replace(spec.flink_clusters[0])
    calls: list[object] = []

    def make(owner: object) -> list[object]:
        calls.append(owner)
        return [owner]

    first = spec.memo.get_or_make("x", a, lambda: make(a))
    assert spec.memo.get_or_make("x", a, lambda: make(a)) is first and calls == [a]
    assert spec.memo.get_or_make("y", a, lambda: make(a)) is not first  # another name
    assert spec.memo.get_or_make("x", b, lambda: make(b)) == [b]  # an equal but other owner object: its own
    other = model_of(REPO_ROOT / "stacks" / "prod-eu.yaml")
    assert other.memo.get_or_make("x", a, lambda: make(a)) is not first  # another spec: its own
    assert calls == [a, a, b, a]


def test_checks_and_builders_share_the_generated_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks (managed keys) and the builders (effective configuration) both need a cluster's
    generated keys: one tuple, derived once, unchanged by either, dropped after the build."""
    spec = model_of(REPO_ROOT / "stacks" / "prod-eu.yaml")
    made: list[str] = []
    derive = flink_keys._generated_keys

    def counted(spec: Any, cluster: Any) -> Any:
        made.append(cluster.name)
        return derive(spec, cluster)

    monkeypatch.setattr(flink_keys, "_generated_keys", counted)
    spec.memo.clear()  # loading the model ran the checks already
    run_checks(spec)
    build_all(spec)
    assert sorted(made) == sorted(c.name for c in spec.flink_clusters)  # once per cluster
    cluster = spec.flink_clusters[0]
    keys = generated_keys(spec, cluster)
    assert isinstance(keys, tuple) and keys
    run_checks(spec)
    assert generated_keys(spec, cluster) is keys
    build_all(spec)  # uses them, then drops everything derived (it does not outlive the build)
    assert not spec.memo
    assert generated_keys(spec, cluster) == keys
    assert generated_keys(model_of(REPO_ROOT / "stacks" / "prod-eu.yaml"), cluster) == keys
