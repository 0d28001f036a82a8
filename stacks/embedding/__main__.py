"""A team's own Pulumi program that embeds accelplane (docs/pulumi.md, "Embedding accelplane").

Two GPU Flink platforms, one per cluster, under the team's own component, each with its own
Kubernetes provider, after the team's Volcano installation; a ConfigMap of the team's is fed from a
platform's typed outputs (and so waits for the platform's objects).
"""

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s
from accelplane.pulumi.platform import GpuPlatform, GpuPlatformArgs

HERE = Path(__file__).resolve().parent
config = pulumi.Config()

fleet = pulumi.ComponentResource("team:index:GpuFleet", "gpu-fleet")
platforms = {}
providers = {}
for cluster in ("prod-eu", "shared-gpus"):
    provider = providers[cluster] = k8s.Provider(
        cluster,
        kubeconfig=config.get(f"{cluster}-kubeconfig"),
        # accelplane's mutable ConfigMaps (the Volcano scheduler configuration) are updated in place
        enable_config_map_mutable=True,
        opts=pulumi.ResourceOptions(parent=fleet),
    )
    volcano = k8s.helm.v3.Release(
        f"{cluster}-volcano",
        chart="volcano",
        version="1.15.0",
        namespace="volcano-system",
        create_namespace=True,
        repository_opts={"repo": "https://volcano-sh.github.io/helm-charts"},
        opts=pulumi.ResourceOptions(parent=fleet, provider=provider),
    )
    platforms[cluster] = GpuPlatform(
        cluster,
        GpuPlatformArgs(spec=HERE.parent / f"{cluster}.yaml"),
        pulumi.ResourceOptions(parent=fleet, provider=provider, depends_on=[volcano], protect=True),
    )

prod = platforms["prod-eu"]
k8s.core.v1.ConfigMap(
    "team-queues",
    metadata={"name": "team-queues", "namespace": "flink"},
    data={"queues": prod.queue_names.apply(",".join)},
    opts=pulumi.ResourceOptions(
        parent=fleet, provider=providers["prod-eu"], depends_on=[prod.get_resource("Namespace", "flink")]
    ),
)
pulumi.export("prodQueues", prod.queue_names)
pulumi.export("sharedPodGroups", platforms["shared-gpus"].pod_group_names)
