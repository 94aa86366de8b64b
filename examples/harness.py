#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A small harness that runs untrusted requests through `kist sandbox`.

Each request is a shell command.  It runs in a fresh, disposable sandbox with
a read-only view of /usr, a scratch directory, an overlay on a workspace
directory whose changes are merged back only when the command succeeds, a
wall-clock timeout and rlimits.  The harness reads how the command ended from
the --status-fd channel (one JSON object when it started, one when it ended)
and keeps the report kist wrote.  Standard library only.

Usage: harness.py [--kist PATH] [--root DIR] --workspace DIR
                  [--timeout SECONDS] [--reports DIR] COMMAND...
Prints one JSON object per request on standard output.
"""
import argparse
import json
import os
import subprocess
import sys


def run_request(kist, root, command, workspace, timeout, report_path):
    rd, wr = os.pipe()
    argv = [kist] + (["--root", root] if root else []) + ["sandbox",
            "--ro", "/usr",
            "--workspace", workspace, "--commit", "on-success",
            "--timeout", str(timeout),
            "--nofile", "256", "--fsize", "64m",
            "--setenv", "PATH=/usr/bin:/bin",
            "--status-fd", str(wr),
            "--report", report_path,
            "--", "sh", "-c", command]
    proc = subprocess.Popen(argv, pass_fds=(wr,), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(wr)
    with os.fdopen(rd, "r") as status:
        events = [json.loads(line) for line in status if line.strip()]
    out, err = proc.communicate()
    ended = next((e for e in events if e.get("event") == "exited"), {})
    started = next((e for e in events if e.get("event") == "started"), {})
    try:
        with open(report_path) as f:
            report = json.load(f)
        workspace_entry = next((l for l in report["layers"] if l["layer"] == "workspace"), {})
    except (OSError, ValueError, KeyError):
        report, workspace_entry = None, {}
    return {
        "command": command,
        "exit": proc.returncode,
        "how": ended.get("how"),
        "signal": ended.get("signal"),
        "wall_ms": ended.get("wall-ms"),
        "pid_namespace": started.get("pid-namespace"),
        "workspace": workspace_entry.get("detail"),
        "report": report_path if report else None,
        "stdout": out.decode(errors="replace"),
        "stderr": err.decode(errors="replace"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kist", default="kist")
    ap.add_argument("--root", help="kist's state root (default: kist's own)")
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--reports", default=".")
    ap.add_argument("commands", nargs="+")
    a = ap.parse_args()
    failed = 0
    for i, command in enumerate(a.commands):
        r = run_request(a.kist, a.root, command, a.workspace, a.timeout,
                        os.path.join(a.reports, "report-%d.json" % i))
        failed += r["exit"] != 0
        print(json.dumps(r), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
