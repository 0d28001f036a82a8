"""Pulumi impacts, as accelplane's program applies changes (docs/pulumi.md): objects whose name or
namespace changed (paired remove+add: a new URN, replaced; a content-hashed immutable ConfigMap's
old version is retained), data changes of ``immutable: true`` ConfigMaps under the same name
(mutable ConfigMaps are updated in place: the provider sets ``enableConfigMapMutable``),
pulumi-kubernetes' other replace-on-change fields (`accelplane.lifecycle.FORCE_NEW`); Namespaces,
which the program never deletes (``retain_on_delete``), and their Pod Security level, which decides
whether new pods are admitted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accelplane.diff.changes import ArtifactDiff
from accelplane.diff.impact.common import Impact, group_kind, k8s_artifacts, starts
from accelplane.diff.pairing import hash_stem
from accelplane.display import show_value
from accelplane.lifecycle import FORCE_NEW

# pulumi-kubernetes' replace table (provider/pkg/provider/diff.go), ported with citations in
# accelplane.lifecycle. ConfigMaps are special (see `_configmap_pulumi`): accelplane's provider sets
# enableConfigMapMutable, so only ``immutable: true`` ConfigMaps are replaced when their data changes
# (docs/pulumi.md). Fields Kubernetes refuses to update in place are the day-2 category's
# (`accelplane.diff.impact.day2`: replaced by our replaceOnChanges, or refused).
PULUMI_FORCE_NEW: dict[tuple[str, str], tuple[str, ...]] = FORCE_NEW
PSA_ENFORCE = "pod-security.kubernetes.io/enforce"


# -- Pulumi ----------------------------------------------------------------------------------------


def _is_immutable(manifest: Any) -> bool:
    return isinstance(manifest, dict) and manifest.get("immutable") is True


def pulumi_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in k8s_artifacts(artifacts):
        gk = group_kind(a)
        if a.status == "renamed":
            names = [c for c in a.changes if c.path in ("metadata.name", "metadata.namespace")]
            why = ", ".join(f"{c.leaf} changed" for c in names) or "identity changed"
            hashed = any(c.leaf == "name" and hash_stem(show_value(c.old)) == hash_stem(show_value(c.new)) for c in names)
            if gk == ("", "ConfigMap") and _is_immutable(a.old_data):
                what = (
                    "a new immutable ConfigMap is created; the old one is retained in the cluster "
                    "(retain_on_delete) for pods that still mount it — delete it by hand once unused"
                )
            else:
                what = "replaced (new URN: Pulumi creates the new object, then deletes the old one)"
            yield Impact(
                "pulumi", a.ident, f"{a.title}: {why}{' (content-hashed name)' if hashed else ''} — {what}"
            )
            continue
        if gk == ("", "Namespace") and a.status == "removed":
            yield Impact(
                "pulumi",
                a.ident,
                f"{a.ident}: leaves the program but stays in the cluster with everything in it "
                "(Namespaces are retain_on_delete); delete it by hand if that is intended",
            )
        if a.status != "changed":
            continue
        if gk == ("", "Namespace"):
            for c in a.changes:
                if c.leaf == PSA_ENFORCE:
                    yield Impact(
                        "pulumi",
                        a.ident,
                        f"{a.ident}: Pod Security level {show_value(c.old)} → {show_value(c.new)}; new pods "
                        "that need more than the new level are rejected (running pods keep running)",
                    )
        if gk == ("", "ConfigMap") and _is_immutable(a.old_data):
            data = [c for c in a.changes if starts(c.path, "data") or starts(c.path, "binaryData")]
            if data:
                yield Impact(
                    "pulumi",
                    a.ident,
                    f"{a.ident}: data of an immutable ConfigMap changed under the same name — Kubernetes "
                    "refuses the update and Pulumi replaces it, but immutable ConfigMaps are retained on "
                    'delete, so the re-create fails ("already exists") until the old one is deleted by '
                    "hand; a content-hashed name avoids this",
                )
        reasons = [p for p in PULUMI_FORCE_NEW.get(gk, ()) if any(starts(c.path, p) for c in a.changes)]
        if reasons:
            yield Impact(
                "pulumi",
                a.ident,
                f"{a.ident}: {', '.join(reasons)} changed — replaced under Pulumi (delete and recreate)",
            )
