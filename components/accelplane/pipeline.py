"""One way through the house: spec file → merged document → schema → model → checks → bundle → files.

`load_validated` stops after the checks (what `accelplane validate` needs); `render_spec` goes on to
the builders' bundle and the files `accelplane render` writes. The CLI, `diff`, the Pulumi program,
the benchmarks and the tests all call these two, so they report identical errors and see identical
output.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from accelplane.checks import run_checks
from accelplane.errors import SpecErrors
from accelplane.model import Spec, build_model
from accelplane.schema import validate_document
from accelplane.spec_loader import LoadedSpec, load_spec

if TYPE_CHECKING:
    from accelplane.artifacts import Bundle


@dataclass(frozen=True)
class ValidatedSpec:
    """A spec that passed every check: the loaded document and its typed model."""

    loaded: LoadedSpec
    model: Spec


def load_validated(path: str | os.PathLike[str]) -> ValidatedSpec:
    """Load, merge, validate and model a cluster spec; raise `SpecErrors` with every problem."""
    loaded = load_spec(path)
    problems = validate_document(loaded.data)
    if problems:
        raise SpecErrors(loaded.errors(problems))
    model, problems = build_model(loaded.data)
    if model is None:
        raise SpecErrors(loaded.errors(problems))
    problems = run_checks(model)
    if problems:
        raise SpecErrors(loaded.errors(problems))
    return ValidatedSpec(loaded, model)


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


def render_spec(path: str | os.PathLike[str]) -> RenderedSpec:
    """Load, validate and build a cluster spec; raise `SpecErrors` with every problem.

    The builders are imported here, not at module level, so `accelplane validate` never loads them.
    """
    from accelplane.builders import build_all

    validated = load_validated(path)
    return RenderedSpec(validated, build_all(validated.model))
