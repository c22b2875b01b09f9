"""Peephole: constant folding, ``x ** 1`` and keyword arguments at their defaults.

Invariant: after ``_Peephole.run``, no ``+``, ``-`` or ``*`` of two int or float constants
remains (it is their value), no ``x ** 1`` (it is ``x``), and no call of a helper, a rule or a
function of a module emitted code imports passes a keyword argument a constant equal, and of the
same type, to the default it would take. Each call and operation is rewritten innermost first.

Tests: tests/test_simplify_rewrites.py, its case ``peephole`` (the effect, with the rewrite and
without, and the gradient).
"""

from __future__ import annotations

import inspect
import types

from .. import astlib as A


class _Peephole:
    """Constant folding, ``x ** 1`` and default keyword arguments: a rewrite of each call and
    binary operation, innermost first (``run``)."""

    def __init__(self, injected: dict):
        self.injected = injected

    def run(self, root) -> set[str]:
        """Rewrite ``root``; return the names it mentions, as ``scoping.names`` finds them -- the
        same before and after: the rewrites take out constants alone (for speed: the driver asks,
        and this walk meets every name)."""
        names: set[str] = set()
        for n, holder, field, i in reversed(_calls_and_operations(root, names)):
            new = self.call(n) if n.__class__ is A.Call else self.binop(n)
            if new is not n:
                if field is None:
                    holder[i] = new
                else:
                    setattr(holder, field, new)
        return names

    def call(self, node):
        """Leave out keyword arguments a helper, a rule or a function of a module emitted code
        imports (``np.reshape(g, s, order="C")``) would default to anyway -- noise to a reader,
        and an array library that dispatches numpy's functions may not take them (Dask's
        reshape refuses ``order``)."""
        if not node.keywords:
            return node
        fn = self._callee(node.func)
        if fn is not None and node.keywords:
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):  # (a builtin without a signature)
                return node
            node.keywords = [
                k
                for k in node.keywords
                if not (
                    k.arg in params
                    and isinstance(k.value, A.Constant)
                    and type(k.value.value) is type(params[k.arg].default)
                    and k.value.value == params[k.arg].default
                )
            ]
        return node

    def _callee(self, func):
        """The helper or rule a call's name stands for, or ``module.function`` of a module
        emitted code imports; None for anything else."""
        if isinstance(func, A.Name):
            fn = self.injected.get(func.id)
            return fn if inspect.isfunction(fn) else None
        if isinstance(func, A.Attribute) and isinstance(func.value, A.Name):
            module = self.injected.get(func.value.id)
            if isinstance(module, types.ModuleType):
                fn = getattr(module, func.attr, None)
                return fn if callable(fn) and not isinstance(fn, type) else None
        return None

    def binop(self, node):
        left, right = node.left, node.right
        if isinstance(left, A.Constant) and isinstance(right, A.Constant):
            ops = {A.Add: lambda a, b: a + b, A.Sub: lambda a, b: a - b, A.Mult: lambda a, b: a * b}
            fn = ops.get(type(node.op))
            if fn and all(type(v.value) in (int, float) for v in (left, right)):
                return A.const(fn(left.value, right.value))
        if isinstance(node.op, A.Pow) and isinstance(right, A.Constant) and right.value == 1:
            return left
        return node


def _calls_and_operations(root, names: set | None) -> list:
    """The calls and binary operations below ``root``, each as ``(node, holder, field, index)``
    (it is ``holder[index]`` where ``field`` is None, else ``holder.field``), each before the
    nodes below it; the names met go to ``names`` (not those below a name: a parameter's
    annotation, which ``scoping.names`` does not look into either). (One walk, for speed: only
    these nodes are rewritten, not every node visited as a NodeTransformer does.)"""
    found = []
    stack = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    Name, Call, BinOp, AST, NODES, children_of = A.Name, A.Call, A.BinOp, A.AST, A.NODES, A.CHILDREN
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name and names is not None:
            names.add(n.id)
            below = n.annotation
            if below is not None:
                if below.__class__ is Call or below.__class__ is BinOp:
                    found.append((below, n, "annotation", 0))
                found += _calls_and_operations(below, None)
            continue
        children = children_of.get(cls)
        if children is None:
            children = A.children_of(cls)
        for field, holds in children:
            v = getattr(n, field, None)
            if v is None:
                continue
            if holds == NODES:
                for i, x in enumerate(v):
                    if x.__class__ is Call or x.__class__ is BinOp:
                        found.append((x, v, None, i))
                extend(v)
            elif v.__class__ is list:
                for i, x in enumerate(v):
                    if isinstance(x, AST):
                        if x.__class__ is Call or x.__class__ is BinOp:
                            found.append((x, v, None, i))
                        push(x)
            elif isinstance(v, AST):
                if v.__class__ is Call or v.__class__ is BinOp:
                    found.append((v, n, field, 0))
                push(v)
    return found
