"""Reduced programs on which cpsad fails, one file per distinct cause, found by the fuzzer.

Each file is a module with the entry function ``f``, its arguments ``ARGS``, ``STATUS`` ("open"
while cpsad fails on it, "fixed" once it does not) and a docstring saying what cpsad returns, what
is right, and which features are involved. ``python tests/fuzz/findings/NAME.py`` shows the
verdict; tests/test_fuzz.py judges every file (``xfail(strict=True)`` while open, a regression
test once fixed).
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def files() -> list:
    return sorted(f for f in os.listdir(HERE) if f.endswith(".py") and not f.startswith("_"))


def _kind(v):
    if isinstance(v, bool):
        raise TypeError(v)
    if isinstance(v, int):
        return "I"
    if isinstance(v, float):
        return "S"
    return {1: "V", 2: "M"}[np.ndim(v)]


def _literal(v) -> str:
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()!r})"
    return repr(v)


def program_of(name: str):
    """The ``Program`` of the finding ``name`` (a file of this folder), and its ``STATUS``."""
    from tests.fuzz.gen import Program

    path = os.path.join(HERE, name)
    spec = importlib.util.spec_from_file_location("cpsad_finding_" + name[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with open(path) as fh:
        source = fh.read()
    import inspect

    params = list(inspect.signature(mod.f).parameters)
    prog = Program(0, source, [(p, _kind(a)) for p, a in zip(params, mod.ARGS)], set(), 0, mod.ARGS)
    return prog, getattr(mod, "STATUS", "open")


def render(small, key, seed, exclude=(), what="") -> str:
    """The text of a finding file for the reduced program ``small``."""
    cls, message = key
    how = f"python -m tests.fuzz --show {seed}" + (
        f" --exclude {','.join(exclude)}" if exclude else ""
    )
    args = ", ".join(_literal(v) for v in small.values) + ("," if len(small.values) == 1 else "")
    return (
        f'"""{cls}: {message or what}\n\n'
        f"Found by the fuzzer ({how}), then reduced.\n"
        '"""\n\n'
        f"{small.source.rstrip()}\n\n\n"
        f"ARGS = ({args})\n"
        'STATUS = "open"\n\n'
        'if __name__ == "__main__":\n'
        "    from tests.fuzz.findings import show\n\n"
        "    show(__file__)\n"
    )


def show(path: str) -> None:
    """Print a finding's verdict: Python's value, cpsad's, the gradient against differences."""
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
    from tests.fuzz.oracle import check

    prog, status = program_of(os.path.basename(path))
    r = check(prog)
    print(f"status {status}: {r.cls} {r.message}\n{r.detail}\njvp: {r.jvp_cls} {r.jvp_detail}")
