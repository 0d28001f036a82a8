"""Every error in one run, without cascades: schema errors do not hide the semantic problems of the
parts that passed the schema, one root cause gives one error, unknown keys suggest the key meant,
and quantities read as people write them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from accelplane.errors import SpecErrors
from accelplane.pipeline import load_validated

HEAD = "cluster: {name: c, platforms: [kubernetes]}\n"


def _errors(write_spec: Callable[..., Path], text: str, name: str = "spec.yaml") -> list[str]:
    path = write_spec(text, name)
    with pytest.raises(SpecErrors) as exc:
        load_validated(path)
    prefix = str(path.parent) + "/"
    return [str(e).replace(prefix, "") for e in exc.value.errors]


def test_schema_error_and_semantic_error_of_one_entity(write_spec: Callable[..., Path]) -> None:
    errors = _errors(write_spec, HEAD + "priorityClasses: [{name: system-high, value: 2000000000}]\n")
    assert errors == [
        "spec.yaml: priorityClasses[0].name: PriorityClass names starting with 'system-' are reserved by Kubernetes",
        "spec.yaml: priorityClasses[0].value: 2000000000 is greater than the maximum of 1000000000",
    ]


def test_semantic_problems_elsewhere_are_reported_with_schema_errors(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD
        + "queues:\n"
        + "  - {name: a, weight: 0}\n"
        + "  - {name: b, parent: nowhere}\n"
        + "  - {name: c, capability: {memory: 1Ti}}\n"
        + "  - {name: d, parent: c, capability: {memory: 2Ti}}\n",
    )
    assert errors == [
        "spec.yaml: queues[0].weight: 0 is less than the minimum of 1",
        "spec.yaml: queues[1].parent: parent queue 'nowhere' is not defined in queues",
        "spec.yaml: queues[3].capability.memory: capability 2Ti exceeds the capability of parent 'c' (1Ti)",
    ]


def test_a_broken_base_and_the_spec_in_one_round(write_spec: Callable[..., Path]) -> None:
    write_spec("queues:\n  - {name: a, weight: 0}\n  - {name: a}\n  - {name: b, parent: gone}\n", "base.yaml")
    errors = _errors(
        write_spec, "extends: [base.yaml]\n" + HEAD + "priorityClasses: [{name: system-x, value: 1}]\n"
    )
    assert errors == [
        "base.yaml: queues[0].weight: 0 is less than the minimum of 1",
        "base.yaml: queues[1].name: duplicate name 'a' (first defined at queues[0])",
        "base.yaml: queues[2].parent: parent queue 'gone' is not defined in queues",
        "spec.yaml: priorityClasses[0].name: PriorityClass names starting with 'system-' are reserved by Kubernetes",
    ]


def test_a_dropped_entity_is_not_reported_again_as_missing(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD
        + "queues:\n"
        + "  - {name: top, weight: nope}\n"  # invalid: the queue is dropped for the semantic pass
        + "  - {name: leaf, parent: top}\n"  # would be "parent queue 'top' is not defined"
        + "  - {name: other, parent: elsewhere}\n",
    )
    assert errors == [
        "spec.yaml: queues[0].weight: 'nope' is not of type integer",
        "spec.yaml: queues[2].parent: parent queue 'elsewhere' is not defined in queues",
    ]


def test_a_misspelt_section_does_not_cascade(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD
        + "nodePool: [{name: a100, nodes: 1, gpu: {vendor: nvidia, perNodes: 8}}]\n"
        + "flink:\n  clusters:\n    - {name: f, queue: q, taskManager: {gpu: {amount: 1, pool: a100}}}\n"
        + "queues: [{name: q}]\n",
    )
    assert len(errors) == 1, errors
    assert errors[0].startswith("spec.yaml: <root>: unknown field(s) 'nodePool' (did you mean 'nodePools'?);")


def test_did_you_mean_for_unknown_keys_and_values(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD + "nodePools: [{name: a100, nodes: 1, labels: {a: b}, gpu: {vendor: nvida, perNodes: 8}}]\n",
    )
    assert any(
        e.startswith("spec.yaml: nodePools[0].gpu: unknown field(s) 'perNodes' (did you mean 'perNode'?);")
        for e in errors
    ), errors
    assert any("'nvida' is not one of 'nvidia', 'amd' (did you mean 'nvidia'?)" in e for e in errors), errors
    errors = _errors(write_spec, HEAD + "queues: [{name: q, Weight: 2, colour: red}]\n")
    assert errors[0].startswith(
        "spec.yaml: queues[0]: unknown field(s) 'Weight' (did you mean 'weight'?), 'colour'; allowed:"
    ), errors


def test_a_parent_cycle_is_one_error(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD
        + "queues:\n"
        + "".join(f"  - {{name: q{i}, parent: q{(i + 1) % 3}, deserved: {{cpu: 1}}}}\n" for i in range(3))
        + "  - {name: below, parent: q0, deserved: {cpu: 1}}\n"
        + "  - {name: deeper, parent: below}\n"
        + "flink:\n  clusters:\n    - {name: f, queue: q1}\n",
    )
    assert errors == [
        "spec.yaml: queues[0].parent: parent cycle: 'q0' → 'q1' → 'q2' → 'q0'; remove the parent of one of "
        "these queues (or point it outside the cycle)"
    ]


def test_quantities_read_as_written(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD
        + "queues:\n"
        + "  - {name: p, deserved: {memory: 1Ti}}\n"
        + "  - {name: a, parent: p, deserved: {memory: 1Ti}, guarantee: {memory: 2Ti}}\n"
        + "  - {name: b, parent: p, deserved: {memory: 512Gi}}\n",
    )
    assert errors == [
        "spec.yaml: queues[0].deserved.memory: children's deserved memory add up to 1536Gi, more than this queue's 1Ti",
        "spec.yaml: queues[1].guarantee.memory: guarantee 2Ti exceeds deserved 1Ti",
    ]
    assert not any("2199023255552" in e or "''s" in e for e in errors)


def test_a_duplicate_entry_is_not_counted_twice(write_spec: Callable[..., Path]) -> None:
    errors = _errors(
        write_spec,
        HEAD
        + "queues:\n"
        + "  - {name: p, deserved: {cpu: 2}}\n"
        + "  - {name: a, parent: p, deserved: {cpu: 2}}\n"
        + "  - {name: a, parent: p, deserved: {cpu: 2}}\n"  # would make the children add up to 4
        + "  - {name: b, parent: nowhere}\n",
    )
    assert errors == [
        "spec.yaml: queues[2].name: duplicate name 'a' (first defined at queues[1])",
        "spec.yaml: queues[3].parent: parent queue 'nowhere' is not defined in queues",
    ]
