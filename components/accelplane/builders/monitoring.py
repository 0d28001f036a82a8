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
from accelplane.derive.monitoring import (
    AMD_EXPORTER_NAME,
    dcgm_environment,
    dcgm_settings,
    exporter_placements,
    kube_state_metrics_allowlist,
    monitoring_enabled,
)
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
KPS_VALUES_FILE = "monitoring/kube-prometheus-stack-values.yaml"
GPU_OPERATOR_VALUES_FILE = "monitoring/gpu-operator-values.yaml"
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
RBAC_API = "rbac.authorization.k8s.io/v1"
AMD_API_RULES: tuple[dict[str, list[str]], ...] = (
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]},
)
"""What AMD device-metrics-exporter v1.4.0 reads (d222ad9a9f12b2a3d59238c49487cc48812a7878): with
``KUBERNETES_SERVICE_HOST`` set it is "in Kubernetes" (``pkg/exporter/utils/utils.go`` 85-96) and
builds an in-cluster client, ``Fatalf`` when that fails, e.g. without a token
(``pkg/exporter/exporter.go`` 246-256, ``pkg/client/k8s.go`` 72-102); it then runs two informers,
its own node (``metadata.name`` field selector) and the pods on its node (``spec.nodeName``), i.e.
list and watch of nodes and of pods in every namespace (``pkg/client/k8s.go`` 247-264). Upstream's
chart also grants nodes get/update, for GPU health labels it writes on its node
(``pkg/amdgpu/gpuagent/gpuagent.go`` 224-241, errors ignored there): left out, a DaemonSet that runs
privileged on every GPU node gets no write access to every Node object."""
DCGM_DRA_API_RULES: tuple[dict[str, list[str]], ...] = (
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"], "verbs": ["list", "watch"]},
)
"""What dcgm-exporter 4.3.1-4.4.0 reads with ``KUBERNETES_ENABLE_DRA``: an informer over
``resource.k8s.io/v1beta1`` ResourceSlices, to map a claim's pool/device to the GPU UUID
(``internal/pkg/transformation/dra.go`` 36-43, 116-155); nothing else without pod labels
(``kubernetes.go`` 88-118)."""


def _exporter_daemonset(
    spec: Spec,
    placement: Placement,
    container: dict[str, Any],
    volumes: list[dict[str, Any]],
    skips: dict[str, str],
    service_account: bool = False,
) -> K8sObject:
    """An exporter's DaemonSet, placed like the device plugins (`device_plugin_daemonset.daemonset`);
    with ``service_account`` it runs as its own ServiceAccount (`_api_access`) with its token."""
    pod: dict[str, Any] = {"automountServiceAccountToken": service_account, "containers": [container], "volumes": volumes}
    if service_account:
        pod = {"serviceAccountName": placement.name, **pod}
    return daemonset(
        spec,
        placement,
        {"app.kubernetes.io/name": placement.name},
        pod,
        skips,
        extra_labels={"app.kubernetes.io/component": "gpu-metrics"},
        family=FAMILY,
    )


def _api_access(spec: Spec, name: str, rules: tuple[dict[str, list[str]], ...]) -> list[K8sObject]:
    """ServiceAccount ``name`` in the exporters' namespace, a ClusterRole with exactly ``rules``
    and the binding of the two (the exporters read objects of every namespace or cluster-scoped)."""
    ns = spec.device_plugins.namespace
    labels = {**spec.common_labels(), "app.kubernetes.io/component": "gpu-metrics"}
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
    return [
        k8s_object("v1", "ServiceAccount", name, family=FAMILY, namespace=ns, labels=labels),
        k8s_object(RBAC_API, "ClusterRole", name, family=FAMILY, labels=labels, body={"rules": [dict(r) for r in rules]}),
        k8s_object(
            RBAC_API,
            "ClusterRoleBinding",
            name,
            family=FAMILY,
            labels=labels,
            body={"roleRef": role_ref, "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}]},
        ),
    ]


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


def _dcgm_exporter(spec: Spec, placement: Placement) -> list[K8sObject]:
    """dcgm-exporter on ``placement``'s pools with the settings their GPUs need
    (`accelplane.derive.monitoring.dcgm_environment`); with DRA also its API access."""
    image = spec.monitoring.dcgm_exporter
    env = dcgm_environment(placement.pools)
    dra = ("KUBERNETES_ENABLE_DRA", "true") in env
    container = {
        "name": "dcgm-exporter",
        "image": image.reference,
        # listens on :9400 (its default); the pod mapping labels each device with its holder; every GPU
        # of the node reaches it through the NVIDIA container runtime, without a device request
        "env": [
            *({"name": k, "value": v} for k, v in env),
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
    if not dra:
        return [_exporter_daemonset(spec, placement, container, [dict(_POD_RESOURCES_VOLUME)], skips)]
    skips["CKV_K8S_38"] = "KUBERNETES_ENABLE_DRA maps claims to GPUs through ResourceSlices it lists and watches"
    ds = _exporter_daemonset(spec, placement, container, [dict(_POD_RESOURCES_VOLUME)], skips, service_account=True)
    return [*_api_access(spec, placement.name, DCGM_DRA_API_RULES), ds]


def _amd_exporter(spec: Spec, placement: Placement) -> list[K8sObject]:
    """AMD's device-metrics-exporter with the ServiceAccount it cannot start without (`AMD_API_RULES`)."""
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
        "CKV_K8S_38": (
            "in Kubernetes the exporter exits without an API client (v1.4.0 pkg/exporter/exporter.go 246-256): it "
            "watches its node and the pods on it"
        ),
    }
    ds = _exporter_daemonset(spec, placement, container, volumes, skips, service_account=True)
    return [*_api_access(spec, placement.name, AMD_API_RULES), ds]


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


def kube_prometheus_stack_values(spec: Spec) -> dict[str, Any]:
    """Helm values for kube-prometheus-stack that the rules and the dashboard need (chart 88.5.3,
    prometheus-community/helm-charts cf408a29): kube-state-metrics exports ``kube_pod_labels`` with
    accelplane's pod labels only when allowed (``metricLabelsAllowlist``, rendered as
    ``--metric-labels-allowlist``, charts/kube-state-metrics/templates/deployment.yaml 100-102), and
    Grafana's sidecar loads the dashboard ConfigMap by its label (``grafana.sidecar.dashboards``)."""
    m = spec.monitoring
    return {
        "kube-state-metrics": {"metricLabelsAllowlist": [kube_state_metrics_allowlist()]},
        "grafana": {"sidecar": {"dashboards": {"enabled": True, "label": m.grafana_label, "labelValue": m.grafana_label_value}}},
    }


def gpu_operator_values(spec: Spec) -> dict[str, Any] | None:
    """Helm values for the GPU Operator's dcgm-exporter (``dcgmExporter.env``, merged into the
    exporter's environment one name at a time: NVIDIA/gpu-operator a22dbf67
    controllers/object_controls.go 1936-1938) with what the stack's device-plugin pools need
    (`accelplane.derive.monitoring.dcgm_environment`); the operator runs one DaemonSet on every GPU
    node, so it gets the union. ``KUBERNETES_ENABLE_DRA`` is left out: the operator's exporter has
    no token and no ResourceSlice access (assets/state-dcgm-exporter/0210_clusterrole.yaml: "TODO:
    Add resourceSlices permissions"), DRA pools need accelplane's ``dcgm-exporter-dra``. None when
    the stack's device-plugin pools need nothing beyond the operator's defaults (whole GPUs, MIG)."""
    env: dict[str, str] = {}
    for setting in dcgm_settings(spec):
        if ("KUBERNETES_ENABLE_DRA", "true") not in setting.env:
            env.update(setting.env)
    env.pop("DCGM_EXPORTER_KUBERNETES", None)  # the operator's DaemonSet sets it (0800_daemonset.yaml 45-46)
    if not env:
        return None
    return {"dcgmExporter": {"env": [{"name": k, "value": v} for k, v in env.items()]}}


VALUES_HEADER = (
    "# Generated by accelplane from the stack spec (docs/monitoring.md, \"What must be on\").\n"
    "# Merge into your Helm values: Helm replaces lists, so add these entries to any you already set.\n"
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
    kps = VALUES_HEADER + dump_yaml(kube_prometheus_stack_values(spec))
    bundle.files.append(FileArtifact(KPS_VALUES_FILE, kps, family=FAMILY))
    operator = gpu_operator_values(spec)
    if operator is not None:
        bundle.files.append(FileArtifact(GPU_OPERATOR_VALUES_FILE, VALUES_HEADER + dump_yaml(operator), family=FAMILY))
    for placement in exporter_placements(spec):
        make = _amd_exporter if placement.name == AMD_EXPORTER_NAME else _dcgm_exporter
        bundle.objects += make(spec, placement)
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
