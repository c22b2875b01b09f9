"""scipy.integrate's rules (cpsad/rules/scipy_integrate.py): ``odeint`` and ``solve_ivp`` by the
adjoint method, in the losses users write -- against the matrix exponential where the solution
has a closed form, against central differences along random directions, and against autograd's
``odeint`` -- in reverse and forward mode; the forms the dynamics takes; and what is refused. The
rules one parameter at a time are cases of tests/test_rules.py (tests/corpus_scipy_integrate.py).

The integrations are tight (rtol = atol = 1e-11 or 1e-12), so that differences of the solution
resolve its derivative (a solver's error moves in steps as its step sizes change)."""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest

import cpsad
from cpsad.rules import scipy_integrate as rules
from cpsad.testing import check_grads

integrate = pytest.importorskip("scipy.integrate")
linalg = pytest.importorskip("scipy.linalg")

R = np.random.default_rng(23)
TOL = 1e-12
CHECK = dict(eps=1e-5, rtol=1e-6, atol=1e-9)
TIMES = np.linspace(0.0, 2.0, 6)


def direction(x):
    """A random direction of the argument ``x`` (a float for a float)."""
    v = R.standard_normal(np.shape(x))
    return float(v) if isinstance(x, float) else v


def close(a, b, rtol=1e-7, atol=1e-10):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- dynamics


def linear(y, t, m):
    return np.dot(m, y)


def lotka_volterra(y, t, rates):
    """Prey and predators, the four rates in one array."""
    a, b, c, d = rates[0], rates[1], rates[2], rates[3]
    return np.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


def lotka_volterra_split(y, t, a, bcd):
    """The same, the rates a number and an array: ``args=(a, bcd)``."""
    return [a * y[0] - bcd[0] * y[0] * y[1], -bcd[1] * y[1] + bcd[2] * y[0] * y[1]]


def pendulum(t, y, damping, length):
    """A damped pendulum, time first (solve_ivp's order)."""
    return np.array([y[1], -damping * y[1] - 9.81 / length * np.sin(y[0])])


RATES = np.array([1.1, 0.4, 0.8, 0.3])
Y0 = np.array([1.0, 0.5])


# --------------------------------------------------------------------------- closed form


def linear_loss(m, y0, w):
    ys = integrate.odeint(linear, y0, TIMES, args=(m,), rtol=TOL, atol=TOL)
    return np.sum(w * ys)


def exponential_loss(m, y0, w):
    """The same: y(t) = expm(m t) y0, through scipy.linalg.expm's own rule."""
    total = 0.0
    for i in range(len(TIMES)):
        total = total + np.sum(w[i] * (linalg.expm(m * TIMES[i]) @ y0))
    return total


def test_linear_dynamics_against_the_matrix_exponential():
    m = 0.5 * R.standard_normal((3, 3))
    y0 = R.standard_normal(3)
    w = R.standard_normal((len(TIMES), 3))
    assert np.isclose(linear_loss(m, y0, w), exponential_loss(m, y0, w), rtol=1e-9)
    got = cpsad.grad(linear_loss, argnums=(0, 1))(m, y0, w)
    want = cpsad.grad(exponential_loss, argnums=(0, 1))(m, y0, w)
    close(got, want, rtol=1e-8, atol=1e-10)
    check_grads(linear_loss, m, y0, w, argnums=(0, 1), **CHECK)


# --------------------------------------------------------------------------- Lotka-Volterra


def all_times_loss(rates, y0):
    ys = integrate.odeint(lotka_volterra, y0, TIMES, args=(rates,), rtol=TOL, atol=TOL)
    return np.sum(ys**2)


def final_time_loss(rates, y0):
    ys = integrate.odeint(lotka_volterra, y0, TIMES, args=(rates,), rtol=TOL, atol=TOL)
    return np.sum((ys[-1] - np.array([0.5, 1.0])) ** 2)


def split_loss(a, bcd, y0):
    ys = integrate.odeint(lotka_volterra_split, y0, TIMES, args=(a, bcd), rtol=TOL, atol=TOL)
    return np.sum(np.log(ys))


def time_loss(t, rates, y0):
    ys = integrate.odeint(lotka_volterra, y0, t, args=(rates,), rtol=TOL, atol=TOL)
    return np.sum(ys[:, 0] * ys[:, 1])


LOSSES = [
    (all_times_loss, (RATES, Y0), (0, 1)),
    (final_time_loss, (RATES, Y0), (0, 1)),
    (split_loss, (1.1, RATES[1:], Y0), (0, 1, 2)),
    (time_loss, (TIMES + 0.1, RATES, Y0), (0, 1, 2)),
]


@pytest.mark.parametrize("f, args, argnums", LOSSES, ids=[f.__name__ for f, _, _ in LOSSES])
def test_gradients_against_differences(f, args, argnums):
    """y0 and the parameters together (an array, a number and an array), a loss of every time
    point or of the last, and the time points themselves."""
    check_grads(f, *args, argnums=argnums, **CHECK)


def autograd_losses():
    """The losses of LOSSES on autograd's numpy and odeint (its args a tuple of its own)."""
    import autograd.numpy as anp
    from autograd.builtins import tuple as atuple
    from autograd.scipy.integrate import odeint

    def lv(y, t, rates):
        a, b, c, d = rates[0], rates[1], rates[2], rates[3]
        return anp.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])

    def lv_split(y, t, a, bcd):
        return anp.array([a * y[0] - bcd[0] * y[0] * y[1], -bcd[1] * y[1] + bcd[2] * y[0] * y[1]])

    def solve(func, y0, t, args):
        return odeint(func, y0, t, atuple(args), rtol=TOL, atol=TOL)

    return {
        "all_times_loss": lambda r, y0: anp.sum(solve(lv, y0, TIMES, (r,)) ** 2),
        "final_time_loss": lambda r, y0: anp.sum(
            (solve(lv, y0, TIMES, (r,))[-1] - anp.array([0.5, 1.0])) ** 2
        ),
        "split_loss": lambda a, bcd, y0: anp.sum(anp.log(solve(lv_split, y0, TIMES, (a, bcd)))),
        "time_loss": lambda t, r, y0: anp.sum(
            solve(lv, y0, t, (r,))[:, 0] * solve(lv, y0, t, (r,))[:, 1]
        ),
    }


@pytest.mark.parametrize("f, args, argnums", LOSSES, ids=[f.__name__ for f, _, _ in LOSSES])
def test_gradients_against_autograd(f, args, argnums):
    autograd = pytest.importorskip("autograd")
    theirs = autograd.grad(autograd_losses()[f.__name__], argnums)(*args)
    ours = cpsad.grad(f, argnums=argnums)(*args)
    close(tuple(ours), tuple(theirs), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f, args, argnums", LOSSES, ids=[f.__name__ for f, _, _ in LOSSES])
def test_forward_mode_against_differences_and_reverse_mode(f, args, argnums):
    """The sensitivities integrated alongside the solution: cpsad.jvp along random directions of
    each argument, against differences and against the gradient."""
    gradient = cpsad.grad(f, argnums=argnums)(*args)
    for i, g in zip(argnums, gradient):
        v = direction(args[i])
        tangents = [v if j == i else None for j in range(len(args))]
        value, tangent = cpsad.jvp(f, args, tangents)
        plus = [a + 1e-5 * v if j == i else a for j, a in enumerate(args)]
        minus = [a - 1e-5 * v if j == i else a for j, a in enumerate(args)]
        assert np.isclose(tangent, (f(*plus) - f(*minus)) / 2e-5, rtol=1e-6, atol=1e-9)
        assert np.isclose(tangent, np.sum(g * v), rtol=1e-8, atol=1e-10)
        assert value == f(*args)


def test_the_backward_integration_is_shared_by_the_parameters(monkeypatch):
    """One backward integration per gradient (between each pair of time points), whatever the
    number of parameters differentiated: the rules of y0, t and args share it."""
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return integrate.odeint(*args, **kwargs)

    # (the rules' own scipy.integrate: the loss's call is scipy's)
    monkeypatch.setattr(rules, "integrate", types.SimpleNamespace(odeint=counting))
    cpsad.grad(time_loss, argnums=0)(TIMES, RATES, Y0)
    one = len(calls)
    calls.clear()
    cpsad.grad(time_loss, argnums=(0, 1, 2))(TIMES, RATES, Y0)
    assert len(calls) == one == len(TIMES) - 1


# --------------------------------------------------------------------------- solve_ivp

T_EVAL = np.linspace(0.2, 1.8, 5)


def pendulum_loss(y0, damping, length, t_eval):
    res = integrate.solve_ivp(
        pendulum,
        (0.0, 2.0),
        y0,
        method="DOP853",
        t_eval=t_eval,
        args=(damping, length),
        rtol=TOL,
        atol=TOL,
    )
    if not res.success:
        raise RuntimeError(res.message)
    return np.sum(res.y[0] ** 2) + np.sum(np.cos(res["y"][1])) + np.sum(res.t * res.y[1])


def test_solve_ivp_with_t_eval():
    """The result's .y, ["y"] and .t, in y0, the parameters and t_eval; forward mode too."""
    args = (np.array([0.8, 0.0]), 0.3, 1.5, T_EVAL)
    check_grads(pendulum_loss, *args, argnums=(0, 1, 2, 3), **CHECK)
    gradient = cpsad.grad(pendulum_loss, argnums=(0, 1, 2, 3))(*args)
    for i in range(4):
        v = direction(args[i])
        tangents = [v if j == i else None for j in range(4)]
        _, tangent = cpsad.jvp(pendulum_loss, args, tangents)
        assert np.isclose(tangent, np.sum(gradient[i] * v), rtol=1e-7, atol=1e-10)


def span_loss(t_span, y0, damping):
    res = integrate.solve_ivp(
        pendulum,
        t_span,
        y0,
        method="DOP853",
        t_eval=T_EVAL,
        args=(damping, 1.0),
        rtol=TOL,
        atol=TOL,
    )
    return np.sum(res.y**2)


def test_solve_ivp_in_the_initial_time():
    """t_span's first entry moves the start; the last changes nothing at t_eval."""
    t_span = np.array([0.1, 2.0])
    check_grads(span_loss, t_span, np.array([0.8, 0.0]), 0.3, argnums=(0, 1, 2), **CHECK)
    assert cpsad.grad(span_loss)(t_span, np.array([0.8, 0.0]), 0.3)[1] == 0.0


# --------------------------------------------------------------------------- forms of dynamics


def counted(y, t, rates, mode, n):
    """A count and a string among the arguments: constants, not differentiated."""
    out = lotka_volterra(y, t, rates)
    return out * n if mode == "scaled" else out


def counted_loss(rates, y0):
    ys = integrate.odeint(counted, y0, TIMES, args=(rates, "scaled", 2), rtol=TOL, atol=TOL)
    return np.sum(ys**2)


def time_first(t, y, rates):
    return lotka_volterra(y, t, rates)


def time_first_loss(rates, y0):
    ys = integrate.odeint(time_first, y0, TIMES, args=(rates,), rtol=TOL, atol=TOL, tfirst=True)
    return np.sum(ys**2)


def partial_loss(y0):
    ys = integrate.odeint(
        functools.partial(lotka_volterra, rates=RATES), y0, TIMES, rtol=TOL, atol=TOL
    )
    return np.sum(ys**2)


def local_function_loss(rates, y0):
    scale = 2.0  # (a constant: the function closes over no differentiated value)

    def f(y, t, r):
        return scale * lotka_volterra(y, t, r)

    ys = integrate.odeint(cpsad.stop_gradient(f), y0, TIMES, args=(rates,), rtol=TOL, atol=TOL)
    return np.sum(ys**2)


def scalar_loss(k, y0):
    ys = integrate.odeint(linear, y0, TIMES, args=(k,), rtol=TOL, atol=TOL)  # m a number
    return np.sum(ys**3)


FORMS = [
    (counted_loss, (RATES, Y0)),
    (time_first_loss, (RATES, Y0)),
    (partial_loss, (Y0,)),
    (local_function_loss, (RATES, Y0)),
    (scalar_loss, (-0.7, 1.3)),
]


@pytest.mark.parametrize("f, args", FORMS, ids=[f.__name__ for f, _ in FORMS])
def test_forms_of_the_dynamics(f, args):
    """Constants among args, time first, a functools.partial, a function defined inside passed
    through stop_gradient, a list for the result, a float for y0; both modes."""
    nums = tuple(range(len(args)))
    check_grads(f, *args, argnums=nums, **CHECK)
    gradient = cpsad.grad(f, argnums=nums)(*args)
    for i in nums:
        v = direction(args[i])
        tangents = [v if j == i else None for j in nums]
        _, tangent = cpsad.jvp(f, args, tangents)
        assert np.isclose(tangent, np.sum(gradient[i] * v), rtol=1e-7, atol=1e-10)


def test_the_emitted_code_calls_the_rules_by_name():
    text = cpsad.show(all_times_loss, argnums=(0, 1))
    assert "odeint_y0(" in text and "odeint_args(" in text


# --------------------------------------------------------------------------- refused


def test_a_function_defined_inside_is_refused_at_the_call():
    def f(rates, y0):
        return np.sum(integrate.odeint(lambda y, t: lotka_volterra(y, t, rates), y0, TIMES))

    with pytest.raises(cpsad.TransformError, match="no derivative with respect to its argument"):
        cpsad.grad(f)(RATES, Y0)


def test_a_function_that_closes_over_differentiated_values_is_refused():
    """Passed through stop_gradient, its backpropagator would still add to `rates`'s adjoint at
    every evaluation of the backward integration: a TypeError that names it, not a number."""

    def f(rates, y0):
        def g(y, t):
            return lotka_volterra(y, t, rates)

        return np.sum(integrate.odeint(cpsad.stop_gradient(g), y0, TIMES))

    with pytest.raises(TypeError, match=r"closes over values being differentiated \(`rates`\)"):
        cpsad.grad(f, argnums=(0, 1))(RATES, Y0)


def full_output_loss(rates):
    ys, info = integrate.odeint(lotka_volterra, Y0, TIMES, args=(rates,), full_output=True)
    return np.sum(ys)


def no_t_eval_loss(y0):
    return np.sum(integrate.solve_ivp(pendulum, (0.0, 1.0), y0, args=(0.3, 1.0)).y)


def complex_loss(y0):
    res = integrate.solve_ivp(
        pendulum, (0.0, 1.0), y0 * (1 + 1j), t_eval=T_EVAL / 2, args=(0.3, 1.0)
    )
    return np.sum(np.abs(res.y))


@pytest.mark.parametrize(
    "f, arg, message",
    [
        (full_output_loss, RATES, "without full_output=True"),
        (no_t_eval_loss, Y0, "pass t_eval"),
        (complex_loss, Y0, "real values only"),
    ],
)
def test_refused_when_the_derivative_is_taken(f, arg, message):
    with pytest.raises(TypeError, match=message):
        cpsad.grad(f)(arg)


def test_an_entry_of_the_result_without_a_derivative_is_refused():
    res = integrate.solve_ivp(pendulum, (0.0, 1.0), Y0, t_eval=T_EVAL / 2, args=(0.3, 1.0))
    with pytest.raises(TypeError, match="not `nfev`"):
        rules.ivp_result_adjoints(cpsad.runtime.Sparse({"y": res.y, "nfev": 1.0}), res)


def test_a_failed_backward_integration_is_an_error():
    def f(rates):
        return np.sum(integrate.odeint(lotka_volterra, Y0, TIMES, args=(rates,), mxstep=5))

    with pytest.warns(integrate.ODEintWarning):
        with pytest.raises(RuntimeError, match="backward integration .* failed"):
            cpsad.grad(f)(RATES)


@pytest.mark.parametrize(
    "derivative",
    [
        lambda f: cpsad.grad(cpsad.grad(f))(0.5),
        lambda f: cpsad.hessian(f)(np.array(0.5)),
    ],
    ids=["grad-grad", "hessian"],
)
def test_second_derivatives_are_refused_at_the_users_line(derivative):
    def f(k):
        return np.sum(integrate.odeint(linear, Y0, TIMES, args=(-k,)) ** 2)

    with pytest.raises(cpsad.TransformError, match="odeint_args` has no derivative") as info:
        derivative(f)
    assert info.value.filename == __file__
