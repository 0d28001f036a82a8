"""The GPU name table: the product names the drivers really report, and what each consumer makes of them.

``schemas/gpu-names.yaml`` lists, per GPU, the name the vendor's driver reports (NVML's name for
NVIDIA, sysfs ``product_name`` for AMD) with the forms GPU Feature Discovery, the DRA drivers and
AMD's node labeller derive from it, the market names people write instead, and where each name was
seen (docs/gpu-names.md). `lookup` answers "is this a real driver name, a shorthand, or unknown?"
for the model-name check (`accelplane.checks.gpu_models`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum
from functools import cache

from accelplane.names import gfd_product_label, normalize_gpu_model
from accelplane.package_data import data_dir
from accelplane.yaml_io import load_yaml_text

TABLE_FILE = "gpu-names.yaml"
VENDOR_PREFIXES = ("nvidia ", "tesla ", "amd ")
"""Prefixes a driver name may carry that people leave out (``L4`` for ``NVIDIA L4``)."""


def amd_attribute_form(name: str) -> str:
    """The AMD DRA driver's ``productName`` and the node labeller's ``amd.com/gpu.product-name`` of a
    sysfs ``product_name``: trimmed, spaces to ``_``, parentheses dropped (ROCm/k8s-gpu-dra-driver
    ``pkg/amdgpu/amdgpu.go``, ROCm/k8s-device-plugin ``cmd/k8s-node-labeller/main.go``)."""
    return name.strip().replace(" ", "_").replace("(", "").replace(")", "")


@dataclass(frozen=True)
class GpuName:
    """One row of the table: a GPU as its driver names it and as each consumer sees it."""

    vendor: str
    name: str
    aliases: tuple[str, ...]
    source: str
    gfd_product: str | None = None
    dra_product_name: str | None = None
    node_label: str | None = None
    market_name: str | None = None
    product: str = ""
    """The product the board is a variant of (``H100`` for H100 PCIe, SXM and NVL): an unknown
    name's "nearest known" suggestions are the rows of its product only."""
    captured: bool = True
    """False where no public capture of the name as the driver reports it was found: the row
    stays in the table (for its product and MIG facts) but the name is a warning (AP3501)."""
    mig: tuple[str, ...] = ()
    """Keys of the GPU's MIG tables in ``schemas/mig-profiles.yaml`` (one per way its driver or
    firmware names the profiles; usually one); empty: the GPU has no MIG."""

    def consumer_forms(self) -> tuple[str, ...]:
        """Every form a consumer derives from the name (label values, DRA attributes)."""
        forms = (self.gfd_product, self.dra_product_name, self.node_label)
        return tuple(f for f in forms if f and f != self.name)

    def shorthands(self) -> tuple[str, ...]:
        """Names that stand for this GPU without being what the driver reports: the listed aliases,
        the AMD market name and the name without its vendor prefix."""
        out = [*self.aliases, *([self.market_name] if self.market_name else [])]
        lowered = self.name.lower()
        for prefix in VENDOR_PREFIXES:
            if lowered.startswith(prefix):
                out.append(self.name[len(prefix) :])
        return tuple(out)


class Match(Enum):
    """How a spec's model relates to the table."""

    EXACT = "exact"
    """The driver's own name: every consumer form follows from it."""
    SHORTHAND = "shorthand"
    """A market name, shorthand or a consumer's form of a known GPU: no driver reports it."""
    UNKNOWN = "unknown"
    """Not in the table (a GPU newer than the table, or a typo)."""
    UNCONFIRMED = "unconfirmed"
    """The table's name for a GPU, but no public capture shows a driver reporting it."""


@dataclass(frozen=True)
class Lookup:
    """A model name looked up: how it matched and the table rows it stands for (the did-you-mean
    list for a shorthand, the nearest names for an unknown one)."""

    match: Match
    rows: tuple[GpuName, ...]


def _keys(value: object) -> tuple[str, ...]:
    """A YAML scalar or list as a tuple of strings (absent: empty)."""
    if value is None:
        return ()
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)


def _row(raw: dict[str, object]) -> GpuName:
    def text(key: str) -> str | None:
        value = raw.get(key)
        return str(value) if value is not None else None

    aliases = raw.get("aliases") or []
    assert isinstance(aliases, list)
    return GpuName(
        vendor=str(raw["vendor"]),
        name=str(raw["name"]),
        aliases=tuple(str(a) for a in aliases),
        source=" ".join(str(raw["source"]).split()),
        gfd_product=text("gfdProduct"),
        dra_product_name=text("draProductName"),
        node_label=text("nodeLabel"),
        market_name=text("marketName"),
        product=str(raw["product"]),
        captured=raw.get("captured", True) is not False,
        mig=_keys(raw.get("mig")),
    )


@cache
def table() -> tuple[GpuName, ...]:
    """Every row of ``schemas/gpu-names.yaml``, in file order."""
    path = data_dir("schemas") / TABLE_FILE
    doc = load_yaml_text(path.read_text(encoding="utf-8"), str(path))
    return tuple(_row(r) for r in doc["gpus"])


def expected_forms(row: GpuName) -> dict[str, str | None]:
    """The consumer forms the upstream rules give for a row's name (what the table must say)."""
    if row.vendor == "nvidia":
        return {"gfdProduct": gfd_product_label(row.name), "draProductName": row.name, "nodeLabel": None}
    return {"gfdProduct": None, "draProductName": amd_attribute_form(row.name), "nodeLabel": amd_attribute_form(row.name)}


def _key(text: str) -> str:
    return normalize_gpu_model(text)


def _tokens(text: str) -> tuple[str, ...]:
    """The words of a name, lower-cased, split at spaces, ``-`` and ``_``."""
    return tuple(t for t in text.lower().replace("-", " ").replace("_", " ").split() if t)


def _has_product(name: str, product: str) -> bool:
    """Whether ``product``'s words appear in ``name`` as whole consecutive words (``H100`` in
    ``NVIDIA H100 94GB``, never in ``NVIDIA GH100`` or ``NVIDIA H1000``)."""
    words, want = _tokens(name), _tokens(product)
    return any(words[i : i + len(want)] == want for i in range(len(words) - len(want) + 1))


def same_product(vendor: str, model: str) -> tuple[GpuName, ...]:
    """The rows of the product ``model`` names (the longest product name found in it wins:
    ``RTX 6000 Ada`` over ``RTX 6000``), most similar first; empty when it names none."""
    rows = [r for r in table() if r.vendor == vendor]
    products = sorted({r.product for r in rows if _has_product(model, r.product)}, key=lambda p: -len(_tokens(p)))
    if not products:
        return ()
    mine = [r for r in rows if r.product == products[0]]
    key = _key(model)
    return tuple(sorted(mine, key=lambda r: -difflib.SequenceMatcher(None, key, _key(r.name)).ratio()))


def lookup(vendor: str, model: str) -> Lookup:
    """Look a ``gpu.model`` up among the vendor's rows.

    EXACT: the driver's name, character for character, with a public capture. UNCONFIRMED: the
    table's name for a GPU nobody has published a capture of (``rows``: that row). SHORTHAND:
    equal (ignoring case, spaces, ``-`` and ``_``) to a row's name written differently, a consumer
    form, an alias or the name without its vendor prefix; ``rows`` are every captured row it may
    stand for (``H100`` → three boards); a shorthand of uncaptured rows only is UNKNOWN with those
    rows (their name is not known to be the driver's, so the shorthand may be it). UNKNOWN: ``rows`` are the variants of the same product (an H100
    name gets the H100 PCIe, SXM and NVL rows; never another product or generation), possibly none.
    """
    rows = [r for r in table() if r.vendor == vendor]
    exact = tuple(r for r in rows if r.name == model)
    if exact:
        return Lookup(Match.EXACT if all(r.captured for r in exact) else Match.UNCONFIRMED, exact)
    key = _key(model)
    hits = tuple(
        r
        for r in rows
        if key in {_key(x) for x in (r.name, *r.consumer_forms(), *r.shorthands())}
    )
    if any(r.captured for r in hits):
        return Lookup(Match.SHORTHAND, tuple(r for r in hits if r.captured))
    if hits:  # a shorthand of names nobody has captured: the real name may be this one
        return Lookup(Match.UNKNOWN, hits[:3])
    return Lookup(Match.UNKNOWN, same_product(vendor, model)[:3])
