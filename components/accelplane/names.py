"""Name rules shared by every builder: Kubernetes names, label keys, GPU model normalisation.

The GPU model normalisation (E2Data rule) is written once here and used both for the Kubernetes
node affinity of TaskManagers and for the YARN node label of a GPU model
(`accelplane.derive.yarn_labels`).
"""

from __future__ import annotations

import re

DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# Kubernetes extended resource names: optional DNS-subdomain prefix + "/" + name part.
RESOURCE_NAME_RE = re.compile(
    r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
)
# Hadoop ResourceUtils rule: optional namespace of dot-separated alnum/dash groups + "/", then a
# letter followed by [A-Za-z0-9_.-]*.
YARN_RESOURCE_NAME_RE = re.compile(
    r"(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/)?[A-Za-z][A-Za-z0-9_.-]*"
)

MANAGED_BY = {"app.kubernetes.io/managed-by": "accelplane"}
CLUSTER_LABEL = "accelplane.io/cluster"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"


def is_dns1123_label(name: str) -> bool:
    """True when ``name`` is a valid DNS-1123 label (≤ 63 chars): namespaces, containers, queues."""
    return len(name) <= 63 and bool(DNS1123_LABEL_RE.fullmatch(name))


def is_dns1123_subdomain(name: str) -> bool:
    """True when ``name`` is a valid DNS-1123 subdomain (≤ 253 chars): most object names."""
    return len(name) <= 253 and bool(DNS1123_SUBDOMAIN_RE.fullmatch(name))


def normalize_gpu_model(model: str) -> str:
    """Return the model token: lowercased, whitespace, ``-`` and ``_`` removed.

    ``"Tesla V100-SXM2-32GB"`` → ``"teslav100sxm232gb"`` (the E2Data rule; accelplane uses it for the
    ``gpu-<model>`` YARN node labels). The discovery script matches ``--model`` with the same rule (``normalize_model``; it
    ships standalone, so it keeps its own copy and ``tests/foundation/test_units.py`` keeps the two
    identical).
    """
    return "".join(ch for ch in model.lower() if not ch.isspace() and ch not in "-_")


_GFD_DROP_RE = re.compile(r"[^A-Za-z0-9_. -]")
LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _gfd_sanitise(part: str) -> str:
    """GFD's ``sanitise``: drop every character outside ``[A-Za-z0-9-_. ]``, then join the
    whitespace-separated fields with ``-`` (``"NVIDIA  A100 (80GB)"`` → ``"NVIDIA-A100-80GB"``)."""
    return "-".join(_GFD_DROP_RE.sub("", part).split())


def gfd_product_label(model: str, *, mig_profile: str | None = None, shared: bool = False) -> str:
    """Return the value GPU Feature Discovery writes to ``nvidia.com/gpu.product`` for a model.

    Mirrors k8s-device-plugin ``internal/lm/resource.go`` (``getProductName``): every part (the
    model, then ``MIG`` and the MIG profile for a MIG ``single`` node) is sanitised, the parts are
    joined with ``-`` and ``-SHARED`` is appended when the resource is shared (time-slicing or MPS
    with ``replicas > 1``) without being renamed. ``"Tesla T4"`` → ``"Tesla-T4"``,
    ``("NVIDIA A100-SXM4-40GB", mig_profile="1g.5gb")`` → ``"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"``.
    GFD does not truncate: a result that is not a valid label value (see `is_label_value`) never
    reaches the node, so callers must check it.
    """
    parts = [model] if mig_profile is None else [model, "MIG", mig_profile]
    stripped = [s for s in (_gfd_sanitise(p) for p in parts if p) if s]
    if not stripped:
        return ""
    if shared:
        stripped.append("SHARED")
    return "-".join(stripped)


def is_label_value(value: str) -> bool:
    """True when ``value`` is a valid Kubernetes label value (≤ 63 chars, alnum at both ends)."""
    return len(value) <= 63 and bool(LABEL_VALUE_RE.fullmatch(value))


def is_valid_yarn_resource_name(name: str) -> bool:
    """True when Hadoop's ResourceUtils would accept ``name`` as a resource type name."""
    return bool(YARN_RESOURCE_NAME_RE.fullmatch(name))
