"""Per-object Pulumi resource options, derived from the object alone, in ONE place.

`object_options` is the only function that decides the resource options of a Kubernetes object
(the family components add only ``parent``, ``depends_on`` and ``aliases``). The rules themselves
are the tables of `accelplane.lifecycle` (with their upstream citations), which `accelplane diff`
reads too: `object_options` turns that module's verdict for an object into Pulumi's options. To
give an object custom timeouts or anything else Pulumi's `ResourceOptions` take, extend
`ObjectOptions` with the field (and `ObjectOptions.resource_options`) and the rule in
`accelplane.lifecycle`.

Current rules (see docs/pulumi.md):

* Namespaces are ``retain_on_delete``: deleting a Namespace deletes everything in it, including
  objects other tools put there (the Flink operator's service account, running Flink pods), so a
  namespace that leaves the program is only forgotten by Pulumi, never deleted.
* ConfigMaps with ``immutable: true`` are content-addressed (their name carries a hash of their
  data, see `accelplane.discovery_install`): new content is a new object, and the old one is kept
  (``retain_on_delete``) because pods started from an older pod template still mount it by name.
* Adopted objects (`accelplane.lifecycle.ADOPTED`: ``volcano-scheduler-configmap``, created by
  Volcano's Helm chart) are ``retain_on_delete``: leaving the program must not take Volcano's
  configuration with it.
* ResourceClaimTemplates (``spec``) and PriorityClasses (``value``, ``preemptionPolicy``) have
  fields Kubernetes refuses to update and pulumi-kubernetes does not replace on: they get
  ``replace_on_changes`` and ``delete_before_replace`` (the engine creates first on a replacement
  it decides from ``replaceOnChanges``, and a second object of the same name cannot exist).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from accelplane import lifecycle
from accelplane.artifacts import K8sObject


@dataclass(frozen=True)
class ObjectOptions:
    """The resource options accelplane sets on one Kubernetes object (None: Pulumi's default)."""

    retain_on_delete: bool | None = None
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool | None = None

    def resource_options(self) -> dict[str, Any]:
        """Keyword arguments for ``pulumi.ResourceOptions`` (only the options set, so a user's
        ``opts`` on the platform keep their say over the rest)."""
        out: dict[str, Any] = {}
        if self.retain_on_delete is not None:
            out["retain_on_delete"] = self.retain_on_delete
        if self.replace_on_changes:
            out["replace_on_changes"] = list(self.replace_on_changes)
        if self.delete_before_replace is not None:
            out["delete_before_replace"] = self.delete_before_replace
        return out


DEFAULT = ObjectOptions()


def object_options(obj: K8sObject) -> ObjectOptions:
    """The options of ``obj``, as `accelplane.lifecycle.object_options` decides them (Namespaces,
    immutable ConfigMaps and adopted objects retained on delete; the immutable fields of
    `accelplane.lifecycle.REPLACE_ON_CHANGES` replaced, the old object deleted first); `DEFAULT`
    (Pulumi's own defaults) for every other object."""
    options = DEFAULT
    life = lifecycle.object_options(obj.manifest)
    if life.retain_on_delete:
        options = replace(options, retain_on_delete=True)
    if life.replace_on_changes:
        options = replace(
            options, replace_on_changes=life.replace_on_changes, delete_before_replace=life.delete_before_replace
        )
    return options
