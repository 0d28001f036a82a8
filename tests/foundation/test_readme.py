"""The README is a front door that works: its five-minute walkthrough runs as written, its table
lists every example stack, and every relative link in it and in docs/ leads to a file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from accelplane.builders.pod_templates import PREFLIGHT_INIT_CONTAINER
from accelplane.cli import main
from accelplane.derive.images import is_stock_flink_image

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
    assert "rendered 16 files" in capsys.readouterr().out
    assert_preflight_would_pass_in_the_named_image(Path("build/my-cluster"), text)
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


def assert_preflight_would_pass_in_the_named_image(out: Path, text: str) -> None:
    """The TaskManager's main and GPU preflight containers name the image the rendered node-image/
    builds: FROM the spec's pinned Flink base, with python3 and the discovery script at the path the
    preflight runs (what the stock image lacks; #39 item 5)."""
    spec = yaml.safe_load(text)
    image = spec["nodeImage"]["image"]
    template = yaml.safe_load((out / "flink/fraud-scoring/taskmanager-pod-template.yaml").read_text())
    preflight = next(c for c in template["spec"]["initContainers"] if c["name"] == PREFLIGHT_INIT_CONTAINER)
    config = yaml.safe_load((out / "flink/fraud-scoring/config.yaml").read_text())
    # Flink sets the main container's image from its configuration (the template leaves it out)
    assert preflight["image"] == config["kubernetes.container.image.ref"] == image
    assert not is_stock_flink_image(image)
    dockerfile = (out / "node-image/Dockerfile").read_text()
    assert f"ARG BASE_IMAGE={spec['nodeImage']['baseImage']}\nFROM ${{BASE_IMAGE}}" in dockerfile
    assert "apt-get install -y --no-install-recommends python3 python3-venv" in dockerfile
    script = preflight["command"][4]  # sh -c PROGRAM NAME SCRIPT ARGS…
    assert f"COPY --chown=0:0 --chmod=0755 accelplane-gpu-discovery {script}\n" in dockerfile


def test_the_walkthrough_with_a_stock_image_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stock image has no python3: naming it (instead of the node image) is AP8010."""
    monkeypatch.chdir(tmp_path)
    stock = walkthrough_spec().replace(
        "      queue: streaming\n", "      queue: streaming\n      image: flink:1.20.5-java17\n"
    )
    assert "image: flink:1.20.5-java17" in stock
    Path("stock.yaml").write_text(stock, encoding="utf-8")
    assert main(["validate", "stock.yaml"]) == 1
    err = capsys.readouterr().err
    assert "flink.clusters[0].image" in err and "AP8010" in err


def test_the_example_stack_table_lists_every_stack() -> None:
    listed = set(re.findall(r"^\| `stacks/([\w-]+\.yaml)` \|", README, re.M))
    assert listed == {p.name for p in EXAMPLE_SPECS}


@pytest.mark.parametrize(
    "doc", [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_relative_links_lead_to_files(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:|mailto:|#)[^)\s]+)\)", text)
    missing = [t for t in targets if not (doc.parent / t.split("#")[0]).exists()]
    assert not missing, f"{doc.name}: links to missing files: {missing}"
