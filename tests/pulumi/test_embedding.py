"""accelplane as a component of a user's own Pulumi program (issue 40): the constructor registers
everything, several platforms compose in one program without duplicate URNs under the engine's URN
rules, objects two platforms want have one owner, typed Outputs carry dependencies, resources are
the public typed classes, and a user's transformation cannot corrupt the bundle."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from accelplane.digests import sha256
from accelplane.pipeline import RenderedSpec, render_spec
from accelplane.pulumi.platform import GpuPlatform, GpuPlatformArgs
from accelplane.render import bundle_files

from tests.pulumi.conftest import ProgramRun, RunProgram
from tests.support.engine_urns import duplicates, engine_urns
from tests.support.paths import REPO_ROOT

STACK = "team"


def rendered(name: str) -> RenderedSpec:
    return render_spec(REPO_ROOT / "stacks" / f"{name}.yaml")


def engine(run: ProgramRun) -> list[str]:
    return [e for _, e in engine_urns(run.requests, STACK, "accelplane")]


def test_the_constructor_registers_every_object(pulumi_run: RunProgram) -> None:
    r = rendered("prod-eu")
    run = pulumi_run({}, stack=STACK, program=lambda: GpuPlatform("prod-eu", GpuPlatformArgs(r.model, r.bundle)))
    assert len(run.kubernetes()) == len(r.bundle.objects) > 30
    # `create` is only an alias of the constructor
    again = pulumi_run(
        {}, stack=STACK, program=lambda: GpuPlatform.create("prod-eu", GpuPlatformArgs(r.model, r.bundle))
    )
    assert sorted(q.urn for q in again.registrations) == sorted(q.urn for q in run.registrations)


def two_platforms(names: tuple[str, str], specs: tuple[str, str], *, one_cluster: bool) -> Any:
    """A user's program: its own parent component and provider(s), two platforms under it."""

    def program() -> None:
        parent = pulumi.ComponentResource("team:index:GpuFleet", "fleet")
        first = k8s.Provider("eu", opts=pulumi.ResourceOptions(parent=parent))
        second = first if one_cluster else k8s.Provider("us", opts=pulumi.ResourceOptions(parent=parent))
        for name, spec, provider in zip(names, specs, (first, second), strict=True):
            r = rendered(spec)
            GpuPlatform(name, GpuPlatformArgs(r.model, r.bundle),
                        pulumi.ResourceOptions(parent=parent, provider=provider))

    return program


@pytest.mark.parametrize(
    ("names", "specs"),
    [(("prod-eu", "shared-gpus"), ("prod-eu", "shared-gpus")), (("eu", "eu-copy"), ("prod-eu", "prod-eu"))],
)
def test_two_platforms_on_two_clusters_have_unique_engine_urns(
    names: tuple[str, str], specs: tuple[str, str], pulumi_run: RunProgram
) -> None:
    run = pulumi_run({}, stack=STACK, program=two_platforms(names, specs, one_cluster=False))
    urns = engine(run)
    assert duplicates(urns) == []
    # both platforms registered all their objects (two clusters: nothing is shared)
    expected = sum(len(rendered(s).bundle.objects) for s in specs)
    assert len(run.kubernetes()) == expected
    # the engine keeps the whole parent chain: the user's component type is in every child's URN
    assert all("team:index:GpuFleet$accelplane:index:GpuPlatform$" in u for u in urns if "kubernetes:" in u
               and "providers" not in u)


def test_the_same_spec_twice_on_one_cluster_has_one_owner_per_object(pulumi_run: RunProgram) -> None:
    run = pulumi_run({}, stack=STACK, program=two_platforms(("eu", "eu-copy"), ("prod-eu", "prod-eu"),
                                                               one_cluster=True))
    assert duplicates(engine(run)) == []
    objects = rendered("prod-eu").bundle.objects
    # every object once, registered by the first platform; the second depends on its resources
    assert len(run.kubernetes()) == len(objects)
    assert all(r.name.startswith("eu:") for r in run.kubernetes())


def test_different_contents_for_one_object_on_one_cluster_is_finding_ap6080(
    pulumi_run: RunProgram, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "error", lambda msg, resource=None, **_: logged.append(msg))
    with pytest.raises(Exception, match="shares Kubernetes objects with another platform"):
        pulumi_run({}, stack=STACK, program=two_platforms(("prod-eu", "shared-gpus"),
                                                           ("prod-eu", "shared-gpus"), one_cluster=True))
    assert logged and all(" error AP6080: " in line and line.startswith("shared-gpus: kubernetes/")
                          for line in logged)
    assert any("volcano-scheduler-configmap" in line for line in logged)


def test_outputs_are_typed_and_carry_the_children_as_dependencies(pulumi_run: RunProgram) -> None:
    r = rendered("prod-eu")
    seen: dict[str, Any] = {}

    def program() -> None:
        platform = GpuPlatform("prod-eu", GpuPlatformArgs(r.model, r.bundle))
        assert isinstance(platform.queue_names, pulumi.Output)
        k8s.core.v1.ConfigMap(
            "queues",
            metadata={"name": "queues", "namespace": "flink"},
            data={"queues": platform.queue_names.apply(",".join)},
        )
        for attr in ("cluster", "queue_names", "priority_class_names", "pod_group_names", "namespaces",
                     "objects", "files", "file_contents"):
            getattr(platform, attr).apply(lambda v, a=attr: seen.__setitem__(a, v))
        seen["namespace"] = platform.get_resource("Namespace", "flink")

    run = pulumi_run({}, stack=STACK, program=program)
    consumer = next(q for q in run.registrations if q.name == "queues")
    namespace = next(q for q in run.kubernetes() if q.logical == "namespace/flink")
    assert namespace.urn in consumer.dependencies
    assert len(consumer.dependencies) == len(r.bundle.objects)
    assert consumer.inputs["data"]["queues"] == ",".join(seen["queue_names"])
    assert seen["cluster"] == "prod-eu" and "streaming" in seen["queue_names"]
    assert "flink" in seen["namespaces"] and seen["pod_group_names"]
    assert set(seen["files"]) == set(bundle_files(r.bundle))
    assert isinstance(seen["namespace"], k8s.core.v1.Namespace)


def test_get_resource_names_what_exists() -> None:
    r = rendered("prod-eu")
    with pytest.raises(KeyError, match=r"no Queue nope .*queue/streaming"):
        platform = object.__new__(GpuPlatform)
        platform._name, platform.bundle, platform.resources = "prod-eu", r.bundle, {}
        platform.get_resource("Queue", "nope")


def test_a_user_transformation_cannot_corrupt_the_bundle(pulumi_run: RunProgram) -> None:
    """A transformation that edits every resource's inputs in place changes those resources, never
    the bundle (what `accelplane render` writes and the ``files`` digests describe)."""
    r = rendered("prod-eu")
    before = {path: sha256(text) for path, (text, _) in bundle_files(r.bundle).items()}
    files: dict[str, Any] = {}

    def label_everything(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult:
        metadata = args.props.get("metadata")
        if isinstance(metadata, dict):
            metadata.setdefault("labels", {})["team"] = "payments"
            metadata["labels"].pop("app.kubernetes.io/managed-by", None)
        return pulumi.ResourceTransformationResult(args.props, args.opts)

    def program() -> None:
        platform = GpuPlatform("prod-eu", GpuPlatformArgs(r.model, r.bundle),
                               pulumi.ResourceOptions(transformations=[label_everything]))
        platform.files.apply(files.update)

    run = pulumi_run({}, stack=STACK, program=program)
    assert all(q.inputs["metadata"]["labels"]["team"] == "payments" for q in run.kubernetes())
    after = {path: sha256(text) for path, (text, _) in bundle_files(r.bundle).items()}
    assert after == before
    assert {p: e["sha256"] for p, e in files.items()} == before


EXAMPLE = REPO_ROOT / "stacks" / "embedding" / "__main__.py"


def test_the_documented_example_program_runs_with_unique_engine_urns(pulumi_run: RunProgram) -> None:
    """stacks/embedding/__main__.py is docs/pulumi.md's example, verbatim; under the mocks it
    registers both platforms completely, with no duplicate URN as the engine computes them."""
    import runpy

    doc = (REPO_ROOT / "docs" / "pulumi.md").read_text(encoding="utf-8")
    assert f"```python\n{EXAMPLE.read_text(encoding='utf-8')}```" in doc
    run = pulumi_run({}, stack=STACK, program=lambda: runpy.run_path(str(EXAMPLE), run_name="__main__"))
    assert duplicates(engine(run)) == []
    objects = {s: len(rendered(s).bundle.objects) for s in ("prod-eu", "shared-gpus")}
    platform_objects = [q for q in run.kubernetes() if ":" in q.name]
    assert len(platform_objects) == sum(objects.values())
    consumer = next(q for q in run.registrations if q.name == "team-queues")
    assert consumer.inputs["data"]["queues"] == ",".join(run.outputs["prodQueues"])
    assert len(consumer.dependencies) >= objects["prod-eu"]
    # the user's component and options reach every object: provider per cluster, parent chain, protect
    for q in platform_objects:
        assert q.provider.split("::")[-2].endswith(q.name.split(":", 1)[0]), q.name
    protected = [r for r in run.requests if r.protect]
    assert {r.name for r in protected if not r.custom} >= {"prod-eu", "shared-gpus"}


def test_ci_tests_the_oldest_versions_pyproject_allows() -> None:
    """pyproject depends on ranges; `make test-pulumi-oldest` (run by .ci/run) installs exactly
    their lower bounds."""
    import re
    import tomllib

    deps = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    lower = {}
    for dep in deps:
        m = re.fullmatch(r"(pulumi(?:-kubernetes)?)>=([\d.]+),<(\d+)", dep)
        if m:
            lower[m[1]] = m[2]
    assert set(lower) == {"pulumi", "pulumi-kubernetes"}
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    pins = re.search(r"^PULUMI_OLDEST := (.*)$", makefile, re.M)
    assert pins and dict(p.split("==") for p in pins[1].split()) == lower
    assert "make test-pulumi-oldest" in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")


# --- the spec as a Pulumi input (item 5) -----------------------------------------------------------


def spec_dict(stack: str) -> dict[str, Any]:
    import yaml

    data: dict[str, Any] = yaml.safe_load((REPO_ROOT / "stacks" / f"{stack}.yaml").read_text(encoding="utf-8"))
    return data


def with_bucket(data: dict[str, Any], bucket: Any) -> dict[str, Any]:
    """shared-gpus with its embeddings-mig checkpoint directory in ``bucket`` (maybe an Output)."""
    for cluster in data["flink"]["clusters"]:
        if cluster["name"] == "embeddings-mig":
            cluster["config"]["execution.checkpointing.dir"] = bucket
    return data


def test_a_spec_leaf_from_another_resources_output(pulumi_run: RunProgram) -> None:
    """A dict spec whose checkpoint directory is another resource's output: validated and built
    once it resolves; the FlinkDeployment carries the value and depends on that resource."""
    seen: dict[str, Any] = {}

    def program() -> None:
        bucket = k8s.core.v1.ConfigMap("bucket", metadata={"name": "bucket", "namespace": "default"},
                                       data={"url": "s3://team-bucket/checkpoints"})
        url = bucket.data.apply(lambda d: d["url"])
        platform = GpuPlatform("shared-gpus", GpuPlatformArgs(
            spec=with_bucket(spec_dict("shared-gpus"), url), spec_dir=REPO_ROOT / "stacks"))
        platform.objects.apply(lambda v: seen.__setitem__("objects", v))

    run = pulumi_run({}, stack=STACK, program=program)
    deployment = next(q for q in run.kubernetes() if q.logical == "flinkdeployment/flink-jobs/embeddings-mig")
    config = deployment.inputs["spec"]["flinkConfiguration"]
    assert config["execution.checkpointing.dir"] == "s3://team-bucket/checkpoints"
    bucket = next(q for q in run.registrations if q.name == "bucket")
    assert bucket.urn in deployment.dependencies
    expected = render_spec(REPO_ROOT / "stacks" / "shared-gpus.yaml").bundle.objects
    assert len(seen["objects"]) == len(expected) == len([q for q in run.kubernetes() if ":" in q.name])


@pytest.mark.parametrize("form", ["path", "text", "dict"])
def test_a_spec_as_path_text_or_dict_registers_what_render_writes(form: str, pulumi_run: RunProgram) -> None:
    path = REPO_ROOT / "stacks" / "prod-eu.yaml"
    spec: Any = {"path": path, "text": path.read_text(encoding="utf-8"), "dict": spec_dict("prod-eu")}[form]
    run = pulumi_run({}, stack=STACK, program=lambda: GpuPlatform(
        "prod-eu", GpuPlatformArgs(spec=spec, spec_dir=REPO_ROOT / "stacks")))
    expected = rendered("prod-eu").bundle.objects
    assert sorted(q.logical for q in run.kubernetes()) == sorted(
        f"{o.kind.lower()}/{o.namespace}/{o.name}" if o.namespace else f"{o.kind.lower()}/{o.name}"
        for o in expected
    )


def test_an_invalid_input_spec_logs_findings_on_the_component(
    pulumi_run: RunProgram, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged: list[tuple[str, str, Any]] = []
    monkeypatch.setattr(pulumi.log, "error", lambda msg, resource=None, **_: logged.append(("error", msg, resource)))
    monkeypatch.setattr(pulumi.log, "warn", lambda msg, resource=None, **_: logged.append(("warn", msg, resource)))

    def program() -> None:
        bad = pulumi.Output.from_input("no-such-queue")
        data = spec_dict("shared-gpus")
        data["flink"]["clusters"][0]["queue"] = bad
        GpuPlatform("shared-gpus", GpuPlatformArgs(spec=data, spec_dir=REPO_ROOT / "stacks"))

    with pytest.raises(Exception, match="the spec of shared-gpus is invalid"):
        pulumi_run({}, stack=STACK, program=program)
    errors = [(m, r) for level, m, r in logged if level == "error"]
    assert errors and all(isinstance(r, GpuPlatform) for _, r in errors)
    assert any("no-such-queue" in m and " error AP" in m for m, _ in errors)


def test_aliases_adopt_the_children_of_a_stack_made_with_unprefixed_names(pulumi_run: RunProgram) -> None:
    """A program of an earlier release (children named ``kind/ns/name``) moving to prefixed names:
    ``alias_previous_names`` gives every child its old URN as an alias, computed as the engine
    computes it (same parent chain, old name); the engine allows one resource per alias, so a second
    platform asking for it is refused."""
    r = rendered("prod-eu")
    before = pulumi_run({}, stack=STACK, program=lambda: GpuPlatform(
        "prod-eu", GpuPlatformArgs(r.model, r.bundle, resource_prefix="")))
    after = pulumi_run({}, stack=STACK, program=lambda: GpuPlatform(
        "prod-eu", GpuPlatformArgs(r.model, r.bundle, alias_previous_names=True)))
    def by_name(run: ProgramRun) -> dict[str, str]:
        return {q.name: u for q, (_, u) in zip(run.requests, engine_urns(run.requests, STACK, "accelplane"),
                                                strict=True)}

    old, new = by_name(before), by_name(after)
    for q in after.kubernetes():
        assert q.alias_names == [q.logical]
        # the alias (old name, same parent chain) is exactly the URN the old program gave the object
        assert new[q.name].rsplit("::", 1)[0] + "::" + q.logical == old[q.logical]
    with pytest.raises(Exception, match="both alias the previous"):
        pulumi_run({}, stack=STACK, program=lambda: [GpuPlatform(
            n, GpuPlatformArgs(r.model, r.bundle, alias_previous_names=True)) for n in ("a", "b")])
