"""The discovery script against what the example stacks render: every flag a rendered Flink
configuration passes is documented in ``--help``, and every rendered GPU configuration, run the
way Flink's GPUDriver runs it (``<script> <amount> <args>``) with the script the node image ships,
discovers its GPUs in a container modelled on its device plugin (NVIDIA GPUs, MIG devices through
CDI, AMD GPUs through the ROCm plugin's /dev/dri nodes with no AMD tool installed)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from accelplane.discovery import gpu_discovery as gd

from tests.support.discovery_runs import PYTHON_CMD, REPO_ROOT, SCRIPT, fake_env, run
from tests.support.render import files_for

from .test_containers import kfd_tree

STACKS = sorted(p for p in (REPO_ROOT / "stacks").glob("*.yaml") if not p.name.startswith("Pulumi."))
AMOUNT_KEY = re.compile(r"external-resource\.([A-Za-z0-9_-]+)\.amount:\s*[\"']?(\d+)", re.M)
ARGS_KEY = r"external-resource\.{}\.param\.discovery-script\.args:\s*[\"']?([^\"'\n]+?)[\"']?\s*$"
K8S_RESOURCE_KEY = r"external-resource\.{}\.kubernetes\.config-key:\s*[\"']?([^\"'\s]+)"
MIXED_HOST = ("NVIDIA A100-SXM4-80GB", "Tesla T4")  # a standalone host with both models, alternating
EMBEDS_SCRIPT = ("accelplane_gpu_discovery.py", "accelplane-gpu-discovery", "provision.sh", "cloud-init.yaml")


@cache
def rendered(stack: Path) -> dict[str, str]:
    return {path: text for path, (text, _) in files_for(stack).items()}


def gpu_configs() -> list[tuple[str, str, int, str, str | None]]:
    """(stack, file, amount, args, Kubernetes resource) of every rendered Flink GPU configuration."""
    out = []
    for stack in STACKS:
        for path, text in sorted(rendered(stack).items()):
            if path.endswith(EMBEDS_SCRIPT) or path.startswith("kubernetes/configmap_"):
                continue  # the script's own text; ConfigMaps repeat flink/<cluster>/config.yaml
            for amount in AMOUNT_KEY.finditer(text):
                name = re.escape(amount.group(1))
                args = re.search(ARGS_KEY.format(name), text, re.M)
                res = re.search(K8S_RESOURCE_KEY.format(name), text, re.M)
                # Flink appends the word "null" when discovery-script.args is unset
                words = args.group(1) if args else "null"
                out.append((stack.name, f"{path}:{amount.group(1)}", int(amount.group(2)), words,
                            res.group(1) if res else None))
    return out


CONFIGS = gpu_configs()


def help_text(script: Path = SCRIPT) -> str:
    r = run([*PYTHON_CMD, str(script), "--help"], fake_env())
    assert r.returncode == 0 and r.stdout == ""
    return r.stderr


def test_the_example_stacks_render_discovery_args() -> None:
    assert {s for s, *_ in CONFIGS} >= {"prod-eu.yaml", "shared-gpus.yaml", "edge-standalone.yaml"}
    assert any("--isolated-devices" in a for *_, a, _ in CONFIGS)


def test_help_lists_every_flag_the_script_accepts() -> None:
    text = help_text()
    flags = [*gd._VALUE_FLAGS, *gd._BOOL_FLAGS, "--check-dead", "--enable-coordination"]
    missing = [f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)]
    assert missing == []


@pytest.mark.parametrize("stack", STACKS, ids=[s.name for s in STACKS])
def test_help_of_the_shipped_script_lists_every_flag_the_rendered_configs_pass(stack: Path) -> None:
    files = rendered(stack)
    shipped = "node-image/accelplane_gpu_discovery.py"  # the module its entry stub runs
    script = Path(SCRIPT)
    if shipped in files:
        assert files[shipped] == SCRIPT.read_text()  # the image ships exactly this script
    text = help_text(script)
    passed = {tok for s, _, _, args, _ in CONFIGS if s == stack.name for tok in args.split() if tok.startswith("-")}
    assert passed, "no discovery args rendered"
    assert sorted(f for f in passed if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)) == []


def _with_coordination_file(args: str, coord: Path) -> list[str]:
    words = args.split()
    if "--coordination-file" in words:
        words[words.index("--coordination-file") + 1] = str(coord)
    return words


@pytest.mark.parametrize(("stack", "path", "amount", "args", "resource"), CONFIGS,
                         ids=[f"{s}:{p}" for s, p, *_ in CONFIGS])
def test_every_rendered_gpu_config_discovers_its_gpus(tmp_path: Path, stack: str, path: str, amount: int,
                                                      args: str, resource: str | None) -> None:
    coord = tmp_path / "coordination" / "gpu-coordination"
    coord.parent.mkdir()
    words = _with_coordination_file(args, coord)
    matching: list[int] = []
    if resource == "amd.com/gpu":
        # ROCm device plugin: /dev/kfd + the /dev/dri nodes of `amount` of the host's 8 GPUs; the
        # image has no amd-smi / rocm-smi (only python3 and the script)
        kfd_tree(tmp_path / "root", 8, given=list(range(8 - amount, 8)))
        env = fake_env(0, {"ACCELPLANE_GPU_DISCOVERY_ROOT": str(tmp_path / "root"), "PATH": "/usr/bin:/bin"})
    elif resource is not None and resource.startswith("nvidia.com/mig-"):
        given = ",".join(f"{g}:1" for g in range(amount))  # MIG devices through CDI
        env = fake_env(8, {"FAKE_HOST_MIG": given, "NVIDIA_VISIBLE_DEVICES": "void"})
    elif "--isolated-devices" in words:  # a container given `amount` of the host's 8 GPUs through CDI
        env = fake_env(8, {"FAKE_HOST_GPUS": ",".join(str(g) for g in range(8 - amount, 8)),
                           "NVIDIA_VISIBLE_DEVICES": "void"})
    elif "--model" in words:  # a standalone host with two GPU models, one external resource each
        env = fake_env(8, {"FAKE_GPU_NAMES": ";".join(MIXED_HOST), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
        model = words[words.index("--model") + 1]
        matching = [i for i in range(8) if gd.model_matches(MIXED_HOST[i % 2], model)]
        assert matching, f"--model {model} matches neither {MIXED_HOST}"
    else:  # a host (standalone / YARN without Docker)
        env = fake_env(8)
    r = run([*PYTHON_CMD, str(SCRIPT), str(amount), *words], env)
    first = matching[:amount] if "--model" in words and resource is None else list(range(amount))
    expected = ",".join(str(i) for i in first)
    assert (r.returncode, r.stdout) == (0, expected + "\n"), r.stderr
