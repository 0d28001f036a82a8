"""Family names agree everywhere: builders' tags, `builders.FAMILIES`, the Pulumi components."""

from __future__ import annotations

import pytest
from accelplane.artifacts import Bundle, FileArtifact
from accelplane.builders import BUILDER_MODULES, FAMILIES, DuplicateArtifactError, FamilyTagError, build_all
from accelplane.pipeline import load_validated

from tests.conftest import EXAMPLE_SPECS


@pytest.mark.parametrize("spec_path", EXAMPLE_SPECS, ids=lambda p: p.stem)
def test_every_artifact_is_tagged_with_a_known_family(spec_path) -> None:
    bundle = build_all(load_validated(spec_path).model)
    tags = {o.family for o in bundle.objects} | {f.family for f in bundle.files}
    assert tags <= set(FAMILIES)


def test_pulumi_components_use_the_builders_family_names() -> None:
    from accelplane.pulumi.platform import FAMILY_COMPONENTS

    assert set(FAMILY_COMPONENTS) <= set(FAMILIES)


def test_a_builder_tagging_another_family_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    module = BUILDER_MODULES[0]
    stray = FileArtifact("x/y.txt", "text\n", family="elsewhere")
    monkeypatch.setattr(module, "build", lambda spec: Bundle(files=[stray]))
    with pytest.raises(FamilyTagError, match="tagged artifacts \\['elsewhere'\\]"):
        build_all(load_validated(EXAMPLE_SPECS[0]).model)


def test_an_artifact_produced_twice_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builders (here one builder twice) producing the same object or file path is a bug that
    would make one silently overwrite the other: `build_all` names every duplicate."""
    spec = load_validated(EXAMPLE_SPECS[0]).model
    module = next(m for m in BUILDER_MODULES if m.build(spec).objects and m.build(spec).files)
    part = module.build(spec)
    obj, file = part.objects[0], part.files[0]
    monkeypatch.setattr(module, "build", lambda spec: Bundle(objects=[obj, obj], files=[file, file]))
    with pytest.raises(DuplicateArtifactError) as exc:
        build_all(spec)
    assert str(exc.value) == f"artifacts produced twice: {sorted([str(obj.key), file.path])}"
