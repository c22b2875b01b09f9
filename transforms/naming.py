"""Every name the pipeline invents comes from here: deterministic, readable, never colliding.

A ``Namer`` is seeded with every name the user's function (and what it refers to) already uses;
generated names follow fixed stems with counters, never random suffixes:

>>> n = Namer({"x", "y", "x_bar"})
>>> n.adjoint("x"), n.adjoint("y"), n.adjoint("x")
('x_bar_1', 'y_bar', 'x_bar_1')
>>> n.fresh("t"), n.fresh("t")
('t', 't_1')
>>> n.join_continuation(12)
'after_if_L12'
"""

from __future__ import annotations

import builtins
import keyword
import re

_BUILTINS = frozenset(dir(builtins))
_IDENT = re.compile(r"[^0-9a-zA-Z_]")


def own_name(fn) -> str:
    """A function's own name: ``functools.wraps`` gives a decorator's wrapper the ``__name__`` of
    the function it wraps (and sets ``__wrapped__``); its code object keeps the wrapper's."""
    return fn.__code__.co_name if hasattr(fn, "__wrapped__") else fn.__name__


def own_qualname(fn) -> str:
    return fn.__code__.co_qualname if hasattr(fn, "__wrapped__") else fn.__qualname__


def _stem(text: str) -> str:
    s = _IDENT.sub("_", text) or "t"
    if s[0].isdigit():
        s = "t" + s
    return s


class Namer:
    def __init__(self, taken=()):
        self.taken: set[str] = set(taken) | _BUILTINS | set(keyword.kwlist)
        self._adjoints: dict[str, str] = {}
        self._primals: dict[str, str] = {}
        self._tangents: dict[str, str] = {}
        self.temps: set[str] = set()  # temporaries of A-normal form
        self.generated: set[str] = set()  # every name this namer made up
        self._suffix: dict[str, int] = {}  # base -> the first suffix ``fresh`` may find free
        # a made-up name -> what it stands for in the user's words, for messages
        self.meaning: dict[str, str] = {}

    def reserve(self, *names: str) -> None:
        self.taken.update(names)

    def fresh(self, stem: str) -> str:
        """``stem`` if unused, else ``stem_1``, ``stem_2``, ..."""
        stem = _stem(stem)
        if stem not in self.taken:
            self.taken.add(stem)
            self.generated.add(stem)
            return stem
        base = re.sub(r"_\d+$", "", stem) or stem
        # ``taken`` only grows, so the first free suffix never goes down: start from the last
        # one (counting from 1 every time made a long function's naming quadratic)
        i = self._suffix.get(base, 1)
        while f"{base}_{i}" in self.taken:
            i += 1
        self._suffix[base] = i
        out = f"{base}_{i}"
        self.taken.add(out)
        self.generated.add(out)
        return out

    def shown(self, name: str) -> str:
        """``name`` as a message shows it: what it stands for (``the loop at line 3``) where
        the namer made it up for something of the user's, else the name in backquotes."""
        return self.meaning.get(name) or f"`{name}`"

    def version(self, name: str) -> str:
        """A new name for a rebinding of ``name``: ``x`` -> ``x_1``."""
        return self.fresh(name)

    def adjoint(self, name: str) -> str:
        """The adjoint variable of ``name``: ``x`` -> ``x_bar``; the same answer every time."""
        if name not in self._adjoints:
            bar = self.fresh(name + "_bar")
            self._adjoints[name] = bar
            self._primals[bar] = name
        return self._adjoints[name]

    def primal(self, bar: str) -> str | None:
        """The name whose adjoint (or tangent) is ``bar`` (None if it is neither)."""
        return self._primals.get(bar)

    def temp(self, stem: str) -> str:
        t = self.fresh(stem)
        self.temps.add(t)
        return t

    # Continuations, named after what they continue.
    def continuation(self, bound: str) -> str:
        return self.fresh(f"k_{bound}")

    def call_continuation(self, callee: str, lineno: int) -> str:
        if callee.endswith(f"_L{lineno}"):  # a loop's function is already named after its line
            return self.fresh(f"after_{callee}")
        return self.fresh(f"after_{callee}_L{lineno}")

    def join_continuation(self, lineno: int) -> str:
        return self.fresh(f"after_if_L{lineno}")

    def loop(self, lineno: int) -> str:
        name = self.fresh(f"loop_L{lineno}")
        self.meaning[name] = f"the loop at line {lineno}"
        return name

    def backpropagator(self, fname: str) -> str:
        return self.fresh(f"{fname}_bp")

    # Forward mode.
    def tangent(self, name: str) -> str:
        """The tangent variable of ``name``: ``x`` -> ``x_dot``; the same answer every time."""
        if name not in self._tangents:
            dot = self.fresh(name + "_dot")
            self._tangents[name] = dot
            self._primals[dot] = name
        return self._tangents[name]

    def jvp(self, fname: str) -> str:
        return self.fresh(f"{fname}_jvp")
