"""Rendered Flink configurations in real Apache Flink (1.20.x): loader and TaskManagers.

1. Every config file rendered from the example stacks is loaded with Flink's own
   ``GlobalConfiguration.loadConfiguration`` (tests/support/flink/java/ConfigProbe.java); the effective
   keys must be exactly what the builder meant, in the parser the file name selects (standard
   YAML for ``config.yaml``, the legacy line parser for ``flink-conf.yaml``).
2. A rendered standalone config (legacy ``flink-conf.yaml``) and a rendered YARN config
   (``config.yaml``; YARN-only keys are inert in a standalone cluster) each start a real JobManager
   and three TaskManagers with a fake ``nvidia-smi`` reporting 4 GPUs and the accelplane discovery
   script (components/accelplane/discovery/gpu_discovery.py) in coordination mode with amount 2: the first two
   TaskManagers get disjoint GPU pairs, the third reports the discovery failure, and a Java job
   (compiled with javac against pyflink/lib) reads ``getExternalResourceInfos("gpu")`` in every
   slot. The harness changes only sandbox keys, the script path and the coordination file path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from accelplane.builders import build_all
from accelplane.derive.flink_keys import config_format, effective_config
from accelplane.derive.flink_values import legacy_value
from accelplane.derive.monitoring import TEXTFILE_NAME, exports_owner_metrics, textfile_path
from accelplane.discovery.gpu_discovery import LABELS_SUFFIX, parse_labels
from accelplane.render import bundle_files
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import EXAMPLE_SPECS
from tests.support.flink.config_probe import load_file_with_flink
from tests.support.flink.home import require_flink_home
from tests.support.flink.scenario import run_gpu_scenario
from tests.support.paths import REPO_ROOT
from tests.support.specs import model_of

pytestmark = pytest.mark.flink

DISCOVERY_SCRIPT = REPO_ROOT / "components" / "accelplane" / "discovery" / "gpu_discovery.py"
LIST_KEYS = ("external-resources",)


def _flink_text(value: object) -> str:
    """How Flink's Configuration.toMap() shows a scalar we wrote (bools lowercase, numbers as written)."""
    return legacy_value(value)  # type: ignore[arg-type]


def _rendered_configs() -> list[tuple[str, str]]:
    out = []
    for spec_path in EXAMPLE_SPECS:
        model = model_of(spec_path)
        for cluster in model.flink_clusters:
            if cluster.target != "kubernetes-operator":
                out.append((spec_path.name, cluster.name))
    return out


@pytest.fixture(scope="module")
def flink_home() -> Path:
    return require_flink_home()


@pytest.fixture(scope="module")
def java_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("java-jobs")


@pytest.mark.parametrize(("stack", "cluster_name"), _rendered_configs(), ids=lambda v: str(v))
def test_flink_loads_rendered_config(
    stack: str, cluster_name: str, flink_home: Path, java_cache: Path, tmp_path: Path
) -> None:
    spec_path = REPO_ROOT / "stacks" / stack
    model = model_of(spec_path)
    cluster = next(c for c in model.flink_clusters if c.name == cluster_name)
    fmt = config_format(cluster)
    files = bundle_files(build_all(model))
    conf = tmp_path / fmt
    conf.write_text(files[f"flink/{cluster.name}/{fmt}"][0], encoding="utf-8")

    probed = load_file_with_flink(conf, flink_home, LIST_KEYS, cache_dir=java_cache)

    assert probed.standard_yaml == (fmt == "config.yaml")
    expected = effective_config(model, cluster)
    assert set(probed.values) == set(expected), "Flink read other keys than we wrote"
    for key, value in expected.items():
        if isinstance(value, tuple):
            assert probed.lists[key] == list(value), key
        else:
            assert probed.values[key] == _flink_text(value), key


@pytest.mark.parametrize(
    ("stack", "cluster_name", "file_name"),
    [
        ("edge-standalone.yaml", "edge-inference", "flink-conf.yaml"),
        ("yarn-analytics.yaml", "sessions-v100", "config.yaml"),
    ],
)
def test_rendered_config_runs_gpu_taskmanagers(
    stack: str, cluster_name: str, file_name: str, flink_home: Path, java_cache: Path, tmp_path: Path
) -> None:
    model = model_of(REPO_ROOT / "stacks" / stack)
    cluster = next(c for c in model.flink_clusters if c.name == cluster_name)
    assert cluster.coordination and cluster.task_manager.gpu is not None
    assert cluster.task_manager.gpu.amount == 2
    rendered = bundle_files(build_all(model))[f"flink/{cluster_name}/{file_name}"][0]
    monitored = exports_owner_metrics(model, cluster)
    metrics = tmp_path / "textfile" / TEXTFILE_NAME
    if monitored:  # the one change: node-exporter's textfile directory of this machine -> a temporary one
        metrics.parent.mkdir()
        assert textfile_path(model) in rendered
        rendered = rendered.replace(textfile_path(model), str(metrics))
    conf = tmp_path / "rendered" / file_name
    conf.parent.mkdir()
    conf.write_text(rendered, encoding="utf-8")

    result = run_gpu_scenario(
        conf,
        discovery_script_path=DISCOVERY_SCRIPT,
        gpu_count=4,
        taskmanagers=3,
        work_dir=tmp_path / "cluster",
        flink_home=flink_home,
        java_cache_dir=java_cache,
        # The fake nvidia-smi, never NVML of a real GPU the test machine might have.
        extra_env={"ACCELPLANE_GPU_DISCOVERY_BACKEND": "nvidia-smi"},
    )

    first, second, third = result.taskmanagers
    assert first.gpus == {"0", "1"}
    assert second.gpus == {"2", "3"}
    assert third.gpus is None
    assert third.discovery.failure is not None and "exit with 1" in third.discovery.failure
    assert any("cannot allocate 2 GPU(s)" in line for line in third.discovery.lines)
    # What operators see through getRuntimeContext().getExternalResourceInfos("gpu"):
    assert first.probe_indexes == {"0", "1"}
    assert second.probe_indexes == {"2", "3"}
    assert third.probe_indexes == frozenset()
    # The configured coordination flags reached our script (records in its own file format).
    # always v2, monitored or not: owner labels live in the `.labels` side file so an older script
    # can still read the records after a rollback (docs/discovery.md, "Rollback")
    assert result.coordination_text.startswith("# accelplane-gpu-coordination v2\n")
    records = [line.split() for line in result.coordination_text.splitlines() if not line.startswith("#")]
    assert sorted((r[1], int(r[2])) for r in records) == [
        ("0", first.pid),
        ("1", first.pid),
        ("2", second.pid),
        ("3", second.pid),
    ]
    if monitored:  # which TaskManager holds which GPU, as node-exporter's textfile collector reads it
        # the owner labels, in the side file an older script never opens (docs/discovery.md)
        labels = parse_labels(Path(f"{result.coordination_file}{LABELS_SUFFIX}").read_bytes())
        assert sorted((key, pid) for (key, pid, _, _) in labels) == sorted((r[0], int(r[2])) for r in records)
        assert set(labels.values()) == {cluster_name}
        (family,) = text_string_to_metric_families(metrics.read_text())
        owners = sorted((s.labels["gpu_index"], int(s.labels["pid"]), s.labels["flink_cluster"]) for s in family.samples)
        assert owners == [
            ("0", first.pid, cluster_name),
            ("1", first.pid, cluster_name),
            ("2", second.pid, cluster_name),
            ("3", second.pid, cluster_name),
        ]


# Issue 15 §6: characters YAML 1.2 may not carry raw (DEL, C1, U+FFFE/U+FFFF, a lone surrogate,
# C0 controls) and terminal/direction controls, as spec values reach them in a YAML spec.
HOSTILE_CHARS = "del\x7f c1\x85\x9b nonchar\ufffe\uffff lone\ud800 esc\x1b[2J bell\x07 nul\x00 bidi\u202e ok ü 🚀"


def _render_with_value(tmp_path: Path, stack: str, cluster_name: str, value: str) -> tuple[str, str]:
    """Render ``stack`` with ``pipeline.name: value`` on one cluster: (config file name, text)."""
    import shutil

    import yaml

    stacks = tmp_path / "stacks"
    shutil.rmtree(stacks, ignore_errors=True)
    shutil.copytree(REPO_ROOT / "stacks", stacks)
    doc = yaml.safe_load((stacks / stack).read_text())
    cluster = next(c for c in doc["flink"]["clusters"] if c["name"] == cluster_name)
    cluster.setdefault("config", {})["pipeline.name"] = value
    (stacks / stack).write_text(yaml.safe_dump(doc, sort_keys=False))  # escapes them in the spec
    model = model_of(stacks / stack)
    fmt = config_format(next(c for c in model.flink_clusters if c.name == cluster_name))
    return fmt, bundle_files(build_all(model))[f"flink/{cluster_name}/{fmt}"][0]


@pytest.mark.parametrize(
    ("stack", "cluster_name", "fmt"),
    [("yarn-analytics.yaml", "sessions-v100", "config.yaml"), ("edge-standalone.yaml", "edge-inference", "flink-conf.yaml")],
)
def test_flink_loads_every_value_that_validates(
    stack: str, cluster_name: str, fmt: str, flink_home: Path, java_cache: Path, tmp_path: Path
) -> None:
    """A value with every hostile character either is rejected with `file: path: message` (only
    the escape-less legacy flink-conf.yaml may reject), or Flink's own loader reads back exactly that
    value from the rendered file."""
    from accelplane.errors import SpecErrors

    value = HOSTILE_CHARS
    try:
        got_fmt, text = _render_with_value(tmp_path, stack, cluster_name, value)
    except SpecErrors as exc:
        assert fmt == "flink-conf.yaml", f"config.yaml can carry any value, but: {exc}"
        (error,) = exc.errors
        assert error.path == "flink.clusters[0].config.pipeline.name"
        assert "cannot carry the control character U+007F" in error.message
        value = "bidi\u202e tab\tinside ok ü 🚀"  # what the legacy format can carry
        got_fmt, text = _render_with_value(tmp_path, stack, cluster_name, value)
    assert got_fmt == fmt
    conf = tmp_path / fmt
    conf.write_bytes(text.encode("utf-8"))
    probed = load_file_with_flink(conf, flink_home, LIST_KEYS, cache_dir=java_cache)
    assert probed.values["pipeline.name"] == value
