"""The script's contract with Flink's GPUDriver, its flags, inventory backends and visibility."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.discovery_runs import Processes, gpu_uuid, ours, run

Env = Callable[..., dict[str, str]]


def test_prints_the_first_n_indexes_on_one_stdout_line(env: Env) -> None:
    r = run(ours("2"), env(4))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


def test_amount_zero_prints_nothing_and_touches_nothing(env: Env, coord: Path) -> None:
    # Not even the inventory is asked: a broken driver does not matter for amount 0.
    r = run(ours("0", "--enable-coordination-mode", "--coordination-file", str(coord)),
            env(4, FAKE_NVIDIA_SMI_FAIL="1"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert not coord.exists()


def test_the_null_word_flink_appends_is_tolerated_silently(env: Env) -> None:
    r = run(ours("2", "null"), env(4))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


def test_unknown_flags_and_words_are_ignored_with_a_warning(env: Env) -> None:
    r = run(ours("1", "--bogus", "stray", "--enable-coordination-mode=yes"), env(4))
    assert (r.returncode, r.stdout) == (0, "0\n")
    assert "ignoring unknown argument '--bogus'" in r.stderr
    assert "ignoring unexpected argument 'stray'" in r.stderr
    assert "ignoring unknown argument '--enable-coordination-mode=yes'" in r.stderr


def test_flinks_documented_typo_is_loud_and_still_coordinates(env: Env, coord: Path, procs: Processes) -> None:
    outs = []
    for _ in range(2):
        owner = procs.sleeper()
        r = run(ours("1", "--enable-coordination", "--coordination-file", str(coord), "--owner-pid",
                     str(owner.pid)), env(4))
        assert r.returncode == 0, r.stderr
        assert "'--enable-coordination' is NOT a valid flag" in r.stderr
        assert "did you mean '--enable-coordination-mode'" in r.stderr
        outs.append(r.stdout)
    assert outs == ["0\n", "1\n"]  # coordinated: the second TaskManager gets another GPU


@pytest.mark.parametrize("args", [[], ["two"], ["-1"], ["1.5"], ["--enable-coordination-mode"]])
def test_a_missing_or_bad_amount_is_a_usage_error(env: Env, args: list[str]) -> None:
    r = run(ours(*args), env(4))
    assert r.returncode == 2
    assert r.stdout == ""
    assert "amount" in r.stderr


@pytest.mark.parametrize("args", [["1", "--format", "xml"], ["1", "--vendor", "intel"],
                                  ["1", "--owner-pid", "abc"], ["1", "--file-mode", "0400"],
                                  ["1", "--coordination-file"], ["1", "--timeout", "0"]])
def test_bad_flag_values_are_usage_errors(env: Env, args: list[str]) -> None:
    r = run(ours(*args), env(4))
    assert (r.returncode, r.stdout) == (2, "")
    assert "error:" in r.stderr


def test_help_goes_to_stderr(env: Env) -> None:
    r = run(ours("--help"), env(4))
    assert (r.returncode, r.stdout) == (0, "")
    assert "usage:" in r.stderr and "--enable-coordination-mode" in r.stderr


def test_more_gpus_than_the_node_has_fails_loudly_on_stderr(env: Env) -> None:
    r = run(ours("5"), env(4))
    assert (r.returncode, r.stdout) == (1, "")
    assert "cannot allocate 5 GPU(s): only 4 eligible" in r.stderr


def test_spark_format(env: Env) -> None:
    r = run(ours("2", "--format", "spark"), env(4))
    assert (r.returncode, r.stdout) == (0, '{"name":"gpu","addresses":["0","1"]}\n')


def test_json_format_carries_uuids_names_and_bus_ids(env: Env) -> None:
    r = run(ours("2", "--format", "json"), env(4))
    assert r.returncode == 0 and r.stdout.count("\n") == 1
    doc = json.loads(r.stdout)
    assert doc["addresses"] == ["0", "1"] and doc["backend"] == "nvidia-smi" and doc["mode"] == "first-n"
    assert [g["uuid"] for g in doc["gpus"]] == [gpu_uuid(0), gpu_uuid(1)]
    assert doc["gpus"][1]["pci_bus_id"] == "00000000:11:00.0"
    assert doc["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"


def test_amount_zero_in_json_formats_is_an_empty_document(env: Env) -> None:
    assert run(ours("0", "--format", "spark"), env(4)).stdout == '{"name":"gpu","addresses":[]}\n'


MIXED = "NVIDIA A100-SXM4-80GB;NVIDIA H100 80GB HBM3"  # A100 on 0,2; H100 on 1,3


@pytest.mark.parametrize(("model", "expected"), [
    ("H100-80GB-HBM3", "1,3\n"),
    ("NVIDIA-H100-80GB-HBM3", "1,3\n"),
    ("nvidia_a100_sxm4_80gb", "0,2\n"),
    ("A100SXM480GB", "0,2\n"),
])
def test_model_filter_normalises_case_spaces_and_dashes(env: Env, model: str, expected: str) -> None:
    r = run(ours("2", "--model", model), env(4, FAKE_GPU_NAMES=MIXED))
    assert (r.returncode, r.stdout, r.stderr) == (0, expected, "")


def test_model_filter_is_an_exact_match_not_a_substring(env: Env) -> None:
    r = run(ours("1", "--model", "A100"), env(4, FAKE_GPU_NAMES=MIXED))
    assert (r.returncode, r.stdout) == (1, "")
    assert "no GPU matches --model A100; models here: NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3" in r.stderr


def test_mig_mode_gpus_are_skipped_unless_included(env: Env) -> None:
    r = run(ours("2"), env(4, FAKE_MIG_GPUS="0"))
    assert (r.returncode, r.stdout) == (0, "1,2\n")
    assert "skipping GPU(s) 0 in MIG mode" in r.stderr
    r = run(ours("2", "--include-mig"), env(4, FAKE_MIG_GPUS="0"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


def test_drivers_without_the_mig_field_are_retried_without_it(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "calls"
    r = run(ours("2"), env(4, FAKE_NO_MIG_FIELD="1", FAKE_NVIDIA_SMI_LOG=str(log)))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")
    calls = log.read_text().splitlines()
    assert calls == ["nvidia-smi --query-gpu=index,uuid,pci.bus_id,mig.mode.current,name --format=csv,noheader",
                     "nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader"]


def test_nvidia_smi_notices_on_stdout_are_skipped(env: Env) -> None:
    r = run(ours("2"), env(4, FAKE_NVSMI_WARNING="1"))
    assert (r.returncode, r.stdout) == (0, "0,1\n")
    assert "skipping unparseable nvidia-smi line: 'WARNING: infoROM is corrupted" in r.stderr


def test_a_broken_driver_fails_with_the_tools_message(env: Env) -> None:
    r = run(ours("1", "--vendor", "nvidia"), env(4, FAKE_NVIDIA_SMI_FAIL="9"))
    assert (r.returncode, r.stdout) == (4, "")
    assert "nvidia-smi exited with 9: NVIDIA-SMI has failed" in r.stderr


def test_no_gpu_tool_at_all(env: Env, tmp_path: Path) -> None:
    r = run(ours("1"), {**env(4), "PATH": str(tmp_path)})
    assert (r.returncode, r.stdout) == (4, "")
    assert "nvidia-smi not found on PATH" in r.stderr and "rocm-smi not found on PATH" in r.stderr


# ---------------------------------------------------------------- visibility variables


@pytest.mark.parametrize(("value", "amount", "expected"), [
    ("2,3", "2", "2,3\n"),
    ("3,1", "2", "3,1\n"),             # visibility order, like CUDA ordinals
    (gpu_uuid(2), "1", "2\n"),          # by UUID
    (gpu_uuid(2)[:12], "1", "2\n"),     # a unique UUID prefix, as CUDA accepts
    (f" {gpu_uuid(3)} , 0 ", "2", "3,0\n"),
    ("all", "4", "0,1,2,3\n"),
])
def test_cuda_visible_devices(env: Env, value: str, amount: str, expected: str) -> None:
    r = run(ours(amount), env(4, CUDA_VISIBLE_DEVICES=value))
    assert (r.returncode, r.stdout, r.stderr) == (0, expected, "")


def test_cuda_visible_devices_stops_at_an_unknown_entry_like_cuda(env: Env) -> None:
    r = run(ours("2"), env(4, CUDA_VISIBLE_DEVICES="1,7,2"))
    assert (r.returncode, r.stdout) == (1, "")
    assert "CUDA_VISIBLE_DEVICES entry '7' matches no GPU" in r.stderr
    assert run(ours("1"), env(4, CUDA_VISIBLE_DEVICES="1,7,2")).stdout == "1\n"


@pytest.mark.parametrize(("var", "value"), [
    ("CUDA_VISIBLE_DEVICES", ""), ("CUDA_VISIBLE_DEVICES", "none"), ("CUDA_VISIBLE_DEVICES", "-1"),
    ("NVIDIA_VISIBLE_DEVICES", "none"), ("NVIDIA_VISIBLE_DEVICES", "void"), ("NVIDIA_VISIBLE_DEVICES", ""),
])
def test_visibility_values_that_hide_every_gpu(env: Env, var: str, value: str) -> None:
    r = run(ours("1"), env(4, **{var: value}))
    assert (r.returncode, r.stdout) == (1, "")
    assert "cannot allocate 1 GPU(s): only 0 eligible" in r.stderr


def test_nvidia_visible_devices_by_uuid(env: Env) -> None:
    r = run(ours("2"), env(4, NVIDIA_VISIBLE_DEVICES=f"{gpu_uuid(3)},{gpu_uuid(1)}"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "3,1\n", "")


def test_nvidia_visible_devices_host_indexes(env: Env) -> None:
    # On a host (NVML sees all 4 GPUs) the list restricts what we hand out ...
    assert run(ours("2"), env(4, NVIDIA_VISIBLE_DEVICES="2,3")).stdout == "2,3\n"
    # ... in a container the runtime already applied it and NVML renumbered the 2 GPUs it sees.
    r = run(ours("2"), env(2, NVIDIA_VISIBLE_DEVICES="2,3"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


def test_both_nvidia_variables_intersect(env: Env) -> None:
    r = run(ours("1"), env(4, NVIDIA_VISIBLE_DEVICES=f"{gpu_uuid(2)},{gpu_uuid(3)}", CUDA_VISIBLE_DEVICES="3"))
    assert (r.returncode, r.stdout) == (0, "3\n")


def test_cuda_indexes_on_mixed_models_warn_about_the_device_order(env: Env) -> None:
    r = run(ours("1"), env(4, FAKE_GPU_NAMES=MIXED, CUDA_VISIBLE_DEVICES="1"))
    assert (r.returncode, r.stdout) == (0, "1\n")
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID" in r.stderr
    r = run(ours("1"), env(4, FAKE_GPU_NAMES=MIXED, CUDA_VISIBLE_DEVICES="1", CUDA_DEVICE_ORDER="PCI_BUS_ID"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "1\n", "")


# ---------------------------------------------------------------- AMD


@pytest.mark.parametrize("shape", ["list", "gpu_data"])
def test_amd_smi_backend(env: Env, shape: str) -> None:
    r = run(ours("2", "--vendor", "amd", "--format", "json"), env(4, FAKE_AMD_SMI_SHAPE=shape))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["backend"] == "amd-smi" and doc["addresses"] == ["0", "1"]
    assert doc["gpus"][1] == {"index": 1, "uuid": "c3000c90-0000-1000-8001-1ff77417f1d6",
                              "name": "AMD Instinct MI300X", "pci_bus_id": "0000:0d:00.0", "vendor": "amd"}


def test_auto_falls_back_from_nvidia_to_amd_smi_to_rocm_smi(env: Env) -> None:
    r = run(ours("2", "--format", "json"), env(4, FAKE_NVIDIA_SMI_FAIL="1"))
    assert json.loads(r.stdout)["backend"] == "amd-smi"
    r = run(ours("2", "--format", "json"), env(4, FAKE_NVIDIA_SMI_FAIL="1", FAKE_AMD_SMI_FAIL="1"))
    doc = json.loads(r.stdout)
    assert (r.returncode, doc["backend"], doc["addresses"]) == (0, "rocm-smi", ["0", "1"])
    assert doc["gpus"][0]["uuid"] == "GPU-000fff77417f1d00" and doc["gpus"][0]["name"] == "AMD Instinct MI300X"
    assert r.stderr == ""


def test_rocm_smi_warning_before_the_json_is_tolerated(env: Env) -> None:
    r = run(ours("3", "--backend", "rocm-smi"), env(4, FAKE_ROCM_SMI_WARNING="1"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1,2\n", "")


def test_amd_model_filter(env: Env) -> None:
    r = run(ours("1", "--vendor", "amd", "--model", "Instinct-MI300X"), env(2))
    assert (r.returncode, r.stdout) == (0, "0\n")
    r = run(ours("1", "--vendor", "amd", "--model", "MI250X"), env(2))
    assert r.returncode == 1 and "models here: AMD Instinct MI300X" in r.stderr


def test_rocr_visible_devices(env: Env) -> None:
    assert run(ours("2", "--vendor", "amd"), env(4, ROCR_VISIBLE_DEVICES="3,1")).stdout == "3,1\n"
    r = run(ours("1", "--vendor", "amd"), env(4, ROCR_VISIBLE_DEVICES="c3000c91-0000-1000-8002-1ff77417f1d6"))
    assert (r.returncode, r.stdout) == (0, "2\n")
    r = run(ours("1", "--backend", "rocm-smi"), env(4, ROCR_VISIBLE_DEVICES="GPU-000ffc77417f1d03"))
    assert (r.returncode, r.stdout) == (0, "3\n")


def test_backend_can_be_forced_by_environment(env: Env) -> None:
    r = run(ours("1", "--verbose"), env(4, ACCELPLANE_GPU_DISCOVERY_BACKEND="rocm-smi"))
    assert (r.returncode, r.stdout) == (0, "0\n")
    assert "backend rocm-smi:" in r.stderr
    r = run(ours("1"), env(4, ACCELPLANE_GPU_DISCOVERY_BACKEND="cuda"))
    assert (r.returncode, r.stdout) == (2, "")
    assert "ACCELPLANE_GPU_DISCOVERY_BACKEND must be one of" in r.stderr
