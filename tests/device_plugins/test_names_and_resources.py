"""GFD product labels, MIG resource names and per-pool advertising rules.

Expected values come from upstream: k8s-device-plugin ``internal/lm/resource_test.go`` (the
``MOCKMODEL`` cases), its ``sanitise`` function (drop everything outside ``[A-Za-z0-9-_. ]``, join
whitespace-separated fields with ``-``), ``internal/rm/rm.go`` (``+`` of a MIG profile becomes
``.``), and labels seen on real nodes (``NVIDIA-A100-80GB-PCIe-MIG-1g.10gb``).
"""

from __future__ import annotations

from typing import Any

import pytest
from accelplane.derive.gpu_resources import (
    advertised_resources,
    gfd_product_label_for_pool,
    max_request_per_container,
    mig_resource_name,
    unshared_resources,
)
from accelplane.model_convert import build_model
from accelplane.names import gfd_product_label, is_label_value, normalize_gpu_model

from tests.support.device_plugin_specs import pool, spec_doc


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        # internal/lm/resource_test.go
        ({"model": "MOCKMODEL"}, "MOCKMODEL"),
        ({"model": "MOCKMODEL", "shared": True}, "MOCKMODEL-SHARED"),
        ({"model": "MOCKMODEL", "mig_profile": "1g.300gb"}, "MOCKMODEL-MIG-1g.300gb"),
        ({"model": "MOCKMODEL", "mig_profile": "1g.300gb", "shared": True}, "MOCKMODEL-MIG-1g.300gb-SHARED"),
        # names as nvidia-smi reports them and labels seen on nodes
        ({"model": "Tesla T4"}, "Tesla-T4"),
        ({"model": "NVIDIA A100-SXM4-80GB"}, "NVIDIA-A100-SXM4-80GB"),
        ({"model": "NVIDIA A100 80GB PCIe", "mig_profile": "1g.10gb"}, "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb"),
        ({"model": "NVIDIA H100 80GB HBM3", "mig_profile": "1g.10gb"}, "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"),
        # sanitise: characters outside [A-Za-z0-9-_. ] are dropped, runs of spaces collapse
        ({"model": "NVIDIA  GeForce RTX (TM) 4090 "}, "NVIDIA-GeForce-RTX-TM-4090"),
        ({"model": "NVIDIA H100", "mig_profile": "1g.10gb+me"}, "NVIDIA-H100-MIG-1g.10gbme"),
    ],
)
def test_gfd_product_label_matches_gfd(kwargs: dict[str, Any], expected: str) -> None:
    model = kwargs.pop("model")
    assert gfd_product_label(model, **kwargs) == expected


def test_gfd_product_label_is_not_truncated_and_validity_is_separate() -> None:
    long_model = "NVIDIA " + "X" * 70
    value = gfd_product_label(long_model)
    assert value == "NVIDIA-" + "X" * 70
    assert not is_label_value(value)
    assert is_label_value("Tesla-T4")
    assert not is_label_value("Tesla-T4-")


def test_e2data_normalisation_unchanged() -> None:
    assert normalize_gpu_model("Tesla V100-SXM2-32GB") == "teslav100sxm232gb"


def _pools(*pools: dict[str, Any]) -> dict[str, Any]:
    spec, problems = build_model(spec_doc(list(pools)))
    assert spec is not None, problems
    return {p.name: p for p in spec.node_pools}


def test_advertised_resources_per_strategy() -> None:
    pools = _pools(
        pool("plain", per_node=8),
        pool("single", per_node=8, mig={"strategy": "single", "devices": {"1g.10gb": 7}}),
        pool("mixed", per_node=2, mig={"strategy": "mixed", "devices": {"1g.10gb+me": 1, "3g.40gb": 2}}),
        pool("ts", per_node=4, sharing={"strategy": "timeSlicing", "replicas": 4}),
        pool(
            "ts-renamed",
            per_node=4,
            sharing={"strategy": "timeSlicing", "replicas": 4, "renameByDefault": True},
        ),
        pool(
            "mixed-ts",
            per_node=2,
            mig={"strategy": "mixed", "devices": {"1g.10gb": 7}},
            sharing={"strategy": "timeSlicing", "replicas": 2, "renameByDefault": True},
        ),
        pool("mps", per_node=1, sharing={"strategy": "mps", "replicas": 8}),
        pool("mi300", "amd", per_node=8),
    )
    assert advertised_resources(pools["plain"]) == {"nvidia.com/gpu": 8}
    assert advertised_resources(pools["single"]) == {"nvidia.com/gpu": 56}
    assert advertised_resources(pools["mixed"]) == {
        "nvidia.com/mig-1g.10gb.me": 2,
        "nvidia.com/mig-3g.40gb": 4,
    }
    assert advertised_resources(pools["ts"]) == {"nvidia.com/gpu": 16}
    assert advertised_resources(pools["ts-renamed"]) == {"nvidia.com/gpu.shared": 16}
    assert unshared_resources(pools["ts-renamed"]) == {"nvidia.com/gpu": 4}
    assert advertised_resources(pools["mixed-ts"]) == {"nvidia.com/mig-1g.10gb.shared": 28}
    assert advertised_resources(pools["mps"]) == {"nvidia.com/gpu": 8}
    assert advertised_resources(pools["mi300"]) == {"amd.com/gpu": 8}
    assert mig_resource_name("1g.10gb+me") == "nvidia.com/mig-1g.10gb.me"
    assert max_request_per_container(pools["mps"], "nvidia.com/gpu") == 1
    assert max_request_per_container(pools["ts"], "nvidia.com/gpu") is None
    assert max_request_per_container(pools["plain"], "nvidia.com/gpu") is None


def test_gfd_product_label_for_pool_follows_mig_and_sharing() -> None:
    model = "NVIDIA A100-SXM4-80GB"
    pools = _pools(
        pool("plain", model=model),
        pool("single", model=model, mig={"strategy": "single", "devices": {"1g.10gb": 7}}),
        pool("mixed", model=model, mig={"strategy": "mixed", "devices": {"1g.10gb": 7}}),
        pool(
            "mixed-ts",
            model=model,
            mig={"strategy": "mixed", "devices": {"1g.10gb": 7}},
            sharing={"strategy": "timeSlicing", "replicas": 2},
        ),
        pool(
            "single-ts",
            model=model,
            mig={"strategy": "single", "devices": {"1g.10gb": 7}},
            sharing={"strategy": "timeSlicing", "replicas": 2},
        ),
        pool("ts", model="Tesla T4", sharing={"strategy": "timeSlicing", "replicas": 4}),
        pool(
            "ts-renamed",
            model="Tesla T4",
            sharing={"strategy": "timeSlicing", "replicas": 4, "renameByDefault": True},
        ),
        pool("mps", model="NVIDIA L4", sharing={"strategy": "mps", "replicas": 4}),
        pool("nomodel"),
        pool("mi300", "amd", model="AMD Instinct MI300X OAM"),
    )
    assert gfd_product_label_for_pool(pools["plain"]) == "NVIDIA-A100-SXM4-80GB"
    assert gfd_product_label_for_pool(pools["single"]) == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
    # mixed: nvidia.com/gpu.product describes the full GPU, labelled without sharing
    assert gfd_product_label_for_pool(pools["mixed"]) == "NVIDIA-A100-SXM4-80GB"
    assert gfd_product_label_for_pool(pools["mixed-ts"]) == "NVIDIA-A100-SXM4-80GB"
    assert gfd_product_label_for_pool(pools["single-ts"]) == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb-SHARED"
    assert gfd_product_label_for_pool(pools["ts"]) == "Tesla-T4-SHARED"
    assert gfd_product_label_for_pool(pools["ts-renamed"]) == "Tesla-T4"
    assert gfd_product_label_for_pool(pools["mps"]) == "NVIDIA-L4-SHARED"
    assert gfd_product_label_for_pool(pools["nomodel"]) is None
    assert gfd_product_label_for_pool(pools["mi300"]) is None


@pytest.mark.parametrize(
    ("key", "agent_written"),
    [
        ("feature.node.kubernetes.io/pci-10de.present", True),
        ("nvidia.com/gpu.product", True),
        ("nvidia.com/mig.strategy", True),
        ("amd.com/gpu.family", True),
        ("beta.amd.com/gpu.device-id", True),
        ("nvidia.com/gpu.present", False),
        ("nvidia.com/device-plugin.config", False),
        ("accelplane.io/pool", False),
        ("node.kubernetes.io/instance-type", False),
    ],
)
def test_agent_written_labels(key: str, agent_written: bool) -> None:
    from accelplane.derive.node_selection import is_agent_written_label

    assert is_agent_written_label(key) is agent_written
