"""Kueue's admission-webhook rules for ClusterQueues and ResourceFlavors, ported (the CRD schemas and
their CEL rules are checked by tests against ../shared/reference/kueue; these rules live only in
Kueue's Go webhooks, so nothing but this port checks them here).

Source: kubernetes-sigs/kueue v0.19.2 (commit c3785e520aeeb0e0a93e8a3785a6e46c51502246):

* ``pkg/webhooks/clusterqueue_webhook.go``
  - 113-136 ``validateClusterQueueSpec``: ``hasParent = cohortName != ""``, lending ≤ nominal enforced;
  - 302-329 ``validateResourceGroups``: covered resources are qualified names (common.go:29-35), a
    covered resource in one group only, a flavor in one group only;
  - 331-356 ``validateFlavorQuotas``: ``resources[i].name == coveredResources[i]`` (by position),
    quotas not negative, borrowing/lending limits only with a cohort (367-380 ``validateLimit``),
    lendingLimit ≤ nominalQuota (382-389 ``validateLendingLimit``);
  - 187-229: at most 256 flavors and 256 covered resources over all groups, 512 flavor-resource
    combinations per group.
* ``pkg/webhooks/resourceflavor_webhook.go`` 84-125: ``nodeTaints`` unique by key and effect.

The size limits of the v1beta2 CRD schemas (config/components/crd/bases, the same commit;
../shared/reference/kueue) are repeated here so a spec finding can name the node pool or queue:
ResourceFlavor ``spec.nodeLabels`` ``maxProperties: 8``, ``spec.nodeTaints`` and
``spec.tolerations`` ``maxItems: 8``; ClusterQueue ``spec.resourceGroups`` ``maxItems: 16``,
``coveredResources`` and ``flavors`` ``maxItems: 64`` each.

Each function returns ``(path, message)`` pairs, empty when Kueue would accept the object.
"""

from __future__ import annotations

import re
from typing import Any

from accelplane.names import is_dns1123_subdomain
from accelplane.quantity import QuantityError, parse_quantity

Finding = tuple[str, str]

MAX_FLAVORS = 256
MAX_COVERED = 256
MAX_COMBINATIONS = 512
MAX_RESOURCE_GROUPS = 16
MAX_PER_GROUP = 64
MAX_FLAVOR_ITEMS = 8


_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def is_resource_name(name: str) -> bool:
    """Kueue's ``validateResourceName`` (pkg/webhooks/common.go:29-35): apimachinery's
    ``IsLabelKey``, a qualified name: an optional DNS-1123 subdomain prefix of at most 253
    characters and ``/``, then a name of at most 63 characters."""
    prefix, slash, rest = name.rpartition("/")
    if slash and not is_dns1123_subdomain(prefix):
        return False
    return 0 < len(rest) <= 63 and _NAME.fullmatch(rest) is not None


def _negative(value: Any) -> bool:
    try:
        return parse_quantity(value) < 0
    except QuantityError:
        return True


def cluster_queue_errors(obj: dict[str, Any]) -> list[Finding]:
    """What Kueue's ClusterQueue webhook rejects in ``obj`` (a ``ClusterQueue`` manifest)."""
    spec = obj.get("spec", {})
    has_parent = bool(spec.get("cohortName"))
    groups = spec.get("resourceGroups", [])
    out: list[Finding] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    if len(groups) > MAX_RESOURCE_GROUPS:
        out.append(("spec.resourceGroups", f"must have at most {MAX_RESOURCE_GROUPS} items"))
    for i, rg in enumerate(groups):
        covered = rg.get("coveredResources", [])
        for field in ("coveredResources", "flavors"):
            if len(rg.get(field, [])) > MAX_PER_GROUP:
                out.append((f"spec.resourceGroups[{i}].{field}", f"must have at most {MAX_PER_GROUP} items"))
        for j, name in enumerate(covered):
            if not is_resource_name(name):
                out.append((f"spec.resourceGroups[{i}].coveredResources[{j}]", f"{name!r} is not a qualified name"))
            if name in seen_resources:
                out.append((f"spec.resourceGroups[{i}].coveredResources[{j}]", f"duplicate resource {name!r}"))
            seen_resources.add(name)
        for j, fq in enumerate(rg.get("flavors", [])):
            path = f"spec.resourceGroups[{i}].flavors[{j}]"
            if fq["name"] in seen_flavors:
                out.append((f"{path}.name", f"duplicate flavor {fq['name']!r}"))
            seen_flavors.add(fq["name"])
            for k, rq in enumerate(fq.get("resources", [])):
                if k >= len(covered):
                    break
                rpath = f"{path}.resources[{k}]"
                if rq["name"] != covered[k]:
                    out.append((f"{rpath}.name", "must match the name in coveredResources"))
                if _negative(rq.get("nominalQuota", 0)):
                    out.append((f"{rpath}.nominalQuota", "must be greater than or equal to 0"))
                for limit in ("borrowingLimit", "lendingLimit"):
                    if limit not in rq:
                        continue
                    if _negative(rq[limit]):
                        out.append((f"{rpath}.{limit}", "must be greater than or equal to 0"))
                    if not has_parent:
                        out.append((f"{rpath}.{limit}", "must be nil when cohort is empty"))
                if (
                    "lendingLimit" in rq
                    and not _negative(rq["lendingLimit"])
                    and parse_quantity(rq["lendingLimit"]) > parse_quantity(rq.get("nominalQuota", 0))
                ):
                    out.append((f"{rpath}.lendingLimit", "must be less than or equal to the nominalQuota"))
        combinations = sum(len(fq.get("resources", [])) for fq in rg.get("flavors", []))
        if combinations > MAX_COMBINATIONS:
            out.append((f"spec.resourceGroups[{i}]", f"number of flavor-resource combinations must be ≤ {MAX_COMBINATIONS}"))
    if sum(len(rg.get("flavors", [])) for rg in groups) > MAX_FLAVORS:
        out.append(("spec.resourceGroups", f"total number of flavors must be ≤ {MAX_FLAVORS}"))
    if sum(len(rg.get("coveredResources", [])) for rg in groups) > MAX_COVERED:
        out.append(("spec.resourceGroups", f"total number of covered resources must be ≤ {MAX_COVERED}"))
    return out


def resource_flavor_errors(obj: dict[str, Any]) -> list[Finding]:
    """What Kueue rejects in a ResourceFlavor ``obj``: more than 8 node labels, taints or tolerations
    (CRD schema), taints repeated by key and effect (webhook)."""
    out: list[Finding] = []
    spec = obj.get("spec", {})
    for field in ("nodeLabels", "nodeTaints", "tolerations"):
        if len(spec.get(field, ())) > MAX_FLAVOR_ITEMS:
            out.append((f"spec.{field}", f"must have at most {MAX_FLAVOR_ITEMS} items"))
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(obj.get("spec", {}).get("nodeTaints", [])):
        key = (taint.get("key", ""), taint.get("effect", ""))
        if key in seen:
            out.append((f"spec.nodeTaints[{i}]", "taints must be unique by key and effect pair"))
            continue
        seen.add(key)
    return out
