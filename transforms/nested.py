"""After Nested, a derivative taken inside the function -- ``cpsad.grad(h)`` of a function ``h``
defined in it -- is code in it: ``h``'s backpropagator, made by reverse mode on ``h`` alone, and a
local function that calls it with the seed and returns what ``cpsad.grad(h)`` returns outside::

    def f(x):                                  def f(x):
        h = lambda y: x * y                        def h(y): return x * y
        return x * cpsad.grad(h)(x)      ->        def h_bp(k, y):          # x: a constant here
                                                       mul_bar = k(x * y)
                                                       return mul_bar * x
                                                   def h_grad(y):
                                                       h_adjoints = h_bp(scalar_seed, y)
                                                       return gradient_of(h_adjoints, y)
                                                   return x * h_grad(x)

The inner derivative treats ``x`` as a constant: that is what the partial derivative means. The
transformation of ``f`` then differentiates all of this like any other code, so it follows how
the inner derivative depends on ``x`` through the closure, with adjoints of its own. The two
derivatives cannot confuse their perturbations (Siskind and Pearlmutter's problem for nested
forward mode) because they are different variables in the program, not tags on values at run
time. ``gradient_of`` (a runtime helper with rules of its own) makes the adjoint what the same
call returns outside: a list for a list, a tuple for a tuple of ``argnums``, zeros where nothing
flowed, a float for a float.

Rewritten, for ``h`` a ``def`` or lambda bound once in the function, of positional parameters
(keyword-only ones pass through):

* ``cpsad.grad(h, argnums)`` and ``cpsad.value_and_grad(h, argnums)``, ``argnums`` a constant
  int or tuple (the latter runs ``h`` once more for its value);
* ``cpsad.jvp(h, (p, ...), (t, ...))`` with displays of primals and tangents: ``h``'s tangent
  function (forward mode on ``h`` alone), ``None`` tangents leaving a parameter out;
* ``cpsad.vjp(h, a, ...)``: ``(h(a, ...), pullback)``, the pullback a local function running
  ``h``'s backpropagator with a continuation that returns the cotangent.

Anything else is left to the runtime dispatch (``dispatch.call_bp``), which differentiates these
derivatives of a function that closes over nothing differentiated (one defined at module level),
and refuses one of a function that does (a clear error, never a derivative with the closure's
dependence left out).
"""

from __future__ import annotations

from . import anno
from . import astlib as A
from .resolve import local_defs
from .scoping import own_scope
from .unit import Callee, Unit


class Nested:
    name = "nested"
    invariant = "a derivative of a function defined inside is its backpropagator, defined here"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.done: list[str] = []
        self.function(unit.tree, [])
        unit.notes[self.name] = [", ".join(self.done) or "no derivative taken inside"]

    def function(self, fdef, outer: list) -> None:
        scope = own_scope(fdef)  # (its local names and defs from one scan, for speed)
        scopes = outer + [(scope[0].local, local_defs(fdef, scope))]
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
            for call in [n for n in A.walk_nodes(s) if n.__class__ is A.Call]:
                made = self.derivative(call, scopes, fdef)
                if made is not None:
                    defs, node = made
                    new += defs
                    A.replace(s, call, node)
            stmts[i:i] = new
            i += len(new) + 1

    # ------------------------------------------------------------------ one derivative

    def derivative(self, call, scopes, fdef):
        """``(definitions, node)`` replacing a derivative of a local function -- the call
        ``cpsad.grad(h, ...)``, ``cpsad.value_and_grad(h, ...)``, ``cpsad.jvp(h, primals,
        tangents)`` or ``cpsad.vjp(h, *args)`` -- or None to leave it (to the runtime dispatch)."""
        unit = self.unit
        path = A.dotted(call.func)
        if path is None or any(path.split(".")[0] in names for names, _ in scopes):
            return None
        found, obj = unit.lookup(path.split(".")[0])
        for part in path.split(".")[1:]:
            obj = getattr(obj, part, None) if found else None
        op = getattr(obj, "__cpsad_operator__", None) if found else None
        if op not in ("grad", "value_and_grad", "jvp", "vjp") or not call.args:
            return None
        h = self.local_function(call.args[0], scopes)
        if h is None or h.args.vararg or h.args.kwarg:
            return None
        if op == "jvp":
            made = self.tangent(call, h)
        elif op == "vjp":
            made = self.pullback(call, h)
        else:
            made = self.gradient(call, h, op)
        if made is None:
            return None
        defs, node = made
        for d in defs:
            for n in A.walk(d):
                A.copy_location(n, call)
        A.copy_location(node, call)
        self.done.append(f"cpsad.{op}({h.name}) -> {defs[-1].name}")
        return defs, node

    def gradient(self, call, h, op):
        """``cpsad.grad(h, argnums)`` -> ``h_grad``, a local function of ``h``'s parameters that
        returns what cpsad.grad(h) does (``value_and_grad``: ``h``'s value too)."""
        unit = self.unit
        argnums = _argnums(call)
        if argnums is None:
            return None
        params = _params(h)
        nums, single = argnums
        if any(not -len(params) <= i < len(params) for i in nums):
            return None
        wrt = [params[i] for i in nums]  # in argnums' order, as the gradients come back
        active = tuple(p for p in params if p in wrt)  # in the parameters' order, each once
        bp = self.derived(h, active, "reverse")
        name = unit.namer.fresh(f"{h.name}_{op}")
        unit.namer.meaning[name] = f"cpsad.{op} of {unit.namer.shown(h.name)}"
        adjoints = unit.namer.fresh(f"{h.name}_adjoints")
        seed = A.name(unit.inject(unit.ctx.runtime("scalar_seed"), "scalar_seed"))
        body = [A.assign(adjoints, _forward_call(bp.name, h, [seed]))]
        gradient = self.finished(adjoints, active, wrt, single)
        if op == "value_and_grad":  # h run again for its value: a derivative is its own program
            body.append(A.return_(A.tuple_([_forward_call(h.name, h), gradient])))
        else:
            body.append(A.return_(gradient))
        wrapper = A.function(name, A.deepcopy(h.args), body)
        return [bp, wrapper], A.name(name)

    def tangent(self, call, h):
        """``cpsad.jvp(h, (p, ...), (t, ...))`` -> ``h_jvp_value(t, ..., p, ...)``: ``h``'s
        tangent function (forward mode on ``h`` alone), and a local function that returns
        ``(value, tangent)`` as cpsad.jvp does."""
        unit = self.unit
        params = _params(h)
        if len(call.args) != 3 or not all(isinstance(e, (A.Tuple, A.List)) for e in call.args[1:]):
            return None
        primals, tangents = call.args[1].elts, call.args[2].elts
        if len(primals) != len(tangents) or len(primals) > len(params):
            return None  # the runtime's jvp says what is wrong
        given = [not (isinstance(t, A.Constant) and t.value is None) for t in tangents]
        active = tuple(p for p, g in zip(params, given) if g)
        if not active:
            return None
        jvp = self.derived(h, active, "forward")
        name = unit.namer.fresh(f"{h.name}_jvp_value")
        dots = [unit.namer.fresh(f"{p}_dot") for p in active]
        value, tangent = unit.namer.fresh(f"{h.name}_value"), unit.namer.fresh(f"{h.name}_dot")
        finish = A.name(unit.inject(unit.ctx.runtime("gradient_of"), "gradient_of"))
        pair = A.tuple_([A.store(value), A.store(tangent)], "store")
        body = [
            A.assign(pair, _forward_call(jvp.name, h, [A.name(d) for d in dots])),
            A.return_(A.tuple_([A.name(value), A.call(finish, [A.name(tangent), A.name(value)])])),
        ]
        args = A.deepcopy(h.args)
        args.posonlyargs, args.args = [], [*A.params(dots).args, *args.posonlyargs, *args.args]
        wrapper = A.function(name, args, body)
        given_tangents = [A.deepcopy(t) for t, g in zip(tangents, given) if g]
        node = A.call(name, [*given_tangents, *[A.deepcopy(p) for p in primals]])
        node.keywords = [A.deepcopy(k) for k in call.keywords]
        return [jvp, wrapper], node

    def pullback(self, call, h):
        """``cpsad.vjp(h, a, ...)`` -> ``h_vjp(a, ...)``: ``(h(a, ...), h_pullback)``, the
        pullback a local function that runs ``h``'s backpropagator with a continuation that
        returns the cotangent."""
        unit = self.unit
        params = _params(h)[: len(call.args) - 1]  # those given by position get gradients
        if len(call.args) - 1 > len(_params(h)) or not params:
            return None
        bp = self.derived(h, tuple(params), "reverse")
        name, pullback, seed = (unit.namer.fresh(f"{h.name}_{s}") for s in ("vjp", "pb", "seed"))
        ct, result, adjoints = (unit.namer.fresh(s) for s in ("cotangent", "result", "adjoints"))
        as_adjoint = A.name(unit.inject(unit.ctx.runtime("as_adjoint"), "as_adjoint"))
        seed_def = A.function(
            seed, A.params([result]), [A.return_(A.call(as_adjoint, [A.name(ct)]))]
        )
        pullback_def = A.function(
            pullback,
            A.params([ct]),
            [
                seed_def,
                A.assign(adjoints, _forward_call(bp.name, h, [A.name(seed)])),
                A.return_(self.finished(adjoints, tuple(params), params, single=False)),
            ],
        )
        body = [pullback_def, A.return_(A.tuple_([_forward_call(h.name, h), A.name(pullback)]))]
        wrapper = A.function(name, A.deepcopy(h.args), body)
        node = A.call(name, [A.deepcopy(a) for a in call.args[1:]])
        node.keywords = [A.deepcopy(k) for k in call.keywords]
        return [bp, wrapper], node

    def finished(self, adjoints: str, active, wrt, single: bool):
        """What cpsad.grad returns from the adjoints of ``active`` a backpropagator returned
        (one value, or a tuple in ``active``'s order): ``gradient_of`` them, in ``wrt``'s."""
        unit = self.unit
        finish = A.name(unit.inject(unit.ctx.runtime("gradient_of"), "gradient_of"))
        if single:
            return A.call(finish, [A.name(adjoints), A.name(wrt[0])])
        raw = [
            (
                A.name(adjoints)
                if len(active) == 1
                else A.Subscript(
                    value=A.name(adjoints), slice=A.const(active.index(p)), ctx=A.Load()
                )
            )
            for p in wrt
        ]
        return A.call(finish, [A.tuple_(raw), A.tuple_([A.name(p) for p in wrt])])

    def local_function(self, node, scopes):
        """The ``def`` a name refers to, if it is a function defined in an enclosing function."""
        if not isinstance(node, A.Name):
            return None
        for names, defs in reversed(scopes):
            if node.id in names:
                return defs.get(node.id)
        return None

    def derived(self, h, active, mode):
        """Reverse mode (its backpropagator) or forward mode (its tangent function) on ``h``
        alone: its free names stay free (constants to it)."""
        unit = self.unit
        sub = Unit(unit.fn, active, unit.ctx, mode=mode)
        sub.source = unit.source
        sub.injected = dict(unit.injected)  # h may hold code made here (a derivative inside it)
        sub.nested = True  # h_bp is part of the function being transformed: transformed again
        sub.tree = A.deepcopy(h)
        _strip(sub.tree)
        sub.namer.reserve(*A.names_in(unit.tree), *unit.namer.taken)
        namer = unit.namer.jvp if mode == "forward" else unit.namer.backpropagator
        sub.bp_name = namer(h.name)
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
            of = unit.ctx.runtime("backpropagator_of")
            obj = of(callee.fn, callee.active, callee.kinds, mode)
            new = unit.inject(obj, name)
            if new != name:
                renames[name] = new
        for n in A.walk(tree):
            if isinstance(n, A.Name) and n.id in renames:
                n.id = renames[n.id]
        _strip(tree)
        unit.namer.reserve(*A.names_in(tree))
        return tree


def _params(h) -> list[str]:
    """The positional parameters of a local function."""
    return [p.id for p in h.args.posonlyargs + h.args.args]


def _forward_call(fname: str, h, first=()):
    """``fname(*first, p, ..., k=k, ...)``: a call passing ``h``'s own parameters on."""
    keywords = {k.id: A.name(k.id) for k in h.args.kwonlyargs}
    return A.call(fname, [*first, *[A.name(p) for p in _params(h)]], keywords)


def _argnums(call):
    """``(positions, single)``: the constant ``argnums`` of ``cpsad.grad(h, argnums)`` (default
    0) and whether it is one int (one gradient) rather than a tuple of them; None if not constant.
    """
    value = call.args[1] if len(call.args) > 1 else None
    for k in call.keywords:
        if k.arg == "argnums":
            value = k.value
        else:
            return None
    if value is None:
        return (0,), True
    if isinstance(value, A.Constant) and type(value.value) is int:
        return (value.value,), True
    if (
        isinstance(value, A.Tuple)
        and value.elts
        and all(isinstance(e, A.Constant) and type(e.value) is int for e in value.elts)
    ):
        return tuple(e.value for e in value.elts), False
    return None


def _strip(tree) -> None:
    """Drop the sub-transformation's annotations: the enclosing function's passes make their own."""
    for n in A.walk(tree):
        if hasattr(n, anno._ATTR):
            delattr(n, anno._ATTR)
