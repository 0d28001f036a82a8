"""tools/gpu_host_check.py, the real-GPU host check, run whole against the fake driver.

The tool runs on a host with NVIDIA GPUs; here the suite's fake ``nvidia-smi`` (tests/discovery/
fakes) stands in for the driver, behind a small wrapper that answers the two queries only the
check makes (the fact query with memory, compute capability, device id and driver version, and
``nvidia-smi mig -lgip`` with MIG disabled), and NVML points at a library that does not exist. The
rendered stacks are a ``make demo``-style render into tmp_path (in-process, `tests.support.render`).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.monitoring.promtool import promtool
from tests.support.discovery_runs import fake_env
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for

TOOL = REPO_ROOT / "tools" / "gpu_host_check.py"
H100 = "NVIDIA H100 80GB HBM3"
# The stacks with YARN/standalone GPU clusters (two share the check's host) and one Kubernetes
# stack with both discovery modes.
STACKS = ("edge-standalone", "yarn-analytics", "edge-multimodel", "shared-gpus")

WRAPPER = """#!/bin/sh
# The real-GPU check's extra queries (test use only); everything else is the suite's fake.
case "$*" in
  "--query-gpu=name,memory.total,compute_cap,mig.mode.current,pci.device_id,driver_version --format=csv,noheader")
    i=0
    while [ "$i" -lt "${{FAKE_GPU_COUNT:-4}}" ]; do
      printf '%s, 81559 MiB, 9.0, Disabled, 0x233010DE, 580.95.05\\n' "${{FAKE_GPU_NAME:-{name}}}"
      i=$((i + 1))
    done
    exit 0 ;;
  "mig -lgip" | "mig -lgipp") echo "No MIG-enabled devices found."; exit 6 ;;
esac
exec '{fake}' "$@"
"""

# nvidia-smi mig -lgip / -lgipp as the NVIDIA MIG user guide prints them (an H100 80GB, MIG on).
LGIP = """\
+-----------------------------------------------------------------------------+
| GPU instance profiles:                                                      |
| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                              Free/Total   GiB              CE    JPEG  OFA  |
|=============================================================================|
|   0  MIG 1g.10gb       19     7/7        9.75       No     16     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.10gb+me    20     1/1        9.75       No     16     1     0   |
|                                                             1     1     1   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.20gb       15     4/4        19.62      No     26     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 2g.20gb       14     3/3        19.62      No     32     2     0   |
|                                                             2     2     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 3g.40gb        9     2/2        39.50      No     60     3     0   |
|                                                             3     3     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 4g.40gb        5     1/1        39.50      No     64     4     0   |
|                                                             4     4     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 7g.80gb        0     1/1        79.25      No     132    7     0   |
|                                                             8     7     1   |
+-----------------------------------------------------------------------------+
"""
LGIPP = """\
GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1
GPU  0 Profile ID 20 Placements: {0,1,2,3,4,5,6}:1
GPU  0 Profile ID 15 Placements: {0,2,4,6}:2
GPU  0 Profile ID 14 Placements: {0,2,4}:2
GPU  0 Profile ID  9 Placements: {0,4}:4
GPU  0 Profile ID  5 Placement : {0}:4
GPU  0 Profile ID  0 Placement : {0}:8
"""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_host_check", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory, tool: ModuleType) -> Path:
    """The example stacks rendered as `make demo` writes them, and the facts file beside them."""
    out = tmp_path_factory.mktemp("build")
    for stack in STACKS:
        for rel, (text, mode) in files_for(REPO_ROOT / "stacks" / f"{stack}.yaml").items():
            path = out / stack / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            path.chmod(mode)
    tool.write_facts(out / "gpu-facts.json")
    return out


FAKE_NVML = r"""
/* A fake libnvidia-ml.so.1 (test use only): the entry points tools/gpu_host_check.py calls through
   ctypes, with NVML's signatures (nvml.h: nvmlReturn_t = 0 is NVML_SUCCESS). */
#include <stdlib.h>
#include <string.h>
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlSystemGetDriverVersion(char *v, unsigned int n) { strncpy(v, "580.95.05", n); return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = (unsigned int)atoi(getenv("FAKE_GPU_COUNT")); return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h) { *h = (void *)(long)(i + 1); return 0; }
int nvmlDeviceGetName(void *h, char *name, unsigned int n) { strncpy(name, getenv("FAKE_NVML_NAME"), n); return 0; }
int nvmlDeviceGetMigMode(void *h, unsigned int *cur, unsigned int *pend) { *cur = 0; *pend = 0; return 0; }
"""


def run_tool(tmp_path: Path, build: Path, *args: str, gpus: int = 1, **fake: str) -> tuple[int, dict[str, Any]]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    wrapper = bindir / "nvidia-smi"
    wrapper.write_text(WRAPPER.format(name=H100, fake=REPO_ROOT / "tests" / "discovery" / "fakes" / "nvidia-smi"))
    wrapper.chmod(0o755)
    env = fake_env(gpus, fake)
    env["PATH"] = f"{bindir}:{env['PATH']}"
    out = tmp_path / "out"
    nvml = ["--nvml-library", str(tmp_path / "no-libnvidia-ml.so.1")] if "--nvml-library" not in args else []
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--out", str(out), "--build", str(build), *nvml, "--bench-runs", "0", *args],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert (out / "check.log").is_file()
    return proc.returncode, report


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["status"] for c in report["checks"]}


def test_every_check_passes_on_a_fake_h100(tmp_path: Path, build: Path) -> None:
    code, report = run_tool(tmp_path, build)
    got = statuses(report)
    failed = {c["name"]: c["summary"] for c in report["checks"] if c["status"] == "fail"}
    assert code == 0 and not failed, failed
    key = H100.replace(" ", "-")
    assert got[f"facts.name-table.{key}"] == "pass"
    assert got[f"facts.memory.{key}"] == "pass"
    assert got[f"facts.mig.{key}"] == "skipped"  # MIG disabled: recorded, never enabled
    assert got["facts.nvml-name"] == "skipped"  # no NVML here
    # every rendered config ran: both modes, the host clusters installed by their provision.sh
    for name in ("discovery.edge-standalone.edge-inference", "discovery.yarn-analytics.sessions-v100",
                 "discovery.shared-gpus.ranking-inference", "discovery.edge-multimodel.edge-vision.gpu-teslat4",
                 "discovery.two-taskmanagers.coordination", "discovery.two-taskmanagers.non-coordination"):
        assert got[name] == "pass", name
    by_name = {c["name"]: c for c in report["checks"]}
    assert "node/provision.sh --root" in by_name["discovery.install.edge-standalone"]["summary"]
    assert "refused loudly" in by_name["discovery.edge-multimodel.edge-vision.gpu-teslat4"]["summary"]
    # two clusters on one host: A holds GPU 0, B is refused and named, gets it once A is gone
    shared = [n for n in got if n.startswith("shared-host.")]
    assert len(shared) == 7 and all(got[n] == "pass" for n in shared), shared
    assert "A = edge-standalone.edge-inference" in by_name["shared-host.setup"]["summary"]
    assert "a Flink TaskManager (A-tm)" in by_name["shared-host.b-start-preflight-names-a"]["summary"]
    # the metrics the YARN cluster's calls wrote, valid for promtool
    assert got["metrics.textfile"] == "pass"
    out = tmp_path / "out"
    files = sorted(p.name for p in out.iterdir())
    assert files == ["check.log", "metrics-yarn-analytics.sessions-v100-held.prom",
                     "metrics-yarn-analytics.sessions-v100-released.prom", "report.json"]
    held = (out / "metrics-yarn-analytics.sessions-v100-held.prom").read_text()
    assert 'flink_cluster="sessions-v100",gpu_index="0"' in held
    for prom in out.glob("*.prom"):  # what the coordinator runs on the copies from the real host
        checked = subprocess.run([promtool(), "check", "metrics"], input=prom.read_text(), capture_output=True,
                                 text=True, check=False)
        assert checked.returncode == 0, (prom.name, checked.stdout, checked.stderr)


def test_a_planted_wrong_name_is_a_failure(tmp_path: Path, build: Path) -> None:
    """A driver that names the GPU what no row of the table says (here one letter off) fails the
    name check with the evidence, while the other checks still run."""
    code, report = run_tool(tmp_path, build, "--checks", "facts", FAKE_GPU_NAME="NVIDIA H100 80GB HBM4")
    assert code == 1
    by_name = {c["name"]: c for c in report["checks"]}
    check = by_name["facts.name-table.NVIDIA-H100-80GB-HBM4"]
    assert check["status"] == "fail"
    assert "'NVIDIA H100 80GB HBM4', which schemas/gpu-names.yaml does not list" in check["summary"]
    assert by_name["facts.nvidia-smi-query"]["status"] == "pass"
    assert "NVIDIA H100 80GB HBM4" in by_name["facts.nvidia-smi-query"]["evidence"][0]["stdout"]


@pytest.mark.parametrize("nvml_name", [H100, "NVIDIA H100 PCIe"])
def test_nvml_name_through_ctypes(tmp_path: Path, build: Path, nvml_name: str) -> None:
    """NVML's name, read through ctypes from a compiled stand-in of libnvidia-ml.so.1, must be the
    name nvidia-smi prints; a different one is a failure."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the fake NVML library")
    (tmp_path / "nvml.c").write_text(FAKE_NVML)
    lib = tmp_path / "libnvidia-ml.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "nvml.c")], check=True)
    code, report = run_tool(tmp_path, build, "--checks", "facts", "--nvml-library", str(lib),
                            FAKE_NVML_NAME=nvml_name)
    check = next(c for c in report["checks"] if c["name"] == "facts.nvml-name")
    if nvml_name == H100:
        assert (code, check["status"]) == (0, "pass"), check
        assert check["summary"] == f"NVML names {{0: '{H100}'}} (driver 580.95.05)"
    else:
        assert (code, check["status"]) == (1, "fail")
        assert check["summary"] == f"NVML names {{0: 'NVIDIA H100 PCIe'}}, nvidia-smi {{0: '{H100}'}}"


def test_mig_listing_is_compared_with_our_table(tool: ModuleType, build: Path) -> None:
    facts = json.loads((build / "gpu-facts.json").read_text())
    (table,) = facts["gpus"][H100]["migTables"]
    lgip, lgipp = tool.parse_lgip(LGIP), tool.parse_lgipp(LGIPP)
    assert tool.compare_mig(table, lgip[0], lgipp[0]) == []
    wrong = LGIP.replace("1g.20gb       15     4/4", "1g.20gb       15     3/3")
    assert tool.compare_mig(table, tool.parse_lgip(wrong)[0], lgipp[0]) == [
        "1g.20gb: the driver offers 3 instances, our table says 4"
    ]
    assert tool.compare_mig(facts["gpus"]["NVIDIA H100 NVL"]["migTables"][0], lgip[0], lgipp[0])[0] == (
        "profile 1g.12gb is in our table but the driver does not list it"
    )


def test_flink_config_reader_agrees_with_yaml(tool: ModuleType, build: Path) -> None:
    """The tool reads the rendered Flink configs without PyYAML; for every discovery key it gets
    what a YAML parser gets from config.yaml (the legacy flink-conf.yaml is not YAML: its values are
    read as Flink's GlobalConfiguration reads them, up to '#')."""
    configs = sorted(build.glob("*/flink/*/config.yaml"))
    assert configs
    for conf in configs:
        ours, parsed = tool.flink_conf_values(conf), yaml.safe_load(conf.read_text())
        for key, value in parsed.items():
            if key.startswith("external-resource."):
                assert ours[key] == str(value), (conf, key)
    legacy = tool.flink_conf_values(build / "edge-standalone" / "flink" / "edge-inference" / "flink-conf.yaml")
    assert legacy["external-resource.gpu.param.discovery-script.args"].split()[0] == "--enable-coordination-mode"
