"""The stock Flink images have no python3, so GPU TaskManagers cannot run accelplane's discovery
script there (the GPU preflight refuses them): an explicit stock image is AP8010 on Kubernetes and
AP5561 in Docker on YARN, as an unset one was (#39 item 5)."""

from __future__ import annotations

import pytest
import yaml
from accelplane.derive.images import is_stock_flink_image, repository

from tests.support.specs import WriteSpec, findings_of
from tests.support.yarn_specs import BASE

KUBERNETES = """\
cluster: {name: c, platforms: [kubernetes]}
nodePools:
  - {name: l4, nodes: 2, labels: {pool: l4}, gpu: {vendor: nvidia, model: NVIDIA L4, perNode: 4}}
queues:
  - {name: streaming}
flink:
  clusters:
    - name: f
      queue: streaming
      IMAGE
      taskManager: {replicas: 2, gpu: {amount: 1}}
"""


@pytest.mark.parametrize(
    "image",
    ["flink:1.20.5-java17", "flink", "library/flink:1.20", "docker.io/library/flink:1.20.5-java17",
     "apache/flink:1.20.1-scala_2.12-java17", "docker.io/apache/flink@sha256:" + "0" * 64,
     "index.docker.io/flink:2.1"],
)  # fmt: skip
def test_stock_references(image: str) -> None:
    assert is_stock_flink_image(image)


@pytest.mark.parametrize(
    "image",
    ["registry.example.com/flink:1.20", "localhost:5000/flink:1.20", "registry.example.com/flink-gpu:1.20.5-java17-1",
     "acme/flink:1.20", "flink-gpu:1.20", "ghcr.io/apache/flink:1.20"],
)  # fmt: skip
def test_other_references(image: str) -> None:
    assert not is_stock_flink_image(image)


def test_repository_splits_registry_tag_and_digest() -> None:
    assert repository("localhost:5000/team/flink:1.20@sha256:ab") == ("localhost:5000", "team/flink")
    assert repository("flink:1.20") == (None, "flink")


@pytest.mark.parametrize("image", ["flink:1.20.5-java17", "apache/flink:1.20.5-java17"])
def test_an_explicit_stock_image_on_kubernetes_is_ap8010(image: str, write_spec: WriteSpec) -> None:
    found = findings_of(write_spec(KUBERNETES.replace("IMAGE", f"image: {image}")))
    assert [(f.finding.code, f.path) for f in found if f.finding] == [("AP8010", "flink.clusters[0].image")]
    assert "has no python3" in found[0].message


def test_a_node_image_set_to_the_stock_image_is_ap8010_at_node_image(write_spec: WriteSpec) -> None:
    text = KUBERNETES.replace("      IMAGE\n", "").replace(
        "queues:", "nodeImage: {baseImage: flink:1.20.5-java17, image: flink:1.20.5-java17}\nqueues:"
    )
    found = findings_of(write_spec(text))
    assert [(f.finding.code, f.path) for f in found if f.finding] == [("AP8010", "nodeImage.image")]


def test_a_built_image_is_fine(write_spec: WriteSpec) -> None:
    text = KUBERNETES.replace("IMAGE", "image: registry.example.com/flink-gpu:1.20.5-java17-1")
    assert findings_of(write_spec(text)) == []


def test_an_explicit_stock_image_in_docker_on_yarn_is_ap5561(write_spec: WriteSpec) -> None:
    text = BASE.replace("image: registry.example.com/flink-gpu:1.20.1-py3", "image: flink:1.20.1-java17")
    assert "image: flink:1.20.1-java17" in text
    found = [f for f in findings_of(write_spec(text)) if f.finding and f.finding.code == "AP5561"]
    assert [f.path for f in found] == ["flink.clusters[0].image"]
    assert "stock image flink:1.20.1-java17 (an image without python3" in found[0].message


def test_a_stock_node_image_two_clusters_inherit_is_one_finding(write_spec: WriteSpec) -> None:
    """One root cause, one finding (#39 item 4): nodeImage.image names both clusters."""
    text = KUBERNETES.replace("      IMAGE\n", "").replace(
        "queues:", "nodeImage: {baseImage: flink:1.20.5-java17, image: flink:1.20.5-java17}\nqueues:"
    ) + "    - {name: g, queue: streaming, taskManager: {replicas: 1, gpu: {amount: 1}}}\n"
    found = [f for f in findings_of(write_spec(text)) if f.finding]
    assert [(f.finding.code, f.path) for f in found if f.finding] == [("AP8010", "nodeImage.image")]
    assert "Flink clusters f, g would run the stock Flink image flink:1.20.5-java17" in found[0].message


def test_a_stock_node_image_two_docker_clusters_inherit_is_one_ap5561(write_spec: WriteSpec) -> None:
    doc = yaml.safe_load(BASE)
    del doc["flink"]["clusters"][0]["image"]
    doc["flink"]["clusters"].append(dict(doc["flink"]["clusters"][0], name="ranking"))
    doc["nodeImage"] = {"baseImage": "flink:1.20.1-java17", "image": "flink:1.20.1-java17"}
    found = [f for f in findings_of(write_spec(yaml.safe_dump(doc, sort_keys=False))) if f.finding and f.finding.code == "AP5561"]
    assert [f.path for f in found] == ["nodeImage.image"]
    assert "Flink clusters ranking, scoring run in Docker" in found[0].message


def test_a_registryless_node_image_two_docker_clusters_inherit_is_one_ap5075(write_spec: WriteSpec) -> None:
    doc = yaml.safe_load(BASE)
    del doc["flink"]["clusters"][0]["image"]
    doc["flink"]["clusters"].append(dict(doc["flink"]["clusters"][0], name="ranking"))
    doc["nodeImage"] = {"baseImage": "flink:1.20.1-java17", "image": "flink-gpu:1.20.1-py3"}
    found = [f for f in findings_of(write_spec(yaml.safe_dump(doc, sort_keys=False))) if f.finding and f.finding.code == "AP5075"]
    assert [f.path for f in found] == ["nodeImage.image"]
    assert found[0].message.endswith("(the image of Flink clusters ranking, scoring)")
