"""Day-two impacts (issue 41): what `pulumi up` does to running work, and transitions it cannot make.

* Flink job lifecycle — a FlinkDeployment spec change is an operator upgrade by ``job.upgradeMode``
  (the operator's ``SpecDiff``: unannotated fields are ``UPGRADE``, ``flinkConfiguration`` keys under
  ``kubernetes.operator``/``job.autoscaler``/``parallelism.default`` and ``job.upgradeMode``/
  ``initialSavepointPath``/nonces are ``IGNORE``; flink-kubernetes-operator-api
  ``…/api/spec/AbstractFlinkSpec.java``, ``JobSpec.java``, ``diff/SpecDiff.java`` at
  `accelplane.lifecycle.FLINK_OPERATOR_COMMIT`); a deleted FlinkDeployment is cancelled without a
  savepoint (``kubernetes.operator.job.savepoint-on-deletion`` defaults to false,
  ``KubernetesOperatorConfigOptions.java``). Native clusters change only when resubmitted.
* Moves and renames of a Flink cluster (AP1601) unless the new cluster migrates from the old one.
* Updates classified by `accelplane.lifecycle.classify`: refused updates and replacements with the
  window they open.
* Intermediate states (AP1602): Pulumi creates and updates first and deletes last, so removed Volcano
  queues still count while new ones are created; the hierarchy rules Volcano's queue webhook applies
  are checked on that state.
* Deletions: every removed object's consequence (Volcano's ``validateQueueDeleting``, same file, line
  295: no delete of a queue with child queues, nor, with the allocated-pods check on, of one with
  allocated pods); adopted objects are retained.
* GPU hand-overs (AP1603): DRA on/off for a pool, a pool rename, a MIG layout change.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from accelplane.diff.changes import ArtifactDiff
from accelplane.diff.impact.common import VOLCANO_GROUP, Impact, group_kind, k8s_artifacts, starts
from accelplane.display import show_value
from accelplane.findings import ERROR, WARNING, Finding, declare
from accelplane.lifecycle import ADOPTED, REPLACE_WINDOW, classify, group_of
from accelplane.model import FlinkCluster, FlinkTarget, NodePool, Spec
from accelplane.quantity import parse_quantity

CLUSTER_MOVE_WITHOUT_MIGRATION = declare(
    "AP1601", ERROR,
    "a Flink cluster is moved or renamed without a migration: the new cluster starts from empty "
    "state and the old one is cancelled without a savepoint",
    fix="keep the old cluster for one apply and give the new one migrateFrom: {name, namespace, savepoint} "
    "(docs/diff.md, 'Moving a Flink cluster')",
)
INTERMEDIATE_STATE_REFUSED = declare(
    "AP1602", ERROR,
    "a state `pulumi up` passes through (creates and updates before deletes) breaks a rule the "
    "consumer enforces, so the run stops half-way",
    fix="apply in the two steps the message names",
)
GPU_HANDOVER = declare(
    "AP1603", WARNING,
    "a GPU hand-over between two device managers on running nodes: drain the pool's GPU pods first",
    fix="drain the GPU pods of the pool the message names before `pulumi up` (or apply in the two steps named)",
)

FLINK_GROUP = "flink.apache.org"
# SpecDiff IGNORE entries of AbstractFlinkSpec.flinkConfiguration (prefix match) and JobSpec fields
_IGNORED_CONFIG = ("kubernetes.operator", "job.autoscaler", "parallelism.default")
_IGNORED_JOB = (
    "spec.job.upgradeMode", "spec.job.initialSavepointPath", "spec.job.savepointTriggerNonce",
    "spec.job.checkpointTriggerNonce", "spec.job.allowNonRestoredState", "spec.job.autoscalerResetNonce",
)
_UPGRADE_MODE = {
    "savepoint": "the operator suspends the job with a savepoint and restores it from that savepoint",
    "last-state": "the operator stops the job and restores it from its last checkpoint (HA metadata)",
    "stateless": "the operator cancels the job and starts it again with EMPTY state (upgradeMode stateless)",
}


def _flagged(finding: Finding, category: str, subject: str, message: str) -> Impact:
    """An impact line that reports ``finding`` (its code leads the message; an error makes
    `accelplane diff` exit 3, the change refused)."""
    return Impact(category, subject, f"[{finding.code}] {message}", finding)


# -- Flink job lifecycle ----------------------------------------------------------------------------


def _config_key(path: str) -> str | None:
    prefix = 'spec.flinkConfiguration["'
    if path.startswith(prefix):
        return path[len(prefix):].split('"]', 1)[0]
    if path.startswith("spec.flinkConfiguration."):
        return path.removeprefix("spec.flinkConfiguration.")
    return None


def _ignored(path: str) -> bool:
    key = _config_key(path)
    if key is not None:
        return any(key == p or key.startswith(p + ".") for p in _IGNORED_CONFIG)
    return any(starts(path, p) for p in _IGNORED_JOB) or not starts(path, "spec")


def _upgrade_mode(manifest: Any) -> str:
    job = (manifest.get("spec") or {}).get("job") if isinstance(manifest, dict) else None
    return str(job.get("upgradeMode", "stateless")) if isinstance(job, dict) else "none (session cluster)"


def _flink_deployment_impacts(a: ArtifactDiff, migrating: set[tuple[str, str]]) -> Iterator[Impact]:
    ns_name = a.ident.split(" ", 1)[1]
    if a.status == "changed":
        relevant = [c for c in a.changes if not _ignored(c.path)]
        if not relevant:
            return
        mode = _upgrade_mode(a.new_data)
        what = _UPGRADE_MODE.get(mode, "the operator redeploys the session cluster (running session jobs restart)")
        notes = []
        for c in relevant:
            if c.path in ("spec.flinkVersion", "spec.image"):
                notes.append(f"{c.leaf} {show_value(c.old)} → {show_value(c.new)}")
        if any("accelplane-gpu-discovery" in show_value(c.old) for c in relevant):
            notes.append("the discovery-script ConfigMap name changed in the pod templates (accelplane upgrade)")
        shown = ", ".join(notes) or f"{len(relevant)} spec field(s) changed"
        yield Impact(
            "day2", a.ident,
            f"{a.ident}: {shown} — operator upgrade (SpecDiff UPGRADE): {what}; `pulumi up` waits for "
            "status.reconciliationStatus.state DEPLOYED (pulumi.com/waitFor), not for the job to run",
        )
    elif a.status in ("removed", "renamed"):
        old_ns_name = (a.old_ident or a.ident).split(" ", 1)[1]
        namespace, name = old_ns_name.split("/", 1)
        if (namespace, name) in migrating:
            return
        if a.status == "renamed":
            yield _flagged(
                CLUSTER_MOVE_WITHOUT_MIGRATION, "day2", a.ident,
                f"FlinkDeployment {old_ns_name} → {ns_name}: Pulumi creates "
                "the new one first (it starts from EMPTY state, both run: double GPU demand), then deletes the "
                "old one — cancelled without a savepoint (kubernetes.operator.job.savepoint-on-deletion "
                "defaults to false) and its checkpoint/HA data removed. Keep the old cluster and give the new "
                "one migrateFrom: {name, namespace, savepoint}",
            )
        else:
            yield Impact(
                "day2", a.ident,
                f"FlinkDeployment {old_ns_name} deleted (last step of pulumi up): its job is cancelled without "
                "a savepoint (kubernetes.operator.job.savepoint-on-deletion defaults to false) and its HA "
                "data removed; take a savepoint first if the state is needed",
            )


def _cluster_key(c: FlinkCluster) -> tuple[str, str]:
    return (c.namespace, c.name)


def _migrations(new: Spec | None) -> set[tuple[str, str]]:
    """(namespace, name) of the clusters the new spec's clusters migrate from."""
    found: set[tuple[str, str]] = set()
    for c in new.flink_clusters if new else ():
        if c.migrate_from is not None:
            found.add((c.migrate_from.namespace or c.namespace, c.migrate_from.name))
    return found


def _rendered_changed(artifacts: list[ArtifactDiff], name: str) -> bool:
    """True when a file of the cluster (``flink/<name>/…``) or its config ConfigMap differs."""
    prefix = f"flink/{name}/"
    return any(
        (a.old_path or "").startswith(prefix)
        or (a.new_path or "").startswith(prefix)
        or a.ident.endswith(f"/accelplane-flink-{name}")
        for a in artifacts
    )


def _cluster_impacts(artifacts: list[ArtifactDiff], old: Spec | None, new: Spec | None) -> Iterator[Impact]:
    migrating = _migrations(new)
    for a in k8s_artifacts(artifacts):
        if group_kind(a) == (FLINK_GROUP, "FlinkDeployment"):
            yield from _flink_deployment_impacts(a, migrating)
    if old is None or new is None:
        return
    old_clusters = {_cluster_key(c): c for c in old.flink_clusters}
    new_clusters = {_cluster_key(c): c for c in new.flink_clusters}
    for c in new.flink_clusters:
        if c.migrate_from is None:
            continue
        source = (c.migrate_from.namespace or c.namespace, c.migrate_from.name)
        subject = f"Flink cluster {c.name}"
        if source in new_clusters:
            yield Impact(
                "day2", subject,
                f"Flink cluster {c.namespace}/{c.name} migrates from {source[0]}/{source[1]} (still declared: "
                f"its objects, Role included, stay); it starts from savepoint {c.migrate_from.savepoint}. Stop "
                "the old job with a savepoint before this apply; drop the old cluster and migrateFrom in a "
                "second apply",
            )
        elif _cluster_key(c) in old_clusters:
            yield Impact(
                "day2", subject,
                f"Flink cluster {source[0]}/{source[1]} removed after the migration to {c.namespace}/{c.name} "
                "(second apply); migrateFrom can go too (the savepoint was read only when the new cluster "
                "was first deployed)",
            )
        elif source in old_clusters:
            yield _flagged(
                CLUSTER_MOVE_WITHOUT_MIGRATION, "day2", subject,
                f"Flink cluster {c.namespace}/{c.name} migrates from "
                f"{source[0]}/{source[1]}, which this same apply removes: its objects (Role included) are "
                "changed or deleted while the old JobManager may still run. Keep the old cluster declared for "
                "this apply and remove it in a second one",
            )
    added = [k for k in new_clusters if k not in old_clusters]
    for key, c in sorted(old_clusters.items()):
        if key in new_clusters or key in migrating:
            continue
        if c.target is FlinkTarget.KUBERNETES_OPERATOR:
            continue  # the FlinkDeployment's artifact says it (above)
        if added:
            yield _flagged(
                CLUSTER_MOVE_WITHOUT_MIGRATION, "day2", f"Flink cluster {c.name}",
                f"Flink cluster {c.namespace}/{c.name} is gone while "
                f"{', '.join(f'{n}/{m}' for n, m in added)} appeared: a move or rename. The old namespace's "
                "objects (its Role with the configmaps rule HA needs) change or go while the old JobManager "
                "still runs there. Keep the old cluster and give the new one migrateFrom: {name, namespace, "
                "savepoint}",
            )
    for key in sorted(old_clusters.keys() & new_clusters.keys()):
        n = new_clusters[key]
        if n.target is FlinkTarget.KUBERNETES and _rendered_changed(artifacts, n.name):
            yield Impact(
                "day2", f"Flink cluster {n.name}",
                f"Flink cluster {n.namespace}/{n.name} (native Kubernetes): its configuration changes take "
                "effect only when the cluster is resubmitted (flink run-application / kubernetes-session); "
                "`pulumi up` changes nothing in the running JobManager",
            )


# -- updates Kubernetes refuses, replacements and their windows ---------------------------------------


def _update_impacts(artifacts: list[ArtifactDiff]) -> Iterator[Impact]:
    for a in k8s_artifacts(artifacts):
        if a.status != "changed" or not isinstance(a.new_data, dict):
            continue
        verdict = classify(a.new_data, [c.path for c in a.changes])
        gk = group_kind(a)
        if verdict.action == "replace-option":
            yield Impact(
                "day2", a.ident,
                f"{a.ident}: {', '.join(verdict.paths)} is immutable — replaced (replaceOnChanges, "
                f"deleteBeforeReplace); {REPLACE_WINDOW.get(gk, 'the object is missing between delete and create')}",
            )
        elif verdict.action == "refused":
            yield Impact(
                "day2", a.ident,
                f"{a.ident}: {', '.join(verdict.paths)} is immutable in Kubernetes and nothing replaces it: "
                "`pulumi up` fails (\"field is immutable\")",
            )


# -- intermediate states: Volcano queues ------------------------------------------------------------


def _resources(spec: Any, field: str) -> dict[str, Decimal]:
    raw = spec.get(field) if isinstance(spec, dict) else None
    out: dict[str, Decimal] = {}
    for k, v in (raw or {}).items() if isinstance(raw, dict) else ():
        try:
            out[str(k)] = parse_quantity(v)
        except (ValueError, ArithmeticError):
            continue
    return out


def _guarantee(spec: Any) -> dict[str, Decimal]:
    guarantee = spec.get("guarantee") if isinstance(spec, dict) else None
    return _resources(guarantee, "resource")


def hierarchy_violations(queues: dict[str, Any]) -> list[str]:
    """Volcano's hierarchy rules on one set of queues, as its queue webhook applies them on a create,
    a re-parent or a resource change (volcano v1.15.1, commit 0a56ed33,
    ``pkg/webhooks/admission/queues/validate/validate_queue.go``: ``validateSiblingsSum`` line 593 —
    the siblings' deserved and guarantee add up to at most the parent's; ``validateChildAgainstAncestor``
    line 574 — a child's capability at most its ancestor's; the end-state checks AP2015/AP2014)."""
    problems = []
    children: dict[str, list[str]] = {}
    for name, q in queues.items():
        parent = (q.get("spec") or {}).get("parent")
        if isinstance(parent, str) and parent in queues:
            children.setdefault(parent, []).append(name)
    for parent, kids in sorted(children.items()):
        pspec = queues[parent].get("spec") or {}
        for res, limit in sorted(_resources(pspec, "deserved").items()):
            total = sum((_resources(queues[k].get("spec"), "deserved").get(res, Decimal(0)) for k in kids), Decimal(0))
            if total > limit:
                problems.append(
                    f"children of {parent} ({', '.join(sorted(kids))}) deserve {res} {total} > {parent}'s {limit}"
                )
        for res, limit in sorted(_guarantee(pspec).items()):
            total = sum((_guarantee(queues[k].get("spec")).get(res, Decimal(0)) for k in kids), Decimal(0))
            if total > limit:
                problems.append(
                    f"children of {parent} ({', '.join(sorted(kids))}) guarantee {res} {total} > {parent}'s {limit}"
                )
        for res, limit in sorted(_resources(pspec, "capability").items()):
            for k in sorted(kids):
                cap = _resources(queues[k].get("spec"), "capability").get(res)
                if cap is not None and cap > limit:
                    problems.append(f"{k}'s {res} capability {cap} > parent {parent}'s {limit}")
    return problems


def queues_of(manifests: list[Any]) -> dict[str, Any]:
    return {
        str(m["metadata"]["name"]): m
        for m in manifests
        if isinstance(m, dict) and m.get("kind") == "Queue"
        and group_of(str(m.get("apiVersion", ""))) == VOLCANO_GROUP
    }


def _intermediate_impacts(artifacts: list[ArtifactDiff], manifests: list[Any]) -> Iterator[Impact]:
    removed_queues = {
        (a.old_ident or a.ident).split(" ", 1)[1]
        for a in k8s_artifacts(artifacts)
        if group_kind(a) == (VOLCANO_GROUP, "Queue") and a.status in ("removed", "renamed")
    }
    if not removed_queues:
        return
    # `manifests` holds the old side then the new side: keeping the last of each name gives the state
    # after Pulumi's creates and updates, with the removed queues not yet deleted.
    middle = queues_of(manifests)
    new_side = {k: v for k, v in middle.items() if k not in removed_queues}
    problems = [p for p in hierarchy_violations(middle) if p not in hierarchy_violations(new_side)]
    if problems:
        gone = ", ".join(sorted(removed_queues))
        yield _flagged(
            INTERMEDIATE_STATE_REFUSED, "day2", "queues (intermediate state)",
            f"while queue(s) {gone} still exist (Pulumi deletes last), "
            f"{'; '.join(problems)} — Volcano's queue webhook refuses the create/update and `pulumi up` "
            f"stops. Apply in two steps: first the spec without {gone} and without the queues that replace "
            "them (drain their jobs), then the new spec",
        )


# -- deletions ------------------------------------------------------------------------------------


def _deletion_impacts(artifacts: list[ArtifactDiff], old: Spec | None) -> Iterator[Impact]:
    for a in k8s_artifacts(artifacts):
        # a rename is a new object for Pulumi: the old one is deleted just the same
        if a.status not in ("removed", "renamed") or not isinstance(a.old_data, dict):
            continue
        gk = group_kind(a)
        if a.status == "renamed" and gk == (FLINK_GROUP, "FlinkDeployment"):
            continue  # `_flink_deployment_impacts` says it
        meta = a.old_data.get("metadata") or {}
        if (*gk, str(meta.get("namespace", "")), str(meta.get("name", ""))) in ADOPTED:
            yield Impact(
                "day2", a.old_ident or a.ident,
                f"{a.old_ident or a.ident} leaves the program but is NOT deleted (adopted, retainOnDelete): it keeps its "
                "last content; hand it back to its owner (e.g. Volcano's Helm chart)",
            )
        elif gk == (VOLCANO_GROUP, "Queue"):
            name = str(meta.get("name", ""))
            users = sorted(c.name for c in (old.flink_clusters if old else ()) if c.queue == name)
            who = f" (Flink clusters {', '.join(users)})" if users else ""
            yield Impact(
                "day2", a.old_ident or a.ident,
                f"queue {name} deleted at the end of the run: move or stop the jobs in it{who} first. Volcano's "
                "queue webhook refuses the delete while the queue has child queues, and (allocated-pods check "
                "enabled) while it has allocated pods, so `pulumi up` fails at its last step; otherwise their "
                "PodGroups are left without a queue and are not scheduled again",
            )
        elif gk == (VOLCANO_GROUP, "PodGroup"):
            yield Impact(
                "day2", a.old_ident or a.ident,
                f"{a.old_ident or a.ident} deleted"
                + (f" (replaced by {a.ident})" if a.status == "renamed" else "")
                + ": the running job's pods name it in their annotation and lose their gang (minMember); its new "
                "TaskManagers are not scheduled by Volcano until the job is resubmitted with the new pod templates",
            )


# -- GPU hand-overs --------------------------------------------------------------------------------


def _pool_identity(p: NodePool) -> tuple[Any, ...]:
    return (p.platform, p.nodes, p.hosts, p.gpu.vendor if p.gpu else None, p.gpu.model if p.gpu else None)


def _gpu_handover_impacts(old: Spec | None, new: Spec | None) -> Iterator[Impact]:
    if old is None or new is None:
        return
    old_pools = {p.name: p for p in old.node_pools}
    new_pools = {p.name: p for p in new.node_pools}
    for name in sorted(old_pools.keys() & new_pools.keys()):
        o, n = old_pools[name].gpu, new_pools[name].gpu
        if o is None or n is None:
            continue
        if o.allocation != n.allocation:
            yield _flagged(
                GPU_HANDOVER, "day2", f"pool {name}",
                f"pool {name}: GPU allocation {o.allocation} → {n.allocation}. During the "
                "run the device plugin and the DRA driver both hand out the same GPUs (docs/dra.md). Drain the "
                f"GPU pods of pool {name} first (or cordon it), apply, then uncordon",
            )
        if o.mig != n.mig:
            yield _flagged(
                GPU_HANDOVER, "day2", f"pool {name}",
                f"pool {name}: MIG layout {o.mig.strategy} {dict(o.mig.devices)} → "
                f"{n.mig.strategy} {dict(n.mig.devices)}. NVIDIA's MIG manager re-partitions only when the "
                "node's nvidia.com/mig.config label changes (the label stays the pool name), so the new layout "
                f"lands at an unplanned restart. Drain the GPU pods of pool {name}, apply, then re-label the "
                "nodes (nvidia.com/mig.config=all-disabled and back) to apply it now",
            )
    gone = [old_pools[k] for k in sorted(old_pools.keys() - new_pools.keys()) if old_pools[k].gpu]
    came = [new_pools[k] for k in sorted(new_pools.keys() - old_pools.keys()) if new_pools[k].gpu]
    for o_pool in gone:
        for n_pool in came:
            if _pool_identity(o_pool) == _pool_identity(n_pool):
                yield _flagged(
                    GPU_HANDOVER, "day2", f"pool {n_pool.name}",
                    f"pool {o_pool.name} renamed to {n_pool.name}: for the run two device "
                    "plugins serve the same nodes on one kubelet socket path, and the old one's shutdown "
                    "removes the socket (the node may stop advertising GPUs). Drain the pool's GPU pods, "
                    "apply, then restart the new device plugin pods",
                )


def day2_impacts(
    artifacts: list[ArtifactDiff], manifests: list[Any], old: Spec | None, new: Spec | None
) -> Iterator[Impact]:
    """Every day-two impact line (see the module docstring)."""
    yield from _cluster_impacts(artifacts, old, new)
    yield from _update_impacts(artifacts)
    yield from _intermediate_impacts(artifacts, manifests)
    yield from _deletion_impacts(artifacts, old)
    yield from _gpu_handover_impacts(old, new)
