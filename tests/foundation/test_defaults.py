"""Every default of the spec lives once, in the schema's ``default`` keywords (see
`accelplane.schema_document`), and is exactly what the model gives a spec that omits the field."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from accelplane.model import Spec
from accelplane.model_convert import build_model
from accelplane.schema import validate_document
from accelplane.schema_document import load_schema, property_schema
from jsonschema import Draft202012Validator

from tests.support.paths import SOURCE_ROOT

# A spec that omits every field with a default (and sets the parents those fields live in).
MINIMAL: dict[str, Any] = {
    "cluster": {"name": "defaults", "platforms": ["kubernetes", "yarn"]},
    "nodePools": [
        {
            "name": "gpu",
            "nodes": 2,
            "gpu": {"vendor": "nvidia", "perNode": 4, "sharing": {}, "mig": {}},
        },
    ],
    "kubernetes": {},
    "devicePlugins": {"nvidia": {"migManager": {}}, "amd": {}},
    "namespaces": {"jobs": {}},
    "volcano": {},
    "yarn": {"docker": {"mounts": [{"path": "/usr/lib/hadoop"}]}},
    "discovery": {},
    "nodeImage": {"image": "registry.example.com/flink-gpu:1.0"},
    "priorityClasses": [{"name": "batch", "value": 100}],
    "queues": [{"name": "streaming"}],
    "flink": {
        "clusters": [
            {
                "name": "jobs",
                "queue": "streaming",
                "taskManager": {"gpu": {}},
                "discovery": {},
                "slotGroups": [{"name": "default", "slots": 1, "cpu": 1, "taskHeap": "64Mi"}],
            }
        ]
    },
}


def model() -> Spec:
    assert validate_document(MINIMAL) == []
    spec, problems = build_model(MINIMAL)
    assert spec is not None, problems
    return spec


def _cluster(s: Spec) -> Any:
    return s.flink_clusters[0]


# schema path → what the model holds for MINIMAL
READ: dict[str, Callable[[Spec], Any]] = {
    "devicePlugins.namespace": lambda s: s.device_plugins.namespace,
    "devicePlugins.nvidia.image": lambda s: s.device_plugins.nvidia.image,
    "devicePlugins.nvidia.version": lambda s: s.device_plugins.nvidia.version,
    "devicePlugins.nvidia.gpuFeatureDiscovery": lambda s: s.device_plugins.nvidia.gpu_feature_discovery,
    "devicePlugins.nvidia.deviceListStrategy": lambda s: s.device_plugins.nvidia.device_list_strategy,
    "devicePlugins.nvidia.migManager.namespace": lambda s: s.device_plugins.nvidia.mig_manager_namespace,
    "devicePlugins.amd.image": lambda s: s.device_plugins.amd.image,
    "devicePlugins.amd.version": lambda s: s.device_plugins.amd.version,
    "devicePlugins.amd.labeller": lambda s: s.device_plugins.amd.labeller,
    "volcano.namespace": lambda s: s.volcano.namespace,
    "volcano.schedulerName": lambda s: s.volcano.scheduler_name,
    "volcano.manageSchedulerConfig": lambda s: s.volcano.manage_scheduler_config,
    "volcano.version": lambda s: s.volcano.version,
    "scheduler": lambda s: s.scheduler,
    "yunikorn.namespace": lambda s: s.yunikorn.namespace,
    "yunikorn.manageQueueConfig": lambda s: s.yunikorn.manage_queue_config,
    "yunikorn.placeholderTimeoutSeconds": lambda s: s.yunikorn.placeholder_timeout_seconds,
    "yunikorn.gangSchedulingStyle": lambda s: s.yunikorn.gang_scheduling_style,
    "kueue.version": lambda s: s.kueue.version,
    "kueue.expectedQueueingSeconds": lambda s: s.kueue.expected_queueing_seconds,
    "kubernetes.version": lambda s: s.kubernetes_version,
    "$defs.gpu.allocation": lambda s: s.node_pools[0].gpu.allocation,
    "yarn.perModelTypes": lambda s: s.yarn.per_model_types,
    "yarn.nodeLabels": lambda s: s.yarn.node_labels,
    "yarn.cgroups": lambda s: s.yarn.cgroups,
    "yarn.cgroupsMountPath": lambda s: s.yarn.cgroups_mount_path,
    "yarn.cgroupsHierarchy": lambda s: s.yarn.cgroups_hierarchy,
    "yarn.nvidiaSmiPath": lambda s: s.yarn.nvidia_smi_path,
    "yarn.localDirs": lambda s: list(s.yarn.local_dirs),
    "yarn.logDirs": lambda s: list(s.yarn.log_dirs),
    "yarn.docker.enabled": lambda s: s.yarn.docker_enabled,
    "yarn.docker.runtime": lambda s: s.yarn.docker_runtime,
    "$defs.dockerMount.mode": lambda s: s.yarn.docker_mounts[0][1],
    "discovery.installDir": lambda s: s.discovery.install_dir,
    "discovery.coordinationFile": lambda s: s.discovery.coordination_file,
    "discovery.fileMode": lambda s: s.discovery.file_mode,
    "discovery.user": lambda s: s.discovery.user,
    "discovery.group": lambda s: s.discovery.group,
    "nodeImage.nvidiaMlPyVersion": lambda s: s.node_image.nvidia_ml_py_version,
    "monitoring.enabled": lambda s: s.monitoring.enabled,
    "monitoring.exporters": lambda s: s.monitoring.exporters,
    "monitoring.namespace": lambda s: s.monitoring.namespace,
    "monitoring.prometheusLabels": lambda s: dict(s.monitoring.prometheus_labels),
    "monitoring.idleThreshold": lambda s: s.monitoring.idle_threshold,
    "monitoring.idleFor": lambda s: s.monitoring.idle_for,
    "monitoring.missingMetricsFor": lambda s: s.monitoring.missing_metrics_for,
    "monitoring.queueNearCapabilityRatio": lambda s: s.monitoring.queue_near_capability_ratio,
    "monitoring.queueNearCapabilityFor": lambda s: s.monitoring.queue_near_capability_for,
    "monitoring.grafana.namespace": lambda s: s.monitoring.grafana_namespace,
    "monitoring.grafana.label": lambda s: s.monitoring.grafana_label,
    "monitoring.grafana.labelValue": lambda s: s.monitoring.grafana_label_value,
    "monitoring.dcgmExporter.image": lambda s: s.monitoring.dcgm_exporter.image,
    "monitoring.dcgmExporter.version": lambda s: s.monitoring.dcgm_exporter.version,
    "monitoring.amdExporter.image": lambda s: s.monitoring.amd_exporter.image,
    "monitoring.amdExporter.version": lambda s: s.monitoring.amd_exporter.version,
    "monitoring.textfileDirectory": lambda s: s.monitoring.textfile_directory,
    "$defs.nodePool.platform": lambda s: s.node_pools[0].platform,
    "$defs.gpu.mig.strategy": lambda s: s.node_pools[0].gpu.mig.strategy,
    "$defs.gpu.sharing.strategy": lambda s: s.node_pools[0].gpu.sharing.strategy,
    "$defs.gpu.sharing.replicas": lambda s: s.node_pools[0].gpu.sharing.replicas,
    "$defs.gpu.sharing.failRequestsGreaterThanOne": (
        lambda s: s.node_pools[0].gpu.sharing.fail_requests_greater_than_one
    ),
    "$defs.priorityClass.globalDefault": lambda s: s.priority_classes[0].global_default,
    "$defs.queue.weight": lambda s: s.queues[0].weight,
    "$defs.flinkSettings.version": lambda s: _cluster(s).version,
    "$defs.flinkSettings.configFormat": lambda s: _cluster(s).config_format,
    "$defs.flinkSettings.target": lambda s: _cluster(s).target,
    "$defs.flinkSettings.mode": lambda s: _cluster(s).mode,
    "$defs.flinkSettings.namespace": lambda s: _cluster(s).namespace,
    "$defs.flinkSettings.serviceAccount": lambda s: _cluster(s).service_account,
    "$defs.gpuRequest.amount": lambda s: _cluster(s).task_manager.gpu.amount,
    "$defs.taskManager.replicas": lambda s: _cluster(s).task_manager.replicas,
    "$defs.taskManager.slots": lambda s: _cluster(s).task_manager.slots,
    "$defs.taskManager.cpu": lambda s: _cluster(s).task_manager.cpu.text,
    "$defs.taskManager.memory": lambda s: _cluster(s).task_manager.memory.text,
    "$defs.processResources.cpu": lambda s: _cluster(s).job_manager.cpu.text,
    "$defs.processResources.memory": lambda s: _cluster(s).job_manager.memory.text,
    "$defs.discoverySettings.coordination": lambda s: _cluster(s).coordination,
    "$defs.slotGroup.managedMemory": lambda s: _cluster(s).slot_groups[0].managed_memory.value,
    "$defs.slotGroup.gpu": lambda s: _cluster(s).slot_groups[0].gpu,
    "$defs.namespaceSettings.managed": lambda s: s.namespaces[0].managed,
}


def declared_defaults() -> Iterator[str]:
    """Dotted paths (as `property_schema` reads them) of every property with a ``default``."""
    schema = load_schema()

    def walk(node: Any, path: str) -> Iterator[str]:
        if not isinstance(node, dict):
            return
        for name, prop in node.get("properties", {}).items():
            here = f"{path}.{name}" if path else name
            if isinstance(prop, dict) and "default" in prop:
                yield here
            yield from walk(prop, here)

    yield from walk(schema, "")
    for name, node in schema["$defs"].items():
        yield from walk(node, f"$defs.{name}")


def test_every_declared_default_is_tied_to_the_model() -> None:
    assert sorted(declared_defaults()) == sorted(READ)


@pytest.mark.parametrize("path", sorted(READ))
def test_model_applies_the_schema_default(path: str) -> None:
    assert READ[path](model()) == property_schema(path)["default"]


@pytest.mark.parametrize("path", sorted(READ))
def test_default_is_valid_for_its_own_field(path: str) -> None:
    """A default the field itself would reject can never be what a spec means."""
    prop = property_schema(path)
    schema = {**prop, "$defs": load_schema()["$defs"]}
    assert not list(Draft202012Validator(schema).iter_errors(prop["default"]))


def literal_defaults(source: str) -> list[str]:
    """Calls in ``source`` that carry a default the schema should declare: ``d.get("key", <literal>)``
    (only emptiness — [], {}, "", None — may be filled in there) and any literal but emptiness handed
    to a quantity converter (``req_quantity(raw, "1600Mi", path)`` is a default by another name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        is_get = node.func.attr == "get" and len(node.args) == 2
        if is_get:
            candidates = [node.args[1]]
        elif "quantity" in node.func.attr:  # after the raw value: the path, never a literal value
            candidates = [*node.args[1:], *(k.value for k in node.keywords)]
        else:
            continue
        for value in candidates:
            if isinstance(value, ast.Constant) and value.value not in ("", None):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
            if is_get and isinstance(value, (ast.List, ast.Dict, ast.Tuple)) and (
                getattr(value, "elts", None) or getattr(value, "keys", None)
            ):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_model_has_no_literal_defaults() -> None:
    """A real default must come from the schema (`schema_default`), never a literal in the model."""
    found = literal_defaults((SOURCE_ROOT / "accelplane" / "model.py").read_text(encoding="utf-8"))
    assert not found, "defaults belong in the schema:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'tm.get("replicas", 1)',
        'c.get("mode", "native")',
        'c.get("tolerations", ["a"])',
        'b.req_quantity(jm.get("memory"), "1600Mi", path)',
        'b.req_quantity(tm.get("cpu"), 1, path)',
        'b.quantity(raw, path, default="1")',
    ],
)
def test_the_literal_default_check_catches(source: str) -> None:
    assert literal_defaults(source)


@pytest.mark.parametrize(
    "source",
    ['d.get("tolerations", [])', 'd.get("name", "")', 'b.req_quantity(tm.get("cpu", schema_default("x")), path)'],
)
def test_the_literal_default_check_allows(source: str) -> None:
    assert not literal_defaults(source)
