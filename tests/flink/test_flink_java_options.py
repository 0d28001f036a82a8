"""``env.java.opts.all``: every rendered Flink configuration carries the JVM options the cluster's
Flink distribution ships in its own default config file (Java 17's ``--add-opens``/``--add-exports``
list from 1.18 on), followed by the spec's own; on every target (standalone and YARN config files,
the native-Kubernetes ConfigMap, the operator's ``flinkConfiguration``).

That the rendered files really start Flink and run ``flink run`` and PyFlink jobs on Java 17 is
tests/gpu_slots/test_rendered_cluster_as_is.py (real Flink, marker ``flink``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.derive.flink_java import FLINK_JAVA17_OPTIONS, image_java_major
from accelplane.derive.flink_keys import effective_config
from accelplane.render import bundle_files

from tests.flink.specs import KUBERNETES, STANDALONE, variant
from tests.support.flink.home import java_opts_from_distribution, require_flink_home
from tests.support.specs import model_of, write_spec

DEFAULT = " ".join(FLINK_JAVA17_OPTIONS)


def _config(tmp_path: Path, base: dict[str, Any], **cluster: Any) -> dict[str, Any]:
    spec = model_of(write_spec(tmp_path, variant(base, **cluster)))
    return dict(effective_config(spec, spec.flink_clusters[0]))


@pytest.mark.flink
def test_the_list_is_the_installed_distributions_own() -> None:
    """The copy in accelplane is, word for word, what Flink 1.20.5's ``conf/config.yaml`` ships."""
    assert java_opts_from_distribution(require_flink_home()).split() == list(FLINK_JAVA17_OPTIONS)


@pytest.mark.parametrize("version", ["1.18", "1.19", "1.20", "2.1"])
def test_versions_that_ship_the_list_get_it(tmp_path: Path, version: str) -> None:
    assert _config(tmp_path, STANDALONE, version=version)["env.java.opts.all"] == DEFAULT


@pytest.mark.parametrize(("version", "read_as"), [("1.15", "env.java.opts"), ("1.17", "env.java.opts.all")])
def test_older_versions_get_none_and_keep_the_users_value(tmp_path: Path, version: str, read_as: str) -> None:
    """Before 1.18 nothing is added; the user's value is written under the name the version reads
    (1.15 has only ``env.java.opts``: `accelplane.flink_options`)."""
    values = _config(tmp_path, STANDALONE, version=version)
    assert "env.java.opts.all" not in values
    values = _config(tmp_path, STANDALONE, version=version, config={"env.java.opts.all": "-Dx=1"})
    assert values[read_as] == "-Dx=1"


def test_the_spec_adds_to_the_list(tmp_path: Path) -> None:
    """``config.env.java.opts.all`` (and the deprecated ``env.java.opts``, which Flink would
    otherwise ignore next to the new key) come after the distribution's options, once."""
    values = _config(
        tmp_path,
        STANDALONE,
        config={
            "env.java.opts.all": "-XX:+UseG1GC --add-opens=java.base/java.lang=ALL-UNNAMED",
            "env.java.opts": "-Dfoo=bar",
        },
    )
    assert values["env.java.opts.all"] == f"{DEFAULT} -XX:+UseG1GC -Dfoo=bar"
    assert "env.java.opts" not in values


def test_a_java8_image_gets_none(tmp_path: Path) -> None:
    values = _config(tmp_path, KUBERNETES, image="registry.example/flink-gpu:1.20.1-scala_2.12-java8")
    assert "env.java.opts.all" not in values
    assert image_java_major("flink:1.20.1-scala_2.12-java8") == 8
    assert image_java_major("registry.example/flink:1.20-java17@sha256:" + "0" * 64) == 17
    assert image_java_major("registry.example:5000/flink") is None


def _rendered(tmp_path: Path, data: dict[str, Any]) -> dict[str, tuple[str, int]]:
    spec = model_of(write_spec(tmp_path, data))
    return bundle_files(build_all(spec))


def test_every_target_renders_it(tmp_path: Path) -> None:
    """Standalone config file, native-Kubernetes ConfigMap and the operator's FlinkDeployment."""
    files = _rendered(tmp_path / "s", variant(STANDALONE))
    config = yaml.safe_load(files["flink/edge-gpu/config.yaml"][0])
    assert config["env.java.opts.all"] == DEFAULT

    files = _rendered(tmp_path / "k", variant(KUBERNETES, mode="session"))
    (cm,) = [t for p, (t, _) in files.items() if "configmap_flink_accelplane-flink-job1" in p]
    inner = yaml.safe_load(yaml.safe_load(cm)["data"]["config.yaml"])
    assert inner["env.java.opts.all"] == DEFAULT

    files = _rendered(tmp_path / "o", variant(KUBERNETES, target="kubernetes-operator", mode="session"))
    (fd,) = [t for p, (t, _) in files.items() if p.endswith("flinkdeployment_flink_job1.yaml")]
    assert yaml.safe_load(fd)["spec"]["flinkConfiguration"]["env.java.opts.all"] == DEFAULT


def test_legacy_format_writes_it_on_one_line(tmp_path: Path) -> None:
    """Flink 1.18 (``flink-conf.yaml``): the value exactly as the 1.18 distribution's file has it."""
    files = _rendered(tmp_path, variant(STANDALONE, version="1.18"))
    lines = files["flink/edge-gpu/flink-conf.yaml"][0].splitlines()
    assert f"env.java.opts.all: {DEFAULT}" in lines


def test_every_example_cluster_gets_it() -> None:
    """All example stacks (standalone, YARN, native Kubernetes, operator) on Flink ≥ 1.18."""
    from tests.conftest import EXAMPLE_SPECS

    seen = set()
    for spec_path in EXAMPLE_SPECS:
        spec = model_of(spec_path)
        for cluster in spec.flink_clusters:
            assert cluster.version_tuple >= (1, 18), (spec_path.name, cluster.name)
            value = str(effective_config(spec, cluster)["env.java.opts.all"])
            assert value.startswith(DEFAULT), (spec_path.name, cluster.name)
            seen.add(cluster.target)
    assert seen == {"standalone", "yarn", "kubernetes", "kubernetes-operator"}
