"""accelplane as a Pulumi component package, for programs in any language (TypeScript, Go, …).

Pulumi's Python component provider host (``pulumi.provider.experimental``) serves `GpuPlatform`
over gRPC and infers the package schema from the type annotations below: the args (`GpuPlatformArgs`,
a TypedDict) and the outputs (the class-level ``pulumi.Output`` annotations of
`accelplane.pulumi.platform.GpuPlatform`). `PACKAGE` is the package name, so the component's type
token is ``accelplane:index:GpuPlatform`` — the same as a Python program's.

The plugin is ``provider/`` (``PulumiPlugin.yaml`` + ``__main__.py``, which calls `serve`);
docs/pulumi.md, "Other languages", has the steps to add it to a program and generate an SDK.

This module does not postpone annotations: the analyzer reads them as objects.
"""

from typing import Optional, TypedDict

import pulumi

from accelplane.pulumi import platform

PACKAGE = "accelplane"
VERSION = "0.1.0"


class GpuPlatformArgs(TypedDict):
    """Inputs of the GpuPlatform component."""

    spec: pulumi.Input[str]
    """The cluster spec: its YAML text, or the path of the spec file (relative to the program's
    working directory). Validated and built as `accelplane render` does; findings are logged on the
    component, and errors stop the program before any child is registered."""
    # Optional, not NotRequired: the analyzer of the oldest pulumi pyproject allows knows only Optional
    spec_dir: Optional[pulumi.Input[str]]  # noqa: UP045 (the analyzer needs typing.Optional)
    """For a spec given as text: the directory its `extends` entries are relative to."""
    resource_prefix: Optional[pulumi.Input[str]]  # noqa: UP045
    """Prefix of every child resource's name (`<prefix>:<kind>/<namespace>/<name>`); default: the
    component's name; empty: none."""


class GpuPlatform(platform.GpuPlatform):
    """One GPU-aware Apache Flink platform (one accelplane cluster spec): Volcano or YuniKorn queues,
    PriorityClasses, PodGroups, GPU device plugins, Flink clusters, discovery ConfigMaps, monitoring,
    and the digests of every file `accelplane render` writes."""

    # the outputs of `platform.GpuPlatform`, annotated again here because the analyzer reads the
    # schema's descriptions from this class's own source
    cluster: pulumi.Output[str]
    """The cluster spec's name."""
    queue_names: pulumi.Output[list[str]]
    """Names of the Volcano Queues the platform creates."""
    priority_class_names: pulumi.Output[list[str]]
    """Names of the PriorityClasses the platform creates."""
    pod_group_names: pulumi.Output[list[str]]
    """`namespace/name` of the Volcano PodGroups the platform creates."""
    namespaces: pulumi.Output[list[str]]
    """Names of the Namespaces the platform creates."""
    objects: pulumi.Output[list[str]]
    """Logical names (`kind/namespace/name`) of every Kubernetes object of the platform."""
    files: pulumi.Output[dict[str, dict[str, str]]]
    """Every file `accelplane render` writes → `{sha256, mode, family}`."""
    file_contents: pulumi.Output[dict[str, str]]
    """Text of the files no Kubernetes API receives (YARN XML, Flink configuration, node files)."""

    def __init__(
        self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """The platform from the package's inputs (the provider calls this for Construct)."""
        # plain strings in practice (the engine resolves them before Construct); anything else
        # counts as not given
        prefix = args.get("resource_prefix")
        spec_dir = args.get("spec_dir")
        super().__init__(
            name,
            platform.GpuPlatformArgs(
                spec=args["spec"],
                resource_prefix=prefix if isinstance(prefix, str) else None,
                spec_dir=spec_dir if isinstance(spec_dir, str) else None,
            ),
            opts,
        )


def serve(version: str = VERSION) -> None:
    """Run the component provider (the plugin's ``__main__``; the engine passes its address)."""
    import inspect

    from pulumi.provider.experimental import component_provider_host

    # pulumi < 3.17x hosts without a version (the SDK generator then sees 0.0.0)
    versioned = "version" in inspect.signature(component_provider_host).parameters
    component_provider_host([GpuPlatform], name=PACKAGE, **({"version": version} if versioned else {}))
