"""``accelplane:index:GpuPlatform`` — everything one cluster spec produces, as one component.

``GpuPlatform(name, GpuPlatformArgs(...), opts)`` registers everything (`GpuPlatform.create` is an
alias). It takes what the same builders as `accelplane render` built
(`accelplane.pipeline.render_spec`), then gives each
artifact family a component (a specialised one from `FAMILY_COMPONENTS`, else the generic
`FamilyComponent`) and registers every object as a child of its family's component, in one global
dependency order: each object gets ``depends_on`` for the objects it references (a PodGroup for its
Queue and PriorityClass), whichever family built them.

Child names carry the platform's ``resource_prefix`` (default: the platform's name), so two platforms
of one program never collide; objects two platforms both want on one cluster have one owner
(`accelplane.pulumi.sharing`).
"""

import inspect
import os
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import yaml

from accelplane.artifacts import Bundle, FileArtifact, K8sObject
from accelplane.digests import sha256
from accelplane.finding_output import text_line
from accelplane.model import Spec
from accelplane.pulumi import kinds
from accelplane.pulumi.device_plugins import DevicePlugins
from accelplane.pulumi.family import FamilyArgs, FamilyComponent
from accelplane.pulumi.flink import Flink
from accelplane.pulumi.node_image import Discovery, NodeImage
from accelplane.pulumi.planning import (
    ObjectKey,
    PlanError,
    creation_order,
    dependencies,
    families,
    file_family,
    logical_name,
)
from accelplane.pulumi.scheduling import Scheduling
from accelplane.pulumi.sharing import Owner, conflict
from accelplane.render import bundle_files
from accelplane.spec_loader import spec_root

FAMILY_COMPONENTS: dict[str, type[FamilyComponent]] = {
    "scheduling": Scheduling,
    "device-plugins": DevicePlugins,
    "flink": Flink,
    "discovery": Discovery,
    "node-image": NodeImage,
}
"""Specialised components (extra outputs). Any other family uses `FamilyComponent` unchanged."""


SpecInput = Any
"""What `GpuPlatformArgs.spec` takes besides a typed model: a path (`os.PathLike`, or a string naming
an existing ``.yaml``/``.yml`` file), the spec's YAML text, or the spec as a dict whose leaves (and
lists, and the text itself) may be ``pulumi.Input``s — another resource's outputs."""


@dataclass(frozen=True)
class GpuPlatformArgs:
    """Inputs of `GpuPlatform`.

    ``spec``: the cluster spec — either the validated typed model, with ``bundle`` the bundle built
    from it (`accelplane.pipeline.render_spec`, exactly what `accelplane render` writes; tests may
    pass another), or a `SpecInput` (path, YAML text or dict, leaves may be Inputs) that the platform
    validates and builds as ``accelplane render`` does once its Inputs resolve.
    ``resource_prefix``: prefix of every child resource's name (``<prefix>:<kind>/…``); None (the
    default) uses the platform's name, ``""`` none (the names accelplane ≤ 0.1 used).
    ``alias_previous_names``: give every prefixed child an alias to its unprefixed name, so a stack
    created with those names keeps its resources (at most one platform per program may).
    ``spec_dir``: for a spec given as text or dict, the directory it counts as being in: its
    ``extends`` entries are relative to it (default: none may be relative).
    """

    spec: Spec | SpecInput
    bundle: Bundle | None = None
    resource_prefix: str | None = None
    alias_previous_names: bool = False
    spec_dir: str | os.PathLike[str] | None = None


def has_inputs(value: Any) -> bool:
    """Whether ``value`` holds a Pulumi Output or awaitable anywhere (dict values, list items)."""
    if isinstance(value, pulumi.Output) or inspect.isawaitable(value):
        return True
    if isinstance(value, Mapping):
        return any(has_inputs(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_inputs(v) for v in value)
    return False


def _spec_path(spec: SpecInput, tmp: Path, spec_dir: Path | None) -> tuple[Path, Path | None]:
    """A file holding ``spec`` (its own path when it is one, else written under ``tmp``) and the
    root its bases must live in (None: the loader's default)."""
    if isinstance(spec, os.PathLike):
        return Path(spec), None
    if isinstance(spec, str) and "\n" not in spec and spec.endswith((".yaml", ".yml")) and Path(spec).is_file():
        return Path(spec), None
    if not isinstance(spec, str | Mapping):
        raise TypeError(f"a spec is a path, YAML text or a dict, not {type(spec).__name__}")
    path = tmp / "spec.yaml"
    root = None
    if spec_dir is not None:
        data = yaml.safe_load(spec) if isinstance(spec, str) else dict(spec)
        if isinstance(data, dict) and isinstance(data.get("extends"), list):
            data["extends"] = [str(spec_dir.resolve() / e) if isinstance(e, str) else e for e in data["extends"]]
        spec = data
        root = spec_root(spec_dir.resolve() / "spec.yaml")
    text = spec if isinstance(spec, str) else yaml.safe_dump(dict(spec), sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path, root


def render_input(spec: SpecInput, resource: pulumi.Resource, spec_dir: Any = None) -> tuple[Spec, Bundle]:
    """Validate and build a resolved `SpecInput` exactly as ``accelplane render`` does. Findings are
    logged on ``resource`` as ``accelplane validate`` prints them (``pulumi.log.warn`` per warning,
    ``pulumi.log.error`` per error); errors then raise `pulumi.RunError`, before any child is
    registered. Text and dicts are written to a private temporary file (``extends`` in them is
    relative to ``spec_dir``)."""
    from accelplane.errors import SpecErrors
    from accelplane.pipeline import render_spec

    with tempfile.TemporaryDirectory(prefix="accelplane-spec-") as tmp:
        path, root = _spec_path(spec, Path(tmp), Path(spec_dir) if spec_dir is not None else None)
        try:
            rendered = render_spec(path, root)
        except SpecErrors as exc:
            errors = exc.errors
            for error in errors:
                log = pulumi.log.warn if error.is_warning else pulumi.log.error
                log(text_line(error), resource=resource)
            # the lines again in the error itself: a provider serving Construct may end before the
            # engine received the logs
            lines = "\n".join(text_line(e) for e in errors if not e.is_warning)
            raise pulumi.RunError(f"accelplane: the spec of {resource._name} is invalid:\n{lines}") from None
    for warning in rendered.validated.warnings:
        pulumi.log.warn(text_line(warning), resource=resource)
    return rendered.model, rendered.bundle


def file_entries(
    bundle: Bundle, files: Mapping[str, tuple[str, int]] | None = None
) -> dict[str, dict[str, str]]:
    """Every file `accelplane render` writes for ``bundle`` → ``{"sha256", "mode", "family"}``.

    ``files`` is `bundle_files(bundle)` if the caller has it (serialising the bundle is the costly
    part), else it is computed here."""
    family = {f"kubernetes/{o.filename}": o.family for o in bundle.objects}
    family.update({f.path: file_family(f) for f in bundle.files})
    return {
        path: {"sha256": sha256(text), "mode": f"{mode:04o}", "family": family[path]}
        for path, (text, mode) in (bundle_files(bundle) if files is None else files).items()
    }


@dataclass
class _ProgramObjects:
    """Per program (root stack resource): who owns each Kubernetes object, per provider."""

    owners: dict[tuple[int, tuple[str, str, str, str]], tuple[Owner, pulumi.CustomResource]]
    aliased: str | None = None


_PROGRAMS: weakref.WeakKeyDictionary[Any, _ProgramObjects] = weakref.WeakKeyDictionary()


def _program_objects() -> _ProgramObjects:
    """The current program's shared-object table (a fresh one per root stack resource, so tests that
    run several programs in one process do not share it)."""
    root = pulumi.runtime.get_root_resource()
    if root is None:
        return _ProgramObjects({})
    found = _PROGRAMS.get(root)
    if found is None:
        found = _PROGRAMS[root] = _ProgramObjects({})
    return found


def _kind_matches(obj: K8sObject, kind: str) -> bool:
    """``kind`` is ``Kind`` or ``apiVersion/Kind`` (``v1/ConfigMap``, ``apps/v1/DaemonSet``)."""
    if "/" in kind:
        api_version, _, bare = kind.rpartition("/")
        return obj.api_version == api_version and obj.kind == bare
    return obj.kind == kind


def file_texts(bundle: Bundle) -> dict[str, str]:
    """Path → text of the files no Kubernetes API receives: neither a ConfigMap's data value nor
    embedded in an object (`FileArtifact.in_object`). The others are in the state already, as the
    inputs of the objects carrying them; their digests stay in ``files``."""
    applied: set[str] = set()
    for o in bundle.objects:
        if o.kind == "ConfigMap" and o.api_version == "v1":
            data = o.manifest.get("data")
            if isinstance(data, Mapping):
                applied.update(v for v in data.values() if isinstance(v, str))
    return {f.path: f.text for f in bundle.files if not f.in_object and f.text not in applied}


class GpuPlatform(pulumi.ComponentResource):
    """One GPU Flink platform (one cluster spec): ``accelplane:index:GpuPlatform``.

    The constructor registers the component, a component per artifact family and every Kubernetes
    object of the bundle (children of their family's component, in dependency order), then the
    component's outputs.

    Typed outputs, each resolved once every child resource is registered and carrying a dependency
    on all of them (a resource fed from one waits for the platform's objects):

    * `cluster` — the spec's name;
    * `queue_names`, `priority_class_names`, `namespaces` — names of the Volcano Queues,
      PriorityClasses and Namespaces the platform creates;
    * `pod_group_names` — ``namespace/name`` of its PodGroups;
    * `objects` — logical names (``kind/namespace/name``) of every Kubernetes object;
    * `files` — every file `accelplane render` writes → ``{"sha256", "mode", "family"}``;
    * `file_contents` — text of the files no Kubernetes API receives (YARN XML, Flink configuration,
      node provisioning, node image context).

    `get_resource` returns the Pulumi resource of one object. The component's registered outputs
    are ``cluster``, ``queueNames``, ``priorityClassNames``, ``podGroupNames``, ``namespaces`` and
    ``objects``; ``files``/``fileContents`` are left to the program's stack outputs, so the state
    holds them once.
    """

    # The class-level annotations are exactly the component's outputs: Pulumi's schema analyzer
    # (pulumi.provider.experimental, accelplane.pulumi.package) reads them, evaluated (this module
    # does not postpone annotations). Other attributes are annotated where `__init__` sets them.
    cluster: pulumi.Output[str]
    """The cluster spec's name."""
    queue_names: pulumi.Output[list[str]]
    """Names of the Volcano Queues the platform creates."""
    priority_class_names: pulumi.Output[list[str]]
    """Names of the PriorityClasses the platform creates."""
    pod_group_names: pulumi.Output[list[str]]
    """``namespace/name`` of the Volcano PodGroups the platform creates."""
    namespaces: pulumi.Output[list[str]]
    """Names of the Namespaces the platform creates."""
    objects: pulumi.Output[list[str]]
    """Logical names (``kind/namespace/name``) of every Kubernetes object of the platform."""
    files: pulumi.Output[dict[str, dict[str, str]]]
    """Every file ``accelplane render`` writes → ``{sha256, mode, family}``."""
    file_contents: pulumi.Output[dict[str, str]]
    """Text of the files no Kubernetes API receives (YARN XML, Flink configuration, node files)."""

    @classmethod
    def create(
        cls, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None
    ) -> "GpuPlatform":
        """Alias of the constructor (kept for programs written against accelplane ≤ 0.1)."""
        return cls(name, args, opts)

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Register the platform, its family components and every object (see the class docstring).

        Raises `PlanError` when the bundle cannot be applied (an unsupported kind, a dependency
        cycle, two platforms asking to alias the previous names) and `pulumi.RunError` when another
        platform of the program wants one of its objects with other contents (finding AP6080,
        logged on the component first)."""
        super().__init__("accelplane:index:GpuPlatform", name, None, opts)
        self._name = name
        self.families: dict[str, FamilyComponent] = {}
        self.resources: dict[ObjectKey, pulumi.CustomResource] = {}
        """Every object's resource (an object another platform owns: that platform's resource)."""
        self.bundle = Bundle()
        self.output_values: dict[str, Any] = dict.fromkeys(
            ("cluster", "queueNames", "priorityClassNames", "podGroupNames", "namespaces", "objects")
        )
        """The plain values of the component's registered outputs (camelCase keys)."""
        self.rendered_files: dict[str, tuple[str, int]] = {}
        """`bundle_files(bundle)`: every file `accelplane render` writes, serialised once for ``files``
        (and for the program's render tree)."""
        self.file_entries: dict[str, dict[str, str]] = {}
        """The plain value of `files`."""
        self.file_texts: dict[str, str] = {}
        """The plain value of `file_contents`."""
        spec = args.spec
        if isinstance(spec, Spec):
            if args.bundle is None:
                raise TypeError("GpuPlatformArgs: a typed Spec needs its bundle (accelplane.pipeline.render_spec)")
            gate = self._build(spec, args.bundle, args)
        elif has_inputs(spec):
            # validated and built once every Input resolved; the children are registered then
            # Registered inside the apply, the children would not depend on the resources the spec's
            # Inputs come from: an Output in depends_on adds its resources (and resolves to no
            # resource of its own).
            spec_output = pulumi.Output.from_input(spec)
            inputs_resources = [spec_output.apply(lambda _: None)]
            gate = spec_output.apply(
                lambda resolved: self._build(*render_input(resolved, self, args.spec_dir), args, inputs_resources)
            )
        else:
            gate = self._build(*render_input(spec, self, args.spec_dir), args)

        def after_children(key: str) -> pulumi.Output[Any]:
            return gate.apply(lambda _: self._values[key])

        self.cluster = after_children("cluster")
        self.queue_names = after_children("queueNames")
        self.priority_class_names = after_children("priorityClassNames")
        self.pod_group_names = after_children("podGroupNames")
        self.namespaces = after_children("namespaces")
        self.objects = after_children("objects")
        self.files = after_children("files")
        self.file_contents = after_children("fileContents")
        if isinstance(spec, Spec):
            self.register_outputs(self.output_values)
        else:  # the values are known once the spec is built
            self.register_outputs({k: after_children(k) for k in self.output_values})

    @property
    def _values(self) -> dict[str, Any]:
        return {**self.output_values, "files": self.file_entries, "fileContents": self.file_texts}

    def _build(
        self, spec: Spec, bundle: Bundle, args: GpuPlatformArgs, extra_deps: Sequence[Any] = ()
    ) -> pulumi.Output[Any]:
        """Compute the outputs' values and register the children (each also depending on
        ``extra_deps``); return an Output that resolves once every child is registered and depends
        on all of them."""
        name = self._name
        self.bundle = bundle
        prefix = name if args.resource_prefix is None else args.resource_prefix
        prepared_list = kinds.prepare_all(bundle.objects)
        names: dict[str, list[str]] = {}
        for o in bundle.objects:
            names.setdefault(o.kind, []).append(f"{o.namespace}/{o.name}" if o.namespace else o.name)
        for found in names.values():
            found.sort()
        self.rendered_files = bundle_files(bundle)
        self.file_entries = file_entries(bundle, self.rendered_files)
        self.file_texts = file_texts(bundle)
        self.output_values = {
            "cluster": spec.name,
            "queueNames": names.get("Queue", []),
            "priorityClassNames": names.get("PriorityClass", []),
            "podGroupNames": names.get("PodGroup", []),
            "namespaces": names.get("Namespace", []),
            "objects": sorted(p.name for p in prepared_list),
        }
        program = _program_objects()
        if args.alias_previous_names and prefix:
            if program.aliased is not None:
                raise PlanError(
                    f"platforms {program.aliased!r} and {name!r} both alias the previous (unprefixed) child "
                    "names; the engine allows one resource per alias: set alias_previous_names on one only"
                )
            program.aliased = name
        self._register_children(prepared_list, prefix, args.alias_previous_names, program, extra_deps)
        return pulumi.Output.all(self.urn, *(r.urn for r in self.resources.values()))

    def _register_children(
        self,
        prepared_list: list[kinds.Prepared],
        prefix: str,
        alias: bool,
        program: _ProgramObjects,
        extra_deps: Sequence[Any] = (),
    ) -> None:
        """A component per family, then every object as a child of its family's component in one
        global dependency order; an object another platform of the program registered identically
        for the same provider is that platform's resource (`accelplane.pulumi.sharing`)."""
        bundle = self.bundle
        prepared = {p.obj.key: p for p in prepared_list}
        deps = dependencies(bundle.objects)
        order = creation_order(bundle.objects, deps)
        members: dict[str, list[K8sObject]] = {}
        for obj in bundle.objects:
            members.setdefault(obj.family, []).append(obj)
        files: dict[str, list[FileArtifact]] = {}
        for f in bundle.files:
            files.setdefault(file_family(f), []).append(f)
        digests = {path: entry["sha256"] for path, entry in self.file_entries.items()}  # hashed once
        for family in families(bundle):
            component_class = FAMILY_COMPONENTS.get(family, FamilyComponent)
            family_args = FamilyArgs(
                family=family,
                objects=tuple(members.get(family, ())),
                files=tuple(files.get(family, ())),
                digests=digests,
            )
            self.families[family] = component_class(
                f"{self._name}-{family}", family_args, pulumi.ResourceOptions(parent=self)
            )
        resources = self.resources
        conflicts = []
        for obj in order:
            key = obj.key
            p = prepared[key]
            component = self.families[obj.family]
            provider = component.get_provider(p.type_token)
            owner_key = (id(provider), key)
            owned = program.owners.get(owner_key)
            if owned is not None:
                problem = conflict(owned[0], self._name, obj)
                if problem is not None:
                    conflicts.append(problem)
                    continue
                component.share(obj, owned[1])
                resources[key] = owned[1]
                continue
            child = f"{prefix}:{p.name}" if prefix else p.name
            aliases = [pulumi.Alias(name=p.name)] if alias and prefix else []
            depends_on = [*(resources[k] for k in deps[key] if k in resources), *extra_deps]
            resources[key] = component.add(obj, depends_on, p, name=child, aliases=aliases)
            program.owners[owner_key] = (Owner(self._name, obj.manifest), resources[key])
        if conflicts:
            for problem in conflicts:
                pulumi.log.error(text_line(problem), resource=self)
            raise pulumi.RunError(
                f"accelplane: platform {self._name!r} shares Kubernetes objects with another platform of this "
                f"program with different contents ({len(conflicts)} objects; see the errors above)"
            )
        for component in self.families.values():
            component.complete()

    def get_resource(self, kind: str, name: str, namespace: str | None = None) -> pulumi.CustomResource:
        """The Pulumi resource of the platform's object ``kind``/``namespace``/``name`` (``kind`` is
        ``Kind`` or ``apiVersion/Kind``, as Helm's ``Chart.get_resource``); `KeyError` naming the
        objects of that kind when there is none."""
        found = [
            self.resources[o.key]
            for o in self.bundle.objects
            if o.name == name and (o.namespace or "") == (namespace or "") and _kind_matches(o, kind)
        ]
        if len(found) == 1:
            return found[0]
        have = sorted(logical_name(o) for o in self.bundle.objects if _kind_matches(o, kind))
        where = f"{namespace}/{name}" if namespace else name
        raise KeyError(f"{self._name}: no {kind} {where} (or more than one); the platform has {have}")
