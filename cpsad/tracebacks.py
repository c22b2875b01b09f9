"""Tracebacks a person can act on: an error raised under ``cpsad.grad`` (or any derivative cpsad
returns) shows the user's frames and the emitted code's -- whose lines the "in your code" note
maps back to the user's -- and hides cpsad's own, as JAX filters its internal frames. Set
``CPSAD_TRACEBACK=full`` to see every frame (to debug cpsad itself).

The invariant: ``boundary(fn)`` behaves as ``fn``, except that an exception leaving it carries a
traceback without the frames of cpsad's and transforms' own source files (the emitted code lives
in the cache folder: it stays) and a note saying so -- but an ``InternalError`` (a bug of
cpsad's) keeps them all.
"""

from __future__ import annotations

import functools
import os
import types

import cpsad.transforms.pipeline
from cpsad.transforms.errors import InternalError

_OWN = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (__file__, cpsad.transforms.pipeline.__file__)
)

NOTE = "(cpsad's own frames are hidden; set CPSAD_TRACEBACK=full to see them)"


def _own(filename: str) -> bool:
    return filename.startswith(_OWN)


def filtered(tb):
    """``tb`` without the frames of cpsad's own files (None if that leaves none: a refusal
    says where in the user's code, an argument's error is the call's)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [t for t in frames if not _own(t.tb_frame.f_code.co_filename)]
    if len(kept) == len(frames):
        return frames[0] if frames else None
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def boundary(fn, like=None):
    """``fn`` as a function of cpsad's API: see the module's docstring. It takes the name,
    docstring, attributes and ``__wrapped__`` of ``like`` (the user's function a derivative is
    made of; ``fn`` by default), as ``functools.wraps`` would."""

    def api_boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if isinstance(exc, InternalError) or os.environ.get("CPSAD_TRACEBACK", "").lower() in (
                "full",
                "1",
            ):
                raise  # (a bug of cpsad's: its frames are what a report needs)
            tb = filtered(exc.__traceback__)  # (again where one boundary calls another)
            if tb is not exc.__traceback__ and not getattr(exc, "_cpsad_filtered", False):
                exc._cpsad_filtered = True
                if hasattr(exc, "add_note"):
                    exc.add_note(NOTE)
            raise exc.with_traceback(tb)  # noqa: B904  (the same exception, re-raised)

    return named_like(api_boundary, fn if like is None else like)


def named_like(wrapper, f):
    """``functools.update_wrapper(wrapper, f)``, in a fifth of its time where ``f`` is a
    function (a derivative is made on every step of a loop that differentiates a fresh
    closure: ``cpsad.grad(lambda w: loss(w, X, y))``)."""
    if type(f) is not types.FunctionType:
        return functools.update_wrapper(wrapper, f)
    for name in functools.WRAPPER_ASSIGNMENTS:  # (a function has each of them)
        setattr(wrapper, name, getattr(f, name))
    if f.__dict__:
        wrapper.__dict__.update(f.__dict__)
    wrapper.__wrapped__ = f
    return wrapper
