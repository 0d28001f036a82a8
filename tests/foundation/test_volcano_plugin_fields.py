"""Every Volcano queue field has the effect the spec promises: the scheduler plugin is chosen from
the fields the queues use, and a field the chosen plugin never reads is a warning (AP2101: valid,
without effect), which ``validate --strict`` turns into a failure.

What each plugin reads (Volcano v1.15, docs/volcano.md "Which plugin reads which queue field"):
``proportion`` — weight, capability, guarantee, priority (never ``deserved``); ``capacity`` —
deserved, capability, guarantee, priority (never ``weight``); ``reclaimable`` — the ``reclaim``
action (``QueueInfo.Reclaimable``), enabled whenever a queue sets it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from accelplane.builders.volcano import SCHEDULER_CONF_KEY
from accelplane.cli import main

from tests.support.render import objects_for

HEAD = """\
cluster: {name: d, platforms: [kubernetes]}
nodePools:
  - {name: gpus, nodes: 2, cpu: 32, memory: 128Gi, gpu: {vendor: nvidia, perNode: 4}, labels: {pool: gpus}}
"""


def _conf(path: Path) -> dict:  # type: ignore[type-arg]
    (cm,) = [o for o in objects_for(path) if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "volcano-scheduler-configmap"]
    return yaml.safe_load(cm["data"][SCHEDULER_CONF_KEY])  # type: ignore[no-any-return]


def _plugins(conf: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {p["name"]: p for tier in conf["tiers"] for p in tier["plugins"]}


def _queues(path: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    return {o["metadata"]["name"]: o["spec"] for o in objects_for(path) if o["kind"] == "Queue"}


def test_flat_queues_with_deserved_use_capacity_which_reads_it(write_spec: Callable[..., Path]) -> None:
    path = write_spec(
        HEAD
        + "queues:\n"
        "  - {name: a, deserved: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 6}}\n"
        "  - {name: b, deserved: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 2}}\n"
    )
    plugins = _plugins(_conf(path))
    assert plugins["capacity"] == {"name": "capacity"}  # flat: no enableHierarchy
    assert "proportion" not in plugins
    assert _queues(path)["a"]["deserved"] == {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "6"}
    assert "reclaim" in _conf(path)["actions"]


def test_flat_queues_with_weights_keep_proportion(write_spec: Callable[..., Path]) -> None:
    path = write_spec(
        HEAD + "queues:\n  - {name: a, weight: 3, guarantee: {cpu: 4}, priority: 5}\n  - {name: b}\n"
    )
    plugins = _plugins(_conf(path))
    assert "proportion" in plugins and "capacity" not in plugins
    assert _queues(path)["a"] == {"weight": 3, "guarantee": {"resource": {"cpu": "4"}}, "priority": 5}


@pytest.mark.parametrize(
    ("queues", "expected"),
    [
        (
            "  - {name: a, weight: 3, deserved: {cpu: 8}}\n  - {name: b}\n",
            ["queues[0].weight: Volcano's capacity plugin (used because a queue sets deserved) never reads weight"],
        ),
        (
            "  - {name: top}\n  - {name: leaf, parent: top, weight: 2}\n",
            [
                "queues[1].weight: Volcano's capacity plugin (used because the queues form a hierarchy) "
                "never reads weight, so weight 2 would have no effect"
            ],
        ),
    ],
    ids=["flat-deserved", "hierarchy"],
)
def test_weight_under_capacity_is_a_warning(
    queues: str,
    expected: list[str],
    write_spec: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Valid, renders, printed as a warning with its code; ``--strict`` fails it."""
    path = write_spec(HEAD + "queues:\n" + queues)
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    for line in expected:
        where, message = line.split(": ", 1)
        assert f"{path}: {where}: warning AP2101: {message}" in captured.err, captured.err
    assert "accelplane: 1 warning" in captured.err
    assert f"{path}: ok (1 warning)" in captured.out
    assert main(["render", str(path), "--out", str(tmp_path / "out")]) == 0
    assert "warning AP2101" in capsys.readouterr().err
    assert main(["validate", "--strict", str(path)]) == 1
    assert "--strict: warnings fail" in capsys.readouterr().out


def test_weight_is_kept_when_yarn_reads_it(write_spec: Callable[..., Path]) -> None:
    """On a Kubernetes + YARN cluster the weight still sizes the CapacityScheduler queues."""
    path = write_spec(
        "cluster: {name: d, platforms: [kubernetes, yarn]}\n"
        "queues:\n  - {name: top}\n  - {name: leaf, parent: top, weight: 2}\n  - {name: other, parent: top}\n"
    )
    assert main(["validate", str(path)]) == 0
