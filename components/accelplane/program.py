"""The Pulumi program: one stack per cluster spec (``__main__.py`` calls `main`).

Stack configuration (``stacks/Pulumi.<stack>.yaml``, see docs/pulumi.md):

* ``accelplane:spec`` (required) — the cluster spec, relative to the project directory (the one
  holding ``Pulumi.yaml``; Pulumi runs the program there) or absolute;
* ``accelplane:renderDir`` (optional) — on ``pulumi up`` (never on preview), once every Kubernetes
  resource was applied, write the complete render tree there, byte for byte what
  ``accelplane render --out`` writes (relative to the project directory);
* ``kubernetes:kubeconfig`` / ``kubernetes:context`` (optional) — passed to the explicit Kubernetes
  provider the program creates for clusters on the ``kubernetes`` platform.

An invalid spec fails the program with exactly the ``file: path: message`` lines
``accelplane validate`` prints, and no resource is registered.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from accelplane.digests import sha256
from accelplane.errors import SpecErrors
from accelplane.finding_output import text_line, text_report
from accelplane.pipeline import RenderedSpec, render_spec
from accelplane.pulumi.planning import PlanError
from accelplane.pulumi.platform import GpuPlatform, GpuPlatformArgs
from accelplane.render import write_tree

PROJECT = "accelplane"
PROVIDER_NAME = "kubernetes"


@dataclass(frozen=True)
class ProgramSettings:
    """What the stack configuration asks for, paths resolved against the project directory."""

    spec: Path
    render_dir: Path | None
    kubeconfig: str | None
    context: str | None


def read_settings(project_dir: Path) -> ProgramSettings:
    """Read ``accelplane:*`` and ``kubernetes:*`` stack configuration."""
    config = pulumi.Config(PROJECT)
    kube_config = pulumi.Config("kubernetes")
    render_dir = config.get("renderDir")
    spec = config.require("spec")
    # name the spec as configured in messages (Pulumi runs the program in the project directory)
    here = os.path.isabs(spec) or Path.cwd().resolve() == project_dir.resolve()
    return ProgramSettings(
        spec=Path(spec) if here else project_dir / spec,
        render_dir=project_dir / render_dir if render_dir else None,
        kubeconfig=kube_config.get("kubeconfig"),
        context=kube_config.get("context"),
    )


def spec_error_text(exc: SpecErrors) -> str:
    """The text ``accelplane validate`` prints on stderr for these errors (same lines, same order)."""
    return text_report(exc.errors).rstrip("\n")


def load(settings: ProgramSettings) -> RenderedSpec:
    """Validate and build the stack's spec exactly like the CLI; an invalid spec is a clean
    `pulumi.RunError`. Warnings go to ``pulumi.log.warn`` (one per finding, as `validate` prints
    them) and the program proceeds."""
    try:
        rendered = render_spec(settings.spec)
    except SpecErrors as exc:
        raise pulumi.RunError(spec_error_text(exc)) from None
    for warning in rendered.validated.warnings:
        pulumi.log.warn(text_line(warning))
    return rendered


def kubernetes_provider(settings: ProgramSettings) -> k8s.Provider:
    """The explicit provider every Kubernetes resource of the stack uses.

    ``enable_config_map_mutable`` makes changed data of a mutable ConfigMap (the Volcano scheduler
    configuration) an in-place update instead of a delete-and-recreate of a name other components
    mount; immutable ConfigMaps are content-addressed and never change in place (docs/pulumi.md).
    """
    return k8s.Provider(
        PROVIDER_NAME,
        kubeconfig=settings.kubeconfig,
        context=settings.context,
        enable_config_map_mutable=True,
    )


def tune_collector() -> None:
    """Set CPython's cyclic garbage collector for a program process; return nothing.

    `pulumi up` runs ``__main__.py`` in a fresh interpreter that ends with the program, and that
    interpreter's collector walks every live object on each full collection: the modules imported
    so far (pulumi, grpc, pulumi_kubernetes' API groups, accelplane) are most of them and live
    until the end. ``gc.freeze`` moves what exists now into the permanent generation, which no
    collection walks again, and ``gc.set_threshold(200_000, 30, 30)`` (mypy's setting for its own
    process) collects the young generation after 200,000 allocations rather than 700, so the
    hundreds of thousands of objects registration creates (outputs, futures, tasks) are walked a
    few times instead of hundreds. At 16 units (515 objects) the program's CPU time falls by about
    15 % for about 5 MiB more peak memory (docs/benchmarks.md, issue 40). Only ``__main__.py``
    calls it: a program that embeds `GpuPlatform` keeps its own collector settings."""
    gc.freeze()
    gc.set_threshold(200_000, 30, 30)


def main(project_dir: str | os.PathLike[str] | None = None) -> GpuPlatform:
    """Build the stack: one `GpuPlatform` for the configured spec, stack outputs, optional render tree."""
    root = Path(project_dir) if project_dir is not None else Path.cwd()
    settings = read_settings(root)
    rendered = load(settings)
    spec = rendered.model
    opts = None
    if spec.has_platform("kubernetes"):
        opts = pulumi.ResourceOptions(providers=[kubernetes_provider(settings)])
    try:
        # one platform per stack: no prefix, so the children keep the names (and URNs) stacks made
        # by earlier releases have, without aliases (which cost the SDK a third of the registration)
        platform = GpuPlatform(spec.name, GpuPlatformArgs(spec=spec, bundle=rendered.bundle, resource_prefix=""), opts)
    except PlanError as exc:
        raise pulumi.RunError(f"accelplane: cannot build the Pulumi program for {spec.name}: {exc}") from None

    for key, value in platform.output_values.items():
        pulumi.export(key, value)
    pulumi.export("files", platform.file_entries)
    pulumi.export("fileContents", platform.file_texts)
    pulumi.export(
        "specFiles",
        {
            os.path.relpath(p, root): sha256(p.read_text(encoding="utf-8"))
            for p in sorted(rendered.validated.loaded.files)
        },
    )
    if settings.render_dir is not None:
        export_render_dir(platform, settings.render_dir)
    return platform


def export_render_dir(platform: GpuPlatform, render_dir: Path) -> None:
    """On an update, write the render tree once every Kubernetes resource is applied; export its path.

    The tree is the platform's `GpuPlatform.rendered_files` (serialised once, for the ``files``
    stack output). A preview never writes (the output stays the configured path)."""
    if pulumi.runtime.is_dry_run():
        pulumi.export("renderDir", str(render_dir))
        return
    files = platform.rendered_files
    applied = pulumi.Output.all(*(r.id for r in platform.resources.values()))
    pulumi.export("renderDir", applied.apply(lambda _: str(write_tree(files, render_dir))))
