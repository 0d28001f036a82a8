"""The GPU discovery script Flink's GPU driver runs on every TaskManager host.

``gpu_discovery.py`` is shipped as one standalone file (stdlib only, Python 3.7+) into node images,
ConfigMaps and host provisioning; nothing in it imports the rest of the package, and nothing in the
package imports it except by path (``accelplane.discovery_install.script_text``).
"""
