"""The GPU name table (schemas/gpu-names.yaml) says what each consumer really derives from each
driver name, agrees with the upstream capture it cites, and every name works end to end: GFD label
value, DRA attribute, YARN node label, and the discovery script's ``--model`` filter."""

from __future__ import annotations

import re

import pytest
import yaml
from accelplane.derive.dra import driver_product_name
from accelplane.derive.flink_keys import model_argument
from accelplane.derive.yarn_labels import is_valid_label, label_for_model
from accelplane.discovery import gpu_discovery as gd
from accelplane.gpu_names import GpuName, Match, expected_forms, lookup, table
from accelplane.names import is_label_value

from tests.support.paths import reference

ROWS = table()


def test_every_row_has_a_source_and_a_known_vendor() -> None:
    assert len({(r.vendor, r.name) for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert r.vendor in {"nvidia", "amd"} and r.source, r


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_consumer_forms_follow_the_upstream_rules(row: GpuName) -> None:
    """The table's GFD label, DRA productName and node label are what the upstream code derives."""
    want = expected_forms(row)
    assert (row.gfd_product, row.dra_product_name, row.node_label) == (
        want["gfdProduct"], want["draProductName"], want["nodeLabel"]
    )
    assert driver_product_name(row.vendor, row.name) == row.dra_product_name
    for value in (row.gfd_product, row.node_label):
        assert value is None or is_label_value(value)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_each_name_is_a_yarn_label_and_a_model_filter_that_finds_the_gpu(row: GpuName) -> None:
    """The YARN node label is valid for Hadoop, and the ``--model`` word accelplane writes selects a
    GPU the driver names exactly so (and not a neighbouring model)."""
    assert is_valid_label(label_for_model(row.name))
    assert gd.model_matches(row.name, model_argument(row.name))
    for other in ROWS:
        if other.name != row.name:
            assert not gd.model_matches(other.name, model_argument(row.name)), other.name
    assert lookup(row.vendor, row.name).match is (Match.EXACT if row.captured else Match.UNCONFIRMED)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_every_rows_consumer_forms_by_each_consumers_own_rule(row: GpuName) -> None:
    """Issue 42 (d): each row's forms, re-derived here by the consumers' rules written out anew:
    GFD (k8s-device-plugin internal/lm/resource.go getProductName: drop characters outside
    [A-Za-z0-9-_. ], join the whitespace-separated fields with "-"), the NVIDIA DRA productName
    (the NVML name verbatim), the AMD DRA productName and node labeller (trimmed, " " -> "_",
    parentheses dropped) and the YARN node label (gpu-<lower-cased name without " ", "-", "_">)."""
    if row.vendor == "nvidia":
        assert row.gfd_product == "-".join(re.sub(r"[^A-Za-z0-9\-_. ]", "", row.name).split())
        assert (row.dra_product_name, row.node_label) == (row.name, None)
    else:
        amd = row.name.strip().replace(" ", "_").replace("(", "").replace(")", "")
        assert (row.gfd_product, row.dra_product_name, row.node_label) == (None, amd, amd)
    assert label_for_model(row.name) == "gpu-" + re.sub(r"[ _-]", "", row.name.lower())
    assert row.product and row.source and (row.captured or "no public capture" in row.source)


def test_the_mi300x_row_is_what_the_amd_driver_published() -> None:
    """The AMD DRA driver's own document shows a ResourceSlice of an MI300X node (copied byte for
    byte, ../shared/reference/amd-dra/PROVENANCE.txt) and amd-smi's market name for that GPU."""
    text = reference("amd-dra/docs-demo.md").read_text()
    block = re.search(r"```yaml\n(apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n.*?)```", text, re.S)
    assert block is not None
    device = yaml.safe_load(block.group(1))["spec"]["devices"][0]
    published = device["attributes"]["productName"]["string"]
    row = next(r for r in ROWS if r.vendor == "amd" and r.dra_product_name == published)
    assert row.name == "AMD Instinct MI300X OAM" and row.market_name is not None
    assert "GPU-Name | " in text and row.market_name in text


@pytest.mark.parametrize(
    ("vendor", "model", "match", "names"),
    [
        ("nvidia", "L4", Match.SHORTHAND, ["NVIDIA L4"]),
        ("nvidia", "NVIDIA-L4", Match.SHORTHAND, ["NVIDIA L4"]),
        ("nvidia", "H100", Match.SHORTHAND, ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL"]),
        ("nvidia", "H100 SXM5 80GB", Match.SHORTHAND, ["NVIDIA H100 80GB HBM3"]),
        ("nvidia", "T4", Match.SHORTHAND, ["Tesla T4"]),
        ("amd", "AMD Instinct MI300X", Match.SHORTHAND, ["AMD Instinct MI300X OAM"]),
        ("amd", "AMD_Instinct_MI300X_OAM", Match.SHORTHAND, ["AMD Instinct MI300X OAM"]),
        ("nvidia", "NVIDIA L40", Match.UNCONFIRMED, ["NVIDIA L40"]),
        ("nvidia", "NVIDIA L40 48GB", Match.UNKNOWN, ["NVIDIA L40"]),
        ("nvidia", "NVIDIA H100 SXM5 94GB", Match.UNKNOWN,
         ["NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL"]),
        ("nvidia", "Tesla V100-SXM3-32GB", Match.UNKNOWN,
         ["Tesla V100-SXM2-32GB", "Tesla V100-PCIE-32GB", "Tesla V100-SXM2-16GB"]),
        ("nvidia", "NVIDIA GeForce RTX 4090", Match.UNKNOWN, []),
        ("amd", "AMD Instinct MI300X VF", Match.UNKNOWN, ["AMD Instinct MI300X OAM"]),
        # a shorthand of a row nobody has captured may itself be the driver's name: a warning
        ("amd", "AMD Instinct MI325X", Match.UNKNOWN, ["AMD Instinct MI325 OAM"]),
    ],
)
def test_lookup(vendor: str, model: str, match: Match, names: list[str]) -> None:
    found = lookup(vendor, model)
    assert found.match is match
    assert [r.name for r in found.rows][: len(names)] == names or {r.name for r in found.rows} >= set(names)
    if match is Match.UNKNOWN:  # nearest known: variants of the same product only (issue 42)
        assert {r.name for r in found.rows} <= set(names) or len(found.rows) == 3
