"""Fire N concurrent runs of the discovery script's ``main()``, each in its own forked process.

    python -S _burst.py SCRIPT ARGS_JSON

ARGS_JSON is a JSON list of argument lists, one per process. All processes are forked first and
then released at once (a start barrier), so they really contend for the coordination-file lock.
Prints a JSON list of {"rc", "out", "err"} in the same order.

This exists for speed: forking a process that already has the script loaded costs ~1 ms, while
starting a fresh interpreter costs ~30 ms, and the concurrency test needs thousands of runs. The
processes are still separate processes with separate file descriptors and locks; what is skipped
is only interpreter start-up (covered by the tests that exec the script).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import tempfile


def main() -> None:
    script, args_json = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("gpu_discovery_under_test", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runs: list[list[str]] = json.loads(args_json)
    barrier_r, barrier_w = os.pipe()
    with tempfile.TemporaryDirectory() as tmp:
        pids = []
        for n, argv in enumerate(runs):
            pid = os.fork()
            if pid == 0:  # child
                os.close(barrier_w)
                os.read(barrier_r, 1)  # returns b"" once the parent closes the write end
                out, err = io.StringIO(), io.StringIO()
                sys.stdout, sys.stderr = out, err
                try:
                    rc = module.main(argv)
                except BaseException as e:  # report, never fall back into the parent's code
                    rc = 99
                    err.write(f"burst child crashed: {e!r}\n")
                with open(os.path.join(tmp, f"{n}.json"), "w") as f:
                    json.dump({"rc": rc, "out": out.getvalue(), "err": err.getvalue()}, f)
                os._exit(0)
            pids.append(pid)
        os.close(barrier_r)
        os.close(barrier_w)  # release every child at once
        for pid in pids:
            os.waitpid(pid, 0)
        results = []
        for n in range(len(runs)):
            with open(os.path.join(tmp, f"{n}.json")) as f:
                results.append(json.load(f))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
