"""Pulumi ComponentResources that apply a cluster's builder output, one typed resource per object.

Modules: `graph` (pure: logical names, dependencies between objects, family order; no pulumi import),
`kinds` (the generic ``(apiVersion, kind)`` → pulumi_kubernetes resource mapping), `family` (the
component every artifact family gets), `scheduling`, `device_plugins`, `flink`, `node_image`
(family components with extra outputs) and `platform` (the top-level ``GpuPlatform``).

Importing this package does not import pulumi; only the modules named above that register
resources do. Nothing on the validate/render path imports any of them.
"""
