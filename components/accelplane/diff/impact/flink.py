"""Flink-cluster impacts: Flink config keys ``external-resources``/``external-resource.<r>.amount``/
``…config-key`` (in Flink config files, in ConfigMap data and in ``FlinkDeployment``
``flinkConfiguration``), GPU ``resources`` and DRA resource claims (``spec.resourceClaims``,
``resources.claims``) in pod templates and workloads, every Volcano ``PodGroup`` change and every
DRA object change (the ResourceClaimTemplate a cluster's TaskManagers claim from, the DeviceClass
of a GPU model).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from accelplane.derive.yunikorn import CONFIGMAP as YUNIKORN_CONFIGMAP
from accelplane.diff.changes import EMBED_SEPARATOR, ArtifactDiff
from accelplane.diff.impact.common import FLINK_KEY, VOLCANO_GROUP, Impact, brief, group_kind, starts
from accelplane.display import show_value
from accelplane.model import is_gpu_resource

# -- Flink -----------------------------------------------------------------------------------------


def _flink_subject(a: ArtifactDiff, *, old: bool = False) -> str:
    """``Flink cluster <name>`` for files under ``flink/<name>/``, else the artifact's name."""
    ident = (a.old_ident or a.ident) if old else a.ident
    if a.kind == "kubernetes":
        return ident
    path = (a.old_path if old else a.new_path) or a.old_path or a.new_path or ""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "flink":
        return f"Flink cluster {parts[1]}"
    return ident


def _podgroup_summary(manifest: Any) -> str:
    spec = manifest.get("spec", {}) if isinstance(manifest, dict) else {}
    parts = []
    if "queue" in spec:
        parts.append(f"queue {show_value(spec['queue'])}")
    if "minMember" in spec:
        parts.append(f"minMember {show_value(spec['minMember'])}")
    for res, v in sorted((spec.get("minResources") or {}).items()):
        if is_gpu_resource(str(res)):
            parts.append(f"{res} {show_value(v)}")
    return ", ".join(parts)


DRA_GROUP = "resource.k8s.io"
_CLAIM_PATH = re.compile(r"(^|\.)(resourceClaims|resources\.claims)(\.|\[|$)")


def _dra_summary(manifest: Any) -> str:
    """What a DRA object asks for: a DeviceClass's selector, a claim template's device requests."""
    spec = manifest.get("spec", {}) if isinstance(manifest, dict) else {}
    if manifest.get("kind") == "DeviceClass":
        exprs = [s.get("cel", {}).get("expression", "") for s in spec.get("selectors", [])]
        return "selects " + " and ".join(show_value(e) for e in exprs) if exprs else "selects every device"
    parts = []
    for r in spec.get("spec", {}).get("devices", {}).get("requests", []):
        body = r.get("exactly", r)
        parts.append(f"{show_value(body.get('count', 1))} × {show_value(body.get('deviceClassName'))}")
    return ", ".join(parts) or "no requests"


def _dra_impact(a: ArtifactDiff) -> Impact:
    kind = group_kind(a)[1]
    subject = a.ident
    if a.status == "added":
        return Impact("flink", subject, f"{a.ident} added ({_dra_summary(a.new_data)})")
    if a.status == "removed":
        return Impact("flink", subject, f"{a.ident} removed (was {_dra_summary(a.old_data)}); pods claiming it fail")
    what = brief([c for c in a.changes if starts(c.path, "spec")]) or "metadata changed"
    if kind == "ResourceClaimTemplate":
        what += (
            " (spec immutable: the template is replaced delete-first, see 'Running work and transitions'; "
            "running TaskManagers keep their claims, pods created afterwards get the new one)"
        )
    return Impact("flink", subject, f"{a.title}: {what}")


_DISCOVERY_ARGS = re.compile(r"external-resource\.[^.]+\.param\.discovery-script\.args")


def _coordination_file(args: Any) -> str | None:
    """The ``--coordination-file`` of a discovery-args value (None without coordination)."""
    words = str(args).split() if args is not None else []
    if "--enable-coordination-mode" not in words:
        return None
    for flag in ("--coordination-file", "--assign-file"):
        if flag in words and words.index(flag) + 1 < len(words):
            return words[words.index(flag) + 1]
    return "/var/tmp/flink-gpu-coordination"  # the script's default


def coordination_file_impacts(a: ArtifactDiff) -> Iterator[Impact]:
    """A TaskManager config whose coordination file (or coordination mode) changed: the new file
    knows nothing of the GPUs running TaskManagers hold in the old one, so TaskManagers started
    with the new config would be given those GPUs again. Say so, with what to do."""
    seen: set[tuple[str | None, str | None]] = set()
    for c in a.changes:
        if not _DISCOVERY_ARGS.fullmatch(c.leaf):
            continue
        old, new = _coordination_file(c.old), _coordination_file(c.new)
        if old == new or (old, new) in seen or c.op != "changed":
            continue
        seen.add((old, new))
        what = f"coordination file {old or '(none: coordination off)'} → {new or '(none: coordination off)'}"
        yield Impact(
            "flink",
            _flink_subject(a),
            f"{what}: stop this cluster's TaskManagers on every host BEFORE starting any with the new "
            "config (the new file does not know the GPUs the running ones hold, so new TaskManagers "
            "would get the same GPUs); every cluster on a host must use the host's one file",
        )


def flink_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in artifacts:
        subject = _flink_subject(a)
        if a.kind == "flink-config":
            yield from coordination_file_impacts(a)
        if a.kind == "kubernetes" and group_kind(a)[0] == DRA_GROUP:
            yield _dra_impact(a)
            continue
        if (
            a.kind == "kubernetes"
            and group_kind(a) == ("", "ConfigMap")
            and a.ident.endswith(f"/{YUNIKORN_CONFIGMAP}")
        ):
            continue  # YuniKorn's queues (resources.guaranteed/max): the queues category's
        if a.kind == "kubernetes" and group_kind(a) == (VOLCANO_GROUP, "PodGroup"):
            if a.status == "added":
                yield Impact("flink", subject, f"{a.ident} added ({_podgroup_summary(a.new_data)})")
            elif a.status == "removed":
                yield Impact("flink", subject, f"{a.ident} removed (was {_podgroup_summary(a.old_data)})")
            else:
                relevant = [
                    c
                    for c in a.changes
                    if (starts(c.path, "spec") and not starts(c.path, "spec.minResources"))
                    or (starts(c.path, "spec.minResources") and is_gpu_resource(c.leaf))
                ]
                if a.status == "renamed":
                    what = "renamed" + (f"; {brief(relevant)}" if relevant else "")
                else:
                    what = brief(relevant) if relevant else "metadata or non-GPU resources changed"
                yield Impact("flink", subject, f"{a.title}: {what}")
            continue
        keys = [c for c in a.changes if FLINK_KEY.fullmatch(c.leaf)]
        gpu_requests = [
            c
            for c in a.changes
            if (
                is_gpu_resource(c.leaf)
                and re.search(r"(^|\.)resources(\.|\[)", c.path.split(EMBED_SEPARATOR)[-1])
            )
            or _CLAIM_PATH.search(c.path.split(EMBED_SEPARATOR)[-1])
        ]
        where = f"{subject} ({posixpath.basename(a.ident)})" if a.kind != "kubernetes" else subject
        if a.status == "renamed" and a.kind == "flink-config":
            old_subject = _flink_subject(
                ArtifactDiff(a.kind, a.old_ident or "", "changed", a.old_path, a.old_path)
            )
            extra = f"; {brief(keys + gpu_requests)}" if keys or gpu_requests else ""
            new_name = subject.removeprefix("Flink cluster ")
            yield Impact("flink", subject, f"{old_subject} renamed to {new_name} ({a.title}){extra}")
        elif keys or gpu_requests:
            label = a.title if a.status == "renamed" else where
            yield Impact("flink", subject, f"{label}: {brief(keys + gpu_requests)}")
        elif a.status in ("added", "removed") and a.kind == "flink-config":
            data = a.new_data if a.status == "added" else a.old_data
            found = {k: v for k, v in (data or {}).items() if FLINK_KEY.fullmatch(str(k))}
            detail = ", ".join(f"{k}: {show_value(v)}" for k, v in sorted(found.items())) or "no GPU keys"
            yield Impact("flink", subject, f"{subject} {a.status} ({a.ident}: {detail})")
