"""What a team gets when ``gpu.model`` is a market name, a shorthand or a name nobody knows: one
finding per pool, saying what its consumer (GFD label, DRA productName, discovery ``--model`` and
YARN label) really sees and which real names were meant; one finding for a Flink cluster whose
``taskManager.gpu.model`` is a shorthand of its pool's model; and the schema's refusal of odd
spacing in a model name, with the single-spaced name meant."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest
from accelplane.pipeline import load_validated

from tests.conftest import STACKS_DIR
from tests.support.specs import error_lines, node_pool, stack_document, write_spec


def _errors(doc: dict[str, Any], tmp_path: Path) -> list[str]:
    return error_lines(write_spec(tmp_path, doc))


class Shorthand(NamedTuple):
    """One case: a pool of an example stack given a shorthand model, and the message it must get."""

    stack: str
    pool: str
    written: str
    want: str
    clusters_follow: bool = False
    """Also write the shorthand into the Flink clusters that named the pool's model, so the pool
    stays theirs and its finding is the only one (else they would name a model no pool has)."""


SHORTHANDS = {
    "gfd-label": Shorthand(
        "prod-eu", "a100", "L4",
        "nodePools[0].gpu.model: 'L4' is a market name or shorthand, not the name the nvidia driver reports: "
        "GPU Feature Discovery labels these nodes nvidia.com/gpu.product 'NVIDIA-L4', never 'L4', so no "
        "TaskManager would get these GPUs; did you mean 'NVIDIA L4'?",
        clusters_follow=True,
    ),
    "dra-nvidia": Shorthand(
        "dra-gpus", "h100-mig-dra", "H100 SXM5 80GB",
        "'H100 SXM5 80GB' is a market name or shorthand, not the name the nvidia driver reports: the NVIDIA "
        "DRA driver publishes productName 'NVIDIA H100 80GB HBM3', never 'H100 SXM5 80GB', so no TaskManager "
        "would get these GPUs; did you mean 'NVIDIA H100 80GB HBM3'?",
    ),
    "dra-amd": Shorthand(
        "dra-gpus", "mi300x-dra", "AMD Instinct MI300X",
        "'AMD Instinct MI300X' is a market name or shorthand, not the name the amd driver reports: the AMD DRA "
        "driver publishes productName 'AMD_Instinct_MI300X_OAM', never 'AMD_Instinct_MI300X', so no "
        "TaskManager would get these GPUs; did you mean 'AMD Instinct MI300X OAM'?",
    ),
    "standalone-model-filter": Shorthand(
        "edge-standalone", "edge-l4", "L4",
        "nodePools[0].gpu.model: 'L4' is a market name or shorthand, not the name the nvidia driver reports: "
        "the discovery script's --model filter and YARN node labels compare with the driver's name "
        "('NVIDIA L4'), which 'L4' does not match, so no TaskManager would get these GPUs; did you mean "
        "'NVIDIA L4'?",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", SHORTHANDS)
def test_a_shorthand_is_an_error_naming_the_real_names(case: str, tmp_path: Path) -> None:
    stack, pool, written, want, clusters_follow = SHORTHANDS[case]
    doc = stack_document(stack)
    gpu = node_pool(doc, pool)["gpu"]
    real, gpu["model"] = gpu["model"], written
    if clusters_follow:
        for c in doc["flink"]["clusters"]:
            tm_gpu = c.get("taskManager", {}).get("gpu")
            if tm_gpu and tm_gpu.get("model") == real:
                tm_gpu["model"] = written
    found = [e for e in _errors(doc, tmp_path) if "market name" in e]
    assert len(found) == 1, _errors(doc, tmp_path)
    assert want in found[0]


def _cluster(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in doc["flink"]["clusters"] if c["name"] == name)


@pytest.mark.parametrize(
    ("stack", "cluster", "written", "meant"),
    [("prod-eu", "ad-hoc", "A100 80GB", "'NVIDIA A100-SXM4-80GB' (pool a100)"),
     ("dra-gpus", "fraud-scoring", "A100", "'NVIDIA A100-SXM4-80GB' (pool a100-dra)"),
     ("yarn-analytics", "sessions-v100", "V100", "'Tesla V100-SXM2-32GB' (pool v100)"),
     ("edge-standalone", "edge-inference", "L4", "'NVIDIA L4' (pool edge-l4)")],
    ids=["kubernetes", "dra", "yarn", "standalone"],
)  # fmt: skip
def test_a_clusters_shorthand_model_is_one_did_you_mean(
    stack: str, cluster: str, written: str, meant: str, tmp_path: Path
) -> None:
    """``taskManager.gpu.model: L4`` against a pool of ``NVIDIA L4``: one error with the pool's name
    (not also "no pool has 'L4' GPUs", nor a cascade of what follows from it), and writing that
    name gives back the valid stack."""
    doc = stack_document(stack)
    gpu = _cluster(doc, cluster)["taskManager"]["gpu"]
    real = gpu.get("model")
    gpu.pop("pool", None)
    gpu["model"] = written
    (error,) = _errors(doc, tmp_path)
    index = doc["flink"]["clusters"].index(_cluster(doc, cluster))
    assert f"spec.yaml: flink.clusters[{index}].taskManager.gpu.model: '{written}' is a market name" in error
    assert error.endswith(f"did you mean {meant}?"), error
    gpu["model"] = meant.split("'")[1]
    if real is None:  # the stack named the pool: naming the model instead is valid too
        assert _errors(doc, tmp_path) == []
    else:
        assert gpu["model"] == real and _errors(doc, tmp_path) == []


def _pool_model(doc: dict[str, Any], name: str) -> str:
    node_pool(doc, "a100")["gpu"]["model"] = name
    return "nodePools[0].gpu.model"


def _cluster_model(doc: dict[str, Any], name: str) -> str:
    _cluster(doc, "ad-hoc")["taskManager"]["gpu"]["model"] = name
    return f"flink.clusters[{doc['flink']['clusters'].index(_cluster(doc, 'ad-hoc'))}].taskManager.gpu.model"


def _slot_group_model(doc: dict[str, Any], name: str) -> str:
    _cluster(doc, "edge-vision")["slotGroups"][1]["gpuModel"] = name
    return "flink.clusters[0].slotGroups[1].gpuModel"


def _queue_models_key(doc: dict[str, Any], name: str) -> str:
    queue = next(q for q in doc["queues"] if q["name"] == "analytics")
    queue["gpuModels"] = {
        name if " ".join(m.split()) == " ".join(name.split()) else m: v for m, v in queue["gpuModels"].items()
    }
    return f"queues[{doc['queues'].index(queue)}].gpuModels.{name}"


@pytest.mark.parametrize("spacing", [("  ", ""), ("\t", ""), (" ", " ")], ids=["double", "tab", "trailing"])
@pytest.mark.parametrize(
    ("stack", "edit", "real"),
    [("prod-eu", _pool_model, "NVIDIA A100-SXM4-80GB"), ("prod-eu", _cluster_model, "NVIDIA A100-SXM4-80GB"),
     ("edge-multimodel", _slot_group_model, "NVIDIA A100-SXM4-80GB"),
     ("yarn-analytics", _queue_models_key, "Tesla V100-SXM2-32GB")],
    ids=["pool", "cluster", "slot-group", "queue-gpuModels-key"],
)  # fmt: skip
def test_odd_spacing_in_a_model_name_is_refused_with_the_name_meant(
    stack: str, edit: Any, real: str, spacing: tuple[str, str], tmp_path: Path
) -> None:
    """No driver reports a name with repeated, leading or trailing spaces or a tab: the schema refuses
    it wherever a GPU model is written, with the single-spaced name as the did-you-mean (one error)."""
    inner, tail = spacing
    doc = stack_document(stack)
    path = edit(doc, real.replace(" ", inner, 1) + tail)
    (error,) = _errors(doc, tmp_path)
    assert f": {path}: " in error and "words separated by single spaces" in error, error
    assert error.endswith(f"(did you mean {real!r}?)"), error
    edit(doc, real)
    assert _errors(doc, tmp_path) == []


def test_another_spelling_the_consumer_sees_identically_is_accepted(tmp_path: Path) -> None:
    """Discovery and YARN labels ignore case, spaces, '-' and '_': 'NVIDIA-L4' on hosts works."""
    doc = stack_document("edge-standalone")
    node_pool(doc, "edge-l4")["gpu"]["model"] = "NVIDIA-L4"
    assert not [e for e in _errors(doc, tmp_path) if "gpu.model" in e]


def test_an_unknown_name_is_a_warning_naming_only_variants_of_its_product(tmp_path: Path) -> None:
    """Issue 42: an unknown H100 name gets the H100 boards as nearest known, never another GPU."""
    doc = stack_document("edge-standalone")
    node_pool(doc, "edge-l4")["gpu"]["model"] = "NVIDIA H100 SXM5 94GB"
    spec = load_validated(write_spec(tmp_path, doc))
    (warning,) = [str(w) for w in spec.warnings if "gpu.model" in str(w)]
    assert (
        "nodePools[0].gpu.model: 'NVIDIA H100 SXM5 94GB' is not in accelplane's GPU name table (docs/gpu-names.md); "
        "the discovery script's --model filter and YARN node labels compare with the driver's name exactly "
        "as the driver reports it, so check it against a node (nvidia-smi -L, or sysfs product_name for "
        "AMD); nearest known: "
    ) in warning
    nearest = warning.split("nearest known: ")[1]
    assert set(nearest.split(", ")) == {"'NVIDIA H100 80GB HBM3'", "'NVIDIA H100 PCIe'", "'NVIDIA H100 NVL'"}


def test_an_unknown_name_of_an_unknown_product_names_nothing(tmp_path: Path) -> None:
    doc = stack_document("edge-standalone")
    node_pool(doc, "edge-l4")["gpu"]["model"] = "NVIDIA X9000"
    spec = load_validated(write_spec(tmp_path, doc))
    (warning,) = [str(w) for w in spec.warnings if "gpu.model" in str(w)]
    assert "nearest known" not in warning and warning.endswith("product_name for AMD)")


@pytest.mark.parametrize("model", ["NVIDIA A100 80GB PCIe", "NVIDIA L40", "NVIDIA H200 NVL"])
def test_a_table_name_without_a_public_capture_stays_a_warning(tmp_path: Path, model: str) -> None:
    """Issue 42: a name no public capture shows is kept in the table but stays a warning."""
    doc = stack_document("edge-standalone")
    node_pool(doc, "edge-l4")["gpu"]["model"] = model
    spec = load_validated(write_spec(tmp_path, doc))
    (warning,) = [str(w) for w in spec.warnings if "gpu.model" in str(w)]
    assert f"'{model}' is the name accelplane's GPU name table expects for this GPU, but no public capture" in warning
    assert "[AP3501]" in warning or "AP3501" in repr(spec.warnings)


@pytest.mark.parametrize(
    "model", ["Tesla V100-PCIE-32GB", "NVIDIA A10", "NVIDIA A10G", "NVIDIA A30", "NVIDIA A100-PCIE-40GB",
              "NVIDIA RTX A6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"],
)
def test_common_captured_names_are_known(tmp_path: Path, model: str) -> None:
    """Issue 42: correct names of common boards (every AWS g5 node's A10G) got AP3501 before."""
    doc = stack_document("edge-standalone")
    node_pool(doc, "edge-l4")["gpu"]["model"] = model
    spec = load_validated(write_spec(tmp_path, doc))
    assert not [str(w) for w in spec.warnings if "gpu.model" in str(w)]


def test_every_example_stack_uses_names_the_drivers_report(tmp_path: Path) -> None:
    for path in sorted(STACKS_DIR.glob("*.yaml")):
        if path.name.startswith("Pulumi."):
            continue
        spec = load_validated(path)
        assert not [str(w) for w in spec.warnings if "gpu.model" in str(w)], path.name
