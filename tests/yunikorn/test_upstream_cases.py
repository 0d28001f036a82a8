"""YuniKorn's own test cases (tests/upstream/yunikorn, byte-for-byte with provenance) decide what
YuniKorn accepts and rejects; the Python reading of its rules (tests/support/yunikorn.py) must agree
on every case, so that checking our rendered queues.yaml and task groups with it checks them with
YuniKorn's rules. The cases are taken from the Go sources as they are: each queues.yaml raw string
handed to ``CreateConfig`` with the outcome its test asserts right after; the quantity tables; the
task-group annotations with the outcome asserted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.yunikorn import (
    NotCovered,
    YuniKornError,
    parse_quantity,
    parse_task_groups,
    validate_config,
)

UPSTREAM = Path(__file__).resolve().parents[1] / "upstream" / "yunikorn"
CONFIG_TEST = UPSTREAM / "core_configs_config_test.go"
QUANTITY_TEST = UPSTREAM / "core_resources_quantity_test.go"
SHIM_TEST = UPSTREAM / "k8shim_cache_utils_test.go"


@dataclass(frozen=True)
class ConfigCase:
    """One queues.yaml of yunikorn-core's config tests and whether YuniKorn accepts it."""

    line: int
    text: str
    accepted: bool


def _config_cases() -> list[ConfigCase]:
    source = CONFIG_TEST.read_text()
    cases = []
    for block in re.finditer(r"(\w+)\s*:?=\s*`(.*?)`", source, re.S):
        rest = source[block.end() :]
        call = re.search(rf"CreateConfig\(\s*{block.group(1)}\s*\)", rest)
        if call is None or "`" in rest[: call.start()]:
            continue
        lines = rest[call.end() :].split("\n")
        assertion = lines[1].strip()
        if assertion.startswith("assert.NilError") or (assertion.startswith("if err != nil {") and re.match(r"\s*t\.(Errorf|Fatal)", lines[2])):
            accepted = True
        elif assertion.startswith(("if err == nil {", "assert.Error(", "assert.ErrorContains(")):
            accepted = False
        else:
            continue  # table-driven or conditional outcome: not a case with one asserted result
        cases.append(ConfigCase(source[: block.start()].count("\n") + 1, block.group(2), accepted))
    return cases


CONFIG_CASES = _config_cases()


def test_the_upstream_file_yields_its_cases() -> None:
    """Guards the extraction: the file holds dozens of asserted configurations of both outcomes."""
    assert len(CONFIG_CASES) >= 50
    assert sum(c.accepted for c in CONFIG_CASES) >= 15
    assert sum(not c.accepted for c in CONFIG_CASES) >= 30


def _outcome(case: ConfigCase) -> bool | None:
    try:
        validate_config(case.text)
    except YuniKornError:
        return False
    except NotCovered:
        return None
    return True


COVERED = [c for c in CONFIG_CASES if _outcome(c) is not None]


@pytest.mark.parametrize("case", COVERED, ids=lambda c: f"line{c.line}")
def test_config_rules_agree_with_yunikorn_core(case: ConfigCase) -> None:
    assert _outcome(case) == case.accepted, case.text


def test_only_the_limits_cases_are_left_out() -> None:
    """User/group limits are the one part of YuniKorn's validator the reading leaves out (accelplane
    renders no limits); every case left out sets them, and most cases are covered."""
    left_out = [c for c in CONFIG_CASES if c not in COVERED]
    assert all("limits:" in c.text for c in left_out)
    assert len(COVERED) >= 30
    assert {c.accepted for c in COVERED} == {True, False}


def _quantity_table(function: str) -> list[tuple[str, int | None]]:
    source = QUANTITY_TEST.read_text()
    body = source[source.index(f"func {function}(") :]
    body = body[: body.index("for name, test := range tests")]
    rows = []
    for m in re.finditer(r'\{input: "([^"]*)", qty: ([0-9 *]+)(?:, err: "([^"]*)")?\}', body):
        value = 1
        for factor in m.group(2).split("*"):
            value *= int(factor)
        rows.append((m.group(1), None if m.group(3) else value))
    return rows


@pytest.mark.parametrize(("function", "milli"), [("TestParseQuantity", False), ("TestParseVCore", True)])
def test_quantity_parsing_agrees_with_yunikorn_core(function: str, milli: bool) -> None:
    rows = _quantity_table(function)
    assert len(rows) >= 20
    for text, expected in rows:
        if expected is None:
            with pytest.raises(YuniKornError):
                parse_quantity(text, milli)
        else:
            assert parse_quantity(text, milli) == expected, text


def _shim_annotations() -> tuple[list[str], list[str]]:
    """(accepted, rejected) task-group annotations of the shim's tests."""
    source = SHIM_TEST.read_text()
    body = source[source.index("func TestGetTaskGroupFromAnnotation(") : source.index("func TestValidatedTaskGroupsNever")]
    raw = dict(re.findall(r"(testGroup\w*) := `(.*?)`", body, re.S))
    accepted = [v for k, v in raw.items() if "Err" not in k]
    rejected = [v for k, v in raw.items() if "Err" in k]
    table = body[body.index("rejected := []struct") :]
    rejected += re.findall(r'\{"[^"]+", `([^`]*)`\}', table[: table.index("for _, tc := range rejected")])
    accepted += re.findall(r"AnnotationTaskGroups: `([^`]*)`\}\n\ttg, err", table)
    return accepted, rejected


def test_task_group_parsing_agrees_with_yunikorn_shim() -> None:
    accepted, rejected = _shim_annotations()
    assert len(accepted) == 3 and len(rejected) == 14
    for annotation in accepted:
        assert parse_task_groups(annotation), annotation
    for annotation in rejected:
        with pytest.raises(YuniKornError):
            parse_task_groups(annotation)
    groups = parse_task_groups(accepted[0])
    assert groups is not None
    assert (groups[0].name, groups[0].min_member, groups[0].min_resource) == (
        "test-group-1",
        10,
        {"cpu": Decimal(1), "memory": Decimal(2 * 2**30)},
    )
    assert groups[0].node_selector == {"test": "testnode", "locate": "west"}
