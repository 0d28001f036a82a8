"""GPU metrics series shaped as the exporters emit them, for ``promtool test rules``.

Our own restatement of what each exporter's code does with its settings and the kubelet's
pod-resources answer (nothing of theirs is copied); each rule cites the lines it follows. The tests
feed it the environment of the DaemonSet accelplane renders, so a missing setting changes the
series exactly as it would on a node.

dcgm-exporter 4.3.1-4.4.0 (NVIDIA/dcgm-exporter 694914191e72d0c8587ba27a41248049d7fe9494, the pin):

* labels of a device series: ``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``, for a
  MIG device ``GPU_I_PROFILE`` and ``GPU_I_ID``, ``Hostname``, then the attributes the pod mapping
  adds (``internal/pkg/rendermetrics/render_metrics.go`` 47-54);
* a series is matched to a pod by ``<gpu>-<GPU instance>`` for MIG devices, else by UUID
  (``internal/pkg/collector/types.go`` 76-88, default id type ``uid``: ``pkg/cmd/app.go`` 179-185);
* only ``nvidia.com/gpu``, names in ``NVIDIA_RESOURCE_NAMES`` and ``nvidia.com/mig-*`` are mapped
  (``internal/pkg/transformation/kubernetes.go`` 68-79, 575-588);
* without ``KUBERNETES_VIRTUAL_GPUS`` a device ID ``<uuid>::<replica>`` maps to ``<uuid>`` and a
  later container overwrites an earlier one (``kubernetes.go`` 689-711); a ``MIG-<uuid>`` ID maps
  to its ``<gpu>-<GPU instance>`` (607-622); the series keep their labels plus ``pod``,
  ``namespace``, ``container`` (244-271);
* with it, one copy per (container, replica) with ``vgpu="<replica>"``, and a device nobody holds
  has no series (195-239, 465-513);
* with ``KUBERNETES_ENABLE_DRA``, devices of ``gpu.nvidia.com`` claims are found through the
  ResourceSlices (a MIG device by its parent's UUID) and every series is replaced by one copy per
  claiming container with ``dra_claim_name``, ``dra_claim_namespace``, ``dra_driver_name``,
  ``dra_pool_name``, ``dra_device_name`` (and ``dra_mig_profile``, ``dra_mig_device_uuid``);
  series of other devices are dropped (274-325, 375-456);
* values: ``DCGM_FI_DEV_GPU_UTIL`` in percent (not for MIG devices), ``DCGM_FI_PROF_GR_ENGINE_ACTIVE``
  as a ratio, ``DCGM_FI_DEV_FB_USED``/``_FREE`` in MiB (``etc/default-counters.csv`` 23, 38-39, 82).

AMD device-metrics-exporter v1.4.0 (ROCm/device-metrics-exporter d222ad9a9f12b2a3d59238c49487cc48812a7878):
label names are its label enum lower-cased (``pkg/amdgpu/gpuagent/gpuagent_metrics.go`` 266-281),
``pod``/``namespace``/``container`` only for ``amd.com/*`` device-plugin allocations
(``pkg/exporter/scheduler/k8s.go`` 93; DRA claims from v1.4.1 on, 119-124 there), VRAM in MiB: the
bytes it reads divided by 1024 * 1024 (``pkg/amdgpu/fsysdevice/device.go`` 69; the "(in MB)" of
its help texts, gpuagent_metrics.go 797-806, means that).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MIB = 1024 * 1024
NVIDIA_DRA_DRIVER = "gpu.nvidia.com"


@dataclass(frozen=True)
class NvidiaDevice:
    """A GPU (``mig`` None) or a MIG device (``mig`` = (profile, GPU instance id)) of one node."""

    index: int
    uuid: str
    host: str
    util: float = 0.5
    fb_used_mib: int = 1000
    fb_free_mib: int = 80000
    mig: tuple[str, int] | None = None
    mig_uuid: str | None = None
    model: str = "NVIDIA A100-SXM4-80GB"

    def labels(self) -> dict[str, str]:
        out = {
            "gpu": str(self.index),
            "UUID": self.uuid,
            "pci_bus_id": f"00000000:{self.index + 16:02X}:00.0",
            "device": f"nvidia{self.index}",
            "modelName": self.model,
        }
        if self.mig is not None:
            out |= {"GPU_I_PROFILE": self.mig[0], "GPU_I_ID": str(self.mig[1])}
        return out | {"Hostname": self.host}

    def metric_id(self) -> str:
        """What the pod mapping looks the series up by (types.go 76-88)."""
        return f"{self.index}-{self.mig[1]}" if self.mig is not None else self.uuid


@dataclass(frozen=True)
class Claim:
    """A DRA claim's allocated device as the pod-resources API lists it, and what the ResourceSlice
    says of it: the GPU's UUID, or for a MIG device its parent's UUID, profile and own UUID."""

    name: str
    pool: str
    device: str
    uuid: str
    mig_profile: str | None = None
    mig_uuid: str | None = None


@dataclass(frozen=True)
class Holder:
    """A container and the devices the kubelet's pod-resources API lists for it."""

    namespace: str
    pod: str
    resource: str = "nvidia.com/gpu"
    device_ids: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    container: str = "flink-main-container"

    def attributes(self) -> dict[str, str]:
        return {"pod": self.pod, "namespace": self.namespace, "container": self.container}


def _mapped(holder: Holder, env: Mapping[str, str]) -> bool:
    names = {"nvidia.com/gpu", *filter(None, env.get("NVIDIA_RESOURCE_NAMES", "").split(","))}
    return holder.resource in names or holder.resource.startswith("nvidia.com/mig-")


def _keys(device_id: str, devices: list[NvidiaDevice]) -> list[str]:
    """The keys one device ID is recorded under (kubernetes.go 599-711 / 476-508)."""
    if device_id.startswith("MIG-"):
        mig = next(d for d in devices if d.mig_uuid == device_id)
        return [mig.metric_id(), device_id]
    if "::" in device_id:
        return [device_id.split("::")[0], device_id]
    return [device_id]


def dcgm_labelsets(env: Mapping[str, str], devices: list[NvidiaDevice], holders: list[Holder]) -> list[tuple[NvidiaDevice, dict[str, str]]]:
    """Every device series dcgm-exporter 4.3.1-4.4.0 emits with ``env`` (its DaemonSet's
    environment), as (device, labels)."""
    plain = [(d, d.labels()) for d in devices]
    if env.get("DCGM_EXPORTER_KUBERNETES") != "true":
        return plain
    if env.get("KUBERNETES_VIRTUAL_GPUS") == "true":
        sharing: dict[str, list[tuple[Holder, str]]] = {}
        for holder in (h for h in holders if _mapped(h, env)):
            for device_id in holder.device_ids:
                replica = device_id.split("::")[1] if "::" in device_id else ""
                for key in _keys(device_id, devices):
                    sharing.setdefault(key, []).append((holder, replica))
        out = []
        for device, labels in plain:
            for holder, replica in sharing.get(device.metric_id(), []):
                out.append((device, labels | holder.attributes() | ({"vgpu": replica} if replica else {})))
        return out
    owner: dict[str, Holder] = {}
    for holder in (h for h in holders if _mapped(h, env)):
        for device_id in holder.device_ids:
            for key in _keys(device_id, devices):
                owner[key] = holder  # a later container wins
    mapped = [
        (d, labels | owner[d.metric_id()].attributes()) if d.metric_id() in owner else (d, labels) for d, labels in plain
    ]
    if env.get("KUBERNETES_ENABLE_DRA") != "true":
        return mapped
    out = []
    for device, labels in mapped:
        for holder in holders:
            for claim in holder.claims:
                if claim.uuid != device.metric_id():
                    continue
                dra = {
                    "dra_claim_name": claim.name,
                    "dra_claim_namespace": holder.namespace,
                    "dra_driver_name": NVIDIA_DRA_DRIVER,
                    "dra_pool_name": claim.pool,
                    "dra_device_name": claim.device,
                }
                if claim.mig_uuid is not None:
                    dra |= {"dra_mig_profile": claim.mig_profile or "", "dra_mig_device_uuid": claim.mig_uuid}
                out.append((device, labels | holder.attributes() | dra))
    return out


def _selector(name: str, labels: Mapping[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{inner}}}"


def dcgm_series(
    env: Mapping[str, str], devices: list[NvidiaDevice], holders: list[Holder], samples: int
) -> list[dict[str, str]]:
    """promtool ``input_series`` of every dcgm-exporter metric the rules read, ``samples`` long."""
    out = []
    for device, labels in dcgm_labelsets(env, devices, holders):
        values = {
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": device.util,
            "DCGM_FI_DEV_FB_USED": device.fb_used_mib,
            "DCGM_FI_DEV_FB_FREE": device.fb_free_mib,
        }
        if device.mig is None:
            values["DCGM_FI_DEV_GPU_UTIL"] = round(device.util * 100)
        out += [{"series": _selector(name, labels), "values": f"{value}x{samples}"} for name, value in values.items()]
    return out


@dataclass(frozen=True)
class AmdGpu:
    """An AMD GPU of a node and, when a container holds it through ``amd.com/gpu``, its holder."""

    gpu_id: int
    host: str
    activity_percent: int
    vram_used_bytes: int
    vram_total_bytes: int
    holder: Holder | None = None


def amd_series(gpus: list[AmdGpu], samples: int) -> list[dict[str, str]]:
    """promtool ``input_series`` of AMD device-metrics-exporter v1.4.0's ``gpu_gfx_activity``,
    ``gpu_used_vram`` and ``gpu_total_vram`` (MiB: bytes / 1024 / 1024, fsysdevice/device.go 69)."""
    out = []
    for gpu in gpus:
        labels = {"gpu_id": str(gpu.gpu_id), "hostname": gpu.host}
        if gpu.holder is not None and gpu.holder.resource.startswith("amd.com/"):
            labels |= gpu.holder.attributes()
        for name, value in (
            ("gpu_gfx_activity", gpu.activity_percent),
            ("gpu_used_vram", gpu.vram_used_bytes / MIB),
            ("gpu_total_vram", gpu.vram_total_bytes / MIB),
        ):
            out.append({"series": _selector(name, labels), "values": f"{value}x{samples}"})
    return out


def kube_state_metrics(
    cluster: str, flink_cluster: str, namespace: str, pod: str, samples: int, labels: bool = True
) -> list[dict[str, str]]:
    """kube-state-metrics series of a running TaskManager pod: ``kube_pod_status_phase`` always
    (a series per phase, 1 for the current one), ``kube_pod_labels`` with accelplane's labels only
    when its ``--metric-labels-allowlist`` allows them (``labels``)."""
    out = [
        {"series": f'kube_pod_status_phase{{namespace="{namespace}",pod="{pod}",phase="{phase}"}}', "values": f"{int(phase == 'Running')}x{samples}"}
        for phase in ("Pending", "Running")
    ]
    if labels:
        selector = (
            f'kube_pod_labels{{namespace="{namespace}",pod="{pod}",label_accelplane_io_cluster="{cluster}",'
            f'label_accelplane_io_component="taskmanager",label_accelplane_io_flink_cluster="{flink_cluster}"}}'
        )
        out.append({"series": selector, "values": f"1x{samples}"})
    return out
