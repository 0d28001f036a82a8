"""Write accelplane's per-version Flink option tables from Flink's own flink-dist jars.

For each ``FLINK_DIST_JAR[=SOURCE]`` argument: runs ``FlinkOptionKeys.java`` (beside this file) on
the jar with ``java`` (17+) and writes ``components/accelplane/flink_options/<major>.<minor>.tsv``:
a provenance header (Flink version, jar name and sha256, where the jar came from, this tool) and
one line per ``ConfigOption`` key with its fallback and deprecated keys. Not run by the tests
(the jars are hundreds of MB); the tests check the committed 1.20 table against the local
flink-dist jar with Flink's own classes.

Where the jars come from: ``apache-flink-libraries==X.Y.Z`` from PyPI
(``pip download --no-deps apache-flink-libraries==1.18.1``; the sdist holds
``deps/lib/flink-dist-X.Y.Z.jar``), or ``$ACCELPLANE_FLINK_HOME/lib`` of an installed apache-flink.

    python tools/flink_options/extract.py /tmp/flink-dist-1.18.1.jar="apache-flink-libraries-1.18.1.tar.gz (PyPI, sha256 …)"
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOL = HERE / "FlinkOptionKeys.java"
OUT = HERE.parent.parent / "components" / "accelplane" / "flink_options"


def sha256(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def extract(jar: Path, source: str) -> Path:
    """Run the Java tool on ``jar`` and write its table; returns the file written."""
    m = re.search(r"flink-dist[^-]*-(\d+)\.(\d+)\.(\d+)\.jar$", jar.name)
    if m is None:
        raise SystemExit(f"{jar}: not a flink-dist-X.Y.Z.jar")
    version = ".".join(m.groups())
    rows = subprocess.run(
        ["java", str(TOOL), str(jar)], check=True, capture_output=True, text=True, timeout=900
    ).stdout
    header = [
        f"# Flink {version}: every ConfigOption key of flink-dist with its fallback and deprecated keys",
        f"# jar: {jar.name} sha256:{sha256(jar)}",
        f"# from: {source}",
        "# tool: tools/flink_options/FlinkOptionKeys.java via tools/flink_options/extract.py",
        "# columns: key<TAB>fallback keys<TAB>deprecated keys (comma-separated, Flink's order)",
    ]
    out = OUT / f"{m[1]}.{m[2]}.tsv"
    out.write_text("\n".join(header) + "\n" + rows, encoding="utf-8")
    return out


def main(argv: list[str]) -> int:
    """Extract every ``JAR[=SOURCE]`` argument."""
    OUT.mkdir(parents=True, exist_ok=True)
    for arg in argv:
        jar, _, source = arg.partition("=")
        print(extract(Path(jar), source or "unknown"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
