"""One way through the house: spec file → merged document → schema → model → checks.

Both the CLI and the Pulumi program call `load_validated`, so they report identical errors.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from accelplane.checks import run_checks
from accelplane.errors import SpecErrors
from accelplane.model import Spec, build_model
from accelplane.schema import validate_document
from accelplane.spec_loader import LoadedSpec, load_spec


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
