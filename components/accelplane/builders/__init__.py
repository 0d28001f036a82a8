"""Pure builders: typed model → plain artifacts. No builder imports pulumi.

Each builder module exposes ``FAMILY`` (the family its artifacts are tagged with: the name the
renderer, `diff`, `report` and the Pulumi components use) and ``build(spec) -> Bundle``;
`build_all` composes them in a fixed order and returns one canonically ordered bundle that the
renderer writes and the Pulumi program applies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from types import ModuleType

from accelplane.artifacts import Bundle
from accelplane.builders import (
    device_plugins,
    discovery_configmap,
    dra,
    flink,
    flink_rbac,
    kueue,
    mig_manager,
    monitoring,
    namespaces,
    node_image,
    priority,
    volcano,
    yarn,
    yunikorn,
)
from accelplane.model import Spec

Builder = Callable[[Spec], Bundle]

BUILDER_MODULES: tuple[ModuleType, ...] = (
    namespaces,
    priority,
    volcano,
    yunikorn,
    kueue,
    device_plugins,
    dra,
    mig_manager,
    discovery_configmap,
    node_image,
    yarn,
    flink,
    flink_rbac,
    monitoring,
)
"""Every builder, in the order `build_all` runs them."""

FAMILIES: dict[str, tuple[Builder, ...]] = {}
"""Family name (as the artifacts are tagged) → the builders producing it."""
for _module in BUILDER_MODULES:
    FAMILIES.setdefault(_module.FAMILY, ())
    FAMILIES[_module.FAMILY] += (_module.build,)


class DuplicateArtifactError(RuntimeError):
    """Two builders produced the same object or file (a bug, not a user mistake)."""


class FamilyTagError(RuntimeError):
    """A builder tagged an artifact with another family than its own (a bug, not a user mistake)."""


def build_all(spec: Spec) -> Bundle:
    """Run every family's builder and return one bundle in canonical order.

    What the builders derived once for several of them (`Spec.memo`: pod templates, generated
    Flink keys) is dropped when they are done, so it does not outlive the build: at 100 units the
    pod templates alone kept 16 MiB alive for as long as the caller kept the spec."""
    total = Bundle()
    for module in BUILDER_MODULES:
        part: Bundle = module.build(spec)
        wrong = {o.family for o in part.objects} | {f.family for f in part.files}
        wrong -= {module.FAMILY}
        if wrong:
            raise FamilyTagError(f"{module.__name__} tagged artifacts {sorted(wrong)}, not {module.FAMILY!r}")
        total.extend(part)
    spec.memo.clear()
    dupes = [str(key) for key, n in Counter(o.key for o in total.objects).items() if n > 1]
    dupes += [path for path, n in Counter(f.path for f in total.files).items() if n > 1]
    if dupes:
        raise DuplicateArtifactError(f"artifacts produced twice: {sorted(dupes)}")
    return total.sorted()
