"""One way through the house: spec file → merged document → schema → model → checks → bundle → files.

`load_validated` stops after the checks (what `accelplane validate` needs); `render_spec` goes on to
the builders' bundle and the files `accelplane render` writes. The CLI, `diff`, the Pulumi program,
the benchmarks and the tests all call these two, so they report identical errors and see identical
output.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accelplane.checks import run_checks
from accelplane.errors import PathTuple, Problem, SpecError, SpecErrors
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.schema import schema_failures
from accelplane.spec_loader import LoadedSpec, load_document

if TYPE_CHECKING:
    from accelplane.artifacts import Bundle


@dataclass(frozen=True)
class ValidatedSpec:
    """A spec that passed every check: the loaded document and its typed model."""

    loaded: LoadedSpec
    model: Spec
    warnings: tuple[SpecError, ...] = ()


def _model_and_checks(
    data: dict[str, Any], inherited: Mapping[str, frozenset[tuple[str, ...]]] | None = None
) -> tuple[list[PathTuple], list[Problem]]:
    """Paths the model could not convert, or else the semantic problems of ``data``."""
    model, problems = build_model(data, inherited)
    if model is None:
        return [p.path for p in problems], []
    return [], run_checks(model)


def _outcome(loaded: LoadedSpec, problems: list[Problem], *, complete: bool) -> list[SpecError]:
    """Every finding of ``loaded`` (loader findings and ``problems``), located, after the spec's
    ``lint.ignore`` rules (`accelplane.lint`)."""
    from accelplane.lint import apply_ignores, ignores

    rules = ignores(loaded.data)
    load_errors = loaded.load_errors
    if rules:
        problems, load_errors = apply_ignores(rules, problems, load_errors, loaded.locate, complete=complete)
    return load_errors + loaded.errors(problems)


def load_validated(path: str | os.PathLike[str], root: Path | None = None) -> ValidatedSpec:
    """Load, merge, validate and model a cluster spec; raise `SpecErrors` when any finding is an
    error (the exception then carries the warnings too, so they are shown alongside).

    Every problem is reported at once: loader problems that leave the document complete, schema
    errors, and the semantic problems of the parts the schema accepted (`accelplane.salvage`).
    Warnings never stop a spec: they are returned in ``ValidatedSpec.warnings`` (minus those the
    spec silences in ``lint.ignore``). ``root`` overrides the directory bases must live in (see
    `accelplane.spec_loader.spec_root`).
    """
    loaded = load_document(path, root)
    inherited = loaded.inherited_defaults()
    failures = schema_failures(loaded.data)
    load_errors = [e for e in loaded.load_errors if not e.is_warning]
    if failures or load_errors:
        from accelplane.salvage import duplicate_entries, salvage_problems

        def reported(path: PathTuple) -> bool:
            return any(path[: len(r)] == r for r in loaded.reported)

        failures = [f for f in failures if not all(reported(t) for t in f.targets)]
        invalid = [(t, f.bound) for f in failures for t in f.targets] + [(r, None) for r in loaded.reported]
        problems = [f.problem for f in failures]
        problems += salvage_problems(
            loaded.data, invalid, partial(_model_and_checks, inherited=inherited), duplicate_entries(loaded.data)
        )
        raise SpecErrors(_outcome(loaded, problems, complete=False))
    model, problems = build_model(loaded.data, inherited)
    if model is None:
        from accelplane.salvage import salvage_problems

        problems += salvage_problems(
            loaded.data, [(p.path, None) for p in problems], partial(_model_and_checks, inherited=inherited)
        )
        raise SpecErrors(_outcome(loaded, problems, complete=False))
    found = _outcome(loaded, run_checks(model), complete=True)
    if any(not e.is_warning for e in found):
        raise SpecErrors(found)
    return ValidatedSpec(loaded, model, tuple(sorted(set(found))))


class RenderedSpec:
    """A validated spec with everything built from it: the bundle and, on first use, its files."""

    def __init__(self, validated: ValidatedSpec, bundle: Bundle) -> None:
        self.validated = validated
        self.bundle = bundle

    @property
    def model(self) -> Spec:
        """The typed model the bundle was built from."""
        return self.validated.model

    @cached_property
    def files(self) -> dict[str, tuple[str, int]]:
        """``{relative path: (text, mode)}`` exactly as `accelplane render` writes them (serialised
        once, on first use: the Pulumi program needs the bundle but rarely the text)."""
        from accelplane.render import bundle_files

        return bundle_files(self.bundle)


def render_spec(path: str | os.PathLike[str], root: Path | None = None) -> RenderedSpec:
    """Load, validate and build a cluster spec; raise `SpecErrors` with every problem.

    The builders are imported here, not at module level, so `accelplane validate` never loads them.
    ``root`` is as for `load_validated`.
    """
    from accelplane.builders import build_all

    validated = load_validated(path, root)
    return RenderedSpec(validated, build_all(validated.model))
