"""Names shared by everything that ships the GPU discovery script.

The script itself is `components/accelplane/discovery/gpu_discovery.py` (stdlib only). On Kubernetes it travels in a
ConfigMap whose name carries a hash of the script text and which is ``immutable``: a new script
version is a new ConfigMap, so running pods keep the version they started with and pod templates
roll forward explicitly (see README, "ConfigMap update strategy").
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

SCRIPT_NAME = "accelplane-gpu-discovery"
CONFIGMAP_KEY = SCRIPT_NAME
CONFIGMAP_PREFIX = SCRIPT_NAME
SCRIPT_SOURCE = Path(__file__).resolve().parent / "discovery" / "gpu_discovery.py"
FLINK_UID = 9999
"""uid (and gid) of ``flink`` in the official images (flink-docker: ``useradd --system --uid=9999``);
the node image keeps it, and Kubernetes coordination directories are handed to it."""
COORDINATION_DIR_MODE = "2770"
"""Coordination directories: rwx for the Flink user and its group, nothing for others, setgid."""


@cache
def script_text() -> str:
    """Text of the discovery script exactly as it is installed on nodes and in ConfigMaps."""
    return SCRIPT_SOURCE.read_text(encoding="utf-8")


def content_hash(text: str, length: int = 10) -> str:
    """Short sha256 of a text, for content-addressed object names."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def configmap_name() -> str:
    """Name of the ConfigMap carrying the script (one per namespace that runs GPU Flink pods)."""
    return f"{CONFIGMAP_PREFIX}-{content_hash(script_text())}"
