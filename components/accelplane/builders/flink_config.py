"""Flink configuration file of each Flink cluster: ``DIR/flink/<cluster>/config.yaml`` or ``flink-conf.yaml``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from accelplane.derive.flink_keys import config_format
from accelplane.derive.flink_values import ConfigValue, legacy_value, yaml_key, yaml_value
from accelplane.model import FlinkCluster, Spec
from accelplane.templating import render_template


def render_config(spec: Spec, cluster: FlinkCluster, values: Mapping[str, ConfigValue]) -> str:
    """Text of the cluster's config file in its format."""
    fmt = config_format(cluster)
    entries: Sequence[tuple[str, str]]
    if fmt == "flink-conf.yaml":
        entries = [(k, legacy_value(v)) for k, v in values.items()]
        template = "flink/flink-conf.yaml.j2"
    else:
        entries = [(yaml_key(k), yaml_value(v)) for k, v in values.items()]
        template = "flink/config.yaml.j2"
    return render_template(
        template,
        spec_name=spec.name,
        cluster=cluster.name,
        target=cluster.target,
        version=cluster.version,
        entries=entries,
    )


def config_file_name(cluster: FlinkCluster) -> str:
    """``config.yaml`` or ``flink-conf.yaml``."""
    return config_format(cluster)


