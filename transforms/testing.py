"""Run the pipeline on source text, for doctests and per-pass tests.

>>> print(stage_source("def f(x):\\n    return x * x + 1.0\\n", "normalize", ctx))
def f(x):
    mul = x * x
    add = mul + 1.0
    return add
<BLANKLINE>
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading

from . import pipeline
from .emit import render
from .unit import Unit

_lock = threading.RLock()
_folder: tuple[int, str] | None = None  # (process id, its private folder of snippets)


def _snippets_folder() -> str:
    """This process's own folder for snippet files: made by ``mkdtemp`` (mode 0700, a name no
    one can predict), removed when the process exits. Nothing in a shared folder is ever run."""
    global _folder
    with _lock:
        if _folder is None or _folder[0] != os.getpid():  # a forked child makes its own
            pid, path = os.getpid(), tempfile.mkdtemp(prefix="cpsad-snippets-")
            atexit.register(lambda: os.getpid() == pid and shutil.rmtree(path, True))
            _folder = (pid, path)
        return _folder[1]


def function_from_source(
    source: str, name: str | None = None, prelude: str = "import math\nimport numpy as np\n"
):
    """The function ``name`` (default: the last ``def``) of ``source``, defined in a real file.

    The file is written to this process's private folder, and the module is run from the text
    itself, not read back, so what runs is ``source`` whatever is on disk; the file is there for
    ``inspect.getsource``, tracebacks and the pipeline's parse stage."""
    text = prelude + source
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    modname = f"cpsad_snippet_{digest}"
    with _lock:
        module = sys.modules.get(modname)
        if module is None:
            path = os.path.join(_snippets_folder(), f"snippet_{digest}.py")
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
            with os.fdopen(os.open(path, flags, 0o600), "w") as fh:
                fh.write(text)
            spec = importlib.util.spec_from_file_location(modname, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[modname] = module
            exec(compile(text, path, "exec"), module.__dict__)
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
