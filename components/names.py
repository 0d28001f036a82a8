"""Name rules shared by every builder: Kubernetes names, label keys, GPU model normalisation.

The GPU model normalisation (E2Data rule) is written once here and used both for the Kubernetes
node affinity of TaskManagers and for the per-model YARN resource types.
"""

from __future__ import annotations

import re

DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Kubernetes extended resource names: optional DNS-subdomain prefix + "/" + name part.
RESOURCE_NAME_RE = re.compile(
    r"^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
# Hadoop ResourceUtils rule: optional namespace of dot-separated alnum/dash groups + "/", then a
# letter followed by [A-Za-z0-9_.-]*.
YARN_RESOURCE_NAME_RE = re.compile(r"^(?:(?:[A-Za-z0-9-]+\.)*[A-Za-z0-9-]+/)?[A-Za-z][A-Za-z0-9_.-]*$")

MANAGED_BY = {"app.kubernetes.io/managed-by": "accelplane"}
CLUSTER_LABEL = "accelplane.io/cluster"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"


def is_dns1123_label(name: str) -> bool:
    """True when ``name`` is a valid DNS-1123 label (≤ 63 chars): namespaces, containers, queues."""
    return len(name) <= 63 and bool(DNS1123_LABEL_RE.match(name))


def is_dns1123_subdomain(name: str) -> bool:
    """True when ``name`` is a valid DNS-1123 subdomain (≤ 253 chars): most object names."""
    return len(name) <= 253 and bool(DNS1123_SUBDOMAIN_RE.match(name))


def normalize_gpu_model(model: str) -> str:
    """Return the E2Data per-model token: spaces and ``-`` removed, lowercased.

    ``"Tesla V100-SXM2-32GB"`` → ``"teslav100sxm232gb"``; used for ``yarn.io/gpu-<model>`` types.
    """
    return re.sub(r"[\s-]+", "", model).lower()


def gfd_product_label(model: str) -> str:
    """Return the value GPU Feature Discovery puts in ``nvidia.com/gpu.product`` for a model name.

    GFD replaces spaces with ``-`` (``"Tesla T4"`` → ``"Tesla-T4"``); label values must also match
    the Kubernetes label-value charset, so anything else outside ``[A-Za-z0-9_.-]`` becomes ``-``.
    """
    value = re.sub(r"[^A-Za-z0-9_.-]", "-", model.strip())
    return value[:63].strip("-_.")


def yarn_gpu_type_for_model(model: str) -> str:
    """Return the per-model YARN resource type (``yarn.io/gpu-teslav100sxm232gb``)."""
    return f"yarn.io/gpu-{normalize_gpu_model(model)}"


def is_valid_yarn_resource_name(name: str) -> bool:
    """True when Hadoop's ResourceUtils would accept ``name`` as a resource type name."""
    return bool(YARN_RESOURCE_NAME_RE.match(name))
