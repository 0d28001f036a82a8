"""Template reuse: `extends` deep-merge, merge-by-name, `$remove`, provenance of errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.errors import SpecErrors
from accelplane.merged_view import render_merged
from accelplane.pipeline import load_validated
from accelplane.spec_loader import load_document, load_spec

BASE = """\
cluster: {name: base, platforms: [kubernetes], labels: {team: a, tier: gold}}
priorityClasses:
  - {name: high, value: 1000, description: from base}
  - {name: low, value: 10}
queues:
  - {name: q1, weight: 1, capability: {cpu: 8, memory: 8Gi}}
  - {name: q2, weight: 2}
"""


def test_maps_deep_merge_and_named_lists_merge_by_name(write_spec: Callable[..., Path]) -> None:
    write_spec(BASE, "base/b.yaml")
    spec = write_spec(
        """\
        extends: [base/b.yaml]
        cluster: {name: child, labels: {tier: silver}}
        priorityClasses:
          - {name: high, value: 2000}
          - {name: mid, value: 500}
        queues:
          - {name: q1, capability: {memory: 16Gi}}
        """
    )
    data = load_spec(spec).data
    assert data["cluster"] == {
        "name": "child",
        "platforms": ["kubernetes"],
        "labels": {"team": "a", "tier": "silver"},
    }
    assert data["priorityClasses"] == [
        {"name": "high", "value": 2000, "description": "from base"},
        {"name": "low", "value": 10},
        {"name": "mid", "value": 500},
    ]
    assert data["queues"][0] == {"name": "q1", "weight": 1, "capability": {"cpu": 8, "memory": "16Gi"}}


def test_remove_inherited_list_entry_and_map_key(write_spec: Callable[..., Path]) -> None:
    write_spec(BASE, "b.yaml")
    spec = write_spec(
        """\
        extends: [b.yaml]
        cluster: {labels: {tier: {$remove: true}}}
        priorityClasses:
          - {name: low, $remove: true}
        """
    )
    data = load_spec(spec).data
    assert [p["name"] for p in data["priorityClasses"]] == ["high"]
    assert data["cluster"]["labels"] == {"team": "a"}


def test_plain_lists_are_replaced(write_spec: Callable[..., Path]) -> None:
    write_spec(BASE, "b.yaml")
    spec = write_spec("extends: [b.yaml]\ncluster: {platforms: [yarn]}\n")
    assert load_spec(spec).data["cluster"]["platforms"] == ["yarn"]


def test_multiple_and_nested_bases_merge_left_to_right(write_spec: Callable[..., Path]) -> None:
    write_spec(
        "cluster: {name: root-base, platforms: [kubernetes]}\nqueues: [{name: q, weight: 1}]\n", "root.yaml"
    )
    write_spec("extends: [root.yaml]\nqueues: [{name: q, weight: 2}]\n", "mid.yaml")
    write_spec("queues: [{name: q, weight: 3}, {name: r}]\n", "other.yaml")
    spec = write_spec("extends: [mid.yaml, other.yaml]\ncluster: {name: final}\n")
    loaded = load_spec(spec)
    assert loaded.data["queues"] == [{"name": "q", "weight": 3}, {"name": "r"}]
    assert [p.name for p in loaded.files] == ["spec.yaml", "mid.yaml", "root.yaml", "other.yaml"]


def test_errors_name_the_file_and_path_where_the_value_was_written(
    write_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_spec("queues:\n  - {name: a}\n  - {name: bad, parent: nowhere}\n", "base.yaml")
    spec = write_spec(
        "extends: [base.yaml]\ncluster: {name: c, platforms: [kubernetes]}\nqueues:\n  - {name: z}\n  - {name: a, weight: 0}\n"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecErrors) as exc:
        load_validated(spec.name)
    messages = [str(e) for e in exc.value.errors]
    # the schema error and the semantic error of the base, in one run
    assert messages == [
        "base.yaml: queues[1].parent: parent queue 'nowhere' is not defined in queues",
        "spec.yaml: queues[1].weight: 0 is less than the minimum of 1",
    ]
    write_spec("extends: [base.yaml]\ncluster: {name: c, platforms: [kubernetes]}\n")
    with pytest.raises(SpecErrors) as exc:
        load_validated("spec.yaml")
    assert [str(e) for e in exc.value.errors] == [
        "base.yaml: queues[1].parent: parent queue 'nowhere' is not defined in queues"
    ]


def test_missing_base_and_bad_base_are_all_reported(
    write_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_spec("queues: [{name: x\n", "broken.yaml")
    spec = write_spec("extends: [gone.yaml, broken.yaml]\ncluster: {name: c, platforms: [kubernetes]}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecErrors) as exc:
        load_spec(spec)
    text = str(exc.value)
    assert "spec.yaml: extends[0]: base spec 'gone.yaml' not found" in text
    assert "broken.yaml: line 2, column 1: invalid YAML" in text


def test_example_stacks_share_a_base() -> None:
    from tests.conftest import EXAMPLE_SPECS

    users = [p.name for p in EXAMPLE_SPECS if any(f.name == "gpu-platform.yaml" for f in load_spec(p).files)]
    assert len(users) >= 2, users


DEFAULTS_BASE = """\
flink:
  defaults:
    version: "1.18"
    taskManager: {replicas: 2, slots: 4}
    config: {state.backend.type: rocksdb, execution.checkpointing.interval: 30s}
"""


def test_flink_defaults_are_merged_by_the_loader_with_provenance(
    write_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`flink.defaults` is inherited like a base: merged under each cluster, a cluster's own value
    wins, `$remove` drops an inherited key, and every inherited value names the defaults entry."""
    write_spec(DEFAULTS_BASE, "base.yaml")
    spec = write_spec(
        """\
        extends: [base.yaml]
        cluster: {name: c, platforms: [kubernetes]}
        flink:
          clusters:
            - name: a
              taskManager: {slots: 1}
              config: {execution.checkpointing.interval: {$remove: true}, pipeline.name: a}
            - {name: b}
        """
    )
    monkeypatch.chdir(tmp_path)
    loaded = load_spec(spec.name)
    a, b = loaded.data["flink"]["clusters"]
    assert a == {
        "name": "a",
        "version": "1.18",
        "taskManager": {"replicas": 2, "slots": 1},
        "config": {"state.backend.type": "rocksdb", "pipeline.name": "a"},
    }
    assert b == {"name": "b"} | loaded.data["flink"]["defaults"]
    assert loaded.data["flink"]["defaults"]["config"]["execution.checkpointing.interval"] == "30s"
    where = loaded.locate(("flink", "clusters", 0, "taskManager", "replicas"), "m")
    assert (where.file, where.path) == ("base.yaml", "flink.defaults.taskManager.replicas")
    where = loaded.locate(("flink", "clusters", 0, "taskManager", "slots"), "m")
    assert (where.file, where.path) == ("spec.yaml", "flink.clusters[0].taskManager.slots")
    assert loaded.inherited_defaults() == {
        "a": frozenset({("version",), ("taskManager", "replicas"), ("config", "state.backend.type")}),
        "b": frozenset(
            {
                ("version",),
                ("taskManager",),
                ("taskManager", "replicas"),
                ("taskManager", "slots"),
                ("config",),
                ("config", "state.backend.type"),
                ("config", "execution.checkpointing.interval"),
            }
        ),
    }
    model = load_validated(spec.name).model
    assert [(c.name, c.task_manager.replicas, c.task_manager.slots) for c in model.flink_clusters] == [
        ("a", 2, 1),
        ("b", 2, 4),
    ]
    assert "    replicas: 2  # base.yaml flink.defaults.taskManager.replicas" in render_merged(loaded)


def test_remove_of_a_key_no_default_has_is_still_an_error(
    write_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_spec(DEFAULTS_BASE, "base.yaml")
    spec = write_spec(
        "extends: [base.yaml]\ncluster: {name: c, platforms: [kubernetes]}\n"
        "flink:\n  clusters:\n    - {name: a, image: {$remove: true}}\n"
    )
    monkeypatch.chdir(tmp_path)
    errors = [str(e) for e in load_document(spec.name).load_errors]
    assert errors == ["spec.yaml: flink.clusters[0].image: $remove: nothing inherited to remove"]

