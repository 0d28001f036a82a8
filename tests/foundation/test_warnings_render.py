"""A spec whose findings are all warnings renders (issue 28): the builders take every setting a
check now only warns about (no effect, an upstream default) without failing; and every finding of
every case carries a registered code (documented in docs/findings.md). The specs are the bad-spec
tables of the families, so a new check there is covered too."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from accelplane.errors import SpecErrors
from accelplane.findings import REGISTRY
from accelplane.pipeline import load_validated, render_spec
from accelplane.report.data import build_report
from accelplane.report.tables import render_report

import tests.device_plugins.test_bad_specs as device_plugins
import tests.dra.test_bad_specs as dra
import tests.flink.test_flink_checks as flink
import tests.yarn.test_checks as yarn
from tests.support.dra_specs import stack_document
from tests.support.specs import spec_text


def _cases() -> Iterator[tuple[str, str]]:
    for name, doc, _ in device_plugins.CASES:
        yield f"device-plugins:{name}", spec_text(doc)
    for case in yarn.CASES:
        yield f"yarn:{case[0]}", case[1]
    for case in flink.CASES:
        yield f"flink:{case.id}", spec_text(case.spec) if isinstance(case.spec, dict) else case.spec
    for name, (edit, _) in sorted(dra.CASES.items()):
        doc = copy.deepcopy(stack_document())
        edit(doc)
        yield f"dra:{name}", spec_text(doc)


CASES = dict(_cases())


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_spec_with_only_warnings_renders(name: str, tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(CASES[name], encoding="utf-8")
    try:
        validated = load_validated(path)
    except SpecErrors as exc:
        assert any(not e.is_warning for e in exc.errors)
        for e in exc.errors:  # every finding a check reports is registered (and so documented)
            assert e.finding is not None and REGISTRY.get(e.finding.code) is e.finding, str(e)
        return  # an error case: nothing to render
    for w in validated.warnings:
        assert w.finding is not None and REGISTRY.get(w.finding.code) is w.finding, str(w)
    assert render_spec(path).files
    assert render_report(build_report(validated.model, validated.warnings), "text")
