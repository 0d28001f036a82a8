"""What happens to one Kubernetes object when `pulumi up` changes it: the lifecycle rules, as data.

Pure module (no Pulumi import): the Pulumi layer reads the per-object options from here
(`object_options`), and the diff reads the same tables to say what an update does (`classify`).

Sources (cited so the tables can be re-checked when upstream moves):

* ``FORCE_NEW`` — pulumi-kubernetes' replace table, ``provider/pkg/provider/diff.go``
  (``forceNew``, ``metadataForceNewProperties``, ``labelSelectorForceNewProperties``,
  ``containerForceNewProperties``) at commit 94977969d64112b04e19945818a7d5d5f38f631d. A change of
  one of these input paths makes the provider's ``Diff`` answer "replace". Kinds that are not in
  that table (every custom resource, PriorityClass, ResourceClaimTemplate, DeviceClass …) are only
  replaced on ``metadata.name``/``metadata.namespace``. The provider deletes before it replaces when
  the name and namespace stay the same (``provider/pkg/provider/provider.go``, ``Diff``:
  ``deleteBeforeReplace := len(replaces) > 0 && IsNamed && !IsAutonamed && same name && same
  namespace``), since two objects of one name cannot coexist.
* ``K8S_IMMUTABLE`` — fields the API server refuses to change in an update (kubernetes/kubernetes
  validation, function named per entry). Where pulumi-kubernetes does not replace on such a field,
  `pulumi up` fails with "field is immutable" unless the resource sets ``replaceOnChanges`` on it;
  because the engine then decides the replacement (the provider's ``Diff`` reports no replace), the
  provider's automatic delete-before-replace does not apply and ``deleteBeforeReplace`` must be set
  as well, or the create of the same name fails with "already exists".
* CRD transition rules: the CRDs accelplane applies (Volcano Queue/PodGroup, FlinkDeployment/
  FlinkSessionJob, PodMonitor/PrometheusRule; ../shared/reference) carry no
  ``x-kubernetes-validations`` rule that uses ``oldSelf``, so none of their fields is immutable at
  the API server (tests/diff/test_lifecycle.py reads the CRDs to keep this true). Volcano's
  admission webhook refuses some updates (hierarchy rules), which `accelplane.diff.transitions`
  checks on the intermediate states instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PULUMI_KUBERNETES_COMMIT = "94977969d64112b04e19945818a7d5d5f38f631d"
FLINK_OPERATOR_COMMIT = "6e9caeb48118934f4311534725196c52159eaa21"

GroupKind = tuple[str, str]

METADATA_FORCE_NEW = ("metadata.name", "metadata.namespace")
_SELECTOR = ("spec.selector",)  # labelSelectorForceNewProperties(".spec.selector") are sub-paths of it
_POD = (
    "spec.affinity", "spec.automountServiceAccountToken", "spec.dnsConfig", "spec.dnsPolicy",
    "spec.enableServiceLinks", "spec.hostAliases", "spec.hostIPC", "spec.hostNetwork", "spec.hostPID",
    "spec.hostname", "spec.imagePullSecrets", "spec.nodeName", "spec.nodeSelector", "spec.overhead",
    "spec.preemptionPolicy", "spec.priority", "spec.priorityClassName", "spec.readinessGates",
    "spec.restartPolicy", "spec.runtimeClassName", "spec.schedulerName", "spec.securityContext",
    "spec.serviceAccount", "spec.serviceAccountName", "spec.shareProcessNamespace", "spec.subdomain",
    "spec.terminationGracePeriodSeconds", "spec.volumes", "spec.containers", "spec.initContainers",
)

FORCE_NEW: dict[GroupKind, tuple[str, ...]] = {
    # diff.go `forceNew["apps"]` (v1, v1beta2; StatefulSet also v1beta1)
    ("apps", "DaemonSet"): _SELECTOR,
    ("apps", "Deployment"): _SELECTOR,
    ("apps", "StatefulSet"): (
        "spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.selector", "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    # diff.go `core` (listed under "core" and "")
    ("", "PersistentVolume"): ("spec.csi", "spec.hostPath", "spec.local", "spec.nfs"),
    ("", "PersistentVolumeClaim"): ("spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName"),
    ("", "Pod"): _POD,
    ("", "ResourceQuota"): ("spec.scopes",),
    ("", "Secret"): ("type",),
    ("", "Service"): ("spec.clusterIP",),
    # diff.go `forceNew["policy"]` (v1beta1 only)
    ("policy", "PodDisruptionBudget"): ("spec",),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("roleRef",),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("roleRef",),
    ("storage.k8s.io", "StorageClass"): ("parameters", "provisioner"),
    ("batch", "Job"): ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
}
"""pulumi-kubernetes' replace table by (API group, kind); paths are dotted input paths (a change at
or below one replaces). ``PodDisruptionBudget`` is replaced on ``spec`` only in ``policy/v1beta1``."""

# diff.go forceNewProperties: a Secret that is immutable (or any Secret without enableSecretMutable)
# and a ConfigMap that is immutable (or any without enableConfigMapMutable) are replaced on data.
DATA_FORCE_NEW = ("data", "binaryData", "stringData")


@dataclass(frozen=True)
class Immutable:
    """One field the API server refuses to update, and where Kubernetes says so."""

    path: str
    source: str


K8S_IMMUTABLE: dict[GroupKind, tuple[Immutable, ...]] = {
    ("resource.k8s.io", "ResourceClaimTemplate"): (
        Immutable("spec", "pkg/apis/resource/validation/validation.go ValidateResourceClaimTemplateUpdate "
                          "(ValidateImmutableField(template.Spec, oldTemplate.Spec))"),
    ),
    ("resource.k8s.io", "ResourceClaim"): (
        Immutable("spec", "pkg/apis/resource/validation/validation.go ValidateResourceClaimUpdate"),
    ),
    ("scheduling.k8s.io", "PriorityClass"): (
        Immutable("value", "pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate "
                           '("may not be changed in an update")'),
        Immutable("preemptionPolicy", "pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate"),
    ),
    ("apps", "DaemonSet"): (
        Immutable("spec.selector", "pkg/apis/apps/validation/validation.go ValidateDaemonSetUpdate "
                                   "(apps/v1: selector immutable)"),
    ),
    ("apps", "Deployment"): (
        Immutable("spec.selector", "pkg/registry/apps/deployment/strategy.go ValidateUpdate "
                                   "(apps/v1: selector immutable)"),
    ),
    ("apps", "StatefulSet"): (
        Immutable("spec.selector", "pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate"),
        Immutable("spec.serviceName", "pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate"),
        Immutable("spec.volumeClaimTemplates", "pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate"),
    ),
    ("batch", "Job"): (
        Immutable("spec.selector", "pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate"),
        Immutable("spec.template", "pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate"),
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (
        Immutable("roleRef", "pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate"),
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        Immutable("roleRef", "pkg/apis/rbac/validation/validation.go ValidateClusterRoleBindingUpdate"),
    ),
    ("", "Service"): (Immutable("spec.clusterIP", "pkg/apis/core/validation/validation.go ValidateServiceUpdate"),),
    ("storage.k8s.io", "StorageClass"): (
        Immutable("parameters", "pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate"),
        Immutable("provisioner", "pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate"),
    ),
}
"""Fields Kubernetes refuses to update in place (``metadata.name``/``namespace`` are identity, not
listed). DeviceClass, Volcano Queue/PodGroup and FlinkDeployment have none at the API server."""

REPLACE_ON_CHANGES: dict[GroupKind, tuple[str, ...]] = {
    ("resource.k8s.io", "ResourceClaimTemplate"): ("spec",),
    ("scheduling.k8s.io", "PriorityClass"): ("value", "preemptionPolicy"),
}
"""Immutable fields on which replace is the right move and pulumi-kubernetes does not replace by
itself: these resources get ``replaceOnChanges`` + ``deleteBeforeReplace`` (same name, so the
old object must go first). The window each opens is `REPLACE_WINDOW`."""

REPLACE_WINDOW: dict[GroupKind, str] = {
    ("resource.k8s.io", "ResourceClaimTemplate"): (
        "between the delete and the create no template of that name exists: a TaskManager pod created "
        "then gets no ResourceClaim and stays Pending until the template is back; running TaskManagers "
        "keep the claims (and GPUs) they have, only pods created afterwards get the new claim"
    ),
    ("scheduling.k8s.io", "PriorityClass"): (
        "between the delete and the create the Priority admission plugin rejects every new pod naming "
        "the class (\"no PriorityClass with name … was found\"); running pods keep the priority value "
        "copied into them at admission, so the new value reaches only pods created afterwards"
    ),
}

ADOPTED: frozenset[tuple[str, str, str, str]] = frozenset({
    # Created by Volcano's Helm chart and adopted by accelplane (docs/volcano.md): deleting it when it
    # leaves the program (YuniKorn switch, manageSchedulerConfig: false) leaves Volcano's scheduler
    # without its configuration.
    ("", "ConfigMap", "volcano-system", "volcano-scheduler-configmap"),
})
"""(group, kind, namespace, name) of objects that exist before accelplane and outlive it: retained."""

FLINK_GROUP = "flink.apache.org"
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"
FLINK_DEPLOYMENT_WAIT_FOR = "jsonpath={.status.reconciliationStatus.state}=DEPLOYED"
"""pulumi-kubernetes ``provider/pkg/metadata/overrides.go`` ``ReadyCondition``: a string value with a
``jsonpath=`` prefix is a kubectl-style JSONPath condition. The operator's
``ReconciliationState`` (flink-kubernetes-operator-api …/status/ReconciliationState.java) is
``DEPLOYED`` once the last reconciled spec is deployed (``UPGRADING`` while it acts); job readiness
is not awaited (a GPU job may queue for hours)."""

AWAITED: dict[GroupKind, str] = {
    (FLINK_GROUP, "FlinkDeployment"): FLINK_DEPLOYMENT_WAIT_FOR,
}


def group_of(api_version: str) -> str:
    """``apps/v1`` → ``apps``; ``v1`` → ``""`` (the core group)."""
    return api_version.split("/")[0] if "/" in api_version else ""


@dataclass(frozen=True)
class ObjectOptions:
    """Pulumi resource options one object needs for a safe lifecycle."""

    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    retain_on_delete: bool | None = None


def object_options(manifest: dict[str, Any]) -> ObjectOptions:
    """The options of one manifest: ``replaceOnChanges``/``deleteBeforeReplace`` for the immutable
    fields in `REPLACE_ON_CHANGES`; ``retainOnDelete`` for immutable (content-addressed) ConfigMaps,
    Namespaces and `ADOPTED` objects (None: Pulumi's default, so registrations stay unchanged)."""
    gk = (group_of(str(manifest.get("apiVersion", ""))), str(manifest.get("kind", "")))
    meta = manifest.get("metadata") or {}
    replace = REPLACE_ON_CHANGES.get(gk, ())
    retain = (
        (gk == ("", "ConfigMap") and manifest.get("immutable") is True)
        or gk == ("", "Namespace")
        or (*gk, str(meta.get("namespace", "")), str(meta.get("name", ""))) in ADOPTED
    )
    return ObjectOptions(replace, bool(replace), True if retain else None)


def wait_for(api_version: str, kind: str) -> str | None:
    """The ``pulumi.com/waitFor`` annotation value for a kind (None: not awaited)."""
    return AWAITED.get((group_of(api_version), kind))


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


@dataclass(frozen=True)
class UpdateClass:
    """How `pulumi up` applies a change of one object (`classify`)."""

    action: str
    """``update``, ``replace`` (provider table), ``replace-option`` (our replaceOnChanges) or ``refused``."""
    paths: tuple[str, ...]
    """The table entries that decided it (empty for ``update``)."""
    delete_first: bool
    """True when the old object is deleted before the new one is created (same name)."""


def classify(manifest: dict[str, Any], changed_paths: list[str], *, renamed: bool = False) -> UpdateClass:
    """Classify an update of ``manifest`` (the new side) whose changed input paths are ``changed_paths``.

    A rename (new name/namespace: a new URN for accelplane's program) is ``replace`` create-first.
    Otherwise provider replace fields first, then our ``replaceOnChanges`` (delete first), then
    fields the API server refuses (``refused``), else ``update``."""
    if renamed:
        return UpdateClass("replace", METADATA_FORCE_NEW, False)
    gk = (group_of(str(manifest.get("apiVersion", ""))), str(manifest.get("kind", "")))
    force = list(FORCE_NEW.get(gk, ()))
    if gk in (("", "ConfigMap"), ("", "Secret")) and manifest.get("immutable") is True:
        force += DATA_FORCE_NEW
    hits = tuple(p for p in force if any(_under(c, p) for c in changed_paths))
    if hits:
        return UpdateClass("replace", hits, True)
    own = tuple(p for p in REPLACE_ON_CHANGES.get(gk, ()) if any(_under(c, p) for c in changed_paths))
    if own:
        return UpdateClass("replace-option", own, True)
    refused = tuple(i.path for i in K8S_IMMUTABLE.get(gk, ()) if any(_under(c, i.path) for c in changed_paths))
    if refused:
        return UpdateClass("refused", refused, False)
    return UpdateClass("update", (), False)


@dataclass(frozen=True)
class Step:
    """One step of `pulumi up` for one object (`plan`)."""

    action: str
    """``create``, ``update``, ``replace``, ``replace-option``, ``refused`` or ``delete``."""
    key: str
    paths: tuple[str, ...] = ()
    retained: bool = False
    """For ``delete``: the object is only forgotten (``retainOnDelete``)."""


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths (``a.b``, ``a[0]``) where two plain JSON values differ: the leaves, or a whole
    list when its length differs."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(old.keys() | new.keys(), key=str):
            path = f"{prefix}.{k}" if prefix else str(k)
            if k not in old or k not in new:
                out.append(path)
            else:
                out += changed_paths(old[k], new[k], path)
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (o, n) in enumerate(zip(old, new, strict=True)) for p in changed_paths(o, n, f"{prefix}[{i}]")]
    return [] if old == new else [prefix]


def plan(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[Step]:
    """The steps `pulumi up` takes from the objects ``old`` to ``new`` (both keyed by URN, values the
    manifests as registered): creates and updates in the program's order, then deletes (Pulumi deletes
    what left the program at the end of the run). Uses `classify` per changed object."""
    steps: list[Step] = []
    for key, manifest in new.items():
        if key not in old:
            steps.append(Step("create", key))
            continue
        paths = changed_paths(old[key], manifest)
        if paths:
            verdict = classify(manifest, paths)
            steps.append(Step(verdict.action, key, verdict.paths or tuple(paths)))
    for key, manifest in old.items():
        if key not in new:
            steps.append(Step("delete", key, retained=object_options(manifest).retain_on_delete is True))
    return steps


def states(old: dict[str, dict[str, Any]], steps: list[Step], new: dict[str, dict[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    """The cluster's objects after each step of ``steps`` (a retained delete leaves the object)."""
    current = dict(old)
    out = []
    for s in steps:
        if s.action == "delete":
            if not s.retained:
                current.pop(s.key, None)
        elif s.action != "refused":
            current[s.key] = new[s.key]
        out.append(dict(current))
    return out
