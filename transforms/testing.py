"""Run the pipeline on source text, for doctests and per-pass tests.

>>> print(stage_source("def f(x):\\n    return x * x + 1.0\\n", "normalize", ctx))
def f(x):
    mul = x * x
    add = mul + 1.0
    return add
<BLANKLINE>
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

from transforms import pipeline
from transforms.emit import render
from transforms.unit import Unit

_DIR = os.path.join(tempfile.gettempdir(), "cpsad-source-snippets")


def function_from_source(
    source: str, name: str | None = None, prelude: str = "import math\nimport numpy as np\n"
):
    """The function ``name`` (default: the last ``def``) of ``source``, imported from a real file."""
    text = prelude + source
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    os.makedirs(_DIR, exist_ok=True)
    path = os.path.join(_DIR, f"snippet_{digest}.py")
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(text)
    modname = f"cpsad_snippet_{digest}"
    if modname in sys.modules:
        module = sys.modules[modname]
    else:
        spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    if name is None:
        defs = [line.split("(")[0][4:] for line in source.splitlines() if line.startswith("def ")]
        name = defs[-1]
    return getattr(module, name)


def run_source(source: str, upto: str, ctx, active=None, name=None, skip=(), kinds=None):
    """The unit after running the pipeline up to stage ``upto`` on ``source`` (its parameters of
    the ``kinds`` given, ``{"x": {"number"}}``; unknown when not)."""
    fn = function_from_source(source, name)
    if active is None:
        code = fn.__code__
        active = code.co_varnames[: code.co_argcount]
    unit = Unit(fn, tuple(active), ctx)
    unit.is_entry = True
    unit.arg_kinds = {p: frozenset(k) for p, k in (kinds or {}).items()}
    pipeline.run(unit, upto=upto, check=True, skip=skip)
    return unit


def stage_source(
    source: str, upto: str, ctx, active=None, comments: bool = False, kinds=None
) -> str:
    """The program after stage ``upto``, as source (without the user's lines as comments)."""
    unit = run_source(source, upto, ctx, active, kinds=kinds)
    if upto == "emit":
        return unit.text
    return render(unit.tree, unit, comments=comments)
