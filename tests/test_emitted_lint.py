"""Emitted code is lint-clean: no undefined or unused names (pyflakes' rules, through ruff)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from cpsad import compiler
from cpsad.calls import params_for
from tests.test_gradients import CASES

ruff = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")


@pytest.mark.skipif(not os.path.exists(ruff), reason="ruff is installed by `make` (the lint extra)")
def test_emitted_modules_are_lint_clean(tmp_path):
    callees = {}
    for f, args, argnums in CASES:
        nums = (argnums,) if isinstance(argnums, int) else argnums
        active, _ = params_for(f.__code__, nums, len(args))
        try:
            spec = compiler.specialize(f, active)
        except Exception:  # what cannot be transformed is tested elsewhere
            continue
        for s in compiler.call_graph(spec):
            path = tmp_path / os.path.basename(s.path)
            path.write_text(s.text)
            callees[path.name] = set(s.callee_specs)
    r = subprocess.run(
        [
            ruff,
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "F",
            "--output-format",
            "json",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    problems = [
        p
        for p in json.loads(r.stdout or "[]")
        # backpropagators of called functions are linked in (the header names each one)
        if not (
            p["code"] == "F821"
            and p["message"].split("`")[1] in callees[os.path.basename(p["filename"])]
        )
    ]
    assert not problems, "\n".join(
        f"{os.path.basename(p['filename'])}:{p['location']['row']}: {p['code']} {p['message']}"
        for p in problems
    )
