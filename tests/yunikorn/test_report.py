"""The capacity report of a YuniKorn cluster says which scheduler enforces the queues and how the
spec's queue fields map to YuniKorn's guaranteed/max."""

from __future__ import annotations

from accelplane.report.data import build_report
from accelplane.report.tables import YUNIKORN_NOTE, format_markdown, format_text, to_json

from tests.conftest import STACKS_DIR
from tests.support.specs import model_of


def test_report_names_yunikorn_and_its_mapping() -> None:
    report = build_report(model_of(STACKS_DIR / "yunikorn-gpus.yaml"))
    assert report.scheduler == "yunikorn"
    assert YUNIKORN_NOTE in format_text(report)
    assert "Apache YuniKorn" in format_markdown(report)
    assert to_json(report)["scheduler"] == "yunikorn"
    streaming = next(r for r in report.queues if r.queue == "streaming")
    assert (streaming.capability, streaming.deserved) == (32, 24)


def test_volcano_report_is_unchanged() -> None:
    report = build_report(model_of(STACKS_DIR / "prod-eu.yaml"))
    assert report.scheduler == "volcano"
    assert "YuniKorn" not in format_text(report)
