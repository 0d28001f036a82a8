"""Which Pod Security Standards level a pod spec satisfies (Kubernetes v1.33 definitions).

The Pod Security admission controller enforces a namespace's ``pod-security.kubernetes.io/enforce``
level on every pod created there. This module evaluates a plain pod spec against each control of the
standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/, policy version
v1.33), so the namespaces we create get the strictest level their pods actually pass and the reason
when that is not ``restricted``. Controls for Windows-only fields are covered as far as they can be
set on a Linux pod (``hostProcess``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

Level = Literal["restricted", "baseline", "privileged"]
LEVELS: tuple[Level, ...] = ("restricted", "baseline", "privileged")
POLICY_VERSION = "v1.33"

BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    }
)  # fmt: skip
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)  # fmt: skip
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
RESTRICTED_VOLUME_SOURCES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def _containers(pod: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from pod.get(field) or []


def _ctx(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    ctx = obj.get("securityContext")
    return ctx if isinstance(ctx, Mapping) else {}


def _name(c: Mapping[str, Any]) -> str:
    return f"container {c.get('name', '?')!r}"


def baseline_violations(pod: Mapping[str, Any], annotations: Mapping[str, str] | None = None) -> list[str]:
    """Why a pod spec fails the baseline level (empty when it passes)."""
    out: list[str] = []
    pod_ctx = _ctx(pod)
    contexts: list[tuple[str, Mapping[str, Any]]] = [("the pod", pod_ctx)]
    contexts += [(_name(c), _ctx(c)) for c in _containers(pod)]
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(field):
            out.append(f"{field}: true")
    for where, ctx in contexts:
        if (ctx.get("windowsOptions") or {}).get("hostProcess"):
            out.append(f"{where}: windowsOptions.hostProcess")
        se = ctx.get("seLinuxOptions") or {}
        if se.get("type", "") not in SELINUX_TYPES or se.get("user") or se.get("role"):
            out.append(f"{where}: seLinuxOptions {dict(se)}")
        if (ctx.get("seccompProfile") or {}).get("type") == "Unconfined":
            out.append(f"{where}: seccompProfile Unconfined")
        if (ctx.get("appArmorProfile") or {}).get("type") == "Unconfined":
            out.append(f"{where}: appArmorProfile Unconfined")
    for sysctl in pod_ctx.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"sysctl {sysctl.get('name')}")
    for c in _containers(pod):
        ctx = _ctx(c)
        if ctx.get("privileged"):
            out.append(f"{_name(c)}: privileged")
        added = set((ctx.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES
        if added:
            out.append(f"{_name(c)}: adds capabilities {', '.join(sorted(added))}")
        if ctx.get("procMount", "Default") != "Default":
            out.append(f"{_name(c)}: procMount {ctx.get('procMount')}")
        for port in c.get("ports") or []:
            if port.get("hostPort"):
                out.append(f"{_name(c)}: hostPort {port['hostPort']}")
    for volume in pod.get("volumes") or []:
        if "hostPath" in volume:
            out.append(f"hostPath volume {volume.get('name')!r} ({volume['hostPath'].get('path')})")
    for key, value in (annotations or {}).items():
        if (
            key.startswith(APPARMOR_ANNOTATION_PREFIX)
            and value != "runtime/default"
            and not value.startswith("localhost/")
        ):
            out.append(f"AppArmor annotation {key}={value}")
    return out


def restricted_violations(pod: Mapping[str, Any], annotations: Mapping[str, str] | None = None) -> list[str]:
    """Why a pod spec fails the restricted level (baseline's reasons included)."""
    out = baseline_violations(pod, annotations)
    pod_ctx = _ctx(pod)
    for volume in pod.get("volumes") or []:
        sources = set(volume) - {"name"}
        if not sources <= RESTRICTED_VOLUME_SOURCES:
            out.append(f"volume {volume.get('name')!r} of type {', '.join(sorted(sources))}")
    pod_non_root = pod_ctx.get("runAsNonRoot") is True
    pod_seccomp = (pod_ctx.get("seccompProfile") or {}).get("type") in ("RuntimeDefault", "Localhost")
    if pod_ctx.get("runAsUser") == 0:
        out.append("the pod: runAsUser 0")
    for c in _containers(pod):
        ctx = _ctx(c)
        if ctx.get("allowPrivilegeEscalation") is not False:
            out.append(f"{_name(c)}: allowPrivilegeEscalation is not false")
        non_root = ctx.get("runAsNonRoot")
        if non_root is False or (non_root is None and not pod_non_root):
            out.append(f"{_name(c)}: runAsNonRoot is not true")
        if ctx.get("runAsUser") == 0:
            out.append(f"{_name(c)}: runAsUser 0")
        seccomp = (ctx.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost") and not (seccomp is None and pod_seccomp):
            out.append(f"{_name(c)}: seccompProfile is not RuntimeDefault or Localhost")
        caps = ctx.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{_name(c)}: does not drop ALL capabilities")
        extra = set(caps.get("add") or []) - {"NET_BIND_SERVICE"}
        if extra:
            out.append(f"{_name(c)}: adds capabilities {', '.join(sorted(extra))}")
    return list(dict.fromkeys(out))


def pod_level(pod: Mapping[str, Any], annotations: Mapping[str, str] | None = None) -> Level:
    """The strictest level a pod spec satisfies."""
    if not restricted_violations(pod, annotations):
        return "restricted"
    if not baseline_violations(pod, annotations):
        return "baseline"
    return "privileged"


def weakest(levels: Iterable[Level]) -> Level:
    """The least strict of several levels (a namespace must admit all of its pods); restricted when empty."""
    return max(levels, key=LEVELS.index, default="restricted")
