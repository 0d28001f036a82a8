"""``yarn/install-container-executor-cfg.sh`` puts a pool's sections into a NodeManager's
container-executor.cfg so that container-executor reads them (before the site's sections, the site's
copies of their keys removed) and accepts the file (root-owned, closed to group/other writes up its
directory path): issue #39 item 6 (merge) and #38 item 5 (install mode). The oracle verdicts in
tests/yarn/data/container_executor_verdicts.json (Hadoop 3.4.1's own code) decide what is right.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from accelplane.derive.container_executor import read_config

from tests.conftest import EXAMPLE_SPECS
from tests.support.render import files_for
from tests.support.validators import tool

DATA = json.loads((Path(__file__).parent / "data" / "container_executor_verdicts.json").read_text())
INSTALLED = [c for c in DATA["cases"] if c["case"].startswith("installed over a site file")]
TARGET = "/etc/hadoop/conf/container-executor.cfg"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to root needs root")


def _render(tmp_path: Path) -> Path:
    out = tmp_path / "render"
    spec = next(p for p in EXAMPLE_SPECS if p.stem == "yarn-analytics")
    for name, (text, mode) in files_for(spec).items():
        if name.startswith("yarn/"):
            dest = out / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            dest.chmod(mode)
    return out / "yarn"


def _tree(tmp_path: Path, layout: dict[str, list[Any]] | None = None, site: str = "") -> Path:
    root = tmp_path / "node"
    (root / "etc/hadoop/conf").mkdir(parents=True)
    root.chmod(0o755)
    for d in ("etc", "etc/hadoop", "etc/hadoop/conf"):
        (root / d).chmod(0o755)
    if site:
        (root / TARGET[1:]).write_text(site)
    for path, (uid, mode) in sorted((layout or {}).items(), key=lambda kv: -len(kv[0])):
        if path.endswith(".cfg") and not (root / path[1:]).exists():
            (root / path[1:]).write_text("yarn.nodemanager.linux-container-executor.group=hadoop\n")
        os.chown(root / path[1:], uid, 0)
        (root / path[1:]).chmod(int(mode, 8))
    return root


def _install(yarn: Path, root: Path, pool: str = "v100") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(yarn / "install-container-executor-cfg.sh"), "--root", str(root), str(yarn / f"container-executor/{pool}.cfg")],
        capture_output=True, text=True, check=False,
    )


def test_the_install_script_is_shellcheck_clean(tmp_path: Path) -> None:
    yarn = _render(tmp_path)
    proc = subprocess.run([tool("shellcheck"), "-S", "style", str(yarn / "install-container-executor-cfg.sh")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@needs_root
def test_installed_over_a_site_file_container_executor_runs_every_container(tmp_path: Path) -> None:
    """The file the script writes over a site file whose own [docker] section sets
    docker.allowed.networks=bridge is exactly the one the oracle accepted (host network, nvidia
    runtime, every mount); the site's other keys stay; a second run changes nothing."""
    assert {c["verdict"]["code"] for c in INSTALLED} == {0} and len(INSTALLED) == 2
    site = INSTALLED[0]["site"]
    yarn = _render(tmp_path)
    root = _tree(tmp_path, site=site)
    proc = _install(yarn, root)
    assert proc.returncode == 0, proc.stderr
    cfg = root / TARGET[1:]
    assert cfg.read_text() == INSTALLED[0]["cfg"]
    st = cfg.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o400)
    parsed = read_config(cfg.read_text())
    assert parsed[""]["min.user.id"] == "1000"  # the site's top-level keys stay top-level
    assert parsed["docker"]["docker.allowed.networks"] == "host"  # ours first: it wins
    assert parsed["docker"]["docker.binary"] == "/usr/bin/docker"  # the site's own key is kept
    assert "bridge" not in cfg.read_text()  # the shadowed copy is gone, not left to confuse
    again = _install(yarn, root)
    assert again.returncode == 0 and "unchanged" in again.stdout
    # another pool's sections replace the block whole: no GPU key is left on a CPU-only node
    assert _install(yarn, root, "edge").returncode == 0
    assert "[gpu]" not in cfg.read_text() and "docker.allowed.devices" not in cfg.read_text()


@needs_root
@pytest.mark.parametrize("index", range(len(DATA["permissions"])))
def test_the_script_refuses_a_path_container_executor_would_refuse(tmp_path: Path, index: int) -> None:
    """container-executor's check_configuration_permissions (oracle) against the script: a directory
    above the cfg that is not root-owned or is group/other-writable is refused by both (the script
    says which and how to fix it); a bad mode of the cfg itself is fixed by the script (0400)."""
    case = DATA["permissions"][index]
    layout = case["layout"]
    dirs_ok = all(
        uid == 0 and not int(mode, 8) & 0o022 for path, (uid, mode) in layout.items() if not path.endswith(".cfg")
    )
    yarn = _render(tmp_path)
    root = _tree(tmp_path, layout)
    proc = _install(yarn, root)
    if case["verdict"] == 0:
        assert proc.returncode == 0, proc.stderr
    if dirs_ok:
        assert proc.returncode == 0, proc.stderr
        st = (root / TARGET[1:]).stat()
        assert (st.st_uid, st.st_mode & 0o777) == (0, 0o400)  # the layout the oracle accepts (case 0)
    else:
        assert case["verdict"] == -1
        assert proc.returncode == 1
        bad = case["message"].split()[1]  # "File /etc/hadoop must ..."
        assert f"install-container-executor-cfg: {bad} must" in proc.stderr
