"""YuniKorn's own test cases decide what YuniKorn accepts; the Python reading of its rules
(tests/support/yunikorn.py) must agree with every one.

The cases are our table `tests/yunikorn/data/upstream_cases.yaml`: each row an input of a YuniKorn
unit test and the verdict that test asserts, citing the upstream file, line and commit
(yunikorn-core be3bb48, yunikorn-k8shim 23b6b47). The config rows' verdicts were also confirmed
by yunikorn-core's own ``ParseAndValidateConfig``, built in a scratch directory as an oracle
(docs/yunikorn.md). No upstream file is read here."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.yunikorn import (
    NotCovered,
    YuniKornError,
    parse_quantity,
    parse_task_groups,
    validate_config,
)

TABLE = Path(__file__).resolve().parent / "data" / "upstream_cases.yaml"
CASES: dict[str, Any] = yaml.safe_load(TABLE.read_text())
SOURCE = re.compile(r"^(core|k8shim):pkg/[a-z/_]+\.go:[0-9]+$")


def test_every_row_cites_its_upstream_file_line_and_commit() -> None:
    assert set(CASES["repositories"]) == {"core", "k8shim"}
    assert all(re.fullmatch(r"apache/yunikorn-(core|k8shim)@[0-9a-f]{40}", r) for r in CASES["repositories"].values())
    rows = [r for key in ("config", "quantity", "vcore", "task_groups") for r in CASES[key]]
    assert rows and all(SOURCE.match(r["source"]) for r in rows)
    assert len({r["source"] for r in CASES["config"]}) == len(CASES["config"])


def test_the_table_holds_cases_of_both_outcomes() -> None:
    config = CASES["config"]
    assert len(config) >= 50
    assert sum(c["accepted"] for c in config) >= 15
    assert sum(not c["accepted"] for c in config) >= 30
    # the oracle (YuniKorn's validator itself) gave every row the verdict its unit test asserts
    assert all((c["oracle"] == "accepted") == c["accepted"] for c in config)


def _outcome(text: str) -> bool | None:
    try:
        validate_config(text)
    except YuniKornError:
        return False
    except NotCovered:
        return None
    return True


COVERED = [c for c in CASES["config"] if _outcome(c["yaml"]) is not None]


@pytest.mark.parametrize("case", COVERED, ids=lambda c: c["source"].rsplit(":", 1)[1])
def test_config_rules_agree_with_yunikorn_core(case: dict[str, Any]) -> None:
    assert _outcome(case["yaml"]) == case["accepted"], (case["source"], case["oracle"])


def test_only_the_limits_cases_are_left_out() -> None:
    """User/group limits are the one part of YuniKorn's validator the reading leaves out (accelplane
    renders no limits); every case left out sets them, and most cases are covered."""
    left_out = [c for c in CASES["config"] if c not in COVERED]
    assert all("limits:" in c["yaml"] for c in left_out)
    assert len(COVERED) >= 30
    assert {c["accepted"] for c in COVERED} == {True, False}


@pytest.mark.parametrize(("table", "milli"), [("quantity", False), ("vcore", True)])
def test_quantity_parsing_agrees_with_yunikorn_core(table: str, milli: bool) -> None:
    rows = CASES[table]
    assert len(rows) >= 20
    assert {r["value"] is None for r in rows} == {True, False}
    for row in rows:
        if row["value"] is None:
            with pytest.raises(YuniKornError):
                parse_quantity(row["input"], milli)
        else:
            assert parse_quantity(row["input"], milli) == row["value"], row


def test_task_group_parsing_agrees_with_yunikorn_shim() -> None:
    rows = CASES["task_groups"]
    accepted = [r["annotation"] for r in rows if r["accepted"]]
    rejected = [r["annotation"] for r in rows if not r["accepted"]]
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
