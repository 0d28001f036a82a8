"""GPU usage monitoring (docs/monitoring.md): exporters, PodMonitors, PrometheusRule, dashboard.

* ``exporters: accelplane`` — for the vendors whose device plugins accelplane renders: NVIDIA's
  dcgm-exporter (one DaemonSet over every NVIDIA pool; upstream ``dcgm-exporter.yaml``: root,
  ``SYS_ADMIN`` for the profiling metrics, the kubelet's pod-resources socket read-only with
  ``DCGM_EXPORTER_KUBERNETES`` so each device held by a pod is labelled with it) and AMD's
  device-metrics-exporter (one DaemonSet over the AMD pools, same pod mapping), each with a
  ``PodMonitor`` (``honorLabels`` so the exporter's ``pod``/``namespace`` of the GPU's holder win
  over the exporter pod's own). ``exporters: external`` leaves exporters and their scraping to the
  GPU Operator.
* the ``PrometheusRule`` with `accelplane.builders.prometheus_rules` and the dashboard
  ``ConfigMap`` labelled for Grafana's sidecar (Kubernetes stacks);
* on every monitored stack the same rules as a plain Prometheus rule file and the dashboard as a
  JSON file under ``monitoring/`` (YARN/standalone installations, promtool, Grafana provisioning).
"""

from __future__ import annotations

from typing import Any

from accelplane.artifacts import Bundle, FileArtifact, K8sObject, k8s_object
from accelplane.builders.device_plugin_daemonset import daemonset
from accelplane.builders.hardening import (
    PULL_POLICY,
    digest_reason,
    resources,
)
from accelplane.builders.prometheus_rules import rule_groups
from accelplane.derive.device_plugin_placement import Placement
from accelplane.derive.monitoring import DCGM_EXPORTER_NAME, exporter_placements, monitoring_enabled
from accelplane.model import ExporterImage, Spec
from accelplane.yaml_io import dump_yaml

FAMILY = "monitoring"
MONITORING_API = "monitoring.coreos.com/v1"
POD_RESOURCES_DIR = "/var/lib/kubelet/pod-resources"
DCGM_PORT = 9400
AMD_PORT = 5000
METRICS_PORT_NAME = "metrics"
RULES_NAME = "accelplane-gpu-usage"
RULES_FILE = "monitoring/accelplane-gpu-rules.yaml"
DASHBOARD_FILE = "monitoring/accelplane-gpu-dashboard.json"
EXPORTER_RESOURCES = resources("100m", "256Mi", "1", "1Gi")
"""dcgm-exporter embeds DCGM's host engine; upstream sets no resources: these bound a leak."""

SCRAPED = (
    "Prometheus scrapes it on its metrics port from the monitoring namespace, whose labels are the "
    "installation's; a NetworkPolicy would have to guess them"
)
NO_PROBES = (
    "the scrape is the health check: an exporter that stops answering drops its up series to 0, and its GPUs' "
    "TaskManagers fire AccelplaneGpuTaskManagerWithoutMetrics"
)
POD_RESOURCES_ROOT = (
    "reads the kubelet's root-owned pod-resources socket (/var/lib/kubelet/pod-resources) to label each "
    "GPU with the pod holding it, so it runs as root"
)
DCGM_SYS_ADMIN = (
    "DCGM's profiling metrics (DCGM_FI_PROF_*, the only utilisation MIG devices have) need SYS_ADMIN, as "
    "upstream's dcgm-exporter.yaml grants; the API server refuses allowPrivilegeEscalation: false with it"
)
AMD_PRIVILEGED = (
    "reads the telemetry of every AMD GPU of the node through /dev/kfd and /dev/dri, which only a device "
    "allocation would grant otherwise (requesting amd.com/gpu would take the GPUs from Flink)"
)
UNVERIFIED_ROOT_FS = "the exporter's writes outside its mounts (DCGM host engine logs) are not verified"


def _exporter_daemonset(
    spec: Spec, placement: Placement, container: dict[str, Any], volumes: list[dict[str, Any]], skips: dict[str, str]
) -> K8sObject:
    """An exporter's DaemonSet, placed like the device plugins (`device_plugin_daemonset.daemonset`)."""
    return daemonset(
        spec,
        placement,
        {"app.kubernetes.io/name": placement.name},
        {"automountServiceAccountToken": False, "containers": [container], "volumes": volumes},
        skips,
        extra_labels={"app.kubernetes.io/component": "gpu-metrics"},
        family=FAMILY,
    )


def _common_skips(image: ExporterImage, field: str) -> dict[str, str]:
    out = {"CKV_K8S_8": NO_PROBES, "CKV_K8S_9": NO_PROBES, "CKV_K8S_15": PULL_POLICY, "CKV2_K8S_6": SCRAPED}
    if image.digest is None:
        out["CKV_K8S_43"] = digest_reason(field)
    return out


_POD_RESOURCES_VOLUME = {
    "name": "pod-resources",
    "hostPath": {"path": POD_RESOURCES_DIR, "type": "Directory"},
}
_POD_RESOURCES_MOUNT = {"name": "pod-resources", "mountPath": POD_RESOURCES_DIR, "readOnly": True}


def _dcgm_exporter(spec: Spec, placement: Placement) -> K8sObject:
    image = spec.monitoring.dcgm_exporter
    container = {
        "name": "dcgm-exporter",
        "image": image.reference,
        # listens on :9400 (its default); the pod mapping labels each device with its holder; every GPU
        # of the node reaches it through the NVIDIA container runtime, without a device request
        "env": [
            {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"},
        ],
        "ports": [{"name": METRICS_PORT_NAME, "containerPort": DCGM_PORT, "protocol": "TCP"}],
        "resources": EXPORTER_RESOURCES,
        "securityContext": {"runAsUser": 0, "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}},
        "volumeMounts": [dict(_POD_RESOURCES_MOUNT)],
    }
    skips = {
        **_common_skips(image, "monitoring.dcgmExporter.imageDigest"),
        "CKV_K8S_22": UNVERIFIED_ROOT_FS,
        "CKV_K8S_23": POD_RESOURCES_ROOT,
        "CKV_K8S_40": POD_RESOURCES_ROOT,
        **dict.fromkeys(("CKV_K8S_20", "CKV_K8S_25", "CKV_K8S_37", "CKV_K8S_39"), DCGM_SYS_ADMIN),
    }
    return _exporter_daemonset(spec, placement, container, [dict(_POD_RESOURCES_VOLUME)], skips)


def _amd_exporter(spec: Spec, placement: Placement) -> K8sObject:
    image = spec.monitoring.amd_exporter
    container = {
        "name": "device-metrics-exporter",
        "image": image.reference,
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "ports": [{"name": METRICS_PORT_NAME, "containerPort": AMD_PORT, "protocol": "TCP"}],
        "resources": EXPORTER_RESOURCES,
        "securityContext": {"privileged": True},
        "volumeMounts": [
            {"name": "dev", "mountPath": "/dev"},
            {"name": "sys", "mountPath": "/sys", "readOnly": True},
            dict(_POD_RESOURCES_MOUNT),
        ],
    }
    volumes = [
        {"name": "dev", "hostPath": {"path": "/dev", "type": "Directory"}},
        {"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}},
        dict(_POD_RESOURCES_VOLUME),
    ]
    skips = {
        **_common_skips(image, "monitoring.amdExporter.imageDigest"),
        **dict.fromkeys(("CKV_K8S_16", "CKV_K8S_20", "CKV_K8S_22", "CKV_K8S_23", "CKV_K8S_40"), AMD_PRIVILEGED),
        **dict.fromkeys(("CKV_K8S_28", "CKV_K8S_37"), AMD_PRIVILEGED),
    }
    return _exporter_daemonset(spec, placement, container, volumes, skips)


def _monitor_labels(spec: Spec) -> dict[str, str]:
    return {**spec.common_labels(), **dict(spec.monitoring.prometheus_labels)}


def _pod_monitor(spec: Spec, placement: Placement) -> K8sObject:
    """Scrapes one exporter DaemonSet; the node name becomes the ``node`` label."""
    return k8s_object(
        MONITORING_API,
        "PodMonitor",
        placement.name,
        family=FAMILY,
        namespace=spec.monitoring.namespace,
        labels=_monitor_labels(spec),
        body={
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": placement.name}},
                "namespaceSelector": {"matchNames": [spec.device_plugins.namespace]},
                "podMetricsEndpoints": [
                    {
                        "port": METRICS_PORT_NAME,
                        "honorLabels": True,
                        "relabelings": [
                            {
                                "action": "replace",
                                "sourceLabels": ["__meta_kubernetes_pod_node_name"],
                                "targetLabel": "node",
                            }
                        ],
                    }
                ],
            }
        },
    )


def _dashboard_config_map(spec: Spec, text: str) -> K8sObject:
    m = spec.monitoring
    return k8s_object(
        "v1",
        "ConfigMap",
        f"accelplane-gpu-dashboard-{spec.name}",
        family=FAMILY,
        namespace=m.grafana_namespace,
        labels={**spec.common_labels(), m.grafana_label: m.grafana_label_value},
        body={"data": {f"accelplane-gpu-{spec.name}.json": text}},
    )


def rules_document(spec: Spec) -> dict[str, Any]:
    """The rules as a Prometheus rule file (``groups:``), the PrometheusRule's ``spec``."""
    return {"groups": rule_groups(spec)}


def build(spec: Spec) -> Bundle:
    """Monitoring objects and files (nothing unless ``monitoring.enabled``)."""
    bundle = Bundle()
    if not monitoring_enabled(spec):
        return bundle
    # imported here: grafana-foundation-sdk takes about 20 ms to import, and a spec without
    # monitoring (most) never needs it
    from accelplane.builders.gpu_dashboard import dashboard_json

    rules = rules_document(spec)
    dashboard = dashboard_json(spec)
    # on Kubernetes the PrometheusRule below carries the same document
    in_object = spec.has_platform("kubernetes")
    bundle.files.append(FileArtifact(RULES_FILE, dump_yaml(rules), family=FAMILY, in_object=in_object))
    bundle.files.append(FileArtifact(DASHBOARD_FILE, dashboard, family=FAMILY))
    if not spec.has_platform("kubernetes"):
        return bundle
    for placement in exporter_placements(spec):
        make = _dcgm_exporter if placement.name == DCGM_EXPORTER_NAME else _amd_exporter
        bundle.objects.append(make(spec, placement))
        bundle.objects.append(_pod_monitor(spec, placement))
    bundle.objects.append(
        k8s_object(
            MONITORING_API,
            "PrometheusRule",
            RULES_NAME,
            family=FAMILY,
            namespace=spec.monitoring.namespace,
            labels=_monitor_labels(spec),
            body={"spec": rules},
        )
    )
    bundle.objects.append(_dashboard_config_map(spec, dashboard))
    return bundle
