"""Quantities and names: exact parsing, formatting and the shared naming rules."""

from __future__ import annotations

from decimal import Decimal

import pytest
from accelplane.names import (
    gfd_product_label,
    is_dns1123_label,
    is_valid_yarn_resource_name,
    normalize_gpu_model,
)
from accelplane.quantity import QuantityError, format_quantity, parse_quantity
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.specs import model_of


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4", 4),
        (4, 4),
        ("500m", Decimal("0.5")),
        ("1.5Gi", 1610612736),
        ("1e3", 1000),
        ("2k", 2000),
        ("1Ki", 1024),
        ("0.1", Decimal("0.1")),
        (".5", Decimal("0.5")),
    ],
)
def test_parse(text: str | int, value: Decimal | int) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["10GB", "1.2.3", "", " 4", "4 ", "Gi", "--1", True, ".0E3000000", "1e1.5"])
def test_parse_rejects(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        (Decimal(3 * 2**30), True, "3Gi"),
        (Decimal(1536 * 2**20), True, "1536Mi"),
        (Decimal("4.5"), False, "4500m"),
        (Decimal(12), False, "12"),
        (Decimal(0), True, "0"),
    ],
)
def test_format(value: Decimal, binary: bool, text: str) -> None:
    assert format_quantity(value, binary) == text
    assert parse_quantity(text) == value


def test_e2data_model_normalisation() -> None:
    assert normalize_gpu_model("Tesla V100-SXM2-32GB") == "teslav100sxm232gb"
    from accelplane.derive.yarn_labels import is_valid_label, label_for_model

    assert label_for_model("Tesla V100-SXM2-32GB") == "gpu-teslav100sxm232gb"
    assert is_valid_label(label_for_model("NVIDIA A100-SXM4-80GB"))


def test_names() -> None:
    assert (
        is_dns1123_label("fraud-scoring") and not is_dns1123_label("Fraud") and not is_dns1123_label("a" * 64)
    )
    assert gfd_product_label("Tesla T4") == "Tesla-T4"
    for ok in ("yarn.io/gpu", "yarn.io/gpu-teslav100sxm232gb", "gpu", "a.b-c/x_y"):
        assert is_valid_yarn_resource_name(ok), ok
    for bad in ("yarn.io/gpu model", "1gpu", "com/acme/gpu", "yarn.io/", "-acme.com/gpu", "acme-.com/gpu"):
        assert not is_valid_yarn_resource_name(bad), bad


def test_candidate_pools_match_models_by_e2data_normalisation(write_spec) -> None:  # type: ignore[no-untyped-def]
    from accelplane.derive.gpu_resources import candidate_pools

    spec = write_spec(
        """\
        cluster: {name: d, platforms: [yarn]}
        nodePools:
          - {name: v100, platform: yarn, nodes: 1, gpu: {vendor: nvidia, model: Tesla V100-SXM2-32GB, perNode: 4}}
          - {name: t4, platform: yarn, nodes: 1, gpu: {vendor: nvidia, model: Tesla T4, perNode: 2}}
          - {name: cpu, platform: yarn, nodes: 1}
        yarn: {nodeLabels: true}
        flink:
          clusters:
            - {name: c, target: yarn, taskManager: {gpu: {amount: 1, model: tesla-v100-sxm2-32gb}}}
        """
    )
    model = model_of(spec)
    assert [p.name for p in candidate_pools(model, model.flink_clusters[0])] == ["v100"]


def test_flink_clusters_default_to_the_node_image(write_spec) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(
        """\
        cluster: {name: d, platforms: [kubernetes]}
        nodeImage: {baseImage: "flink:1.20.1-java17", image: "registry.example.com/flink-gpu:1.20.1-java17-1"}
        flink:
          clusters:
            - {name: uses-node-image}
            - {name: own-image, image: "flink:1.20.1-java17"}
        """
    )
    images = {c.name: c.image for c in model_of(spec).flink_clusters}
    assert images == {
        "uses-node-image": "registry.example.com/flink-gpu:1.20.1-java17-1",
        "own-image": "flink:1.20.1-java17",
    }


@settings(max_examples=300)
@given(st.text(max_size=40))
def test_gpu_model_token_is_one_rule(model: str) -> None:
    """The discovery script's --model rule is the package's (the script keeps a standalone copy)."""
    from accelplane.discovery.gpu_discovery import normalize_model

    assert normalize_model(model) == normalize_gpu_model(model)
