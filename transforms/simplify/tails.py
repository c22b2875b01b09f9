"""Tails: a continuation that only passes its values on is ``k``.

Invariant: after ``return_directly``, no continuation ends ``x_bar = k(...); return x_bar`` with
``x_bar`` a generated name used nowhere else (it is ``return k(...)``); after ``eta``, no
continuation whose body is only ``return k(x, ...)`` (or ``k(x, ...)``) of its own parameters is
left where its scope reads it only directly: ``k`` is used in its place, so a loop's recursive
call is a tail call.

Tests: tests/test_simplify_rewrites.py, its case ``tails`` (the effect, with the rewrite and
without, and the gradient).
"""

from __future__ import annotations

from .. import anno
from .. import astlib as A
from .. import scoping as S
from ._common import statement_lists


class Tails:
    """``return_directly`` and ``eta`` (a mixin of ``Simplify``: its state is the driver's)."""

    def return_directly(self, f) -> bool:
        """In a continuation, ``x_bar = e; return x_bar``  ->  ``return e`` (x_bar used nowhere
        else), so that one which only passes its values on is recognisably ``k`` (see ``eta``)."""
        if not anno.hasanno(f, anno.CONT):
            return False
        fa = self.facts[id(f)]
        changed = False
        for block in statement_lists(f):
            for i in range(len(block) - 1):
                a, r = block[i], block[i + 1]
                if (
                    isinstance(a, A.Assign)
                    and isinstance(a.targets[0], A.Name)
                    and isinstance(r, A.Return)
                    and A.is_name(r.value, a.targets[0].id)
                ):
                    x = a.targets[0].id
                    passes_on = (  # x_bar = k(x): the continuation of the whole function
                        isinstance(a.value, A.Call)
                        and A.is_name(a.value.func, self.unit.cont_name)
                        and all(isinstance(arg, A.Name) for arg in a.value.args)
                    )
                    if (
                        passes_on
                        and x in self.namer.generated
                        and fa.assignments.get(x) == 1
                        and fa.reads.get(x) == 1
                        and x not in fa.declared
                    ):
                        r.value = a.value
                        del block[i]
                        return True
        return changed

    def eta(self, f) -> bool:
        """A continuation that only passes its values on to ``k`` *is* ``k``: use ``k`` instead.

        This makes a loop's recursive call a tail call -- ``loop_L5_bp(k, i + 1, acc)`` -- so an
        iteration costs one frame, not two.
        """
        fa = self.facts[id(f)]
        if not fa.nested:
            return False  # (for speed: the facts say it defines no function, without a sweep)
        for block in statement_lists(f):
            for d in block:
                if not (isinstance(d, A.FunctionDef) and anno.hasanno(d, anno.CONT)):
                    continue
                if len(d.body) != 1 or not isinstance(d.body[0], (A.Return, A.Expr)):
                    continue  # `return k(x)`, or `k(x)` when nothing uses what it returns
                call = d.body[0].value
                params = A.arg_names(d.args)
                if not (
                    isinstance(call, A.Call)
                    and isinstance(call.func, A.Name)
                    and not call.keywords
                    and [getattr(a, "id", None) for a in call.args] == params
                    and call.func.id not in params
                ):
                    continue
                if fa.reads.get(d.name) != fa.loads.get(d.name):
                    continue  # used inside a nested function, where `k` may mean another one
                target = call.func.id
                block.remove(d)
                for n in S.own_nodes(f):
                    if isinstance(n, A.Name) and n.id == d.name:
                        n.id = target
                return True
        return False
