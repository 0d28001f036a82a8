"""The container image a Flink cluster runs, and which images are the stock Apache Flink images.

One place for both, read by the Flink config, YARN Docker and the checks. The Docker Hub images
``flink`` (Docker Official Image, also ``library/flink``) and ``apache/flink`` (published by the
Flink project from the same Dockerfiles, apache/flink-docker) carry Flink and a JRE on Ubuntu but no
python3, so accelplane's GPU discovery script (a Python program, run by the GPU preflight and by
Flink's ``GPUDriver``) cannot run there: every GPU TaskManager is refused by the preflight (AP8010 on
Kubernetes, AP5561 in Docker on YARN).
"""

from __future__ import annotations

from accelplane.model import FlinkCluster, Spec

DOCKER_HUB = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})
"""Registry hosts that mean Docker Hub (a reference without a registry part is Docker Hub too)."""
STOCK_REPOSITORIES = frozenset({"flink", "library/flink", "apache/flink"})
"""Docker Hub repositories of the stock Flink images."""


def flink_image(cluster: FlinkCluster) -> str:
    """The Flink image of the cluster's pods and containers (``flink:<version>-java17`` when unset)."""
    return cluster.image or f"flink:{cluster.version}-java17"


def repository(image: str) -> tuple[str | None, str]:
    """(registry host or None, repository path) of an image reference, without tag or digest.

    A first path component is a registry when it has a ``.`` or ``:`` or is ``localhost`` (the
    rule of Docker's reference grammar, distribution/reference ``splitDockerDomain``)."""
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name = name[:colon]
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return None, name


def is_stock_flink_image(image: str) -> bool:
    """True for a reference to the stock Flink images on Docker Hub (any tag or digest), which
    have no python3."""
    registry, path = repository(image)
    return (registry is None or registry in DOCKER_HUB) and path in STOCK_REPOSITORIES


def inherits_node_image(spec: Spec, cluster: FlinkCluster) -> bool:
    """True when the cluster's image is ``nodeImage.image`` (it sets none of its own): a finding about
    that image then belongs at ``nodeImage.image``, the one setting that changes it for every such
    cluster (one root cause, one finding)."""
    return cluster.image is not None and spec.node_image is not None and spec.node_image.image == cluster.image
