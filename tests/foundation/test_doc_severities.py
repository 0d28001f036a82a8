"""Docs say what the code does: every finding code a doc calls "an error" or "a warning" has that
severity in the registry (#39, "Docs that contradict the code"). Recognised forms: ``warning
AP8006``, ``an error (AP8010)``, ``AP4501 error``, ``AP3100, a warning`` and table rows
``| AP3513 | error |``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from accelplane.findings import REGISTRY
from accelplane.findings_docs import load_all_findings

from tests.support.paths import REPO_ROOT

_CODE = r"(AP\d{4})"
_SEVERITY = r"(errors?|warnings?)"
PATTERNS = (
    re.compile(rf"\b{_SEVERITY}\*{{0,2}},? \(?`?{_CODE}\b"),
    re.compile(rf"\b{_CODE}`?\*{{0,2}},? \(?(?:is |are )?(?:an? )?\*{{0,2}}{_SEVERITY}\b"),
    re.compile(rf"\b{_CODE}`?\s*\|\s*{_SEVERITY}\s*\|"),
)
DOCS = [
    REPO_ROOT / "README.md",
    *sorted(p for p in (REPO_ROOT / "docs").glob("*.md") if p.name != "findings.md"),
]


def severity_claims(text: str) -> list[tuple[int, str, str]]:
    """(line, code, "error" or "warning") of every severity the text gives a finding code."""
    out = []
    for pattern in PATTERNS:
        for m in pattern.finditer(text):
            a, b = m.groups()
            code, said = (b, a) if a.lower().startswith(("error", "warning")) else (a, b)
            out.append(
                (text.count("\n", 0, m.start()) + 1, code, "error" if said.startswith("error") else "warning")
            )
    return out


def test_the_claim_forms_are_recognised() -> None:
    text = "is warning AP8006; an error (AP8010); **AP4501 error**; AP3100, a warning\n| AP3513 | error |"
    assert [(c, s) for _, c, s in severity_claims(text)] == [
        ("AP8006", "warning"), ("AP8010", "error"), ("AP4501", "error"), ("AP3100", "warning"), ("AP3513", "error"),
    ]  # fmt: skip


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_severity_a_doc_gives_a_code_is_the_registrys(doc: Path) -> None:
    load_all_findings()
    wrong = [
        f"{doc.name}:{line}: {code} called {said}, registry: "
        f"{REGISTRY[code].severity.value if code in REGISTRY else 'no such code'}"
        for line, code, said in severity_claims(doc.read_text(encoding="utf-8"))
        if code not in REGISTRY or REGISTRY[code].severity.value != said
    ]
    assert wrong == []


def test_the_docs_make_such_claims() -> None:
    assert sum(len(severity_claims(d.read_text(encoding="utf-8"))) for d in DOCS) >= 40
