"""np.fft's rules beyond the checks every rule gets (tests/test_rules.py, cases in
tests/corpus_fft.py): complex tangents as the plain transposes of the adjoints, float32 with
complex cotangents, second derivatives against central differences of the gradient, and what is
refused."""

import numpy as np
import pytest

import cpsad
from cpsad.rules import core
from cpsad.rules import fft as ff
from cpsad.testing import _positions, _random_like
from tests import corpus_fft as F
from tests.corpus_rules import CASES

FFT_CASES = [c for c in CASES if c.fn.__module__ == F.__name__]
RULE_CASES = [c for c in FFT_CASES if c.prim is not None]
assert len(RULE_CASES) > 100  # the search works

# complex-linear in their input (the real FFTs are linear over the reals only)
COMPLEX_LINEAR = {
    np.fft.fft,
    np.fft.ifft,
    np.fft.fft2,
    np.fft.ifft2,
    np.fft.fftn,
    np.fft.ifftn,
    np.fft.fftshift,
    np.fft.ifftshift,
    ff.fit_axes,
}


def ids(cases):
    return [c.id for c in cases]


def rule_of(case, args, kwargs, ans, g, tangent=False):
    (param, _), *_ = _positions(case.rule.signature, len(args))
    table = case.rule.tangents if tangent else case.rule.adjoints
    return table[param].fn(g, ans, *args, **kwargs)


def complex_random(shape, rng):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


TRANSPOSE_CASES = [c for c in RULE_CASES if c.prim in COMPLEX_LINEAR and np.iscomplexobj(c.args[0])]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=ids(TRANSPOSE_CASES))
def test_complex_tangents_are_the_transposes_of_the_adjoints(case):
    """``<tangent(v), c> == <v, adjoint(c)>`` with the bilinear ``sum(a * b)`` (no conjugate),
    complex ``v`` and ``c``: the whole complex number, not its real part (check_rule's)."""
    rng = np.random.default_rng(5)
    ans = case.prim(*case.args, **case.kwargs)
    c = complex_random(np.shape(ans), rng)
    v = complex_random(np.shape(case.args[0]), rng)
    forward = np.sum(rule_of(case, case.args, case.kwargs, ans, v, tangent=True) * c)
    backward = np.sum(v * rule_of(case, case.args, case.kwargs, ans, c))
    np.testing.assert_allclose(forward, backward, rtol=1e-10, err_msg=case.id)
    eps = 1e-7
    args_plus, args_minus = list(case.args), list(case.args)
    args_plus[0], args_minus[0] = case.args[0] + eps * v, case.args[0] - eps * v
    fd = (case.prim(*args_plus, **case.kwargs) - case.prim(*args_minus, **case.kwargs)) / (2 * eps)
    tangent = rule_of(case, case.args, case.kwargs, ans, v, tangent=True)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8, err_msg=case.id)


# --------------------------------------------------------------------------- float32

F32_CASES = [c for c in RULE_CASES if c.float64 == F.IMAGINARY]


def to32(x):
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x.astype(np.float32)
    return x


def to64(x):
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        return x.astype(np.float64)
    if isinstance(x, np.ndarray) and x.dtype == np.complex64:
        return x.astype(np.complex128)
    return x


@pytest.mark.parametrize("case", F32_CASES, ids=ids(F32_CASES))
def test_float32_stays_float32_with_complex_cotangents(case):
    """The cases of complex results, which tests/test_rules.py's float32 check leaves out: a
    float32 input gets a float32 adjoint from a complex64 cotangent, and a complex64 tangent, with
    the numbers they have in float64 (up to float32's rounding)."""
    args32 = tuple(to32(a) for a in case.args)
    ans32 = case.prim(*args32, **case.kwargs)
    ans64 = case.prim(*case.args, **case.kwargs)
    assert ans32.dtype == (np.complex64 if args32[0].dtype == np.float32 else ans64.dtype)
    rng = np.random.default_rng(2)
    c = _random_like(ans32, rng)
    got = rule_of(case, args32, case.kwargs, ans32, c)
    assert np.result_type(got) == np.result_type(args32[0]), case.id
    want = rule_of(case, case.args, case.kwargs, ans64, to64(c))
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)
    v = _random_like(case.args[0], rng)
    got = rule_of(case, args32, case.kwargs, ans32, to32(v), tangent=True)
    assert np.result_type(got) == ans32.dtype, case.id
    want = rule_of(case, case.args, case.kwargs, ans64, v, tangent=True)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-4)


# --------------------------------------------------------------------------- second order


def loss(y):
    """A smooth, not quadratic, real function of a real or complex array."""
    return (
        np.sum(np.sin(np.real(y) * 1.3 + 0.2) * np.cos(np.imag(y) * 0.7))
        + np.sum(np.real(y) ** 3) * 0.1
    )


R = np.random.default_rng(11)
RAMP = R.standard_normal((6, 5))


# Each has a real argument and a real gradient -- complex values made by the transforms of real
# ones, whose adjoints are real again -- so that forward over reverse (cpsad.hessian) applies too
# (cpsad's API refuses to differentiate a gradient whose raw adjoint is complex:
# test_a_gradient_through_a_complex_product).


def f_fft(x):
    return loss(np.fft.fft(x, 7, norm="ortho")) + loss(np.fft.fft(np.fft.ifft(x) * (1.0 + 0.5j), 4))


def f_ifft(x):
    return loss(np.fft.ifft(x, 4, axis=0)) + loss(np.fft.ifft(np.fft.fft(x) * 0.5j, 7, axis=0))


def f_fft2(x):
    return loss(np.fft.fft2(x, s=(3, 7))) + loss(np.fft.fft2(np.fft.ifft(x) * (1.0 - 1.0j)))


def f_ifft2(x):
    return loss(np.fft.ifft2(x, axes=(1, 0), norm="forward")) + loss(
        np.fft.ifft2(np.fft.rfft(x, 8) * (0.6 - 0.8j), s=(2, 6))
    )


def f_fftn(x):
    return loss(np.fft.fftn(x, s=(3, 2), axes=(2, 0))) + loss(
        np.fft.fftn(np.fft.ifft(x, axis=1) * 2.0j, norm="ortho")
    )


def f_ifftn(x):
    return loss(np.fft.ifftn(np.sin(x), norm="ortho")) + loss(
        np.fft.ifftn(np.fft.fft(x) * (1.0 + 1.0j), s=(3, 4), axes=(0, 2))
    )


def f_rfft(x):
    return loss(np.fft.rfft(x, 9, norm="forward")) + loss(np.fft.rfft(x, 4))


def f_irfft(x):
    return loss(np.fft.irfft(np.fft.fft(x) * (0.7 - 0.4j), 7) * 3.0) + loss(np.fft.irfft(x))


def f_rfft2(x):
    return loss(np.fft.rfft2(x, s=(4, 6))) + loss(np.fft.rfft2(x, norm="ortho") * 2.0)


def f_irfft2(x):
    return loss(np.fft.irfft2(np.fft.fft(x, axis=0) * (0.3 + 1.0j), axes=(0, 1)) * 4.0) + loss(
        np.fft.irfft2(x, s=(5, 5), norm="forward")
    )


def f_rfftn(x):
    return loss(np.fft.rfftn(x, axes=(0, 2), norm="ortho")) + loss(
        np.fft.rfftn(x, s=(3, 2, 4), axes=(0, 1, 2))
    )


def f_irfftn(x):
    return loss(np.fft.irfftn(np.fft.ifft(x) * (1.0 - 0.5j), s=(3, 5), axes=(1, 2)) * 5.0) + loss(
        np.fft.irfftn(x) * 3.0
    )


def f_hfft(x):
    return loss(np.fft.hfft(np.fft.ifft(x) * (0.3 + 1.0j), 8) * 0.5) + loss(np.fft.hfft(x, 5))


def f_ihfft(x):
    return loss(np.fft.ihfft(x, 7, norm="ortho") * 2.0) + loss(np.fft.ihfft(x, 10))


def f_fftshift(x):
    return np.sum(np.fft.fftshift(np.sin(x) * x, axes=0) * RAMP) + loss(
        np.fft.fftshift(np.fft.fft(x) * RAMP)
    )


def f_ifftshift(x):
    return np.sum(np.fft.ifftshift(np.cos(x) * x) * RAMP) + loss(
        np.fft.ifftshift(np.fft.ifft(x, axis=0) * RAMP, axes=1)
    )


SECOND_ORDER = [
    (f_fft, (5,)),
    (f_ifft, (5, 3)),
    (f_fft2, (4, 5)),
    (f_ifft2, (3, 4)),
    (f_fftn, (2, 3, 4)),
    (f_ifftn, (2, 3, 2)),
    (f_rfft, (6,)),
    (f_irfft, (5,)),
    (f_rfft2, (3, 5)),
    (f_irfft2, (3, 4)),
    (f_rfftn, (2, 3, 5)),
    (f_irfftn, (2, 3, 4)),
    (f_hfft, (4,)),
    (f_ihfft, (8,)),
    (f_fftshift, (6, 5)),
    (f_ifftshift, (6, 5)),
]


@pytest.mark.parametrize("f, shape", SECOND_ORDER, ids=[f.__name__ for f, _ in SECOND_ORDER])
def test_second_derivatives_against_differences_of_the_gradient(f, shape):
    """Reverse over reverse (the gradient of ``<grad f, v>``) and forward over reverse
    (``cpsad.hessian``, ``cpsad.hvp``) against central differences of the gradient along ``v``;
    the gradient itself against differences of ``f``."""
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal(shape), rng.standard_normal(shape)
    g = cpsad.grad(f)
    eps = 1e-6
    first = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    assert np.sum(g(x) * v) == pytest.approx(first, rel=1e-6, abs=1e-8)
    eps = 1e-5
    fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    reverse = cpsad.grad(lambda y: np.sum(g(y) * v))(x)
    np.testing.assert_allclose(reverse, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(cpsad.hvp(f)(x, v), fd, rtol=1e-5, atol=1e-7)
    hessian = cpsad.hessian(f)(x)
    n = x.size
    flat = hessian.reshape(n, n)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-9, atol=1e-9)  # symmetric
    np.testing.assert_allclose((flat @ v.ravel()).reshape(shape), fd, rtol=1e-5, atol=1e-7)


def through_complex_product(x):
    return loss(np.fft.fft(x * (1.0 + 0.5j)))


def test_a_gradient_through_a_complex_product():
    """``x * c`` with a complex ``c`` gives the real ``x`` a complex raw adjoint (its real part is
    the gradient), and cpsad's API refuses forward over reverse through complex values; reverse
    over reverse, the gradient inside a function, gives the right numbers."""
    rng = np.random.default_rng(4)
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    g = cpsad.grad(through_complex_product)
    fd = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(cpsad.grad(lambda y: np.sum(g(y) * v))(x), fd, rtol=1e-5, atol=1e-7)
    with pytest.raises(TypeError, match="passes through complex"):
        cpsad.hvp(through_complex_product)(x, v)


def test_a_third_derivative_is_refused_not_a_number():
    """A third derivative through a derivative called as a value (``g = cpsad.grad(f)`` read
    from a closure) is refused when it runs, through the FFTs too -- never a number."""

    def f(x):
        return np.sum(np.abs(np.fft.rfft(x * x, 6)) ** 2)

    x, v = np.array([0.3, -0.5, 0.8, 1.1]), np.array([0.2, 0.4, -0.1, 0.3])
    g = cpsad.grad(f)
    h = cpsad.grad(lambda y: np.sum(g(y) * v))
    with pytest.raises(TypeError, match="a derivative called through a value"):
        cpsad.grad(lambda y: np.sum(h(y) * v))(x)


# --------------------------------------------------------------------------- what is refused


def rfft_out(x):
    return np.sum(np.abs(np.fft.rfft(x, out=np.empty(3, complex))) ** 2)


def fftn_twice(x):
    return np.sum(np.abs(np.fft.fftn(x, axes=(0, 0))) ** 2)


def test_out_is_refused():
    with pytest.raises(cpsad.TransformError, match="unexpected keyword argument 'out'"):
        cpsad.grad(rfft_out)(np.ones(4))


def test_a_repeated_axis_is_refused_not_wrong():
    with pytest.raises(ValueError, match="repeated axis"):
        cpsad.grad(fftn_twice)(np.ones((3, 2)))


def test_the_rules_are_inlined_and_name_the_helpers():
    text = cpsad.show(F.convolve_circular, argnums=(0, 1))
    assert "np.fft.fft(" in text and "hermitian_weights(" in text and "fit_axes(" in text


def test_the_hermitian_weights():
    """1, 2, ..., 2, 1 on the bins an even-length result reads; no trailing 1 for an odd length;
    0 past the bins read."""
    a = np.zeros(6, complex)
    np.testing.assert_array_equal(ff.hermitian_weights(a, np.zeros(8), (0,)), [1, 2, 2, 2, 1, 0])
    np.testing.assert_array_equal(ff.hermitian_weights(a, np.zeros(7), (0,)), [1, 2, 2, 2, 0, 0])
    assert ff.hermitian_weights(a.astype(np.complex64), np.zeros(8), (0,)).dtype == np.float32


def test_every_fft_function_has_rules_in_both_directions():
    names = [
        "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
        "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift",
    ]  # fmt: skip
    for name in names:
        rule = core.lookup(getattr(np.fft, name))
        assert rule is not None and not core.tangent_missing(rule), name
        assert any(c.prim is getattr(np.fft, name) for c in RULE_CASES), name
