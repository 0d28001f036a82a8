"""Real-Flink test harness: standalone Flink (1.20) daemons in a per-test sandbox.

It starts a real JobManager and TaskManagers with the distribution's own ``bin/jobmanager.sh`` /
``bin/taskmanager.sh``, so tests can prove that a *rendered* Flink configuration and a GPU discovery
script work inside Flink's own TaskManager (the external resource framework only runs in real
TaskManagers -- MiniCluster / local environments never call the drivers).

Modules, each with one job (import from them directly; lower ones never import higher ones):

* `errors` -- `HarnessError`.
* `processes` -- checked child processes with diagnostics, free ports, pids, log tails.
* `home` -- finding the distribution and a JDK (`find_flink_home`, `require_flink_home`: fails the
  test when ``$CI`` is set, skips it otherwise) and what the distribution ships.
* `java` -- compiling small Java jobs against ``<flink>/lib/*`` (`build_java_job`, the probes in
  ``java/``).
* `config_files` -- writing ``config.yaml`` / ``flink-conf.yaml`` with sandbox overrides in the
  file's own format (`apply_overrides`, `SANDBOX_KEYS`, `with_coordination_file`).
* `config_probe` -- what Flink's own ``GlobalConfiguration.loadConfiguration`` reads
  (`probe_flink_config`, `load_with_flink`), with the parsing rules observed.
* `logs` -- GPU discovery outcomes scraped from TaskManager logs (`parse_discovery_log`).
* `rest` -- a client of the JobManager REST API.
* `jobs` -- ``flink run`` and the ``GpuProbe`` job's output.
* `standalone` -- `FlinkStandalone`, one sandboxed cluster (context manager): conf dir and daemons.
* `scenario` -- `run_gpu_scenario`: N TaskManagers + fake ``nvidia-smi`` + GPU probe job ->
  per-TaskManager GPU sets.
"""
