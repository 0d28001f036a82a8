"""The README is a front door that works: its five-minute walkthrough runs as written, its table
lists every example stack, and every relative link in it and in docs/ leads to a file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from accelplane.cli import main

from tests.conftest import EXAMPLE_SPECS
from tests.support.paths import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def walkthrough_spec() -> str:
    """The first YAML block of the README's walkthrough."""
    section = README.split("## Five minutes", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_walkthrough_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = Path("my-cluster.yaml")
    text = walkthrough_spec()
    spec.write_text(text, encoding="utf-8")
    assert main(["validate", str(spec)]) == 0
    assert main(["render", str(spec), "--out", "build/my-cluster"]) == 0
    assert "rendered 13 files" in capsys.readouterr().out
    # without the pool's labels the device plugin could select no node: one located error
    spec.write_text(re.sub(r"\n +labels: .*", "", text), encoding="utf-8")
    assert main(["validate", str(spec)]) == 1
    assert "nodePools[0].labels" in capsys.readouterr().err
    # two GPUs per TaskManager: diff names the impact the README promises, report answers
    assert "gpu: {amount: 1}" in text
    spec.write_text(text.replace("gpu: {amount: 1}", "gpu: {amount: 2}"), encoding="utf-8")
    assert main(["diff", "build/my-cluster", str(spec)]) == 1
    out = capsys.readouterr().out
    assert "external-resource.gpu.amount 1 → 2" in out and 'minResources["nvidia.com/gpu"] 2 → 4' in out
    assert main(["report", str(spec)]) == 0


def test_the_example_stack_table_lists_every_stack() -> None:
    listed = set(re.findall(r"^\| `stacks/([\w-]+\.yaml)` \|", README, re.M))
    assert listed == {p.name for p in EXAMPLE_SPECS}


@pytest.mark.parametrize("doc", [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))],
                         ids=lambda p: p.name)
def test_relative_links_lead_to_files(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:|mailto:|#)[^)\s]+)\)", text)
    missing = [t for t in targets if not (doc.parent / t.split("#")[0]).exists()]
    assert not missing, f"{doc.name}: links to missing files: {missing}"
