"""The emitted code of every example is committed: any change to it shows up in review.

Regenerate with `make snapshots` and read the diff like code.
"""

import difflib
import importlib.util
import os
import sys

import pytest

import cpsad
from cpsad.testing import check_grads  # noqa: F401  (the examples are also gradient-checked below)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
SNAPSHOTS = os.path.join(ROOT, "tests", "snapshots")
UPDATE = os.environ.get("CPSAD_UPDATE_SNAPSHOTS") == "1"


def example_modules():
    if EXAMPLES not in sys.path:  # the examples import their shared helpers as `common`
        sys.path.insert(0, EXAMPLES)
    out = []
    for name in sorted(os.listdir(EXAMPLES)):
        if name.endswith(".py"):
            path = os.path.join(EXAMPLES, name)
            spec = importlib.util.spec_from_file_location(f"examples_{name[:-3]}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            if hasattr(mod, "BACKPROPAGATORS"):
                out.append((name[:-3], mod))
    return out


CASES = [
    (stem, mod, fname, wrt)
    for stem, mod in example_modules()
    for fname, wrt in mod.BACKPROPAGATORS.items()
]


def argnums(fn, wrt):
    import inspect

    params = list(inspect.signature(fn).parameters)
    return tuple(params.index(w.strip()) for w in wrt.split(","))


@pytest.mark.parametrize("stem,mod,fname,wrt", CASES, ids=[f"{c[0]}.{c[2]}" for c in CASES])
def test_snapshot(stem, mod, fname, wrt, monkeypatch):
    monkeypatch.chdir(ROOT)  # the header names the source relative to the project
    fn = getattr(mod, fname)
    text = cpsad.show(fn, argnums=argnums(fn, wrt))
    path = os.path.join(SNAPSHOTS, f"{stem}.{fname}.py")
    if UPDATE or not os.path.exists(path):
        os.makedirs(SNAPSHOTS, exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
        if not UPDATE:
            pytest.fail(f"new snapshot written to {path}: review and commit it")
    with open(path) as fh:
        expected = fh.read()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), text.splitlines(True), "committed", "emitted now"
            )
        )
        pytest.fail(
            f"the emitted code of {stem}.{fname} changed (run `make snapshots` and review):\n{diff}"
        )


def test_snapshots_have_no_orphans():
    expected = {f"{c[0]}.{c[2]}.py" for c in CASES}
    present = set(os.listdir(SNAPSHOTS)) if os.path.isdir(SNAPSHOTS) else set()
    assert present <= expected, f"snapshots of no example: {sorted(present - expected)}"


def test_readme_shows_the_committed_backpropagator():
    """The first screen of README.md prints what cpsad really emits for examples/readme.py."""
    with open(os.path.join(ROOT, "README.md")) as fh:
        readme = fh.read()
    with open(os.path.join(SNAPSHOTS, "readme.loss.py")) as fh:
        snapshot = fh.read()
    function = snapshot[snapshot.index("def loss_bp(") :].strip()
    assert function in readme
