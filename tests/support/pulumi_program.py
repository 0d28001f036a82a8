"""Helpers for the Pulumi tests: wire-format normalisation, render-side expectations, spec copies."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from accelplane.cli import main as cli_main

from tests.conftest import STACKS_DIR
from tests.pulumi.conftest import ProgramRun, Registration
from tests.support.paths import REPO_ROOT
from tests.support.specs import write_spec

PULUMI_STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def normalise(value: Any) -> Any:
    """Undo the wire format's only lossy step: integral floats back to ints (``4.0`` → ``4``)."""
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def type_token(api_version: str, kind: str) -> str:
    """The Pulumi type token pulumi_kubernetes registers for an (apiVersion, kind)."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


def canonical(type_: str, inputs: dict[str, Any]) -> tuple[str, str, str, str]:
    """(type token, namespace, name, inputs as canonical JSON) — the unit the parity test compares."""
    data = normalise(inputs)
    meta = data.get("metadata", {})
    return (type_, meta.get("namespace", ""), meta.get("name", ""), json.dumps(data, sort_keys=True))


def registered_objects(run: ProgramRun) -> set[tuple[str, str, str, str]]:
    """What the program registered, in canonical form."""
    return {canonical(r.type, r.inputs) for r in run.kubernetes()}


def rendered_objects(render_dir: Path) -> set[tuple[str, str, str, str]]:
    """What `accelplane render` wrote under ``kubernetes/``, parsed back, in canonical form."""
    out = set()
    for path in (
        sorted((render_dir / "kubernetes").glob("*.yaml")) if (render_dir / "kubernetes").is_dir() else []
    ):
        manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.add(canonical(type_token(manifest["apiVersion"], manifest["kind"]), manifest))
    return out


def render_with_cli(spec: Path | str, out: Path) -> Path:
    """Run ``accelplane render SPEC --out OUT`` through the real CLI entry point."""
    assert cli_main(["render", str(spec), "--out", str(out), "--quiet"]) == 0
    return out


def tree(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``directory`` → (bytes, permission bits)."""
    return {
        p.relative_to(directory).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def spec_of(stack: str) -> str:
    """The ``accelplane:spec`` of an example stack."""
    data = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    spec: str = data["config"]["accelplane:spec"]
    return spec


def copy_project(dest: Path, transform: Callable[[str, Any], Any] | None = None) -> Path:
    """Copy ``stacks/`` (specs, bases, stack files) into ``dest``; ``transform(relative path, data)``
    may rewrite each spec document. Returns ``dest`` (a project directory for the program)."""
    for src in sorted(STACKS_DIR.rglob("*.yaml")):
        rel = src.relative_to(REPO_ROOT).as_posix()
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if transform is None or src.name.startswith("Pulumi."):
            shutil.copyfile(src, target)
        else:
            data = transform(rel, yaml.safe_load(src.read_text(encoding="utf-8")))
            write_spec(target.parent, data, target.name)
    return dest


def by_name(run: ProgramRun) -> dict[str, Registration]:
    """Kubernetes registrations by logical name."""
    return {r.logical: r for r in run.kubernetes()}
