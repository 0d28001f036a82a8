"""End-to-end tests of the real-Flink harness (tests/support/flink/).

They prove, with FLINK'S OWN GPU discovery script and Flink 1.20's own config
parser, that the harness

* reads configurations exactly like Flink (YAML ``config.yaml`` vs legacy
  ``flink-conf.yaml``; findings documented in the harness module docstring),
* applies its sandbox overrides without touching ``external-resource*`` keys,
* runs JM + TaskManagers whose GPU discovery outcome (log view) matches what an
  operator sees through ``RuntimeContext#getExternalResourceInfos`` (probe view),
* cleans up every daemon.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from accelplane.derive.flink_java import FLINK_JAVA17_OPTIONS

from tests.support import fake_nvidia_smi as fake
from tests.support.flink import (
    config_files,
    config_probe,
    errors,
    home,
    logs,
    processes,
    scenario,
    standalone,
)
from tests.support.flink.standalone import FlinkClusterFactory

pytestmark = pytest.mark.flink

RENDERED_DISCOVERY_PATH = "/opt/flink/plugins/accelplane-gpu/accelplane-gpu-discovery"
GPU_FACTORY = "org.apache.flink.externalresource.gpu.GPUDriverFactory"


# --------------------------------------------------------------------------- #
# Pure harness pieces (no JVM)
# --------------------------------------------------------------------------- #


def test_fake_nvidia_smi_answers_flink_and_accelplane_queries(tmp_path: Path) -> None:
    smi = fake.install_fake_nvidia_smi(tmp_path / "bin", 4)

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(smi), *args], capture_output=True, text=True, env={**os.environ, **env}, check=False
        )

    flink_style = run("--query-gpu=index", "--format=csv,noheader")
    assert (flink_style.returncode, flink_style.stdout) == (0, "0\n1\n2\n3\n")

    full = run("--query-gpu=index,uuid,name,pci.bus_id", "--format=csv,noheader")
    assert full.stdout.splitlines() == [
        f"{i}, {fake.fake_gpu_uuid(i)}, NVIDIA A100-SXM4-80GB, {fake.fake_gpu_bus_id(i)}" for i in range(4)
    ]
    assert fake.fake_gpu_uuid(3) == "GPU-daa69d4c-1111-2222-3333-000000000003"

    reordered = run(
        "--query-gpu=name,mig.mode.current,index", "--format=csv,noheader", FAKE_GPU_NAME="NVIDIA H100"
    )
    assert reordered.stdout.splitlines()[2] == "NVIDIA H100, Disabled, 2"

    with_header = run("--query-gpu=index,uuid", "--format=csv")
    assert with_header.stdout.splitlines()[0] == "index, uuid"

    bad = run("--query-gpu=index,power.draw", "--format=csv,noheader")
    assert bad.returncode == 2 and 'Field "power.draw" is not a valid field' in bad.stdout

    assert run("--query-gpu=index", "--format=csv,noheader", FAKE_NVIDIA_SMI_FAIL="1").returncode == 1
    assert run("--query-gpu=index", "--format=csv,noheader", FAKE_GPU_COUNT="0").stdout == ""


def test_find_flink_home_order_and_require_semantics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flink_home: Path
) -> None:
    real = flink_home

    monkeypatch.setenv(home.FLINK_HOME_ENV, str(real))
    assert home.find_flink_home() == real

    # An explicitly configured but broken location never falls back silently.
    monkeypatch.setenv(home.FLINK_HOME_ENV, str(tmp_path / "nope"))
    with pytest.raises(home.FlinkHomeNotFound, match=home.FLINK_HOME_ENV):
        home.find_flink_home()
    with pytest.raises(pytest.fail.Exception):
        home.require_flink_home()

    # Nothing anywhere: fail in CI, skip elsewhere.
    monkeypatch.delenv(home.FLINK_HOME_ENV)
    monkeypatch.setattr(home, "DEFAULT_FLINK_HOME_CANDIDATES", (tmp_path / "a", tmp_path / "b"))
    with pytest.raises(home.FlinkHomeNotFound, match="pip install --no-deps"):
        home.find_flink_home()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="real-Flink tests need Flink"):
        home.require_flink_home()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="real-Flink tests need Flink"):
        home.require_flink_home()

    # Fallback order: the candidates in turn, the first usable one wins.
    monkeypatch.setattr(home, "DEFAULT_FLINK_HOME_CANDIDATES", (tmp_path / "missing", real))
    assert home.find_flink_home() == real
    assert home.DEFAULT_FLINK_HOME_CANDIDATES[0] == tmp_path / "missing"


def test_with_coordination_file_rewrites_only_the_file(tmp_path: Path) -> None:
    coord = tmp_path / "coord"
    assert (
        config_files.with_coordination_file("--enable-coordination-mode --coordination-file /var/tmp/x", coord)
        == f"--enable-coordination-mode --coordination-file {coord}"
    )
    assert config_files.with_coordination_file("--coordination-file=/var/tmp/x --foo", coord) == (
        f"--coordination-file={coord} --foo"
    )
    assert config_files.with_coordination_file("--enable-coordination-mode", coord) == (
        f"--enable-coordination-mode --coordination-file {coord}"
    )
    assert config_files.with_coordination_file("--strategy=spread", coord) == "--strategy=spread"
    assert config_files.with_coordination_file("", coord) == ""


def test_only_discovery_script_path_and_args_are_overridable(tmp_path: Path, flink_home: Path) -> None:
    script_key = "external-resource.gpu.param.discovery-script.path"
    args_key = "external-resource.gpu.param.discovery-script.args"
    cluster = standalone.FlinkStandalone(
        flink_home,
        tmp_path / "sandbox",
        {},
        discovery_script_path=tmp_path / "accelplane-gpu-discovery",
        discovery_args="--coordination-file {coordination_file} --strategy pack",
        coordination_file=tmp_path / "coord",
    )
    overrides = cluster.sandbox_overrides({args_key: "--ignored"})
    assert {k: v for k, v in overrides.items() if k.startswith("external-resource")} == {
        script_key: str(tmp_path / "accelplane-gpu-discovery"),
        args_key: f"--coordination-file {tmp_path / 'coord'} --strategy pack",
    }
    assert {k for k in overrides if not k.startswith("external-resource")} <= config_files.SANDBOX_KEYS

    # Without discovery_* arguments no external-resource key is written at all ...
    plain = standalone.FlinkStandalone(flink_home, tmp_path / "plain", {})
    assert not [k for k in plain.sandbox_overrides({args_key: "--x"}) if k.startswith("external-resource")]
    # ... and a {coordination_file} placeholder needs a coordination file.
    broken = standalone.FlinkStandalone(flink_home, tmp_path / "broken", {}, discovery_args="--f {coordination_file}")
    with pytest.raises(errors.HarnessError, match="coordination_file"):
        broken.sandbox_overrides({})


def test_parse_discovery_log_driver_errors(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        2026-01-01 00:00:00,000 INFO  org.apache.flink.runtime.taskexecutor.TaskManagerRunner      [] - Starting TaskManager with ResourceID: tm-7
        2026-01-01 00:00:01,000 INFO  org.apache.flink.runtime.externalresource.ExternalResourceUtils [] - Enabled external resources: [gpu]
        2026-01-01 00:00:01,100 WARN  org.apache.flink.runtime.externalresource.ExternalResourceUtils [] - Could not find factory class org.example.Nope for gpu.
        java.lang.ClassNotFoundException: org.example.Nope
        \tat java.base/java.lang.Class.forName0(Native Method)
        """
    )
    outcome = logs.parse_discovery_log(text, tmp_path / "flink-x-taskexecutor-7-host.log")
    assert outcome.taskmanager_number == 7
    assert outcome.resource_id == "tm-7"
    assert outcome.enabled_resources == "[gpu]"
    assert outcome.gpu_indexes is None and not outcome.ok
    assert outcome.failure == (
        "Could not find factory class org.example.Nope for gpu. "
        "(java.lang.ClassNotFoundException: org.example.Nope)"
    )


# --------------------------------------------------------------------------- #
# Flink's own config parser (ConfigProbe.java)
# --------------------------------------------------------------------------- #


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_flink_reads_standard_yaml_like_this(
    tmp_path: Path, flink_home: Path, flink_java_cache: Path
) -> None:
    conf = _write(
        tmp_path / "yaml",
        "config.yaml",
        """\
        hash.quoted: "x#y # z"
        hash.plain: x#y
        hash.comment: x # a comment
        external-resources: [gpu]
        list.string: "gpu;fpga"
        list.semicolon-item: [a;b, "c,d"]
        version.plain: 1.10
        version.quoted: "1.10"
        octal.plain: 0123
        yes.plain: yes
        # the same flattened key written flat and nested: the LAST one wins
        flat.then.nested: flat
        flat:
          then:
            nested: nested
        nested:
          then:
            flat: nested
        nested.then.flat: flat
        external-resource:
          gpu:
            amount: 2
            param:
              discovery-script:
                args: --enable-coordination-mode --coordination-file /tmp/c
        """,
    )
    probed = config_probe.probe_flink_config(
        conf.parent,
        flink_home,
        ["external-resources", "list.string", "list.semicolon-item"],
        cache_dir=flink_java_cache,
    )
    assert probed.standard_yaml and probed.file_name == "config.yaml"
    assert probed.values == {
        "hash.quoted": "x#y # z",
        "hash.plain": "x#y",
        "hash.comment": "x",
        "external-resources": "[gpu]",
        "list.string": "gpu;fpga",
        "list.semicolon-item": "[a;b, 'c,d']",
        "version.plain": "1.1",
        "version.quoted": "1.10",
        "octal.plain": "123",
        "yes.plain": "yes",
        "flat.then.nested": "nested",
        "nested.then.flat": "flat",
        "external-resource.gpu.amount": "2",
        "external-resource.gpu.param.discovery-script.args": (
            "--enable-coordination-mode --coordination-file /tmp/c"
        ),
    }
    assert probed.lists == {
        "external-resources": ["gpu"],
        "list.string": ["gpu", "fpga"],
        "list.semicolon-item": ["a;b", "c,d"],
    }
    # load_with_flink is the flat view of the same thing.
    assert config_probe.load_with_flink(conf.parent, flink_home, cache_dir=flink_java_cache) == probed.values


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("a.b: 1\na.b: 2\n", "found duplicate key a.b"),
        ("a.b: 1\nc.d:\n", "Value must not be null"),
    ],
    ids=["duplicate-key", "null-value"],
)
def test_flink_refuses_yaml_duplicates_and_nulls(
    tmp_path: Path, flink_home: Path, flink_java_cache: Path, text: str, error: str
) -> None:
    conf = _write(tmp_path, "config.yaml", text)
    with pytest.raises(errors.HarnessError, match=error):
        config_probe.load_with_flink(conf.parent, flink_home, cache_dir=flink_java_cache)


def test_flink_reads_legacy_flink_conf_yaml_like_this(
    tmp_path: Path, flink_home: Path, flink_java_cache: Path
) -> None:
    conf = _write(
        tmp_path / "legacy",
        "flink-conf.yaml",
        """\
        # comment line
        hash.plain: x#y
        hash.quoted: "x#y"
        quoted: "q"
        external-resources: gpu;fpga
        bracket.list: [gpu, fpga]
        dup.key: first
        dup.key: last
            indented.key: 5
        no.space:after
        empty.value:<SPACE>
        colon.in.value: a: b
        external-resource.gpu.param.discovery-script.args: --enable-coordination-mode --coordination-file /tmp/c
        """.replace("<SPACE>", " "),
    )
    # A config.yaml next to flink-conf.yaml is ignored: the legacy file wins.
    _write(conf.parent, "config.yaml", "only.in.yaml: 1\n")
    probed = config_probe.probe_flink_config(
        conf.parent, flink_home, ["external-resources", "bracket.list"], cache_dir=flink_java_cache
    )
    assert not probed.standard_yaml and probed.file_name == "flink-conf.yaml"
    assert probed.values == {
        "hash.plain": "x",
        "hash.quoted": '"x',
        "quoted": '"q"',
        "external-resources": "gpu;fpga",
        "bracket.list": "[gpu, fpga]",
        "dup.key": "last",
        "indented.key": "5",
        "colon.in.value": "a: b",
        "external-resource.gpu.param.discovery-script.args": (
            "--enable-coordination-mode --coordination-file /tmp/c"
        ),
    }
    assert probed.lists == {"external-resources": ["gpu", "fpga"], "bracket.list": ["[gpu, fpga]"]}


RENDERED_YAML = """\
# rendered by accelplane (test double)
taskmanager:
  numberOfTaskSlots: 4
  memory:
    process:
      size: 8g
rest:
  port: 8081
rest.port: 8081   # flat duplicate of the nested one above
env.java.opts.all: |
  -XX:+UseG1GC
  -Dfoo=bar
some.version: 0123
some.flag: yes
external-resources: [gpu]
external-resource.gpu.amount: 2
external-resource:
  gpu:
    driver-factory:
      class: org.apache.flink.externalresource.gpu.GPUDriverFactory
    param:
      discovery-script:
        path: /opt/flink/plugins/accelplane-gpu/accelplane-gpu-discovery
        args: --enable-coordination-mode --coordination-file /var/tmp/flink-gpu-coordination
after.block: kept
"""

RENDERED_LEGACY = """\
# rendered by accelplane (test double)
taskmanager.numberOfTaskSlots: 4
taskmanager.memory.process.size: 8g
rest.port: 8081
some.version: 0123
external-resources: gpu
external-resource.gpu.amount: 2
external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory
external-resource.gpu.param.discovery-script.path: /opt/flink/plugins/accelplane-gpu/accelplane-gpu-discovery
external-resource.gpu.param.discovery-script.args: --enable-coordination-mode --coordination-file /var/tmp/flink-gpu-coordination
"""


@pytest.mark.parametrize(
    ("name", "text"), [("config.yaml", RENDERED_YAML), ("flink-conf.yaml", RENDERED_LEGACY)]
)
def test_sandbox_overrides_keep_rendered_config_intact(
    tmp_path: Path, flink_home: Path, flink_java_cache: Path, name: str, text: str
) -> None:
    rendered = _write(tmp_path / "rendered", name, text)
    before = config_probe.load_file_with_flink(rendered, flink_home, ["external-resources"], cache_dir=flink_java_cache)
    local_script = home.flink_gpu_discovery_script(flink_home)
    cluster = standalone.FlinkStandalone(
        flink_home,
        tmp_path / "sandbox",
        rendered,
        discovery_script_path=local_script,
        coordination_file=tmp_path / "coord",
        taskmanager_slots=1,
        java_cache_dir=flink_java_cache,
    )
    conf_dir = cluster.prepare()  # also verifies overrides with Flink's parser
    written = (conf_dir / name).read_text(encoding="utf-8")
    assert not (conf_dir / ("flink-conf.yaml" if name == "config.yaml" else "config.yaml")).exists()

    # Verbatim: everything up to the override block is the rendered text, minus
    # (YAML only) the top-level flat entries of overridden keys.
    head = written.split("# --- accelplane test harness overrides ---\n")[0]
    if name == "flink-conf.yaml":
        assert head == text
    else:
        assert "rest.port: 8081   # flat duplicate" not in head
        assert "rest:\n  port: 8081\n" in head  # nested spelling stays; the appended one wins
        assert "env.java.opts.all: |\n  -XX:+UseG1GC\n" in head and "after.block: kept\n" in head

    after = config_probe.probe_flink_config(conf_dir, flink_home, ["external-resources"], cache_dir=flink_java_cache)
    assert after.values == cluster.effective_config
    changed = {
        k for k in before.values.keys() | after.values.keys() if before.values.get(k) != after.values.get(k)
    }
    assert {k for k in changed if k.startswith("external-resource")} == {
        "external-resource.gpu.param.discovery-script.path",
        "external-resource.gpu.param.discovery-script.args",
    }
    assert changed <= config_files.SANDBOX_KEYS | {
        "external-resource.gpu.param.discovery-script.path",
        "external-resource.gpu.param.discovery-script.args",
    }
    assert after.values["external-resource.gpu.param.discovery-script.path"] == str(local_script)
    assert after.values["external-resource.gpu.param.discovery-script.args"] == (
        f"--enable-coordination-mode --coordination-file {tmp_path / 'coord'}"
    )
    assert after.values["rest.port"] == str(cluster.rest_port)
    assert after.values["taskmanager.numberOfTaskSlots"] == "1"
    assert after.values["taskmanager.memory.process.size"] == "1024m"
    # The JVM options are the configuration's own, never the harness's.
    assert after.values.get("env.java.opts.all") == before.values.get("env.java.opts.all")
    # Scalars keep their original spelling (no PyYAML round trip): 0123 is still
    # whatever Flink makes of it (YAML 1.2: 123; legacy: "0123").
    assert after.values["some.version"] == before.values["some.version"]
    assert after.lists == before.lists == {"external-resources": ["gpu"]}
    cluster.stop()  # nothing started: a no-op


def test_extra_overrides_may_not_touch_external_resources(tmp_path: Path, flink_home: Path) -> None:
    with pytest.raises(errors.HarnessError, match="never changes external-resource"):
        standalone.FlinkStandalone(flink_home, tmp_path, {}, extra_overrides={"external-resource.gpu.amount": "8"})


# --------------------------------------------------------------------------- #
# Real daemons
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def gpu_scenario(
    flink_home: Path, flink_java_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> scenario.GpuScenarioResult:
    """JM + 3 TMs (1 slot each), 4 fake GPUs, amount 2, Flink's script in coordination mode.

    The config is a rendered-style nested ``config.yaml`` pointing at the image
    path of our discovery script and carrying the JVM options accelplane renders (the harness
    writes none: without them ``flink run`` fails on Java 17); the harness swaps in Flink's own
    ``nvidia-gpu-discovery.sh`` and a per-run coordination file.
    """
    work = tmp_path_factory.mktemp("gpu-scenario")
    rendered = _write(
        work / "rendered",
        "config.yaml",
        f"""\
        env.java.opts.all: {" ".join(FLINK_JAVA17_OPTIONS)}
        external-resources: [gpu]
        external-resource:
          gpu:
            amount: 2
            driver-factory:
              class: {GPU_FACTORY}
            param:
              discovery-script:
                path: {RENDERED_DISCOVERY_PATH}
                args: --enable-coordination-mode --coordination-file /var/tmp/flink-gpu-coordination
        """,
    )
    return scenario.run_gpu_scenario(
        rendered,
        discovery_script_path=home.flink_gpu_discovery_script(flink_home),
        gpu_count=4,
        taskmanagers=3,
        work_dir=work / "run",
        flink_home=flink_home,
        java_cache_dir=flink_java_cache,
    )


def test_coordination_mode_gives_disjoint_gpu_sets_and_third_tm_fails(
    gpu_scenario: scenario.GpuScenarioResult,
) -> None:
    tm1, tm2, tm3 = gpu_scenario.taskmanagers
    assert [tm.resource_id for tm in gpu_scenario.taskmanagers] == ["tm-0", "tm-1", "tm-2"]
    assert gpu_scenario.gpu_sets == [frozenset({"0", "1"}), frozenset({"2", "3"}), None]
    assert tm1.gpus is not None and tm2.gpus is not None
    assert tm1.gpus.isdisjoint(tm2.gpus) and tm1.gpus | tm2.gpus == {"0", "1", "2", "3"}
    for tm in (tm1, tm2):
        assert tm.discovery.ok and tm.discovery.enabled_resources == "[gpu]"
        assert tm.discovery.resource_id == tm.resource_id

    assert not tm3.discovery.ok and tm3.discovery.gpu_indexes is None
    assert tm3.discovery.failures == (
        "Discovery script exit with 1.",
        (
            "Failed to retrieve information of external resource gpu. "
            "(org.apache.flink.util.FlinkException: Discovery script exit with non-zero return code: 1.)"
        ),
    )
    assert tm3.discovery.failure == "Discovery script exit with 1."
    lines = [line.split(" - ", 1)[-1] for line in tm3.discovery.lines]
    assert lines == [
        "Enabled external resources: [gpu]",
        "Discovery script exit with 1.",
        "STDOUT: Could not get enough GPU resources.",
        "STDERR: ",
        "Failed to retrieve information of external resource gpu.",
        "org.apache.flink.util.FlinkException: Discovery script exit with non-zero return code: 1.",
    ]
    assert "WARN  org.apache.flink.externalresource.gpu.GPUDriver" in tm3.discovery.lines[1]


def test_operator_probe_sees_the_gpus_the_logs_report(gpu_scenario: scenario.GpuScenarioResult) -> None:
    # One subtask per slot: every TaskManager ran the probe exactly once.
    assert sorted(r.taskmanager for r in gpu_scenario.probe) == ["tm-0", "tm-1", "tm-2"]
    assert {r.parallelism for r in gpu_scenario.probe} == {3}
    for tm in gpu_scenario.taskmanagers:
        (report,) = [r for r in gpu_scenario.probe if r.taskmanager == tm.resource_id]
        assert report.pid == tm.pid
        assert tm.probe_indexes == (tm.gpus or frozenset())


def test_coordination_file_records_gpu_owners_by_taskmanager_pid(gpu_scenario: scenario.GpuScenarioResult) -> None:
    # Flink's script writes "<index> <PPID>" = the TaskManager JVM's pid.
    recorded = sorted(tuple(line.split()) for line in gpu_scenario.coordination_text.splitlines())
    tm1, tm2, _ = gpu_scenario.taskmanagers
    assert recorded == [("0", str(tm1.pid)), ("1", str(tm1.pid)), ("2", str(tm2.pid)), ("3", str(tm2.pid))]
    assert gpu_scenario.coordination_file.parent != Path("/var/tmp")


def test_scenario_sandbox_config_swapped_only_script_path_and_coordination_file(
    gpu_scenario: scenario.GpuScenarioResult, flink_home: Path, flink_java_cache: Path
) -> None:
    probed = config_probe.probe_flink_config(
        gpu_scenario.conf_dir, flink_home, ["external-resources"], cache_dir=flink_java_cache
    )
    external = {k: v for k, v in probed.values.items() if k.startswith("external-resource")}
    assert external == {
        "external-resources": "[gpu]",
        "external-resource.gpu.amount": "2",
        "external-resource.gpu.driver-factory.class": GPU_FACTORY,
        "external-resource.gpu.param.discovery-script.path": str(home.flink_gpu_discovery_script(flink_home)),
        "external-resource.gpu.param.discovery-script.args": (
            f"--enable-coordination-mode --coordination-file {gpu_scenario.coordination_file}"
        ),
    }
    # The rendered image path is still in the file (nested, overridden by the flat line below it).
    assert RENDERED_DISCOVERY_PATH in (gpu_scenario.conf_dir / "config.yaml").read_text()


def test_legacy_config_with_unreachable_script_is_reported_and_daemons_are_cleaned_up(
    tmp_path: Path, flink_cluster_factory: FlinkClusterFactory
) -> None:
    """A legacy flink-conf.yaml whose script path is NOT overridden: the driver cannot be built."""
    rendered = _write(tmp_path / "rendered", "flink-conf.yaml", RENDERED_LEGACY)
    fake_bin = tmp_path / "fake-bin"
    fake.install_fake_nvidia_smi(fake_bin, 4)
    cluster = flink_cluster_factory(
        base_config=rendered,
        extra_env={"PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"},
        coordination_file=tmp_path / "coord",
        taskmanager_slots=1,
    )
    cluster.start(taskmanagers=1)
    assert [tm["id"] for tm in cluster.registered_taskmanagers()] == ["tm-0"]

    (outcome,) = cluster.discovery_results()
    assert not outcome.ok and outcome.gpu_indexes is None
    assert outcome.failure is not None
    assert outcome.failure.startswith(f"Could not instantiate driver with factory {GPU_FACTORY} for gpu.")
    assert f"The gpu discovery script does not exist in path {RENDERED_DISCOVERY_PATH}" in outcome.failure
    assert len(cluster.taskmanager_logs()) == 1

    assert not (tmp_path / "coord").exists()  # the script never ran
    # (what an operator sees on such a TM -- nothing -- is covered by tm-2 of gpu_scenario)

    pids = cluster.daemon_pids()
    assert len(pids) == 2 and all(processes.pid_alive(p) for p in pids)
    cluster.stop()
    assert not any(processes.pid_alive(p) for p in pids)
    assert not list(cluster.pid_dir.glob("*.pid"))
