"""After Nested, a derivative taken inside the function -- ``cpsad.grad(h)`` of a function ``h``
defined in it -- is code in it: ``h``'s backpropagator, made by reverse mode on ``h`` alone, and a
local function that calls it with the seed::

    def f(x):                                  def f(x):
        h = lambda y: x * y                        def h(y): return x * y
        return x * cpsad.grad(h)(x)      ->        def h_bp(k, y):          # x: a constant here
                                                       mul_bar = k(x * y)
                                                       return mul_bar * x
                                                   def h_grad(y):
                                                       return h_bp(scalar_seed, y)
                                                   return x * h_grad(x)

The inner derivative treats ``x`` as a constant: that is what the partial derivative means. The
transformation of ``f`` then differentiates all of this like any other code, so it follows how
the inner derivative depends on ``x`` through the closure, with adjoints of its own. The two
derivatives cannot confuse their perturbations (Siskind and Pearlmutter's problem for nested
forward mode) because they are different variables in the program, not tags on values at run
time.

Only ``cpsad.grad(h)`` / ``cpsad.grad(h, argnums)`` with ``h`` a function defined in the
function, of positional parameters, is rewritten. A function defined at module level closes over
nothing differentiated, and a derivative of it is differentiated at run time (see the runtime
dispatch).
"""

from __future__ import annotations

from transforms import anno
from transforms import astlib as A
from transforms.resolve import local_defs
from transforms.scoping import local_names
from transforms.unit import Callee, Unit


class Nested:
    name = "nested"
    invariant = "a derivative of a function defined inside is its backpropagator, defined here"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.done: list[str] = []
        self.function(unit.tree, [])
        unit.notes[self.name] = [", ".join(self.done) or "no derivative taken inside"]

    def function(self, fdef, outer: list) -> None:
        scopes = outer + [(local_names(fdef), local_defs(fdef))]
        self.block(fdef.body, scopes, fdef)

    def block(self, stmts, scopes, fdef) -> None:
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, A.FunctionDef):
                self.function(s, scopes)
                i += 1
                continue
            if isinstance(s, A.If):
                self.block(s.body, scopes, fdef)
                self.block(s.orelse, scopes, fdef)
            new = []
            for call in [n for n in A.walk(s) if isinstance(n, A.Call)]:
                made = self.derivative(call, scopes, fdef)
                if made is not None:
                    defs, name = made
                    new += defs
                    A.replace(s, call, A.copy_location(A.name(name), call))
            stmts[i:i] = new
            i += len(new) + 1

    # ------------------------------------------------------------------ one derivative

    def derivative(self, call, scopes, fdef):
        """``(definitions, name)`` replacing ``cpsad.grad(h, ...)``, or None to leave it."""
        unit = self.unit
        path = A.dotted(call.func)
        if path is None or any(path.split(".")[0] in names for names, _ in scopes):
            return None
        found, obj = unit.lookup(path.split(".")[0])
        for part in path.split(".")[1:]:
            obj = getattr(obj, part, None) if found else None
        if not found or getattr(obj, "__cpsad_operator__", None) != "grad" or not call.args:
            return None
        h = self.local_function(call.args[0], scopes)
        argnums = _argnums(call)
        if h is None or argnums is None:
            return None
        a = h.args
        params = [p.id for p in a.posonlyargs + a.args]
        if a.vararg or a.kwarg or a.kwonlyargs or any(i >= len(params) for i in argnums):
            return None
        if list(argnums) != sorted(set(argnums)):
            return None  # the gradients would come back in another order
        active = tuple(params[i] for i in argnums)
        bp = self.backpropagator(h, active)
        grad_name = unit.namer.fresh(f"{h.name}_grad")
        seed = unit.inject(unit.ctx.runtime("scalar_seed"), "scalar_seed")
        body = [A.return_(A.call(bp.name, [A.name(seed), *[A.name(p) for p in params]]))]
        wrapper = A.function(grad_name, A.deepcopy(h.args), body)
        for node in (bp, wrapper, *A.walk(wrapper)):
            A.copy_location(node, call)
        self.done.append(f"cpsad.grad({h.name}) -> {grad_name}")
        return [bp, wrapper], grad_name

    def local_function(self, node, scopes):
        """The ``def`` a name refers to, if it is a function defined in an enclosing function."""
        if not isinstance(node, A.Name):
            return None
        for names, defs in reversed(scopes):
            if node.id in names:
                return defs.get(node.id)
        return None

    def backpropagator(self, h, active):
        """Reverse mode on ``h`` alone: its free names stay free (constants to it)."""
        unit = self.unit
        sub = Unit(unit.fn, active, unit.ctx, mode="reverse")
        sub.source = unit.source
        sub.nested = True  # h_bp is part of the function being transformed: transformed again
        sub.tree = A.deepcopy(h)
        _strip(sub.tree)
        sub.namer.reserve(*A.names_in(unit.tree), *unit.namer.taken)
        sub.bp_name = unit.namer.backpropagator(h.name)
        sub.namer.reserve(sub.bp_name)
        unit.derive(sub)
        tree = sub.tree
        renames = {}
        for name, obj in sub.injected.items():
            if isinstance(obj, Callee):
                continue
            new = unit.inject(obj, name)
            if new != name:
                renames[name] = new
        for name, callee in sub.callees.items():  # a function of yours h calls: its bp, built now
            obj = unit.ctx.runtime("backpropagator_of")(callee.fn, callee.active, callee.kinds)
            new = unit.inject(obj, name)
            if new != name:
                renames[name] = new
        for n in A.walk(tree):
            if isinstance(n, A.Name) and n.id in renames:
                n.id = renames[n.id]
        _strip(tree)
        unit.namer.reserve(*A.names_in(tree))
        return tree


def _argnums(call):
    """The constant ``argnums`` of ``cpsad.grad(h, argnums)`` as a tuple (default 0), or None."""
    value = call.args[1] if len(call.args) > 1 else None
    for k in call.keywords:
        if k.arg == "argnums":
            value = k.value
        else:
            return None
    if value is None:
        return (0,)
    if isinstance(value, A.Constant) and type(value.value) is int:
        return (value.value,)
    if isinstance(value, A.Tuple) and all(
        isinstance(e, A.Constant) and type(e.value) is int for e in value.elts
    ):
        return tuple(e.value for e in value.elts)
    return None


def _strip(tree) -> None:
    """Drop the sub-transformation's annotations: the enclosing function's passes make their own."""
    for n in A.walk(tree):
        if hasattr(n, anno._ATTR):
            delattr(n, anno._ATTR)
