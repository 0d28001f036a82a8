"""Least-privilege building blocks shared by the builders of Kubernetes workloads.

What the scanner people use (checkov) would flag and we can safely set, we set: CPU/memory requests
and limits, the ``RuntimeDefault`` seccomp profile, no privilege escalation, a read-only root file
system, no service-account token. Every privilege a workload keeps is explained where it is granted,
as a ``checkov.io/skip<N>: CKV_K8S_<n>=<reason>`` annotation on the object that grants it (checkov
reads these annotations and reports the check as skipped with that reason), so a scan of a rendered
tree shows zero unexplained findings (tests/foundation/test_least_privilege.py).
"""

from __future__ import annotations

from typing import Any

RUNTIME_DEFAULT_SECCOMP: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}
"""Pod securityContext: the container runtime's default seccomp filter (privileged containers are
unconfined regardless)."""


def resources(cpu_request: str, memory_request: str, cpu_limit: str, memory_limit: str) -> dict[str, Any]:
    """A container's ``resources`` block."""
    return {
        "requests": {"cpu": cpu_request, "memory": memory_request},
        "limits": {"cpu": cpu_limit, "memory": memory_limit},
    }


SMALL_DAEMON = resources("50m", "64Mi", "500m", "256Mi")
"""Device plugins, GPU Feature Discovery, node labeller: Go daemons that idle on a socket; upstream
sets no resources, so these bound a leak without ever throttling normal work."""

# Reasons shared by several workloads (checkov check id -> why it does not apply).
NO_PROBES = "upstream ships no health endpoint for this node daemon; the kubelet restarts it when it exits"
PULL_POLICY = "the image is pinned (tag, or digest with imageDigest); IfNotPresent keeps node boot independent of the registry"
NO_NETWORK = "node daemon without a network listener (it talks to the kubelet over a unix socket); no NetworkPolicy needed"
UNVERIFIED_READ_ONLY_ROOT = (
    "upstream sets no read-only root file system and this image's writes outside its mounts are not verified"
)
ROOT_FOR_KUBELET_SOCKET = (
    "registers with the kubelet through root-owned /var/lib/kubelet/device-plugins, so it runs as root"
)


def digest_reason(field: str) -> str:
    """Why an image without digest is acceptable, and how to pin one."""
    return f"pinned by tag; set {field} to pin the image by digest"


def checkov_skips(reasons: dict[str, str]) -> dict[str, str]:
    """``checkov.io/skip<N>`` annotations, one per check id, in check-id order (deterministic)."""

    def order(check: str) -> tuple[str, int]:
        prefix, _, number = check.rpartition("_")
        return prefix, int(number)

    return {
        f"checkov.io/skip{i}": f"{check}={reason}"
        for i, (check, reason) in enumerate(sorted(reasons.items(), key=lambda kv: order(kv[0])), start=1)
    }
