"""Discovery inside containers, for every way devices reach a container, MIG, and AMD.

Each fake models what the runtime really exposes (contracts cited in docs/discovery.md):

* NVIDIA k8s-device-plugin ``deviceListStrategy`` (internal/plugin/server.go, getAllocateResponse):
  ``envvar`` sets ``NVIDIA_VISIBLE_DEVICES`` to the device ids (UUIDs, or indexes with
  ``deviceIDStrategy: index``; MIG devices as ``MIG-<uuid>`` or ``<gpu>:<mig>``); ``volume-mounts``
  sets it to ``/var/run/nvidia-container-devices`` and mounts one empty file per device id in that
  directory; ``cdi-annotations`` / ``cdi-cri`` set no variable, and the CDI spec the toolkit
  generates sets ``NVIDIA_VISIBLE_DEVICES=void`` while injecting the device nodes. In every case
  NVML / nvidia-smi inside an unprivileged container shows only the injected GPUs, renumbered
  from 0 (the fake's ``FAKE_HOST_GPUS`` / ``FAKE_HOST_MIG``); a privileged container sees all.
* ROCm k8s-device-plugin (internal/pkg/plugin/plugin.go, Allocate): no variable; the container
  gets ``/dev/kfd`` and the ``/dev/dri/card<N>`` and ``/dev/dri/renderD<N>`` nodes of its GPUs,
  while ``/sys`` (the KFD topology) still lists every GPU of the host.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from accelplane.discovery import gpu_discovery as gd

from tests.support.discovery_runs import Processes, gpu_uuid, ours, read_records, run
from tests.support.fake_nvidia_smi import fake_mig_uuid

Env = Callable[..., dict[str, str]]
HOST = 4  # GPUs on the host; the container below was given host GPUs 1 and 3


def volume_mounts_dir(tmp_path: Path, ids: list[str]) -> str:
    """What the volume-mounts strategy leaves in the container: one empty file per device id (and
    an ``imex`` directory when IMEX channels are allocated)."""
    d = tmp_path / "nvidia-container-devices"
    d.mkdir()
    for i in ids:
        (d / i).write_bytes(b"")
    (d / "imex").mkdir()
    return str(d)


# strategy -> (environment the runtime leaves, what nvidia-smi shows) for a container given host GPUs 1, 3
def strategies(tmp_path: Path) -> dict[str, dict[str, str]]:
    container = {"FAKE_HOST_GPUS": "1,3"}
    return {
        "envvar-uuid": {**container, "NVIDIA_VISIBLE_DEVICES": f"{gpu_uuid(1)},{gpu_uuid(3)}"},
        "envvar-index": {**container, "NVIDIA_VISIBLE_DEVICES": "1,3"},
        "volume-mounts": {
            **container, "NVIDIA_VISIBLE_DEVICES": volume_mounts_dir(tmp_path, [gpu_uuid(3), gpu_uuid(1)]),
        },
        "cdi-annotations": {**container, "NVIDIA_VISIBLE_DEVICES": "void"},  # from the CDI spec's env
        "cdi-cri": {**container, "NVIDIA_VISIBLE_DEVICES": "void"},
        "unset": container,  # device nodes passed without the NVIDIA runtime (passDeviceSpecs)
        "all": {**container, "NVIDIA_VISIBLE_DEVICES": "all"},  # CUDA images' default, overridden by nothing
    }


@pytest.mark.parametrize("strategy", ["envvar-uuid", "envvar-index", "volume-mounts", "cdi-annotations",
                                      "cdi-cri", "unset", "all"])
def test_each_device_list_strategy_reports_the_containers_gpus(env: Env, tmp_path: Path, coord: Path,
                                                               procs: Processes, strategy: str) -> None:
    e = env(HOST, **strategies(tmp_path)[strategy])
    r = run(ours("2", "--isolated-devices"), e)
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")
    # coordination records carry the host GPUs' UUIDs, whatever the numbering inside
    owner = procs.sleeper().pid
    r = run(ours("2", "--isolated-devices", "--enable-coordination-mode", "--coordination-file", str(coord),
                 "--owner-pid", str(owner)), e)
    assert (r.returncode, r.stdout) == (0, "0,1\n"), r.stderr
    assert [(x.key, x.index) for x in read_records(coord)] == [(gpu_uuid(1), 0), (gpu_uuid(3), 1)]


def test_the_issues_reproduction_volume_mounts_path(env: Env) -> None:
    """``NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices`` (absent on this machine, as when
    the directory cannot be listed): with --isolated-devices what nvidia-smi shows is ours."""
    r = run(ours("2", "--isolated-devices"), env(2, NVIDIA_VISIBLE_DEVICES="/var/run/nvidia-container-devices"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")
    r = run(ours("2", "--isolated-devices"), env(2, NVIDIA_VISIBLE_DEVICES="void"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


def test_without_isolated_devices_void_and_an_unlisted_directory_say_what_to_pass(env: Env) -> None:
    for value in ("void", "/var/run/nvidia-container-devices"):
        r = run(ours("1"), env(2, NVIDIA_VISIBLE_DEVICES=value))
        assert (r.returncode, r.stdout) == (1, "")
        assert "pass --isolated-devices" in r.stderr


def test_none_means_no_gpu_even_when_isolated(env: Env) -> None:
    r = run(ours("1", "--isolated-devices"), env(2, NVIDIA_VISIBLE_DEVICES="none"))
    assert (r.returncode, r.stdout) == (1, "")
    assert "only 0 eligible" in r.stderr


def test_volume_mounts_in_a_privileged_container_filters_by_the_mounted_ids(env: Env, tmp_path: Path) -> None:
    """A privileged container sees every host GPU; the mounted ids still say which are ours
    (in inventory order: a directory has no order)."""
    d = volume_mounts_dir(tmp_path, [gpu_uuid(3), gpu_uuid(1)])
    r = run(ours("2", "--isolated-devices"), env(HOST, NVIDIA_VISIBLE_DEVICES=d))
    assert (r.returncode, r.stdout, r.stderr) == (0, "1,3\n", "")


# ---------------------------------------------------------------- MIG


MIG_GIVEN = "1:0,3:2"  # the container got MIG device 0 of host GPU 1 and MIG device 2 of host GPU 3


@pytest.mark.parametrize("strategy", ["envvar-uuid", "envvar-index", "volume-mounts", "cdi"])
def test_mig_devices_are_reported_with_cudas_numbers(env: Env, tmp_path: Path, strategy: str) -> None:
    """MIG ``mixed`` (nvidia.com/mig-<profile>) or ``single``: CUDA numbers the visible MIG devices
    from 0; that is what Flink gets, and --format json names the MIG UUIDs."""
    migs = [fake_mig_uuid(1, 0), fake_mig_uuid(3, 2)]
    value = {"envvar-uuid": ",".join(migs), "envvar-index": MIG_GIVEN,
             "volume-mounts": volume_mounts_dir(tmp_path, migs), "cdi": "void"}[strategy]
    e = env(HOST, FAKE_HOST_MIG=MIG_GIVEN, NVIDIA_VISIBLE_DEVICES=value)
    r = run(ours("1", "--isolated-devices"), e)
    assert (r.returncode, r.stdout, r.stderr) == (0, "0\n", "")
    r = run(ours("2", "--isolated-devices", "--format", "json"), e)
    doc = json.loads(r.stdout)
    assert doc["addresses"] == ["0", "1"]
    assert [(g["uuid"], g["mig_parent_index"], g["mig_device"]) for g in doc["gpus"]] == [
        (migs[0], 0, 0), (migs[1], 1, 2)]
    assert doc["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
    # a TaskManager asking for more than one MIG device is told that CUDA uses only one
    assert "a CUDA process enumerates only ONE MIG device" in r.stderr


def test_mig_on_a_host_hands_out_mig_devices_of_mig_only_nodes(env: Env) -> None:
    r = run(ours("4"), env(2, FAKE_MIG_GPUS="0,1", FAKE_MIG_PROFILES="1g.10gb,1g.10gb"))
    assert (r.returncode, r.stdout) == (0, "0,1,2,3\n")
    # whole GPUs next to MIG-mode ones: the whole ones are handed out, as before
    r = run(ours("2"), env(3, FAKE_MIG_GPUS="0"))
    assert (r.returncode, r.stdout) == (0, "1,2\n")


def test_coordination_keys_mig_records_by_mig_uuid(env: Env, coord: Path, procs: Processes) -> None:
    e = env(HOST, FAKE_HOST_MIG=MIG_GIVEN, NVIDIA_VISIBLE_DEVICES="void")
    args = ["--isolated-devices", "--enable-coordination-mode", "--coordination-file", str(coord)]
    a, b = procs.sleeper().pid, procs.sleeper().pid
    assert run(ours("1", *args, "--owner-pid", str(a)), e).stdout == "0\n"
    r = run(ours("1", *args, "--owner-pid", str(b)), e)
    assert r.stdout == "1\n"
    assert [(x.key, x.index, x.pid) for x in read_records(coord)] == [
        (fake_mig_uuid(1, 0), 0, a), (fake_mig_uuid(3, 2), 1, b)]


def test_nvidia_smi_list_parser() -> None:
    text = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaa)\n"
            "  MIG 1g.10gb     Device  0: (UUID: MIG-1111)\n"
            "  MIG 2g.20gb     Device  1: (UUID: MIG-2222)\n"
            "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-bbbb)\n"
            "  MIG 3g.40gb     Device  0: (UUID: MIG-3333)\n")
    gpus = [gd.Gpu(0, "GPU-aaaa", "NVIDIA A100-SXM4-80GB", "00000000:07:00.0", True),
            gd.Gpu(1, "GPU-bbbb", "NVIDIA A100-SXM4-80GB", "00000000:0F:00.0", True)]
    migs = gd.parse_nvidia_smi_list(text, gpus, gd.Log())
    assert [(m.index, m.uuid, m.parent, m.mig_index, m.name, m.bus_id) for m in migs] == [
        (0, "MIG-1111", 0, 0, "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "00000000:07:00.0"),
        (1, "MIG-2222", 0, 1, "NVIDIA A100-SXM4-80GB MIG 2g.20gb", "00000000:07:00.0"),
        (2, "MIG-3333", 1, 0, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", "00000000:0F:00.0"),
    ]
    assert [m.key for m in migs] == ["MIG-1111", "MIG-2222", "MIG-3333"]


def stub_pynvml_with_mig(slots: dict[int, list[str | None]]) -> types.ModuleType:
    """A ``pynvml`` with two MIG-enabled A100s; ``slots[gpu]`` = MIG UUID per slot (None: empty)."""
    m = types.ModuleType("pynvml")

    class NotFound(Exception):
        pass

    def mig_handle(h: int, j: int) -> tuple[int, int]:
        if slots[h][j] is None:
            raise NotFound("Not Found")
        return (h, j)

    def uuid(h: Any) -> str:
        return slots[h[0]][h[1]] or "" if isinstance(h, tuple) else f"GPU-{h}"

    def name(h: Any) -> str:
        return "NVIDIA A100-SXM4-80GB MIG 1g.10gb" if isinstance(h, tuple) else "NVIDIA A100-SXM4-80GB"

    m.NVML_DEVICE_MIG_ENABLE = 1  # type: ignore[attr-defined]
    m.nvmlInit = lambda: None  # type: ignore[attr-defined]
    m.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    m.nvmlDeviceGetCount = lambda: len(slots)  # type: ignore[attr-defined]
    m.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    m.nvmlDeviceGetIndex = lambda h: h  # type: ignore[attr-defined]
    m.nvmlDeviceGetUUID = uuid  # type: ignore[attr-defined]
    m.nvmlDeviceGetName = name  # type: ignore[attr-defined]
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=f"00000000:{h + 7:02X}:00.0")  # type: ignore[attr-defined]
    m.nvmlDeviceGetMigMode = lambda h: (1, 1)  # type: ignore[attr-defined]
    m.nvmlDeviceGetMaxMigDeviceCount = lambda h: len(slots[h])  # type: ignore[attr-defined]
    m.nvmlDeviceGetMigDeviceHandleByIndex = mig_handle  # type: ignore[attr-defined]
    return m


def test_nvml_enumerates_mig_devices(monkeypatch: pytest.MonkeyPatch, fake_path: Callable[..., None],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    fake_path(2)
    monkeypatch.setitem(sys.modules, "pynvml", stub_pynvml_with_mig({0: ["MIG-a", None, "MIG-b"], 1: ["MIG-c"]}))
    gpus = gd.inventory_nvml(gd.Log())
    assert [(g.index, g.uuid, g.parent, g.mig_index) for g in gpus if g.is_mig_device] == [
        (0, "MIG-a", 0, 0), (1, "MIG-b", 0, 2), (2, "MIG-c", 1, 0)]
    assert gd.main(["1", "--format", "json", "--backend", "nvml"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["backend"] == "nvml" and doc["addresses"] == ["0"] and doc["gpus"][0]["uuid"] == "MIG-a"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-c")  # CUDA numbers what it sees: MIG-c is 0
    assert gd.main(["1", "--format", "json", "--backend", "nvml"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["addresses"] == ["0"] and doc["gpus"][0]["uuid"] == "MIG-c"


# ---------------------------------------------------------------- AMD


def kfd_tree(root: Path, gpus: int, given: list[int]) -> None:
    """A host's KFD topology (node 0 a CPU, nodes 1.. GPUs with render minors 128..) and a container
    /dev/dri holding only the render nodes of ``given`` (what the ROCm device plugin passes)."""
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    cpu = nodes / "0"
    cpu.mkdir(parents=True)
    (cpu / "properties").write_text("cpu_cores_count 64\nsimd_count 0\ndrm_render_minor 0\n")
    for g in range(gpus):
        n = nodes / str(g + 1)
        n.mkdir()
        (n / "properties").write_text(
            f"cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndrm_render_minor {128 + g}\n"
            f"location_id {(0x0C + g) << 8}\ndomain 0\nunique_id {0x10000 + g}\n")
        (n / "name").write_text("gfx942\n")
        prod = root / f"sys/class/drm/renderD{128 + g}/device"
        prod.mkdir(parents=True)
        (prod / "product_name").write_text("AMD Instinct MI300X\n")
    dri = root / "dev/dri"
    dri.mkdir(parents=True)
    for g in given:
        (dri / f"renderD{128 + g}").write_bytes(b"")
        (dri / f"card{g + 1}").write_bytes(b"")


def test_kfd_backend_reports_the_containers_gpus_as_hip_numbers_them(env: Env, tmp_path: Path) -> None:
    kfd_tree(tmp_path, 8, given=[2, 5])
    e = env(8, ACCELPLANE_GPU_DISCOVERY_ROOT=str(tmp_path), PATH="/usr/bin:/bin")  # no AMD tool at all
    r = run(ours("2", "--isolated-devices", "--format", "json"), e)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["backend"], doc["addresses"]) == ("kfd", ["0", "1"])
    assert [(g["pci_bus_id"], g["name"]) for g in doc["gpus"]] == [
        ("0000:0e:00.0", "AMD Instinct MI300X"), ("0000:11:00.0", "AMD Instinct MI300X")]
    r = run(ours("3", "--isolated-devices"), e)
    assert r.returncode == 1 and "only 2 eligible" in r.stderr


def test_kfd_keys_match_the_other_amd_backends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Coordination records of one GPU are the same whichever backend found it: pci:<bdf>."""
    kfd_tree(tmp_path, 2, given=[0, 1])
    monkeypatch.setenv("ACCELPLANE_GPU_DISCOVERY_ROOT", str(tmp_path))
    assert [g.key for g in gd.inventory_kfd(gd.Log())] == ["pci:0000:0c:00.0", "pci:0000:0d:00.0"]


@pytest.mark.parametrize(("rocr", "hip", "expected"), [
    (None, "1", "1\n"),          # HIP_VISIBLE_DEVICES alone: HIP ordinals = indexes
    ("3,1", None, "3,1\n"),
    ("3,1,2", "1", "1\n"),       # HIP counts what ROCR left: its device 1 is GPU 1
    ("3,1,2", "0,2", "3,2\n"),
])
def test_rocr_then_hip_visible_devices(env: Env, rocr: str | None, hip: str | None, expected: str) -> None:
    extra = {k: v for k, v in (("ROCR_VISIBLE_DEVICES", rocr), ("HIP_VISIBLE_DEVICES", hip)) if v is not None}
    r = run(ours(str(expected.count(",") + 1), "--vendor", "amd"), env(4, **extra))
    assert (r.returncode, r.stdout) == (0, expected), r.stderr


def stub_amdsmi(gpus: list[tuple[str, str, str]], *, init_error: Exception | None = None) -> types.ModuleType:
    """An ``amdsmi`` stand-in (ROCm's AMD SMI Python API): (bdf, uuid, market name) per GPU."""
    m = types.ModuleType("amdsmi")

    def init() -> None:
        if init_error is not None:
            raise init_error

    m.amdsmi_init = init  # type: ignore[attr-defined]
    m.amdsmi_shut_down = lambda: None  # type: ignore[attr-defined]
    m.amdsmi_get_processor_handles = lambda: list(range(len(gpus)))  # type: ignore[attr-defined]
    m.amdsmi_get_gpu_device_bdf = lambda h: gpus[h][0]  # type: ignore[attr-defined]
    m.amdsmi_get_gpu_device_uuid = lambda h: gpus[h][1]  # type: ignore[attr-defined]
    m.amdsmi_get_gpu_asic_info = lambda h: {"market_name": gpus[h][2], "vendor_id": "0x1002"}  # type: ignore[attr-defined]
    return m


AMD_GPUS = [("0000:0c:00.0", "a1ff74a1-0000-1000-80fb-1ff77417f1d6", "AMD Instinct MI300X"),
            ("0000:22:00.0", "a2ff74a1-0000-1000-80fb-1ff77417f1d6", "AMD Instinct MI300X")]


def test_amdsmi_backend_in_process(monkeypatch: pytest.MonkeyPatch, fake_path: Callable[..., None],
                                   capsys: pytest.CaptureFixture[str]) -> None:
    fake_path(4, FAKE_NVIDIA_SMI_FAIL="9")
    monkeypatch.setitem(sys.modules, "amdsmi", stub_amdsmi(AMD_GPUS))
    assert gd.main(["2", "--vendor", "amd", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["backend"] == "amdsmi" and doc["addresses"] == ["0", "1"]
    assert [(g["pci_bus_id"], g["name"]) for g in doc["gpus"]] == [(b, n) for b, _, n in AMD_GPUS]
    assert [g.key for g in gd.inventory_amdsmi(gd.Log())] == ["pci:0000:0c:00.0", "pci:0000:22:00.0"]


def test_amdsmi_without_the_rocm_library_falls_back_silently(monkeypatch: pytest.MonkeyPatch,
                                                             fake_path: Callable[..., None],
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    fake_path(4)
    monkeypatch.setitem(sys.modules, "amdsmi", stub_amdsmi(AMD_GPUS, init_error=OSError("libamd_smi.so: cannot open")))
    assert gd.main(["2", "--vendor", "amd", "--format", "json"]) == 0
    out, err = capfd.readouterr()
    assert json.loads(out)["backend"] == "amd-smi" and err == ""
