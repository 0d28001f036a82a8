"""Test support shared by every test module, the one place for test helpers: repository paths and
the upstream reference data beside the checkout (`paths`), real validators and validator tools
(`validators`), writing specs and validating them (`specs`), in-process render (`render`), the
real-Flink harness (`flink`), fakes; and per-topic spec builders and harnesses:
`device_plugin_specs`, `discovery_runs` (also used by bench/), `dra_specs`, `multimodel_hosts`,
`node_provisioning`, `pulumi_program`, `stack_copies`, `yarn_specs`."""
