"""Each DeviceClass's CEL selector, evaluated by a CEL implementation (cel-python) against the
devices of ResourceSlices as the NVIDIA and AMD DRA drivers publish them
(tests/dra/resourceslices.yaml, provenance there), selects exactly its own GPU model (and MIG
profile): not another model, not the model's MIG devices or partitions, not another driver's
devices."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from accelplane.builders import dra
from accelplane.derive import dra as dra_derive

from tests.support.dra_specs import stack_document, validated
from tests.support.paths import reference
from tests.support.validators import validate_core_object

SLICES = Path(__file__).with_name("resourceslices.yaml")


def _devices() -> list[tuple[str, dict[str, Any]]]:
    """(driver, device) of every device of every fixture ResourceSlice."""
    out = []
    for rs in yaml.safe_load_all(SLICES.read_text()):
        for device in rs["spec"]["devices"]:
            out.append((rs["spec"]["driver"], device))
    return out


def _activation(driver: str, device: dict[str, Any]) -> dict[str, Any]:
    """The CEL ``device`` variable Kubernetes builds for a device: ``driver`` and ``attributes``
    keyed by domain (an unqualified attribute name belongs to the driver's domain), each value the
    one typed field set (versions as strings: no selector here compares versions)."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, typed in device.get("attributes", {}).items():
        domain, _, short = name.rpartition("/")
        ((_kind, value),) = typed.items()
        attributes.setdefault(domain or driver, {})[short] = value
    return {"device": celpy.json_to_cel({"driver": driver, "attributes": attributes})}


def _selects(expression: str, driver: str, device: dict[str, Any]) -> bool:
    env = celpy.Environment()
    program = env.program(env.compile(expression))
    return bool(program.evaluate(_activation(driver, device)))


def _wide_stack() -> dict[str, Any]:
    """The example stack plus DRA pools of neighbouring models (A100 40GB, T4, an A100 MIG pool,
    MI250X), so each class is tried against models it must not select."""
    doc = stack_document()
    doc["flink"]["clusters"][0]["taskManager"]["gpu"] = {"amount": 2, "pool": "a100-dra"}
    doc["nodePools"] = [
        *copy.deepcopy(doc["nodePools"]),
        {"name": "a100-40", "nodes": 1, "gpu": {"vendor": "nvidia", "model": "NVIDIA A100-SXM4-40GB", "perNode": 8, "allocation": "dra"}},
        {"name": "t4-dra", "nodes": 1, "gpu": {"vendor": "nvidia", "model": "Tesla T4", "perNode": 4, "allocation": "dra"}},
        {
            "name": "a100-mig",
            "nodes": 1,
            "gpu": {
                "vendor": "nvidia",
                "model": "NVIDIA A100-SXM4-80GB",
                "perNode": 8,
                "allocation": "dra",
                "mig": {"strategy": "single", "devices": {"1g.10gb": 7}},
            },
        },
        {"name": "mi250", "nodes": 1, "gpu": {"vendor": "amd", "model": "AMD Instinct MI250X (MI250)", "perNode": 4, "allocation": "dra"}},
    ]
    return doc


#: class name → the fixture devices (driver, device name) it must select, and nothing else
EXPECTED = {
    "nvidia-a100-sxm4-80gb": {("gpu.nvidia.com", "node-a/gpu-0")},
    "nvidia-a100-sxm4-40gb": {("gpu.nvidia.com", "node-a/gpu-1")},
    "nvidia-a100-sxm4-80gb-mig-1g.10gb": {("gpu.nvidia.com", "node-a/gpu-2-mig-1g10gb-0")},
    "nvidia-h100-80gb-hbm3-mig-1g.10gb": {("gpu.nvidia.com", "node-b/gpu-1-mig-1g10gb-0")},
    "nvidia-tesla-t4": {("gpu.nvidia.com", "node-b/gpu-2")},
    "amd-instinct-mi300x-oam": {("gpu.amd.com", "node-c/gpu-1-128")},
    "amd-instinct-mi250x-mi250": {("gpu.amd.com", "node-c/gpu-3-130")},
}


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    spec = validated(_wide_stack(), tmp_path_factory.mktemp("cel")).model
    return {o.name: o.manifest for o in dra.build(spec).objects if o.kind == "DeviceClass"}


def test_fixture_slices_are_valid_resourceslices() -> None:
    for rs in yaml.safe_load_all(SLICES.read_text()):
        validate_core_object(rs, "1.34.0")


def test_every_class_is_expected(classes: dict[str, dict[str, Any]]) -> None:
    assert sorted(classes) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_class_selects_exactly_its_own_model(name: str, classes: dict[str, dict[str, Any]]) -> None:
    (selector,) = classes[name]["spec"]["selectors"]
    expression = selector["cel"]["expression"]
    selected = set()
    for rs in yaml.safe_load_all(SLICES.read_text()):
        driver = rs["spec"]["driver"]
        for device in rs["spec"]["devices"]:
            if _selects(expression, driver, device):
                selected.add((driver, f"{rs['spec']['nodeName']}/{device['name']}"))
    assert selected == EXPECTED[name]


def test_a_missing_attribute_is_an_error_not_a_silent_miss() -> None:
    """Why every selector tests ``device.driver`` first: another driver's device has no
    ``gpu.nvidia.com`` attributes, and CEL fails on a missing key (the scheduler then fails the
    allocation) unless an earlier ``false`` short-circuits."""
    device = {"name": "x", "attributes": {"type": {"string": "amdgpu"}}}
    with pytest.raises(celpy.CELEvalError):
        _selects('device.attributes["gpu.nvidia.com"].type == "gpu"', "gpu.amd.com", device)
    assert not _selects(
        'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"',
        "gpu.amd.com",
        device,
    )




def _published_amd_slice() -> dict[str, Any]:
    """The ResourceSlice the AMD DRA driver published on an MI300X node, as its own documentation
    shows it (../shared/reference/amd-dra/PROVENANCE.txt; trimmed there, so only its device is used)."""
    block = re.search(r"```yaml\n(apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n.*?)```", reference("amd-dra/docs-demo.md").read_text(), re.S)
    assert block is not None
    rs: dict[str, Any] = yaml.safe_load(block.group(1))
    return rs


def test_the_example_stacks_amd_class_selects_the_device_the_amd_driver_published(tmp_path: Path) -> None:
    """The example stack's MI300X DeviceClass, evaluated against the real published device, selects
    it; the DeviceClass the old market name gave (``AMD Instinct MI300X``) does not."""
    rs = _published_amd_slice()
    (device,) = rs["spec"]["devices"]
    spec = validated(stack_document(), tmp_path).model
    rendered = {o.name: o.manifest for o in dra.build(spec).objects if o.kind == "DeviceClass"}
    (selector,) = rendered["amd-instinct-mi300x-oam"]["spec"]["selectors"]
    assert _selects(selector["cel"]["expression"], "gpu.amd.com", device)
    market = dra_derive.DeviceClassSpec("amd-instinct-mi300x", "amd", dra_derive.driver_product_name("amd", "AMD Instinct MI300X"))
    assert not _selects(market.cel_expression(), "gpu.amd.com", device)
    for name, manifest in rendered.items():
        if name != "amd-instinct-mi300x-oam":
            (other,) = manifest["spec"]["selectors"]
            assert not _selects(other["cel"]["expression"], "gpu.amd.com", device), name
