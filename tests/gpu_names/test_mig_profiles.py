"""MIG layouts checked against the GPU model's MIG table (schemas/mig-profiles.yaml, issue 42):
the table agrees with itself and with mig-parted's example configuration, and a pool whose layout
its GPUs cannot apply gets one error naming why; the device-plugin resources and DRA classes follow
the same profiles."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.derive.dra import device_class_for_pool
from accelplane.derive.gpu_resources import mig_resource_name
from accelplane.errors import SpecErrors
from accelplane.gpu_names import table
from accelplane.mig_profiles import mig_table, models, place
from accelplane.names import is_dns1123_subdomain
from accelplane.pipeline import load_validated

from tests.conftest import STACKS_DIR
from tests.support.specs import node_pool, stack_document, write_spec
from tests.support.validators import reference


def _examples() -> dict[str, list[dict[str, Any]]]:
    """mig-parted's examples/config.yaml (tests/upstream/mig-parted, byte for byte from
    ../shared/reference/mig-parted, v0.15.0)."""
    return dict(yaml.safe_load(reference("mig-parted/examples-config.yaml").read_text())["mig-configs"])


# --- the table ------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(models()))
def test_every_profile_is_consistent_with_its_model(key: str) -> None:
    model = models()[key]
    assert len(set(model.names())) == len(model.profiles)
    for p in model.profiles:
        assert p.name.startswith(f"{p.compute}g.") and p.compute <= model.compute_slices
        assert all(s >= 0 and s + p.memory <= model.memory_slices for s in p.placements), p
        assert 1 <= p.max_instances <= len(p.placements), p
        # the largest layout of one profile fits: NVML offers exactly max_instances of it
        assert place(model, [(p.name, p.max_instances)]) is not None, p


def test_every_mig_capable_row_names_a_table_and_the_others_none() -> None:
    mig_capable = {"A30", "A100", "H100", "H200", "H20", "GH200", "B200", "GB200", "RTX PRO 6000"}
    for row in table():
        assert bool(row.mig) == (row.product in mig_capable), row.name
        assert all(k in models() for k in row.mig)


@pytest.mark.parametrize("name", sorted(_examples()))
def test_mig_parted_example_layouts_fit_the_a100_40gb(name: str) -> None:
    """mig-parted v0.15.0 examples/config.yaml (an A100-40GB's layouts, ../shared/reference):
    every layout it ships fits our A100-40GB table, so the check accepts what upstream applies."""
    model = models()["a100-40gb"]
    for entry in _examples()[name]:
        devices = [(str(p), int(n)) for p, n in (entry.get("mig-devices") or {}).items()]
        assert all(model.profile(p) is not None for p, _ in devices), devices
        assert place(model, devices) is not None, (name, devices)


def test_mig_parted_example_profiles_of_the_a100_40gb_are_not_an_h100s() -> None:
    h100 = models()["h100-80gb"]
    profiles = {str(p) for e in _examples().values() for entry in e for p in (entry.get("mig-devices") or {})}
    assert sorted(p for p in profiles if h100.profile(p) is None) == ["1g.5gb", "1g.5gb+me", "2g.10gb", "3g.20gb"]


# --- findings -------------------------------------------------------------------------------------


def _lines(tmp_path: Path, model: str, devices: dict[str, int], strategy: str = "single") -> list[str]:
    """``[code] path: message`` of every finding about the MIG layout of the dra-gpus stack's H100
    MIG pool given ``model`` and ``devices`` (other findings, of queues naming the pool's
    DeviceClass and the DRA check's one-profile-per-DRA-pool AP3042, are not this check's)."""
    doc = stack_document("dra-gpus")
    pool = node_pool(doc, "h100-mig-dra")
    pool["gpu"]["model"] = model
    pool["gpu"]["mig"] = {"strategy": strategy, "devices": devices}
    try:
        load_validated(write_spec(tmp_path, doc))
    except SpecErrors as exc:
        return [f"[{e.finding.code if e.finding else '-'}] {e.path}: {e.message}" for e in exc.errors
                if e.path.startswith("nodePools[1].gpu.mig") and not (e.finding and e.finding.code == "AP3042")]
    return []


def test_the_issues_h100_layout_over_its_memory_slices_is_refused(tmp_path: Path) -> None:
    """Issue 42: {3g.40gb: 2, 1g.10gb: 1} on an H100 80GB was accepted; it needs 9 of 8 memory slices."""
    lines = _lines(tmp_path, "NVIDIA H100 80GB HBM3", {"3g.40gb": 2, "1g.10gb": 1}, "mixed")
    assert any(
        "the MIG layout {1g.10gb: 1, 3g.40gb: 2} does not fit one 'NVIDIA H100 80GB HBM3': it needs 7 of the "
        "GPU's 7 compute slices and 9 of its 8 memory slices" in e and e.startswith("[AP3087]") for e in lines
    ), lines
    assert len(lines) == 1, lines


@pytest.mark.parametrize(
    ("model", "profile"),
    [("NVIDIA H100 80GB HBM3", "1g.5gb"), ("NVIDIA H100 80GB HBM3", "2g.10gb"), ("NVIDIA H100 80GB HBM3", "1g.12gb"),
     ("NVIDIA A100-SXM4-40GB", "1g.10gb+me"), ("NVIDIA H200", "1g.10gb")],
)
def test_a_profile_of_another_model_is_refused(tmp_path: Path, model: str, profile: str) -> None:
    """Issue 42: A100-40GB profiles and the H100 NVL's 1g.12gb were accepted on an H100 80GB pool."""
    (line,) = _lines(tmp_path, model, {profile: 1})
    assert f"MIG profile {profile!r} is not one a {model!r} offers" in line and line.startswith("[AP3085]")
    assert "its profiles: " in line and "MIG user guide" in line


def test_profiles_of_two_namings_of_one_gpu_are_not_mixed(tmp_path: Path) -> None:
    (line,) = _lines(tmp_path, "NVIDIA GB200", {"1g.23gb": 1, "3g.95gb": 1}, "mixed")
    assert line.startswith("[AP3085]") and "'3g.95gb' is not one a 'NVIDIA GB200' offers" in line


def test_more_instances_than_the_gpu_offers_are_refused(tmp_path: Path) -> None:
    (line,) = _lines(tmp_path, "NVIDIA H100 80GB HBM3", {"1g.10gb+me": 2})
    assert "2 instances of MIG profile '1g.10gb+me', but one 'NVIDIA H100 80GB HBM3' offers at most 1" in line
    assert line.startswith("[AP3086]")


def test_mig_on_a_gpu_without_mig_is_refused(tmp_path: Path) -> None:
    (line,) = _lines(tmp_path, "NVIDIA L40S", {"1g.10gb": 1})
    assert "mig.strategy single on 'NVIDIA L40S', a GPU without MIG" in line and line.startswith("[AP3088]")


@pytest.mark.parametrize(
    ("model", "devices"),
    [("NVIDIA H100 80GB HBM3", {"1g.10gb": 7}), ("NVIDIA H100 NVL", {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}),
     ("NVIDIA A30", {"1g.6gb": 2, "2g.12gb": 1}), ("NVIDIA B200", {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}),
     ("NVIDIA RTX PRO 6000 Blackwell Server Edition", {"1g.24gb+me.all": 1, "1g.24gb-me": 1, "2g.48gb+gfx": 1}),
     ("NVIDIA A100-SXM4-40GB", {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}),
     # GB200: production boards' names and early HGX GB200 firmware's (two tables, one per naming)
     ("NVIDIA GB200", {"1g.23gb": 2, "2g.47gb": 1, "3g.93gb": 1}),
     ("NVIDIA GB200", {"1g.24gb": 2, "2g.47gb": 1, "3g.95gb": 1})],
)
def test_layouts_the_gpu_offers_pass(tmp_path: Path, model: str, devices: dict[str, int]) -> None:
    assert _lines(tmp_path, model, devices, "mixed") == []


def test_a_model_the_table_does_not_know_keeps_the_generic_rule(tmp_path: Path) -> None:
    lines = _lines(tmp_path, "NVIDIA H100 SXM5 94GB", {"3g.40gb": 3})
    assert [e for e in lines if e.startswith("[AP3014]")] and not [e for e in lines if e.startswith("[AP308")]


def test_a_known_model_gets_its_own_finding_not_the_generic_one(tmp_path: Path) -> None:
    lines = _lines(tmp_path, "NVIDIA H100 80GB HBM3", {"3g.40gb": 3})
    assert [e[:8] for e in lines] == ["[AP3086]"], lines


def test_every_example_stacks_mig_layout_fits_its_gpus() -> None:
    for path in sorted(STACKS_DIR.glob("*.yaml")):
        if path.name.startswith("Pulumi."):
            continue
        spec = load_validated(path).model
        for pool in spec.node_pools:
            if pool.gpu is not None and pool.gpu.mig.devices and pool.gpu.mig.strategy != "none":
                table_ = mig_table(pool.gpu.vendor, pool.gpu.model).table_for([p for p, _ in pool.gpu.mig.devices])
                assert table_ is not None and place(table_, pool.gpu.mig.devices) is not None, (path.name, pool.name)


def test_device_plugin_resources_follow_the_profile_names() -> None:
    """The NVIDIA device plugin turns each '+' of a profile into '.' (k8s-device-plugin
    internal/rm/resource.go); every profile of the tables gives a valid extended resource name."""
    names = {mig_resource_name(p) for m in models().values() for p in m.names()}
    assert {"nvidia.com/mig-1g.10gb.me", "nvidia.com/mig-1g.24gb.me.all", "nvidia.com/mig-1g.24gb-me",
            "nvidia.com/mig-2g.48gb.gfx"} <= names
    assert all(len(n.split("/")[1]) <= 63 and "+" not in n for n in names)


def test_dra_device_classes_follow_the_profile_names(tmp_path: Path) -> None:
    """A DRA MIG pool of every MIG GPU of the name table and every profile of its tables gets a
    DeviceClass whose name is a DNS subdomain and whose CEL selects that exact profile."""
    doc = stack_document("dra-gpus")
    spec = load_validated(write_spec(tmp_path, doc)).model
    base = next(p for p in spec.node_pools if p.name == "h100-mig-dra")
    assert base.gpu is not None
    for row in table():
        for key in row.mig:
            for profile in models()[key].names():
                gpu = dataclasses.replace(base.gpu, model=row.name,
                                          mig=dataclasses.replace(base.gpu.mig, devices=((profile, 1),)))
                cls = device_class_for_pool(dataclasses.replace(base, gpu=gpu))
                assert cls is not None and is_dns1123_subdomain(cls.name), (row.name, profile)
                assert f'.profile == "{profile}"' in cls.cel_expression(), cls.cel_expression()
