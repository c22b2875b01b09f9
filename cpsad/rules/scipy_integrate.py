"""Rules of ``scipy.integrate``: ``odeint`` and ``solve_ivp`` (the solution at ``t_eval``, its
``.y`` and ``.t``), differentiated by the adjoint method, as autograd's ``odeint`` is.

Optional, as scipy_special.py is: registered when scipy is importable.

The solution ``y(t)`` of ``dy/dt = f(y, t, *args)`` from ``y(t0) = y0`` is read at times ``t_0,
..., t_n`` (increasing or decreasing), each reading ``y_i`` getting an adjoint ``g_i``.

* Reverse mode. Backward from ``t_n``, the adjoint ``a`` solves ``da/dt = -(df/dy)^T a`` and jumps
  by ``g_i`` at each ``t_i``; ``y0``'s adjoint is ``a(t0)``, and ``args``' the integral of
  ``(df/dargs)^T a`` from ``t0`` to ``t_n``. One augmented system -- the state ``y`` (integrated
  backward again, from each ``y_i``), ``a`` and the arguments' adjoint -- is integrated from each
  ``t_i`` to ``t_{i-1}`` by the forward call's solver and tolerances: one backward integration
  per gradient, whatever the number of parameters. A time's adjoint is ``g_i . f(y_i, t_i)``; the
  initial time's ``-a(t0) . f(y0, t0)`` (for ``odeint``, whose ``t[0]`` is the initial time and a
  reading of ``y0`` too, ``a`` just after ``t0``: ``y(t[0])`` is ``y0`` whatever ``t[0]``).
* Forward mode. The sensitivity ``s = (dy/dx) v`` along a direction ``v`` solves ``ds/dt =
  (df/dy) s + (df/dargs) v_args`` from ``s(t0) = v_y0`` (``-f(y0, t0) v_t0`` for the initial
  time), integrated alongside ``y``: one integration per differentiated parameter.

``f``'s derivatives are cpsad's own: the dynamics is called through the runtime dispatch, as a
call through a function value in emitted code is -- ``call_bp`` (one forward and backward pass of
its backpropagator gives ``f`` and ``c^T df/d(y, args)``) and ``call_jvp`` (its tangent function)
-- so it may be any function cpsad differentiates: a module-level function, a
``functools.partial``, a function defined inside the differentiated one and passed through
``cpsad.stop_gradient``.

Refused, never a silent number:

* a differentiable function value (a lambda or ``def`` inside the differentiated function, a
  method of a differentiated object): a ``TransformError`` at the call (``func`` has no
  derivative). Values the dynamics depends on go through ``args``. A function defined inside and
  passed through ``cpsad.stop_gradient`` works, unless it closes over differentiated values -- its
  backpropagator would add to their adjoints at every evaluation of the backward integration,
  where the derivative is an integral: a ``TypeError`` names them;
* ``odeint``'s ``full_output=True``; ``solve_ivp`` without ``t_eval`` (its times are the steps
  the solver chose, which move with its inputs), of complex values, and the adjoint of an entry of
  its result other than ``t`` and ``y``: a ``TypeError`` when the derivative is taken;
* a backward (or sensitivity) integration that fails: a ``RuntimeError`` with scipy's message;
* second derivatives: the rules below are called by name and have no rules of their own (a
  ``TransformError`` at the user's line).

``Dfun``, ``jac``, ``jac_sparsity``, ``lband``, ``uband``, ``ml``, ``mu`` (the Jacobian of the
user's system) and ``h0``, ``first_step`` serve the forward integration only; ``rtol``, ``atol``
(one per equation: its smallest for the added equations), ``max_step``, ``min_step`` and
odeint's step limits serve the others as well.
"""

from __future__ import annotations

import dis
import functools
import threading
import types

import numpy as np

import cpsad
from cpsad.pytree import densify, leaves
from cpsad.rules.core import DISCRETE, defjvp, defnoderivative, defvjp
from cpsad.runtime import Closure, Sparse, tangent_zeros

try:  # scipy is optional: without it there is nothing to register
    from scipy import integrate
except Exception:  # pragma: no cover - scipy is installed with the test extra
    integrate = None

ODEINT = "scipy.integrate.odeint"
SOLVE_IVP = "scipy.integrate.solve_ivp"
RULES: tuple = ()  # the rule functions (below, with scipy)

# --------------------------------------------------------------------------- the dynamics


def inexact(x) -> bool:
    """A leaf with a derivative: a float, or an array or numpy scalar of floats."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind == "f"
    return isinstance(x, float)


def flat(value) -> np.ndarray:
    """What the dynamics returned -- an array, a number, a list of numbers or arrays -- as one
    flat vector of floats."""
    if isinstance(value, (list, tuple)):
        parts = [np.ravel(np.asarray(v, dtype=float)) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def flat_tangent(tangent, value) -> np.ndarray:
    """``flat`` of a tangent of ``value``: zeros where an entry has none."""
    if isinstance(value, (list, tuple)):
        parts = [
            np.zeros(np.size(v)) if t is None else np.ravel(np.asarray(t, dtype=float))
            for t, v in zip(tangent, value)
        ]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.zeros(np.size(value)) if tangent is None else flat(tangent)


def shaped(v, x):
    """The flat vector ``v`` as an adjoint or tangent of ``x``: its shape, a float for a number,
    a ``Sparse`` of numbers for a list or tuple."""
    if isinstance(x, (list, tuple)):
        return Sparse({i: float(e) for i, e in enumerate(v)})
    if isinstance(x, float):
        return float(v[0])
    if isinstance(x, np.generic):
        return x.dtype.type(v[0]) if x.dtype.kind == "f" else float(v[0])
    return np.reshape(v, np.shape(x))


def cotangent(value, c):
    """The flat cotangent ``c`` in the structure of what the dynamics returned."""
    if isinstance(value, (list, tuple)):
        out, i = Sparse(), 0
        for j, v in enumerate(value):
            n = np.size(v)
            out[j] = shaped(c[i : i + n], v)
            i += n
        return out
    return shaped(c, value)


def closed_over(func) -> list[str]:
    """The variables of enclosing scopes to which the backpropagator of ``func`` -- a function
    defined inside the differentiated one, a ``Closure`` -- adds (``nonlocal``): the adjoints of
    the differentiated values it closes over. Read from its code, and its inner functions'."""
    while isinstance(func, functools.partial):
        func = func.func
    if not isinstance(func, Closure) or func.bp is None:
        return []
    code = func.bp.__code__
    return sorted(_stores(code, set(code.co_freevars)))


def _stores(code, outer: set) -> set:
    found = {
        i.argval
        for i in dis.get_instructions(code)
        if i.opname in ("STORE_DEREF", "DELETE_DEREF") and i.argval in outer
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # an inner function: what it closes over of outer
            found |= _stores(const, outer & set(const.co_freevars))
    return found


class Dynamics:
    """``func(y, t, *args)`` (``func(t, y, *args)`` for ``tfirst``) on flat vectors: its value,
    vector-Jacobian and Jacobian-vector products at ``(y, t)``. The arguments' part is the
    vector of the float leaves of ``args`` (``nargs`` of them); other entries (counts, flags,
    objects) are constants."""

    def __init__(self, func, args, tfirst, name):
        self.func, self.tfirst, self.name = func, tfirst, name
        self.args = () if args is None else tuple(args)
        self.parts = [leaves(a) for a in self.args]  # (leaves, rebuild) of each entry
        self.kept = [[inexact(x) for x in ls] for ls, _ in self.parts]
        self.nargs = sum(
            np.size(x) for (ls, _), ks in zip(self.parts, self.kept) for x, k in zip(ls, ks) if k
        )

    def call(self, y, t, *args):
        return self.func(t, y, *args) if self.tfirst else self.func(y, t, *args)

    def positions(self, y, t):
        return (t, y, *self.args) if self.tfirst else (y, t, *self.args)

    def value(self, y, t) -> np.ndarray:
        return flat(self.call(y, t, *self.args))

    def vjp(self, y, t, c):
        """``(f, c^T df/dy, c^T df/dargs)`` at ``(y, t)``: one pass of ``func``'s
        backpropagator."""
        got = []

        def k(result):
            got.append(result)
            return cotangent(result, c)

        adjoints = cpsad.dispatch.call_bp(self.func, k, *self.positions(y, t))
        y_bar = densify(adjoints[1 if self.tfirst else 0], y)
        return flat(got[0]), np.ravel(y_bar), self.args_vector(adjoints[2:])

    def jvp(self, y, t, s, dargs):
        """``(f, (df/dy) s + (df/dargs) dargs)`` at ``(y, t)``; ``dargs`` the tangents of the
        entries of ``args`` (None: none)."""
        dargs = [None] * len(self.args) if dargs is None else dargs
        # (an entry without floats is a constant: no tangent)
        tangents = [d if any(ks) else None for d, ks in zip(dargs, self.kept)]
        head = (None, s) if self.tfirst else (s, None)
        value, tangent = cpsad.dispatch.call_jvp(
            self.func, (*head, *tangents), *self.positions(y, t)
        )
        return flat(value), flat_tangent(tangent, value)

    def args_vector(self, adjoints) -> np.ndarray:
        """The arguments' adjoints (as ``call_bp`` returns them) as one vector."""
        out = []
        for adj, a, ks in zip(adjoints, self.args, self.kept):
            if any(ks):
                for leaf, k in zip(leaves(densify(adj, a))[0], ks):
                    if k:
                        out.append(np.ravel(np.asarray(leaf, dtype=float)))
        return np.concatenate(out) if out else np.zeros(0)

    def args_adjoint(self, v) -> Sparse:
        """The vector ``v`` as the adjoint of ``args``: a ``Sparse`` of its entries that have
        floats, each of the entry's structure (zeros at its constants)."""
        out, i = Sparse(), 0
        for j, ((ls, rebuild), ks) in enumerate(zip(self.parts, self.kept)):
            if not any(ks):
                continue
            vals = []
            for leaf, k in zip(ls, ks):
                n = np.size(leaf) if k else 0
                vals.append(shaped(v[i : i + n], leaf) if k else 0.0)
                i += n
            out[j] = rebuild(vals)
        return out

    def refuse_closures(self) -> None:
        """Refuse a function that adds to the adjoints of what it closes over (see module)."""
        names = closed_over(self.func)
        if names:
            shown = ", ".join(f"`{n.removesuffix('_bar')}`" for n in names)
            raise TypeError(
                f"cpsad: the function passed to {self.name} closes over values being "
                f"differentiated ({shown}); the adjoint method differentiates it in `y` and in "
                "`args` only. Pass those values through args=(...), as parameters of the "
                "function after y and t"
            )


def widened(tol, d, extra):
    """A tolerance of the forward call for the augmented system of ``d + extra`` equations: a
    number stays; one per equation is kept for the state, its smallest for the rest."""
    if tol is None or np.ndim(tol) == 0:
        return tol
    tol = np.ravel(tol)
    return np.concatenate([tol, np.full(extra, np.min(tol))])


class Last:
    """The last result of a computation, per thread, kept by the identity of what it was
    computed from (held, so an id is not reused): a primitive's rules are called one after the
    other with the same adjoint and arguments, one per differentiated parameter, and each reads
    its part of one backward integration."""

    def __init__(self):
        self.local = threading.local()

    def get(self, key: tuple, compute):
        last = getattr(self.local, "last", None)
        if last is not None and len(last[0]) == len(key):
            if all(a is b for a, b in zip(last[0], key)):
                return last[1]
        value = compute()
        self.local.last = (key, value)
        return value


LAST = Last()


def nonzero(v) -> bool:
    """Has the adjoint or tangent ``v`` (a pytree, None for zero) an entry that is not zero?"""
    return any(np.any(np.asarray(x) != 0) for x in leaves(v)[0])


def dense(g, like) -> np.ndarray:
    """An adjoint as a float array of ``like``'s shape (zeros for None)."""
    if g is None:
        return np.zeros(np.shape(like))
    return np.asarray(g, dtype=float).reshape(np.shape(like))


def initial_tangent(t_dot, x) -> np.ndarray:
    """A tangent of ``y0`` as a flat vector (zeros where it has none)."""
    if t_dot is None:
        return np.zeros(np.size(x))
    if isinstance(t_dot, dict):  # a Sparse of a list's entries
        return np.array([float(t_dot.get(i, 0.0)) for i in range(len(x))])
    return np.ravel(np.asarray(t_dot, dtype=float))


def entries(t_dot, n: int) -> list:
    """The tangents of a tuple's ``n`` entries from its tangent (a tuple, or a ``Sparse``)."""
    if t_dot is None:
        return [None] * n
    if isinstance(t_dot, dict):
        return [t_dot.get(i) for i in range(n)]
    return list(t_dot)


# --------------------------------------------------------------------------- odeint


# the options of odeint that serve the added integrations too, as the rules pass them on
ODEINT_SHARED = (
    "rtol",
    "atol",
    "tcrit",
    "hmax",
    "hmin",
    "ixpr",
    "mxstep",
    "mxhnil",
    "mxordn",
    "mxords",
    "printmessg",
)


def odeint_options(shared: tuple, d: int, extra: int) -> dict:
    """odeint's keywords for a system of the ``d`` equations and ``extra`` more."""
    out = dict(zip(ODEINT_SHARED, shared))
    out["rtol"] = widened(out["rtol"], d, extra)
    out["atol"] = widened(out["atol"], d, extra)
    return out


def odeint_checked(fn, z0, times, options: dict, what: str) -> np.ndarray:
    """``scipy.integrate.odeint`` of an added system, or a RuntimeError where it failed."""
    zs, info = integrate.odeint(fn, z0, times, full_output=True, **options)
    if info["message"] != "Integration successful.":
        raise RuntimeError(
            f"cpsad: the {what} for the derivative of {ODEINT} (from t={float(times[0])} to "
            f"{float(times[-1])}) failed: {info['message']} Tighter tolerances (rtol, atol) or a "
            "larger mxstep may help"
        )
    return zs


def refused_full_output(full_output) -> None:
    if full_output:
        raise TypeError(
            f"cpsad differentiates {ODEINT}'s solution, not its information dict: call it "
            "without full_output=True"
        )


def odeint_adjoints(g, ans, func, y0, t, args, full_output, tfirst, *shared):
    """``(y0's, t's, args')`` adjoints from the adjoint ``g`` of ``odeint``'s solution ``ans``:
    one backward integration, which the rules of the three parameters share."""
    key = (g, ans, func, y0, t, args, full_output, tfirst, *shared)
    return LAST.get(
        key, lambda: _odeint_adjoints(g, ans, func, y0, t, args, full_output, tfirst, shared)
    )


def _odeint_adjoints(g, ans, func, y0, t, args, full_output, tfirst, shared):
    refused_full_output(full_output)
    dynamics = Dynamics(func, args, tfirst, ODEINT)
    dynamics.refuse_closures()
    ys = np.asarray(ans, dtype=float)
    n, d = ys.shape
    g = dense(g, ys)
    times = np.asarray(t, dtype=float)
    options = odeint_options(shared, d, d + dynamics.nargs)

    def backward(z, s):
        f, y_bar, args_bar = dynamics.vjp(z[:d].copy(), s, -z[d : 2 * d])
        return np.concatenate([f, y_bar, args_bar])

    a = g[-1].copy()
    args_bar = np.zeros(dynamics.nargs)
    t_bar = np.zeros(n)
    for i in range(n - 1, 0, -1):
        if np.any(g[i]):
            t_bar[i] = g[i] @ dynamics.value(ys[i].copy(), times[i])
        if np.any(a):  # (a zero adjoint stays zero: nothing to integrate)
            z0 = np.concatenate([ys[i], a, args_bar])
            z = odeint_checked(backward, z0, times[[i, i - 1]], options, "backward integration")
            a, args_bar = z[1, d : 2 * d], z[1, 2 * d :]
        if i == 1:  # the initial time, with the adjoint just after it
            t_bar[0] = -a @ dynamics.value(ys[0].copy(), times[0])
        a = a + g[i - 1]
    return shaped(a, y0), shaped(t_bar, t), dynamics.args_adjoint(args_bar)


def odeint_sensitivity(ans, func, t, args, tfirst, shared, s0, dargs) -> np.ndarray:
    """The tangent of ``odeint``'s solution whose sensitivity starts at ``s0``, the arguments'
    tangents ``dargs`` (None: none): ``y`` and ``s`` integrated together."""
    ys = np.asarray(ans, dtype=float)
    d = ys.shape[1]
    if not np.any(s0) and not nonzero(dargs):
        return np.zeros(ys.shape)  # (a zero tangent: nothing to integrate)
    dynamics = Dynamics(func, args, tfirst, ODEINT)

    def forward(z, s):
        f, f_dot = dynamics.jvp(z[:d].copy(), s, z[d:].copy(), dargs)
        return np.concatenate([f, f_dot])

    options = odeint_options(shared, d, d)
    z0 = np.concatenate([ys[0], s0])
    zs = odeint_checked(forward, z0, np.asarray(t, dtype=float), options, "sensitivity integration")
    return zs[:, d:]


def odeint_time_tangent(t_dot, ans, func, t, args, tfirst, shared) -> np.ndarray:
    """The tangent of ``odeint``'s solution from its times' tangent: ``f(y_i, t_i) dt_i`` at
    each, and the initial time's through the sensitivity from ``-f(y0, t0) dt_0``."""
    ys = np.asarray(ans, dtype=float)
    times = np.asarray(t, dtype=float)
    dt = np.ravel(np.asarray(t_dot, dtype=float))
    dynamics = Dynamics(func, args, tfirst, ODEINT)
    out = np.zeros(ys.shape)
    for i in np.flatnonzero(dt):
        out[i] = dynamics.value(ys[i].copy(), times[i]) * dt[i]
    if dt[0] != 0:
        out = out + odeint_sensitivity(ans, func, t, args, tfirst, shared, -out[0], None)
    return out


if integrate is not None:
    # One function per parameter (y0, t, args), each of odeint's signature; the shared
    # computation is done once (odeint_adjoints).

    def odeint_y0(
        g,
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhnil=0,
        mxordn=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        """``a(t0)``, the adjoint integrated back to the initial time."""
        shared = (rtol, atol, tcrit, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords, printmessg)
        adjoints = odeint_adjoints(g, ans, func, y0, t, args, full_output, tfirst, *shared)
        return adjoints[0]

    def odeint_t(
        g,
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhnil=0,
        mxordn=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        """``g_i . f(y_i, t_i)``; the initial time's ``-a(t0+) . f(y0, t0)``."""
        shared = (rtol, atol, tcrit, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords, printmessg)
        adjoints = odeint_adjoints(g, ans, func, y0, t, args, full_output, tfirst, *shared)
        return adjoints[1]

    def odeint_args(
        g,
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhnil=0,
        mxordn=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        """The integral of ``(df/dargs)^T a``: a ``Sparse`` of the entries with floats."""
        shared = (rtol, atol, tcrit, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords, printmessg)
        adjoints = odeint_adjoints(g, ans, func, y0, t, args, full_output, tfirst, *shared)
        return adjoints[2]

    defvjp(integrate.odeint, None, odeint_y0, odeint_t, odeint_args)

    # (the tangent is t_dot: odeint has a parameter t)
    def odeint_y0_jvp(
        t_dot,
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhnil=0,
        mxordn=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        """The sensitivity from ``s(t0) = t_dot``."""
        refused_full_output(full_output)
        shared = (rtol, atol, tcrit, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords, printmessg)
        s0 = initial_tangent(t_dot, y0)
        return odeint_sensitivity(ans, func, t, args, tfirst, shared, s0, None)

    def odeint_t_jvp(
        t_dot,
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhnil=0,
        mxordn=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        """``f(y_i, t_i) dt_i``, and the initial time's through the sensitivity."""
        refused_full_output(full_output)
        shared = (rtol, atol, tcrit, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords, printmessg)
        return odeint_time_tangent(t_dot, ans, func, t, args, tfirst, shared)

    def odeint_args_jvp(
        t_dot,
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhnil=0,
        mxordn=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        """The sensitivity from zero, driven by ``(df/dargs) t_dot``."""
        refused_full_output(full_output)
        shared = (rtol, atol, tcrit, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords, printmessg)
        dargs = entries(t_dot, len(args))
        s0 = np.zeros(np.shape(ans)[1])
        return odeint_sensitivity(ans, func, t, args, tfirst, shared, s0, dargs)

    defjvp(integrate.odeint, None, odeint_y0_jvp, odeint_t_jvp, odeint_args_jvp)


# --------------------------------------------------------------------------- solve_ivp


def ivp_options(method, rtol, atol, max_step, min_step, d: int, extra: int) -> dict:
    """solve_ivp's keywords for a system of the ``d`` equations and ``extra`` more: the method,
    the tolerances, and the step bounds that differ from scipy's defaults."""
    out = dict(method=method, rtol=widened(rtol, d, extra), atol=widened(atol, d, extra))
    if max_step != np.inf:
        out["max_step"] = max_step
    if min_step != 0.0:  # (LSODA's)
        out["min_step"] = min_step
    return out


def ivp_checked(fn, t_span, z0, options: dict, what: str, t_eval=None):
    """``scipy.integrate.solve_ivp`` of an added system, or a RuntimeError where it failed."""
    res = integrate.solve_ivp(fn, t_span, z0, t_eval=t_eval, **options)
    if res.status != 0:
        raise RuntimeError(
            f"cpsad: the {what} for the derivative of {SOLVE_IVP} (from t={float(t_span[0])} to "
            f"{float(t_span[1])}) failed: {res.message} Tighter tolerances (rtol, atol) may help"
        )
    return res


def ivp_refused(ans, y0, t_eval) -> None:
    """What the rules of ``solve_ivp`` refuse of a call (see the module's docstring)."""
    if t_eval is None:
        raise TypeError(
            f"cpsad differentiates {SOLVE_IVP}'s solution at given times: pass t_eval (without "
            "it, the times are the steps the solver chose, which move with its inputs)"
        )
    if np.iscomplexobj(y0) or np.iscomplexobj(ans["y"]):
        raise TypeError(f"cpsad differentiates {SOLVE_IVP} of real values only")


def ivp_result_adjoints(g, ans):
    """The adjoints of the result's ``t`` and ``y`` from its adjoint ``g`` (a ``Sparse`` of the
    entries read, ``res.y`` or ``res["y"]``): a TypeError for another entry that has one."""
    parts = {"t": None, "y": None}
    for key, v in (g or {}).items():
        if key in parts:
            parts[key] = v
        elif nonzero(v):
            raise TypeError(
                f"cpsad differentiates the entries `t` and `y` of {SOLVE_IVP}'s result, not "
                f"`{key}`"
            )
    return dense(parts["t"], ans["t"]), dense(parts["y"], ans["y"])


def span_shaped(t0_bar, t_span):
    """The adjoint or tangent of ``t_span`` whose first entry is ``t0_bar``, the second zero."""
    if isinstance(t_span, (list, tuple)):
        return Sparse({0: float(t0_bar)})
    return np.array([t0_bar, 0.0])


def ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, *shared):
    """``(t_span's, y0's, t_eval's, args')`` adjoints from the adjoint ``g`` of ``solve_ivp``'s
    result ``ans``: one backward integration, which the rules of the parameters share."""
    key = (g, ans, fun, t_span, y0, method, t_eval, args, *shared)
    return LAST.get(
        key, lambda: _ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, *shared)
    )


def _ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, rtol, atol, max_step, min_step):
    ivp_refused(ans, y0, t_eval)
    dynamics = Dynamics(fun, args, True, SOLVE_IVP)
    dynamics.refuse_closures()
    times = np.asarray(ans["t"], dtype=float)
    ys = np.asarray(ans["y"], dtype=float).T
    n, d = len(times), np.size(y0)
    g_t, g_y = ivp_result_adjoints(g, ans)
    g_y = g_y.T
    t0 = float(t_span[0])
    options = ivp_options(method, rtol, atol, max_step, min_step, d, d + dynamics.nargs)

    def backward(s, z):
        f, y_bar, args_bar = dynamics.vjp(z[:d].copy(), s, -z[d : 2 * d])
        return np.concatenate([f, y_bar, args_bar])

    a = np.zeros(d)
    args_bar = np.zeros(dynamics.nargs)
    t_eval_bar = np.zeros(np.size(t_eval))
    for j in range(n - 1, -1, -1):
        a = a + g_y[j]
        if np.any(g_y[j]):
            t_eval_bar[j] = g_y[j] @ dynamics.value(ys[j].copy(), times[j])
        t_eval_bar[j] += g_t[j]  # (res.t is t_eval)
        before = times[j - 1] if j > 0 else t0
        if np.any(a) and before != times[j]:
            z0 = np.concatenate([ys[j], a, args_bar])
            z = ivp_checked(backward, (times[j], before), z0, options, "backward integration").y
            a, args_bar = z[d : 2 * d, -1], z[2 * d :, -1]
    start = np.ravel(np.asarray(y0, dtype=float))
    t0_bar = -a @ dynamics.value(start, t0) if np.any(a) else 0.0
    return (
        span_shaped(t0_bar, t_span),
        shaped(a, y0),
        shaped(t_eval_bar, t_eval),
        dynamics.args_adjoint(args_bar),
    )


def ivp_sensitivity(ans, fun, t_span, y0, method, args, shared, s0, dargs):
    """The tangent of ``solve_ivp``'s result whose sensitivity starts at ``s0``, the arguments'
    tangents ``dargs`` (None: none): ``y`` and ``s`` integrated together, read at ``ans.t``."""
    out = tangent_zeros(ans)
    times = np.asarray(ans["t"], dtype=float)
    d = np.size(y0)
    if not np.any(s0) and not nonzero(dargs):
        return out  # (a zero tangent: nothing to integrate)
    t0 = float(t_span[0])
    dynamics = Dynamics(fun, args, True, SOLVE_IVP)

    def forward(s, z):
        f, f_dot = dynamics.jvp(z[:d].copy(), s, z[d:].copy(), dargs)
        return np.concatenate([f, f_dot])

    options = ivp_options(method, *shared, d, d)
    z0 = np.concatenate([np.ravel(np.asarray(y0, dtype=float)), s0])
    if len(times) and times[-1] != t0:
        span = (t0, times[-1])
        zs = ivp_checked(forward, span, z0, options, "sensitivity integration", t_eval=times).y
        out["y"] = zs[d:]
    else:  # every reading at the initial time
        out["y"] = np.tile(s0[:, None], (1, len(times)))
    return out


if integrate is not None:
    # One function per differentiable parameter (t_span, y0, t_eval, args), each of
    # solve_ivp's signature with its solvers' options by name (scipy takes them by keyword only,
    # as **options: a call passing one by position fails there), and the shared computation
    # done once (ivp_adjoints).

    def solve_ivp_t_span(
        g,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """The initial time's ``-a(t0) . f(y0, t0)``; the final time's zero."""
        shared = (rtol, atol, max_step, min_step)
        adjoints = ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, *shared)
        return adjoints[0]

    def solve_ivp_y0(
        g,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """``a(t0)``, the adjoint integrated back to the initial time."""
        shared = (rtol, atol, max_step, min_step)
        adjoints = ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, *shared)
        return adjoints[1]

    def solve_ivp_t_eval(
        g,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """``g_j . f(y_j, t_j)``, and the adjoint of ``res.t`` (which is ``t_eval``)."""
        shared = (rtol, atol, max_step, min_step)
        adjoints = ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, *shared)
        return adjoints[2]

    def solve_ivp_args(
        g,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """The integral of ``(df/dargs)^T a``: a ``Sparse`` of the entries with floats."""
        shared = (rtol, atol, max_step, min_step)
        adjoints = ivp_adjoints(g, ans, fun, t_span, y0, method, t_eval, args, *shared)
        return adjoints[3]

    defvjp(
        integrate.solve_ivp,
        None,
        solve_ivp_t_span,
        solve_ivp_y0,
        DISCRETE,
        solve_ivp_t_eval,
        args=solve_ivp_args,
    )

    def solve_ivp_t_span_jvp(
        t,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """The sensitivity from ``-f(y0, t0) dt0``."""
        ivp_refused(ans, y0, t_eval)
        dt0 = float(entries(t, 2)[0] or 0.0)
        y = np.ravel(np.asarray(y0, dtype=float))
        s0 = -Dynamics(fun, args, True, SOLVE_IVP).value(y, float(t_span[0])) * dt0
        shared = (rtol, atol, max_step, min_step)
        return ivp_sensitivity(ans, fun, t_span, y0, method, args, shared, s0, None)

    def solve_ivp_y0_jvp(
        t,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """The sensitivity from ``s(t0) = t``."""
        ivp_refused(ans, y0, t_eval)
        shared = (rtol, atol, max_step, min_step)
        s0 = initial_tangent(t, y0)
        return ivp_sensitivity(ans, fun, t_span, y0, method, args, shared, s0, None)

    def solve_ivp_t_eval_jvp(
        t,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """``res.t``'s tangent is ``t``'s; ``res.y``'s column ``j`` is ``f(y_j, t_j) t_j``."""
        ivp_refused(ans, y0, t_eval)
        out = tangent_zeros(ans)
        times = np.asarray(ans["t"], dtype=float)
        dt = np.ravel(np.asarray(t, dtype=float))[: len(times)]
        dynamics = Dynamics(fun, args, True, SOLVE_IVP)
        y_dot = np.zeros(np.shape(ans["y"]))
        for j in np.flatnonzero(dt):
            y_dot[:, j] = dynamics.value(ans["y"][:, j].copy(), times[j]) * dt[j]
        out["t"], out["y"] = dt, y_dot
        return out

    def solve_ivp_args_jvp(
        t,
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=1e-3,
        atol=1e-6,
        first_step=None,
        max_step=np.inf,
        min_step=0.0,
        jac=None,
        jac_sparsity=None,
        lband=None,
        uband=None,
    ):
        """The sensitivity from zero, driven by ``(df/dargs) t``."""
        ivp_refused(ans, y0, t_eval)
        shared = (rtol, atol, max_step, min_step)
        dargs = entries(t, len(args))
        s0 = np.zeros(np.size(y0))
        return ivp_sensitivity(ans, fun, t_span, y0, method, args, shared, s0, dargs)

    defjvp(
        integrate.solve_ivp,
        None,
        solve_ivp_t_span_jvp,
        solve_ivp_y0_jvp,
        DISCRETE,
        solve_ivp_t_eval_jvp,
        args=solve_ivp_args_jvp,
    )

    # The rules are called by name: a second derivative through them is an error (their
    # parameters have no derivative here), not a number.
    RULES = (
        odeint_y0,
        odeint_t,
        odeint_args,
        odeint_y0_jvp,
        odeint_t_jvp,
        odeint_args_jvp,
        solve_ivp_t_span,
        solve_ivp_y0,
        solve_ivp_t_eval,
        solve_ivp_args,
        solve_ivp_t_span_jvp,
        solve_ivp_y0_jvp,
        solve_ivp_t_eval_jvp,
        solve_ivp_args_jvp,
    )
    for _fn in RULES:
        defnoderivative(_fn, _fn)
