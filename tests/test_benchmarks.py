"""Benchmarks are not tests -- nothing here is timed -- but their code must run."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(script, *args):
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_long_loops_runs():
    out = run("long_loops.py", "--quick")
    assert "10,000" in out
