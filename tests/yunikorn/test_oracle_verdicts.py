"""Our port of YuniKorn's queue validation against YuniKorn's own verdicts.

`tests/yunikorn/data/oracle_trees.json` holds several hundred queue trees (the shapes of issue #43
and random ones: depth up to five, zero, partial and absent guaranteed and max, cpu/memory/pods
and NVIDIA or AMD GPUs) with the verdict of apache/yunikorn-core's ``ParseAndValidateConfig``
(commit be3bb48) on the ``queues.yaml`` accelplane renders for each, recorded by running that code
in a scratch directory (docs/yunikorn.md, "Re-running the oracle"). Here, without Go:

* accelplane's checks find an error exactly on the trees YuniKorn rejects;
* our reading of the validator (tests/support/yunikorn.py) gives every tree YuniKorn's verdict;
* the renderer still writes the documents the oracle judged (else re-run the oracle);
* on trees beyond the recorded ones, accelplane's checks and that reading agree (property test).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.yunikorn import YuniKornError, validate_config
from tests.support.yunikorn_trees import (
    SHAPES,
    YUNIKORN_CORE,
    accelplane_errors,
    digest,
    load,
    model,
    random_queues,
    rendered,
)

DATA = load()
CASES: list[dict[str, Any]] = DATA["cases"]


def _yunikorn_reading(text: str) -> bool:
    try:
        validate_config(text)
    except YuniKornError:
        return False
    return True


def test_the_recorded_verdicts_are_yunikorns_and_cover_the_issue() -> None:
    assert DATA["oracle"] == YUNIKORN_CORE
    assert len(CASES) >= 500
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {f"shape:{name}" for name in SHAPES} <= {c["id"] for c in CASES}
    accepted = sum(c["accepted"] for c in CASES)
    assert 100 <= accepted <= len(CASES) - 100
    assert all(bool(c["error"]) != c["accepted"] for c in CASES)
    # both parent-sum rules and the ancestor-max rule are among YuniKorn's reasons
    reasons = {c["error"].split(" resource")[0] for c in CASES if not c["accepted"]}
    assert {"guaranteed", "max"} <= reasons


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_accelplane_and_our_reading_give_yunikorns_verdict(case: dict[str, Any]) -> None:
    spec = model(case["queues"])
    text = rendered(case["queues"])
    assert digest(text) == case["yaml_sha256"], "the rendered queues.yaml changed: re-run the oracle (docs/yunikorn.md)"
    errors = accelplane_errors(spec)
    assert (not errors) == case["accepted"], (case["error"], errors)
    assert _yunikorn_reading(text) == case["accepted"], case["error"]


@pytest.mark.parametrize(
    ("shape", "accepted"),
    [
        ("zero-deserved-middle-parent", False),  # item 1: a zero guaranteed passes the children's sum up
        ("zero-guarantee-middle-parent", False),
        ("zero-deserved-middle-parent-fits", True),
        ("gpu-only-capability", True),  # item 2: an absent max is unlimited
        ("equal-ancestor-caps-child-above", False),  # item 6
    ],
)
def test_the_issue_shapes(shape: str, accepted: bool) -> None:
    case = next(c for c in CASES if c["id"] == f"shape:{shape}")
    assert case["accepted"] is accepted
    errors = accelplane_errors(model(case["queues"]))
    assert (not errors) is accepted, errors


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_checks_agree_with_the_reading_on_random_trees(rng: random.Random) -> None:
    """Trees beyond the recorded ones (``make fuzz`` writes more for the next oracle run): our checks
    reject exactly what the reading of YuniKorn's validator rejects."""
    queues = random_queues(rng)
    errors = accelplane_errors(model(queues))
    assert (not errors) == _yunikorn_reading(rendered(queues)), (queues, errors)
