"""Gather: a dict's entry adjoints, added to its adjoint one read at a time, are added as one.

Invariant: after ``gather_all``, no run of two or more ``p_bar = p_bar + getitem_adjoint(v, p,
key)`` (or ``acc(p_bar, ...)``, or a first ``p_bar = getitem_adjoint(...)``) with constant keys,
each key once, remains in a statement list with nothing between them that mentions ``p_bar`` or
``p``, assigns a ``v`` already gathered, or may call a local function: it is one assignment of
``p_bar``, in the first one's form, of ``items_adjoint(p, {key: v, ...})``, at the last of them --
one merge of the parameters' ``Sparse`` adjoint, not one a parameter.

Tests: tests/test_simplify_rewrites.py, ``test_gather_merges_entry_adjoints_only_when_on``;
tests/test_passes.py, ``test_simplify_gathers_a_dicts_entry_adjoints_into_one_merge``.
"""

from __future__ import annotations

from .. import astlib as A
from .. import scoping as S
from ._common import functions, statement_lists


class Gather:
    """Merging entry adjoints (a mixin of ``Simplify``: its state is the driver's)."""

    def gather_all(self, root) -> bool:
        """Merge the runs in every statement list of ``root``; say whether any was merged."""
        getitem = {
            n
            for n, o in self.unit.injected.items()
            if o is self.unit.ctx.runtime("getitem_adjoint")
        }
        if not getitem:
            return False
        local = {f.name for f in functions(root) if f is not root}
        merged = False
        for f in functions(root):
            for block in statement_lists(f):
                merged |= self._gather(block, getitem, local)
        return merged

    def _gather(self, block, getitem: set, local: set) -> bool:
        """Merge runs of ``p_bar = p_bar + getitem_adjoint(v, p, key)`` (or ``acc(p_bar, ...)``,
        or a first ``p_bar = getitem_adjoint(...)``) with constant keys, each key once, into
        one, placed at the last: between them nothing may mention ``p_bar`` or ``p``, assign a
        ``v`` already gathered, or name a local function or call one it is given (a call of one
        may add to ``p_bar``). Say whether any was merged."""
        run: list = []  # (index, form, bar, container, key, value)
        out = {}  # index of a run's last statement -> its merged statement
        drop = set()

        def close():
            if len(run) > 1:
                form, bar, x = run[0][1:4]
                entries = A.Dict(
                    keys=[A.const(r[4]) for r in run], values=[A.name(r[5]) for r in run]
                )
                items = A.call(self.items_name(), [A.name(x), entries])
                if form == "first":
                    value = items
                elif form == "acc":
                    value = A.call(self.acc, [A.name(bar), items])
                else:
                    value = A.binop(A.name(bar), A.Add(), items)
                last = run[-1][0]
                out[last] = A.copy_location(A.assign(bar, value), block[last])
                drop.update(r[0] for r in run)
            run.clear()

        for i, st in enumerate(block):
            m = _entry_merge(st, getitem, self.acc)  # (form, bar, container, key, value)
            if m is not None:
                joins = (
                    run
                    and m[0] != "first"
                    and m[1:3] == run[0][2:4]
                    and m[3] not in {r[4] for r in run}  # a key twice: the next run's
                )
                if not joins:
                    close()
                run.append((i, *m))
                continue
            if run:
                names = S.names(st)
                assigned = (
                    {n.id for n in A.walk(st.targets[0]) if isinstance(n, A.Name)}
                    if isinstance(st, A.Assign)
                    else names
                )
                if (
                    isinstance(st, (A.If, A.FunctionDef, A.Return))
                    or run[0][2] in names
                    or run[0][3] in names
                    or names & local
                    or assigned & {r[5] for r in run}
                    or self._calls_unknown(st)
                ):
                    close()
        close()
        if out:
            block[:] = [
                out[i] if i in out else st
                for i, st in enumerate(block)
                if i not in drop or i in out
            ]
        return bool(out)

    def _calls_unknown(self, st) -> bool:
        """Does ``st`` call a function by a name that is not one the emitted code imports (a
        continuation passed in, ``k``: it may add to an adjoint this function borrows)?"""
        return any(
            isinstance(n, A.Call)
            and isinstance(n.func, A.Name)
            and n.func.id not in self.unit.injected
            for n in A.walk(st)
        )

    def items_name(self) -> str:
        return self.unit.inject(self.unit.ctx.runtime("items_adjoint"), "items_adjoint")


def _entry_merge(st, getitem: set, acc: str):
    """``(form, bar, container, key, value)`` of ``bar = bar + getitem_adjoint(value, container,
    key)`` (form "add"), ``bar = acc(bar, ...)`` ("acc") or ``bar = getitem_adjoint(...)``
    ("first"), with names for ``value`` and ``container`` and a constant ``key``; else None."""
    if not (isinstance(st, A.Assign) and isinstance(st.targets[0], A.Name)):
        return None
    bar, v = st.targets[0].id, st.value
    if isinstance(v, A.BinOp) and isinstance(v.op, A.Add) and A.is_name(v.left, bar):
        form, call = "add", v.right
    elif (
        isinstance(v, A.Call)
        and A.is_name(v.func, acc)
        and len(v.args) == 2
        and A.is_name(v.args[0], bar)
    ):
        form, call = "acc", v.args[1]
    else:
        form, call = "first", v
    if not (
        isinstance(call, A.Call)
        and isinstance(call.func, A.Name)
        and call.func.id in getitem
        and len(call.args) == 3
        and not call.keywords
        and isinstance(call.args[0], A.Name)
        and isinstance(call.args[1], A.Name)
        and isinstance(call.args[2], A.Constant)
        and isinstance(call.args[2].value, (str, int))
    ):
        return None
    return form, bar, call.args[1].id, call.args[2].value, call.args[0].id
