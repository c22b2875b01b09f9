"""Cases for the rules of ``scipy.integrate`` (cpsad/rules/scipy_integrate.py): ``odeint`` and
``solve_ivp`` in each differentiable parameter, against central differences with random
cotangents and directions, end to end in reverse and forward mode, and ``odeint`` against
``autograd.scipy.integrate.odeint`` (tests/oracles.py binds ``integrate`` to it). Importing this
module adds the cases to ``corpus_rules.CASES``; without scipy it adds none. The closed forms,
the losses users write, the refusals and timings are in tests/test_scipy_integrate.py.

The integrations are tight (rtol = atol = 1e-12), so that the solution is a smooth function of
the inputs to well below what the differences resolve: a solver's error moves in steps as its
step sizes change, and the differences' step is 1e-5 here.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import core
from tests.corpus_rules import case

try:
    from scipy import integrate
except ImportError:  # pragma: no cover - scipy is in the test extra
    integrate = None

R = np.random.default_rng(515)  # (its own: the other corpora's cases keep their numbers)
FLOAT64 = "scipy integrates in float64"
NO_SOLVE_IVP = "autograd has no solve_ivp"
TOL = 1e-12
CHECK = dict(
    rtol=1e-6,
    atol=1e-8,
    eps=1e-5,
    float64=FLOAT64,
    inexact_transpose="the forward and backward integrations agree to their tolerance",
)


def lotka_volterra(y, t, a, b):
    """Predators and prey; ``a`` a number, ``b`` an array of three rates."""
    return np.array([a * y[0] - b[0] * y[0] * y[1], -b[1] * y[1] + b[2] * y[0] * y[1]])


def linear(y, t, m):
    return np.dot(m, y)


def lotka_volterra_t_first(t, y, a, b):
    return lotka_volterra(y, t, a, b)


def forced(t, y, w):
    """A damped oscillator driven at the frequency ``w``, time first (solve_ivp's order)."""
    return np.array([y[1], -0.5 * y[1] - y[0] + np.sin(w * t)])


if integrate is not None:
    # The tolerances go to the primitive by position (check_rule's own rtol and atol take the
    # keywords), to the wrappers as `tol`.

    # (one wrapper per dynamics, which it names: autograd's version of the wrapper then calls
    # autograd's version of the dynamics)
    def odeint_lotka_volterra(y0, t, args, tol=None):
        return integrate.odeint(lotka_volterra, y0, t, args, rtol=tol, atol=tol)

    def odeint_linear(y0, t, args, tol=None):
        return integrate.odeint(linear, y0, t, args, rtol=tol, atol=tol)

    def odeint_forced(y0, t, args, tol=None):
        return integrate.odeint(forced, y0, t, args, rtol=tol, atol=tol, tfirst=True)

    def odeint_case(wrapper, func, y0, t, args, tfirst=False, autograd=None):
        # func, y0, t, args, Dfun, col_deriv, full_output, ml, mu, rtol, atol, then tfirst
        tight = (None, 0, 0, None, None, TOL, TOL)
        case(
            wrapper,
            integrate.odeint,
            func,
            y0,
            t,
            args,
            *tight,
            wrt=(1, 2, 3),
            kw=dict(tfirst=tfirst),
            fn_kw=dict(tol=TOL),
            autograd=autograd,
            **CHECK,
        )

    odeint_case(
        odeint_lotka_volterra,
        lotka_volterra,
        np.array([1.0, 0.5]),
        np.linspace(0.0, 1.5, 5),
        (1.1, R.uniform(1.0, 2.0, 3)),
    )
    odeint_case(
        odeint_linear,
        linear,
        R.uniform(-1, 1, 3),
        np.array([0.3, 0.5, 1.0]),
        (R.uniform(-1, 1, (3, 3)),),
    )  # (t0 > 0)
    odeint_case(
        odeint_forced,
        forced,
        np.array([1.0, 0.0]),
        np.linspace(2.0, 0.0, 4),  # backward in time
        (1.3,),
        tfirst=True,
        autograd="autograd's odeint rule calls the function as f(y, t), whatever tfirst",
    )

    def solve_ivp_result(
        fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, rtol, atol
    ):
        """``solve_ivp``'s ``t`` and ``y``, the entries with derivatives (its counts of
        evaluations move in steps with the inputs)."""
        res = integrate.solve_ivp(
            fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, rtol=rtol,
            atol=atol,
        )  # fmt: skip
        return type(res)(t=res.t, y=res.y)

    solve_ivp_result.rule = core.lookup(integrate.solve_ivp)

    def solve_ivp_(t_span, y0, t_eval, args, fun=None, method="RK45", tol=1e-3):
        res = integrate.solve_ivp(
            fun, t_span, y0, method=method, t_eval=t_eval, args=args, rtol=tol, atol=tol
        )
        return res.t, res.y

    for method, t_span, t_eval in [
        ("LSODA", (0.0, 1.5), np.linspace(0.25, 1.25, 4)),
        ("DOP853", np.array([0.0, 1.5]), np.linspace(0.1, 1.4, 5)),
        ("DOP853", (1.5, 0.0), np.linspace(1.25, 0.25, 3)),  # backward in time
    ]:
        # fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, rtol, atol
        case(
            solve_ivp_,
            solve_ivp_result,
            lotka_volterra_t_first,
            t_span,
            np.array([1.0, 0.5]),
            method,
            t_eval,
            False,
            None,
            False,
            (1.1, R.uniform(1.0, 2.0, 3)),
            TOL,
            TOL,
            wrt=(1, 2, 4, 8),
            fn_kw=dict(fun=lotka_volterra_t_first, method=method, tol=TOL),
            autograd=NO_SOLVE_IVP,
            **CHECK,
        )
