"""The JVM options a Flink cluster's processes need: the distribution's own ``env.java.opts.all``.

Flink ≥ 1.18 runs on Java 17 only with a list of ``--add-exports``/``--add-opens`` options, which
the distribution ships in its *default config file* (``conf/flink-conf.yaml`` in 1.18,
``conf/config.yaml`` from 1.19 on), not in its scripts or code. accelplane's rendered config file
replaces the distribution's, so without this list the daemons start but Kryo on JDK collections
and the ``flink`` client fail (``InaccessibleObjectException: Unable to make field private final
java.util.Map java.util.Collections$UnmodifiableMap.m accessible``). The list is written for every
target: standalone and YARN read it from the config file (YARN containers through ``%jvmopts%``),
native Kubernetes ships the config file to its pods (Flink builds the containers' ``java`` command
from it), and the operator gets it in ``flinkConfiguration``.

Provenance of `FLINK_JAVA17_OPTIONS` (Apache License 2.0, The Apache Software Foundation): the
value of ``env.java.opts.all`` in apache/flink ``flink-dist/src/main/resources/config.yaml`` at
commits 0a311c4bac76219d1936dad3d1d54f850518df9a and 3128933976cefa6e15323560b69e43b66e56ebe1
(identical), in the installed apache-flink 1.20.5 distribution's ``conf/config.yaml`` (checked by
tests/flink/test_flink_java_options.py against ``$ACCELPLANE_FLINK_HOME``), and in the
``flink-conf.yaml`` of the 1.18 releases (``env.java.opts.all: <the same list>``). Releases before
1.18 ship none (Java 17 is not supported there), so none is written for them.
"""

from __future__ import annotations

import re

from accelplane.model import FlinkCluster

JAVA_OPTS_KEY = "env.java.opts.all"
DEPRECATED_JAVA_OPTS_KEY = "env.java.opts"
"""The deprecated name Flink still reads for `JAVA_OPTS_KEY` (``CoreOptions.FLINK_JVM_OPTIONS``)."""
USER_JAVA_OPTS_KEYS = (JAVA_OPTS_KEY, DEPRECATED_JAVA_OPTS_KEY)

JAVA17_OPTIONS_SINCE = (1, 18)
FLINK_JAVA17_OPTIONS: tuple[str, ...] = (
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.text=ALL-UNNAMED",
    "--add-opens=java.base/java.time=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
)
"""``env.java.opts.all`` of Flink's default config file, 1.18 … 2.x (see the module docstring)."""

_JAVA_TAG = re.compile(r"(?:^|[-_.])java(\d+)(?:$|[-_.])")


def image_java_major(image: str | None) -> int | None:
    """The Java major release an image tag names (``flink:1.20-java11`` → 11), or None when the tag
    names none."""
    if not image:
        return None
    tag = image.rsplit("@", 1)[0].rsplit("/", 1)[-1]
    if ":" not in tag:
        return None
    match = _JAVA_TAG.search(tag.split(":", 1)[1])
    return int(match.group(1)) if match else None


def distribution_java_options(cluster: FlinkCluster, image: str | None) -> tuple[str, ...]:
    """The JVM options the cluster's Flink distribution ships in its default config file: the
    Java 17 list from 1.18 on, none before; none for an image tagged ``java8`` (Java 8 refuses
    ``--add-opens``; the distribution's file says the list may be removed there)."""
    if cluster.version_tuple < JAVA17_OPTIONS_SINCE:
        return ()
    java = image_java_major(image)
    if java is not None and java < 9:
        return ()
    return FLINK_JAVA17_OPTIONS


def user_java_options(cluster: FlinkCluster) -> tuple[str, ...]:
    """The options the spec adds in ``config`` (``env.java.opts.all``, then the deprecated
    ``env.java.opts``), as whitespace-separated words like Flink's scripts pass them."""
    words: list[str] = []
    for wanted in USER_JAVA_OPTS_KEYS:
        for key, value in cluster.config:
            if key == wanted and not isinstance(value, bool):
                words += str(value).split()
    return tuple(words)


def java_options(cluster: FlinkCluster, image: str | None) -> str | None:
    """``env.java.opts.all`` to render: the distribution's options, then the spec's additions that
    are not among them, in their order; None where the distribution ships no list (the user's own
    keys are then written as they are)."""
    base = distribution_java_options(cluster, image)
    if not base:
        return None
    added = [w for w in user_java_options(cluster) if w not in frozenset(base)]
    return " ".join([*base, *added])
