"""Unit tests: the NVML backend with a stubbed ``pynvml``, the parsers, the file-format codec."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from accelplane.discovery import gpu_discovery as gd
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.discovery_runs import gpu_uuid, ours, run

Env = Callable[..., dict[str, str]]


class FakeNVMLError(Exception):
    pass


class FakeNotSupported(FakeNVMLError):
    pass


def stub_pynvml(gpus: list[dict[str, Any]], *, init_error: Exception | None = None, as_bytes: bool = False,
                calls: list[str] | None = None) -> types.ModuleType:
    """A ``pynvml`` stand-in; each GPU: uuid, name, bus, mig (True/False/None = not supported)."""
    log = calls if calls is not None else []
    m = types.ModuleType("pynvml")

    def enc(s: str) -> str | bytes:
        return s.encode() if as_bytes else s

    def init() -> None:
        log.append("init")
        if init_error is not None:
            raise init_error

    def mig_mode(h: int) -> tuple[int, int]:
        mig = gpus[h]["mig"]
        if mig is None:
            raise FakeNotSupported("Not Supported")
        return (1, 1) if mig else (0, 0)

    m.NVMLError = FakeNVMLError  # type: ignore[attr-defined]
    m.NVML_DEVICE_MIG_ENABLE = 1  # type: ignore[attr-defined]
    m.nvmlInit = init  # type: ignore[attr-defined]
    m.nvmlShutdown = lambda: log.append("shutdown")  # type: ignore[attr-defined]
    m.nvmlDeviceGetCount = lambda: len(gpus)  # type: ignore[attr-defined]
    m.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    m.nvmlDeviceGetIndex = lambda h: h  # type: ignore[attr-defined]
    m.nvmlDeviceGetUUID = lambda h: enc(gpus[h]["uuid"])  # type: ignore[attr-defined]
    m.nvmlDeviceGetName = lambda h: enc(gpus[h]["name"])  # type: ignore[attr-defined]
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=enc(gpus[h]["bus"]))  # type: ignore[attr-defined]
    m.nvmlDeviceGetMigMode = mig_mode  # type: ignore[attr-defined]
    return m


GPUS: list[dict[str, Any]] = [
    {"uuid": gpu_uuid(0), "name": "NVIDIA A100-SXM4-80GB", "bus": "00000000:07:00.0", "mig": False},
    {"uuid": gpu_uuid(1), "name": "NVIDIA A100-SXM4-80GB", "bus": "00000000:0F:00.0", "mig": True},
    {"uuid": gpu_uuid(2), "name": "NVIDIA A100-SXM4-80GB", "bus": "00000000:47:00.0", "mig": None},
]


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_nvml_inventory(monkeypatch: pytest.MonkeyPatch, as_bytes: bool) -> None:
    calls: list[str] = []
    monkeypatch.setitem(sys.modules, "pynvml", stub_pynvml(GPUS, as_bytes=as_bytes, calls=calls))
    gpus = gd.inventory_nvml(gd.Log())
    assert [(g.index, g.uuid, g.name, g.bus_id, g.mig) for g in gpus] == [
        (0, gpu_uuid(0), "NVIDIA A100-SXM4-80GB", "00000000:07:00.0", False),
        (1, gpu_uuid(1), "NVIDIA A100-SXM4-80GB", "00000000:0F:00.0", True),
        (2, gpu_uuid(2), "NVIDIA A100-SXM4-80GB", "00000000:47:00.0", None),
    ]
    assert [g.key for g in gpus] == [gpu_uuid(i) for i in range(3)]
    assert calls == ["init", "shutdown"]


def test_nvml_backend_skips_the_mig_gpu_end_to_end(monkeypatch: pytest.MonkeyPatch, fake_path: Callable[..., None],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    fake_path(4)
    monkeypatch.setitem(sys.modules, "pynvml", stub_pynvml(GPUS))
    assert gd.main(["2", "--format", "json", "--backend", "nvml"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["backend"] == "nvml" and doc["addresses"] == ["0", "2"]
    assert [g["uuid"] for g in doc["gpus"]] == [gpu_uuid(0), gpu_uuid(2)]
    assert "skipping GPU(s) 1 in MIG mode" in err


def test_auto_asks_nvidia_smi_before_nvml(monkeypatch: pytest.MonkeyPatch, fake_path: Callable[..., None],
                                         capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 42: one call through nvidia-smi measured 33.6 ms on an H100, through NVML 81.6 ms
    (docs/benchmarks.md), so ``auto`` asks nvidia-smi first even where pynvml is importable."""
    calls: list[str] = []
    fake_path(4)
    monkeypatch.setitem(sys.modules, "pynvml", stub_pynvml(GPUS, calls=calls))
    assert gd.main(["2", "--format", "json"]) == 0
    assert json.loads(capfd.readouterr().out)["backend"] == "nvidia-smi"
    assert calls == []  # NVML was never initialised


def test_nvidia_smi_failure_falls_back_to_nvml_silently(monkeypatch: pytest.MonkeyPatch,
                                                        fake_path: Callable[..., None],
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    fake_path(4, FAKE_NVIDIA_SMI_FAIL="1")
    monkeypatch.setitem(sys.modules, "pynvml", stub_pynvml([GPUS[0], GPUS[2]]))
    assert gd.main(["2"]) == 0
    assert capfd.readouterr() == ("0,1\n", "")
    assert gd.main(["2", "--verbose"]) == 0
    out, err = capfd.readouterr()
    assert out == "0,1\n"
    assert "backend nvidia-smi unavailable:" in err
    assert "backend nvml:" in err


def test_nvml_init_failure_after_nvidia_smi_failure_names_both(monkeypatch: pytest.MonkeyPatch,
                                                               fake_path: Callable[..., None],
                                                               capfd: pytest.CaptureFixture[str]) -> None:
    fake_path(4, FAKE_NVIDIA_SMI_FAIL="1")
    monkeypatch.setitem(sys.modules, "pynvml", stub_pynvml(GPUS, init_error=FakeNVMLError("Driver Not Loaded")))
    assert gd.main(["3", "--vendor", "nvidia"]) == gd.EXIT_INVENTORY
    err = capfd.readouterr().err
    assert "nvml: NVML initialisation failed: Driver Not Loaded" in err
    assert "nvidia-smi:" in err


def test_noise_from_nvml_never_reaches_stdout(monkeypatch: pytest.MonkeyPatch, fake_path: Callable[..., None],
                                              capfd: pytest.CaptureFixture[str]) -> None:
    import os
    import warnings

    fake_path(4)
    noisy = stub_pynvml(GPUS[:1])

    def noisy_init() -> None:
        print("python-level chatter")
        sys.stderr.write("python-level complaint\n")
        os.write(1, b"C-level chatter on fd 1\n")
        os.write(2, b"C-level chatter on fd 2\n")
        warnings.warn("deprecated", FutureWarning, stacklevel=1)

    noisy.nvmlInit = noisy_init  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", noisy)
    assert gd.main(["1", "--backend", "nvml"]) == 0
    assert capfd.readouterr() == ("0\n", "")
    assert gd.main(["1", "--backend", "nvml", "--verbose"]) == 0
    out, err = capfd.readouterr()
    assert out == "0\n"  # with --verbose the chatter is shown, on stderr
    assert "C-level chatter on fd 1" in err and "python-level chatter" in err


def test_a_noisy_pynvml_import_is_silenced(env: Env, tmp_path: Path) -> None:
    """Like the deprecated ``pynvml`` PyPI wrapper, which warns on import (end to end, subprocess)."""
    (tmp_path / "pynvml.py").write_text(
        "import sys, warnings\n"
        "print('import chatter')\n"
        "sys.stderr.write('import complaint\\n')\n"
        "warnings.warn('The pynvml package is deprecated', FutureWarning, stacklevel=2)\n"
        "class NVMLError(Exception): pass\n"
        "def nvmlInit(): raise NVMLError('NVML Shared Library Not Found')\n"
    )
    r = run(ours("2"), {**env(4), "PYTHONPATH": str(tmp_path)})
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


def test_the_real_nvidia_ml_py_without_a_driver_falls_back_silently(env: Env) -> None:
    """With site-packages (no -S) so the installed ``nvidia-ml-py`` is imported for real."""
    if importlib.util.find_spec("pynvml") is None:
        pytest.skip("nvidia-ml-py is not installed")
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("a real NVIDIA driver answers here: NVML would not fall back")
    failing = {**env(4), "FAKE_NVIDIA_SMI_FAIL": "1"}
    r = run([sys.executable, str(gd.__file__), "2", "--verbose", "--vendor", "nvidia"], failing)
    assert r.returncode == gd.EXIT_INVENTORY
    assert "nvml: NVML initialisation failed" in r.stderr
    r = run([sys.executable, str(gd.__file__), "2", "--backend", "nvml", "--verbose"], env(4))
    assert "backend nvml unavailable: NVML initialisation failed" in r.stderr
    r = run([sys.executable, str(gd.__file__), "2"], env(4))
    assert (r.returncode, r.stdout, r.stderr) == (0, "0,1\n", "")


# ---------------------------------------------------------------- parsers


def test_parse_nvidia_smi_is_robust() -> None:
    text = ("WARNING: infoROM is corrupted at gpu 0000:01:00.0\n"
            f"0, {gpu_uuid(0)}, 00000000:07:00.0, [N/A], Weird, Name, With Commas\n"
            "\n"
            f"1, {gpu_uuid(1)}, 00000000:0F:00.0, Enabled, NVIDIA A100-SXM4-40GB\n"
            "x, y\n")
    log = gd.Log()
    gpus = gd.parse_nvidia_smi(text, gd.NVIDIA_SMI_FIELDS, log)
    assert [(g.index, g.uuid, g.bus_id, g.mig, g.name) for g in gpus] == [
        (0, gpu_uuid(0), "00000000:07:00.0", None, "Weird, Name, With Commas"),
        (1, gpu_uuid(1), "00000000:0F:00.0", True, "NVIDIA A100-SXM4-40GB"),
    ]


def test_amd_keys_agree_between_amd_smi_and_rocm_smi() -> None:
    """amd-smi and rocm-smi print different UUIDs for one GPU; the PCI address agrees, so it is the key."""
    amd = gd.parse_amd_smi([{"gpu": 0, "bdf": "0000:0c:00.0", "uuid": "c3000c8f-0000-1000-8000-1ff77417f1d6"}])
    rocm = gd.parse_rocm_smi({"card0": {"Unique ID": "0x000fff77417f1d00", "PCI Bus": "0000:0C:00.0"},
                              "system": {}})
    assert amd[0].uuid != rocm[0].uuid
    assert amd[0].key == rocm[0].key == "pci:0000:0c:00.0"


def test_amd_smi_shapes_and_names() -> None:
    listing = {"gpu_data": [{"gpu": 1, "bdf": "0000:0d:00.0", "uuid": "u1", "hip_uuid": "GPU-1ff77417f1d6"},
                            {"gpu": "0", "bdf": "N/A", "uuid": "u0"}, {"no": "gpu"}]}
    static = [{"gpu": 1, "asic": {"market_name": "AMD Instinct MI300X"}}]
    gpus = gd.parse_amd_smi(listing, static)
    assert [(g.index, g.uuid, g.bus_id, g.name, g.aliases) for g in gpus] == [
        (1, "u1", "0000:0d:00.0", "AMD Instinct MI300X", ("GPU-1ff77417f1d6",)),
        (0, "u0", None, "", ()),
    ]
    assert gpus[1].key == "u0"  # no PCI address: the UUID


def test_bus_ids_normalise() -> None:
    assert gd.normalize_bus_id("00000000:17:00.0") == "0000:17:00.0"
    assert gd.normalize_bus_id("0000:17:00.0") == "0000:17:00.0"
    assert gd.normalize_bus_id("17:00.0") == "0000:17:00.0"


@pytest.mark.parametrize(("name", "wanted", "match"), [
    ("Tesla V100-SXM2-32GB", "teslav100sxm232gb", True),
    ("NVIDIA H100 80GB HBM3", "H100-80GB-HBM3", True),
    ("NVIDIA H100 80GB HBM3", "nvidia_h100_80gb_hbm3", True),
    ("NVIDIA H100 80GB HBM3", "H100", False),
    ("NVIDIA H100 80GB HBM3", "H100 80GB HBM3 MIG", False),
    ("AMD Instinct MI300X", "Instinct-MI300X", True),
    ("", "", False),
])
def test_model_matching(name: str, wanted: str, match: bool) -> None:
    assert gd.model_matches(name, wanted) is match


def test_ambiguous_uuid_prefix_matches_nothing() -> None:
    gpus = [gd.Gpu(0, "GPU-aaaa1"), gd.Gpu(1, "GPU-aaaa2")]
    log = gd.Log()
    assert gd.apply_visibility(gpus, "CUDA_VISIBLE_DEVICES", "GPU-aaaa", log) == []
    assert gd.apply_visibility(gpus, "CUDA_VISIBLE_DEVICES", "GPU-aaaa2,0", log) == [gpus[1], gpus[0]]


# ---------------------------------------------------------------- file-format codec

keys = st.one_of(st.from_regex(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}", fullmatch=True),
                 st.from_regex(r"pci:0000:[0-9a-f]{2}:00\.[0-7]", fullmatch=True),
                 st.integers(0, 999).map(lambda i: f"index:{i}"))
records = st.builds(gd.Record, keys, st.integers(0, 999), st.integers(1, 2**22), st.integers(0, 2**40),
                    st.uuids().map(str), st.sampled_from(["-", "4026531836", "4026532999"]),
                    st.integers(0, 2**33))


def _unique(recs: list[gd.Record]) -> list[gd.Record]:
    seen: dict[str, gd.Record] = {}
    for r in recs:
        seen.setdefault(r.key, r)
    return list(seen.values())


@settings(max_examples=200, deadline=None)
@given(st.lists(records, max_size=12).map(_unique))
def test_records_round_trip(recs: list[gd.Record]) -> None:
    parsed = gd.parse_records(gd.render_records(recs), "f")
    assert [r.line() for r in parsed] == [r.line() for r in recs]


@settings(max_examples=200, deadline=None)
@given(st.lists(records, max_size=8).map(_unique), st.data())
def test_every_truncation_is_detected(recs: list[gd.Record], data: st.DataObject) -> None:
    """A torn or truncated write is never read as a valid (smaller) set of allocations."""
    blob = gd.render_records(recs)
    cut = data.draw(st.integers(1, len(blob) - 1))
    with pytest.raises(gd.DiscoveryError) as err:
        gd.parse_records(blob[:cut], "f")
    assert err.value.code == gd.EXIT_COORDINATION


@settings(max_examples=300, deadline=None)
@given(st.lists(records, min_size=1, max_size=8).map(_unique), st.lists(records, max_size=8).map(_unique),
       st.data())
def test_a_write_torn_over_older_content_is_detected(old: list[gd.Record], new: list[gd.Record],
                                                     data: st.DataObject) -> None:
    """write-then-truncate interrupted (e.g. Flink SIGKILLs the script mid-write): the new bytes
    cover the head of the old content and the old tail is left. Never read as valid."""
    old_blob, new_blob = gd.render_records(old), gd.render_records(new)
    written = data.draw(st.integers(1, max(1, min(len(new_blob), len(old_blob)) - 1)))
    torn = new_blob[:written] + old_blob[written:]
    if torn in (old_blob, new_blob):
        return
    with pytest.raises(gd.DiscoveryError):
        gd.parse_records(torn, "f")


def test_a_parent_that_is_an_init_process_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     fake_path: Callable[..., None],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """getppid() is init when the caller died and we were re-parented: never record init as owner."""
    import os
    import subprocess

    fake_path(4)
    tini = tmp_path / "tini"
    tini.symlink_to("/bin/sleep")
    init_like = subprocess.Popen([str(tini), "1000"])
    try:
        monkeypatch.setattr(os, "getppid", lambda: init_like.pid)
        rc = gd.main(["1", "--enable-coordination-mode", "--coordination-file", str(tmp_path / "c")])
        assert rc == gd.EXIT_USAGE
        assert "the parent process is tini" in capsys.readouterr().err
        assert not (tmp_path / "c").exists()
    finally:
        init_like.kill()
        init_like.wait()


def test_the_script_keeps_python_3_7_syntax() -> None:
    """Nodes run it with whatever python3 they have (Python >= 3.7 is the documented floor)."""
    import ast

    ast.parse(Path(gd.__file__).read_text(), feature_version=(3, 7))
    assert "from __future__ import annotations" in Path(gd.__file__).read_text()


def test_amd_smi_names_become_the_boards_sysfs_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """amd-smi reports the libdrm market name; the board's sysfs ``product_name`` (what the AMD DRA
    driver, node labeller, KFD backend and accelplane's GPU name table use) replaces it, so
    ``--model AMD-Instinct-MI300X-OAM`` selects the GPU whichever backend answers."""
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:0d:00.0"
    dev.mkdir(parents=True)
    (dev / "product_name").write_text("AMD Instinct MI300X OAM\n")
    monkeypatch.setenv(gd.ROOT_ENV, str(tmp_path))
    static = [{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"}}, {"gpu": 1, "asic": {"market_name": "AMD Instinct MI300X"}}]
    listed = [{"gpu": 0, "bdf": "0000:0d:00.0", "uuid": "u0"}, {"gpu": 1, "bdf": "0000:0e:00.0", "uuid": "u1"}]
    gpus = gd.with_board_names(gd.parse_amd_smi(listed, static))
    assert [g.name for g in gpus] == ["AMD Instinct MI300X OAM", "AMD Instinct MI300X"]
    assert gd.model_matches(gpus[0].name, "AMD-Instinct-MI300X-OAM")
