"""After Recursion (staged code), the backpropagator calls itself with the seed 1.0 and scales the
adjoints it gets back: no call of itself is given a continuation.

The emitted backpropagator calls itself as it calls any function, handing on the rest of its own
work as the continuation: ``x_bar = power_bp(after_L5, x, n - 1)``. Flatten inlines a
continuation where it is called; one passed to a recursive call is called inside another run of
the function, so it cannot be inlined, and Numba compiles no closure. But a backpropagator is
linear in the seed its continuation gives the result: where the result is a number, the adjoints
it returns for the seed ``ct`` are ``ct`` times those for the seed 1.0. So the recursive call runs
with the seed 1.0, then the continuation on its value, whose adjoint scales what came back::

    x_bar = power_bp(after_L5, x, n - 1)   ->   power_value, power_adjoints = power_bp(1.0, x, n - 1)
                                                recursion_result(power_value)
                                                power_bar = after_L5(power_value)
                                                x_bar = scaled(power_adjoints, power_bar)

``after_L5`` is then called once, where it stands, and Flatten inlines it. The forward work runs
in the order it did, and so does the continuation's; the call's own backward work runs before
the continuation's rather than after, and each adjoint is ``ct * (a * b)`` where the Python
backpropagator computes ``(ct * a) * b``: the same numbers, to rounding. A result that is not a
number -- an array, whose adjoint the seed 1.0 does not stand for -- makes Numba's
``recursion_result`` raise ``Refused``, and the Python backpropagator runs.

Only a call of the backpropagator itself -- the function with the same parameters differentiated
(``unit.is_itself``; made for other argument kinds, it is called all the same, and Flatten has the
code check the kinds it was made for where it runs) -- standing as a statement of its own (``t =
f_bp(k, ...)``, ``f_bp(k, ...)``, ``return f_bp(k, ...)``; ``t`` a name or a tuple of them: the
adjoints unpacked), its continuation a name and its arguments by position. Any other call of itself
keeps its continuation, and Flatten says why Numba cannot compile it. A call of the function this
code is copied into, made by a function of its own that Callees copied (``is_odd`` calling
``is_even`` back), is a call of itself by then: mutual recursion too. A callee Callees could not
copy in because it calls itself (a copy could not) is compiled on its own (the context's
``compiled_apart``: its staged code, made by this same pipeline) and called the same way,
``h_value, h_adjoints = h_jit(1.0, ...)``; the header names its file, so the caller's text changes
where its code does.

This is the paper's recursion (a recursive function's backpropagator takes the continuation like
any call) undone where a compiler without closures needs it, for the one case where linearity makes
the continuation's seed a number known afterwards.

Invariant: no call of the backpropagator itself that stands as a statement passes it a
continuation.
"""

from __future__ import annotations

from . import astlib as A
from .joins import statement_lists
from .naming import own_name
from .unit import Unit, is_itself


class Recursion:
    name = "recursion"
    invariant = "staged: a call of itself runs with the seed 1.0, its adjoints scaled afterwards"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        if unit.mode != "reverse" or not unit.bp_name:
            return
        # its own name, and the callees that are itself made for other argument kinds
        self.names = {unit.bp_name} | {
            name
            for name, c in unit.callees.items()
            if is_itself(c, unit.fn, unit.active, unit.mode)
        }
        self.apart = {}  # a callee's name -> the name of its code compiled apart, its positionals
        for name, c in sorted(unit.callees.items()):
            if name not in self.names and name in unit.not_copied:
                self._compile_apart(name, c)
        done = 0
        for d in A.function_defs(unit.tree):
            for block in statement_lists(d):
                at = 0
                while at < len(block):
                    new = self._rewritten(block[at])
                    if new is None:
                        at += 1
                        continue
                    block[at : at + 1] = [A.copy_location(s, block[at]) for s in new]
                    at += len(new)
                    done += 1
        for name in (self.names | set(self.apart)) - {unit.bp_name}:
            if not any(A.is_name(n, name) for n in A.walk(unit.tree)):
                del unit.callees[name]  # (now a call of itself, or of its code compiled apart)
                unit.not_copied.pop(name, None)
        for apart, _ in self.apart.values():
            if not any(A.is_name(n, apart) for n in A.walk(unit.tree)):
                del unit.injected[apart]  # (no call of it stands as a statement of its own)
                del unit.apart[apart]
        if done:
            unit.notes[self.name] = [f"{done} call(s) of itself run with the seed 1.0"]

    def _rewritten(self, stmt) -> list | None:
        """The statements that replace ``stmt``, a call of the backpropagator itself, or None."""
        unit = self.unit
        if isinstance(stmt, A.Assign):
            if len(stmt.targets) != 1:
                return None
        elif not isinstance(stmt, (A.Expr, A.Return)):
            return None
        call = stmt.value
        if not (
            isinstance(call, A.Call)
            and isinstance(call.func, A.Name)
            and (call.func.id in self.names or call.func.id in self.apart)
            and call.args
            and isinstance(call.args[0], A.Name)
            and not call.keywords
            and not any(isinstance(a, A.Starred) for a in call.args)
        ):
            return None
        callee = unit.callees.get(call.func.id)
        if call.func.id in self.names:
            stem, target = unit.fn.__name__, unit.bp_name
        else:
            target, positional = self.apart[call.func.id]
            if len(call.args) - 1 != positional:  # (defaults left out: its caller binds them)
                return None
            stem = own_name(callee.fn)
        value = unit.namer.fresh(f"{stem}_value")
        adjoints = unit.namer.fresh(f"{stem}_adjoints")
        bar = unit.namer.fresh(f"{stem}_bar")
        check = unit.inject(unit.ctx.runtime("recursion_result"), "recursion_result")
        scaled = unit.inject(unit.ctx.runtime("scaled"), "scaled")
        k, *args = call.args
        out = [
            A.assign(
                A.tuple_([A.store(value), A.store(adjoints)], "store"),
                A.call(A.name(target), [A.const(1.0), *args]),
            ),
            A.expr_stmt(A.call(A.name(check), [A.name(value)])),
        ]
        after = A.call(A.name(k.id), [A.name(value)])
        if isinstance(stmt, A.Expr):
            return [*out, A.expr_stmt(after)]
        result = A.call(A.name(scaled), [A.name(adjoints), A.name(bar)])
        out.append(A.assign(A.store(bar), after))
        if isinstance(stmt, A.Return):
            return [*out, A.Return(value=result)]
        return [*out, A.assign(stmt.targets[0], result)]  # (a name, or the adjoints' tuple)

    def _compile_apart(self, name: str, c) -> None:
        """Where Callees could not copy the callee ``name`` in (it calls itself), its staged code
        compiled on its own -- called as the function itself is, with the seed 1.0."""
        unit = self.unit
        code = getattr(c.fn, "__code__", None)
        if code is None or code.co_kwonlyargcount or code.co_flags & 0x0C:  # (*args, **kw)
            return
        apart = unit.ctx.runtime("compiled_apart")(c.fn, c.active, c.kinds)
        if isinstance(apart, str):
            unit.not_copied[name] += f"; compiled apart, not: {apart}"
            return
        new = unit.inject(apart.dispatcher, f"{own_name(c.fn)}_jit")
        unit.apart[new] = (apart.path, any(where == "stack" for _, where in apart.params))
        self.apart[name] = (new, code.co_argcount)
