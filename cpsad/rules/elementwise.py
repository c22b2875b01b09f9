"""Rules of elementwise functions: numpy's ufuncs, the ``math`` module, and numeric builtins.

Most adjoints here are ``g * f'(x)``, elementwise: the same expression with the tangent for ``g``
is the tangent rule (``defjvp_as_vjp``). Functions of two arrays broadcast: their tangent rules
broadcast each operand's tangent up to the result's shape.
"""

from __future__ import annotations

import math

import numpy as np

from cpsad.rules import operators as op
from cpsad.rules.core import (
    DISCRETE,
    broadcast_like,
    defattribute,
    defjvp,
    defjvp_as_vjp,
    defjvp_attribute,
    defjvp_method,
    defmethod,
    defvjp,
)
from cpsad.runtime import split_ties, tangent_zeros, unbroadcast, zeros_like

# --------------------------------------------------------------------------- one argument


def exp(g, ans, x):
    return g * ans


def exp2(g, ans, x):
    return g * ans * math.log(2.0)


def expm1(g, ans, x):
    return g * (ans + 1)


def log(g, ans, x, dtype=None):
    """``dtype`` is the result's float type (the rules of ``**`` pass it, so that the log of a
    Python float does not make a float32 adjoint float64). ``np.divide``: of Python numbers
    too, numpy's infinity at 0 (``/`` would raise)."""
    return np.divide(g, x)


def log2(g, ans, x):
    return np.divide(g, x * math.log(2.0))


def log10(g, ans, x):
    return np.divide(g, x * math.log(10.0))


def log1p(g, ans, x):
    return np.divide(g, 1 + x)


def sqrt(g, ans, x):
    return g * 0.5 / ans


def cbrt(g, ans, x):
    return g / (3 * ans**2)


def square(g, ans, x):
    return g * 2 * x


def reciprocal(g, ans, x):
    return -g * ans**2


def sin(g, ans, x):
    return g * np.cos(x)


def cos(g, ans, x):
    return -g * np.sin(x)


def tan(g, ans, x):
    return g * (1 + ans**2)


def arcsin(g, ans, x):
    return g / np.sqrt((1 - x) * (1 + x))


def arccos(g, ans, x):
    return -g / np.sqrt((1 - x) * (1 + x))


def arctan(g, ans, x):
    return g / (1 + x * x)


def sinh(g, ans, x):
    return g * np.cosh(x)


def cosh(g, ans, x):
    return g * np.sinh(x)


def tanh(g, ans, x):
    return g * (1 - ans * ans)  # not ans**2: a float squared by multiplication is quicker


def arcsinh(g, ans, x):
    return g / np.hypot(x, 1)


def arccosh(g, ans, x):
    return g / np.sqrt((x - 1) * (x + 1))


def arctanh(g, ans, x):
    return np.divide(g, (1 - x) * (1 + x))


if np.lib.NumpyVersion(np.__version__) >= "2.0.0b1":  # np.sign(z) is z / |z| for complex z

    def absolute(g, ans, x):
        """``|x|``: ``g sign(x)``. For complex ``x`` (docs/reference.md, complex numbers) the real
        part of ``g`` -- ``|x|`` is real -- times ``conj(x) / |x|``; 0 at 0, a subgradient. (On
        real values ``.real`` and ``.conjugate()`` are the values themselves, for nothing.)"""
        return g.real * np.sign(x.conjugate())

    def absolute_jvp(t, ans, x):
        """``Re(conj(x) t) / |x|``: for real ``x``, ``t sign(x)``."""
        return (np.sign(x.conjugate()) * t).real

else:  # pragma: no cover - numpy 1.x: np.sign of a complex number is the sign of its real part

    def absolute(g, ans, x):
        return np.real(g) * np.conj(unit(x))

    def absolute_jvp(t, ans, x):
        return np.real(np.conj(unit(x)) * t)


def unit(x):
    """``x / |x|`` (0 at 0): numpy 2's ``np.sign``, for complex numbers on numpy 1.x too."""
    if not np.iscomplexobj(x):
        return np.sign(x)
    r = np.abs(x)
    return np.where(r == 0, 0, x / np.where(r == 0, 1, r))


def deg2rad(g, ans, x):
    return g * (math.pi / 180)


def rad2deg(g, ans, x):
    return g * (180 / math.pi)


def negative(g, ans, x):
    return -g


def positive(g, ans, x):
    return g


for _f, _rule in [
    (np.exp, exp),
    (np.exp2, exp2),
    (np.expm1, expm1),
    (np.log, log),
    (np.log2, log2),
    (np.log10, log10),
    (np.log1p, log1p),
    (np.sqrt, sqrt),
    (np.cbrt, cbrt),
    (np.square, square),
    (np.reciprocal, reciprocal),
    (np.sin, sin),
    (np.cos, cos),
    (np.tan, tan),
    (np.arcsin, arcsin),
    (np.arccos, arccos),
    (np.arctan, arctan),
    (np.sinh, sinh),
    (np.cosh, cosh),
    (np.tanh, tanh),
    (np.arcsinh, arcsinh),
    (np.arccosh, arccosh),
    (np.arctanh, arctanh),
    (np.fabs, absolute),  # real numbers only
    (np.deg2rad, deg2rad),
    (np.radians, deg2rad),
    (np.rad2deg, rad2deg),
    (np.degrees, rad2deg),
    (np.negative, negative),
    (np.positive, positive),
]:
    defvjp(_f, _rule)
    defjvp_as_vjp(_f)  # t * f'(x)
for _f in (np.abs, np.absolute):
    defvjp(_f, absolute)
    defjvp(_f, absolute_jvp)

# --------------------------------------------------------------------------- two arguments
# np.divide, np.power and np.float_power: numpy's arithmetic, also where both operands are Python
# numbers (the operators' rules are Python's: `x / y` and `x ** y` raise first).


def divide_x(g, ans, x, y):
    return unbroadcast(np.divide(g, y), x)


def divide_x_jvp(t, ans, x, y):
    return np.divide(t, y)


def power_x(g, ans, x, y):
    """``y x^(y-1)``, 0 for ``y == 0`` (``x**0`` is the constant 1; JAX's and autograd's)."""
    return unbroadcast(g * y * np.power(x, np.where(y == 0, 1, y - 1)), x)


def power_x_jvp(t, ans, x, y):
    return t * y * np.power(x, np.where(y == 0, 1, y - 1))


def float_power_x(g, ans, x, y):
    return unbroadcast(g * y * np.float_power(x, np.where(y == 0, 1, y - 1)), x)


def float_power_x_jvp(t, ans, x, y):
    return t * y * np.float_power(x, np.where(y == 0, 1, y - 1))


defvjp(np.add, op.add_x, op.add_y)
defvjp(np.subtract, op.sub_x, op.sub_y)
defvjp(np.multiply, op.mul_x, op.mul_y)
defvjp(np.divide, divide_x, op.div_y)
defvjp(np.power, power_x, op.pow_y)
defvjp(np.float_power, float_power_x, op.pow_y)
defvjp(np.mod, op.mod_x, op.mod_y)
defjvp(np.add, op.add_x_jvp, op.add_y_jvp)
defjvp(np.subtract, op.sub_x_jvp, op.sub_y_jvp)
defjvp(np.multiply, op.mul_x_jvp, op.mul_y_jvp)
defjvp(np.divide, divide_x_jvp, op.div_y_jvp)
defjvp(np.power, power_x_jvp, op.pow_y_jvp)
defjvp(np.float_power, float_power_x_jvp, op.pow_y_jvp)
defjvp(np.mod, op.mod_x_jvp, op.mod_y_jvp)


def pick_x(g, ans, x, y):
    """maximum, minimum, fmax, fmin: the adjoint goes to the operand that is the result, split
    evenly between ties."""
    return unbroadcast(split_ties(g * (x == ans), g, x, y), x)


def pick_y(g, ans, x, y):
    return unbroadcast(split_ties(g * (y == ans), g, x, y), y)


def pick_x_jvp(t, ans, x, y):
    """Half of each tangent where the operands tie: the transpose of the even split. (A number's
    tangent times a mask would be float64: ``broadcast_like`` keeps the result's type.)"""
    return broadcast_like(np.where(x == y, 0.5 * t, t * (x == ans)), ans)


def pick_y_jvp(t, ans, x, y):
    return broadcast_like(np.where(x == y, 0.5 * t, t * (y == ans)), ans)


def max_x(g, ans, x, y):
    """maximum: ``x`` is the result where ``x > y`` -- a comparison with ``y`` (a ReLU's 0.0) is
    cheaper than with ``ans``, and NaNs give nothing either way."""
    return unbroadcast(split_ties(g * (x > y), g, x, y), x)


def max_y(g, ans, x, y):
    return unbroadcast(split_ties(g * (y > x), g, x, y), y)


def min_x(g, ans, x, y):
    return unbroadcast(split_ties(g * (x < y), g, x, y), x)


def min_y(g, ans, x, y):
    return unbroadcast(split_ties(g * (y < x), g, x, y), y)


defvjp(np.maximum, max_x, max_y)
defvjp(np.minimum, min_x, min_y)
for _f in (np.fmax, np.fmin):  # these return the number where the other operand is NaN
    defvjp(_f, pick_x, pick_y)
for _f in (np.maximum, np.minimum, np.fmax, np.fmin):
    defjvp(_f, pick_x_jvp, pick_y_jvp)


def fmod_x(g, ans, x, y):
    return unbroadcast(g, x)


def fmod_y(g, ans, x, y):
    return unbroadcast(-g * np.trunc(np.divide(x, y)), y)


defvjp(np.fmod, fmod_x, fmod_y)


def fmod_x_jvp(t, ans, x, y):
    return broadcast_like(t, ans)


def fmod_y_jvp(t, ans, x, y):
    return -t * np.trunc(np.divide(x, y))


defjvp(np.fmod, fmod_x_jvp, fmod_y_jvp)


def arctan2_y(g, ans, y, x):
    """NaN at (0, 0), where it has no derivative (also for Python numbers: ``np.divide``)."""
    return unbroadcast(np.divide(g * x, x * x + y * y), y)


def arctan2_x(g, ans, y, x):
    return unbroadcast(np.divide(-g * y, x * x + y * y), x)


defvjp(np.arctan2, arctan2_y, arctan2_x)


def arctan2_y_jvp(t, ans, y, x):
    return np.divide(t * x, x * x + y * y)


def arctan2_x_jvp(t, ans, y, x):
    return np.divide(-t * y, x * x + y * y)


defjvp(np.arctan2, arctan2_y_jvp, arctan2_x_jvp)


def hypot_x(g, ans, x, y):
    """``x / hypot(x, y)``; 0 at 0, as the norm it is (the smallest subgradient)."""
    return unbroadcast(g * x / np.where(ans == 0, 1, ans), x)


def hypot_y(g, ans, x, y):
    return unbroadcast(g * y / np.where(ans == 0, 1, ans), y)


defvjp(np.hypot, hypot_x, hypot_y)


def hypot_x_jvp(t, ans, x, y):
    return t * x / np.where(ans == 0, 1, ans)


def hypot_y_jvp(t, ans, x, y):
    return t * y / np.where(ans == 0, 1, ans)


defjvp(np.hypot, hypot_x_jvp, hypot_y_jvp)


def logaddexp_x(g, ans, x, y):
    return unbroadcast(g * np.exp(x - ans), x)


def logaddexp_y(g, ans, x, y):
    return unbroadcast(g * np.exp(y - ans), y)


defvjp(np.logaddexp, logaddexp_x, logaddexp_y)


def logaddexp_x_jvp(t, ans, x, y):
    return t * np.exp(x - ans)


def logaddexp_y_jvp(t, ans, x, y):
    return t * np.exp(y - ans)


defjvp(np.logaddexp, logaddexp_x_jvp, logaddexp_y_jvp)


def logaddexp2_x(g, ans, x, y):
    return unbroadcast(g * np.exp2(x - ans), x)


def logaddexp2_y(g, ans, x, y):
    return unbroadcast(g * np.exp2(y - ans), y)


defvjp(np.logaddexp2, logaddexp2_x, logaddexp2_y)


def logaddexp2_x_jvp(t, ans, x, y):
    return t * np.exp2(x - ans)


def logaddexp2_y_jvp(t, ans, x, y):
    return t * np.exp2(y - ans)


defjvp(np.logaddexp2, logaddexp2_x_jvp, logaddexp2_y_jvp)


def clip(g, ans, a, a_min=None, a_max=None):
    """Where the value was not clipped, it is ``a`` itself."""
    return unbroadcast(g * (ans == a), a)


def clip_min(g, ans, a, a_min=None, a_max=None):
    return unbroadcast(g * ((ans != a) & (ans == a_min) & (ans != a_max)), a_min)


def clip_max(g, ans, a, a_min=None, a_max=None):
    """A bound above the other one wins, as in numpy."""
    return unbroadcast(g * ((ans != a) & (ans == a_max)), a_max)


defvjp(np.clip, clip, clip_min, clip_max)


def clip_jvp(t, ans, a, a_min=None, a_max=None):
    """The tangent in the result's shape and type (a number's times a mask would be float64)."""
    return broadcast_like(t, ans) * (ans == a)


def clip_min_jvp(t, ans, a, a_min=None, a_max=None):
    return broadcast_like(t, ans) * ((ans != a) & (ans == a_min) & (ans != a_max))


def clip_max_jvp(t, ans, a, a_min=None, a_max=None):
    return broadcast_like(t, ans) * ((ans != a) & (ans == a_max))


defjvp(np.clip, clip_jvp, clip_min_jvp, clip_max_jvp)


def clip_method(g, ans, a, min=None, max=None):
    """``x.clip(min, max)``: the method's parameters have other names."""
    return unbroadcast(g * (ans == a), a)


def clip_method_min(g, ans, a, min=None, max=None):
    return unbroadcast(g * ((ans != a) & (ans == min) & (ans != max)), min)


def clip_method_max(g, ans, a, min=None, max=None):
    return unbroadcast(g * ((ans != a) & (ans == max)), max)


defmethod("clip", clip_method, clip_method_min, clip_method_max)


def clip_method_jvp(t, ans, a, min=None, max=None):
    return broadcast_like(t, ans) * (ans == a)


def clip_method_min_jvp(t, ans, a, min=None, max=None):
    return broadcast_like(t, ans) * ((ans != a) & (ans == min) & (ans != max))


def clip_method_max_jvp(t, ans, a, min=None, max=None):
    return broadcast_like(t, ans) * ((ans != a) & (ans == max))


defjvp_method("clip", clip_method_jvp, clip_method_min_jvp, clip_method_max_jvp)


def where_x(g, ans, condition, x, y):
    return unbroadcast(np.where(condition, g, 0.0), x)


def where_y(g, ans, condition, x, y):
    return unbroadcast(np.where(condition, 0.0, g), y)


defvjp(np.where, DISCRETE, where_x, where_y)


def where_x_jvp(t, ans, condition, x, y):
    return np.where(condition, t, np.zeros_like(ans))


def where_y_jvp(t, ans, condition, x, y):
    return np.where(condition, np.zeros_like(ans), t)


defjvp(np.where, DISCRETE, where_x_jvp, where_y_jvp)


def heaviside_x2(g, ans, x1, x2):
    """``np.heaviside(x1, x2)`` is ``x2`` where ``x1`` is 0 (a step elsewhere, in ``x1``)."""
    return unbroadcast(g * (x1 == 0), x2)


defvjp(np.heaviside, DISCRETE, heaviside_x2)


def heaviside_x2_jvp(t, ans, x1, x2):
    return broadcast_like(t * (x1 == 0), ans)


defjvp(np.heaviside, DISCRETE, heaviside_x2_jvp)

if np.lib.NumpyVersion(np.__version__) >= "2.0.0b1":  # np.sign(z) is z / |z| for complex z

    def sign(g, ans, x):
        """``np.sign``: a step for real ``x`` (0); for complex ``z``, ``s = z / |z|`` has the
        adjoint ``i Im(g s) conj(s) / |z|`` (0 at 0, as ``abs``)."""
        return (
            1j * np.imag(g * np.sign(x)) * np.conj(np.sign(x)) / np.where(x == 0, 1, np.abs(x))
            if np.iscomplexobj(x)
            else zeros_like(x)
        )

    def sign_jvp(t, ans, x):
        """``ds = i Im(conj(s) t) s / |z|`` for complex ``z``; 0 for real ``x``."""
        return (
            1j * np.imag(np.conj(np.sign(x)) * t) * np.sign(x) / np.where(x == 0, 1, np.abs(x))
            if np.iscomplexobj(x)
            else tangent_zeros(ans)
        )

else:  # pragma: no cover - numpy 1.x: np.sign of a complex number is the sign of its real part

    def sign(g, ans, x):
        return zeros_like(x)

    def sign_jvp(t, ans, x):
        return tangent_zeros(ans)


defvjp(np.sign, sign)
defjvp(np.sign, sign_jvp)


# --------------------------------------------------------------------------- the math module


def math_exp(g, ans, x):
    return g * ans


def math_log(g, ans, x, base=math.e):
    return g / (x * math.log(base))


def math_log_base(g, ans, x, base=math.e):
    return -g * ans / (base * math.log(base))


def math_sqrt(g, ans, x):
    """Infinite at 0 (``np.sqrt``'s derivative there: numpy and JAX give inf)."""
    return g * 0.5 / ans if ans else g * math.copysign(math.inf, ans)


def math_sin(g, ans, x):
    return g * math.cos(x)


def math_cos(g, ans, x):
    return -g * math.sin(x)


def math_tan(g, ans, x):
    return g * (1 + ans**2)


def math_tanh(g, ans, x):
    return g * (1 - ans * ans)


def math_sinh(g, ans, x):
    return g * math.cosh(x)


def math_cosh(g, ans, x):
    return g * math.sinh(x)


def math_asin(g, ans, x):
    return g / math.sqrt((1 - x) * (1 + x)) if abs(x) != 1 else g * math.inf


def math_acos(g, ans, x):
    return -g / math.sqrt((1 - x) * (1 + x)) if abs(x) != 1 else -g * math.inf


def math_atan(g, ans, x):
    return g / (1 + x * x)


def math_log1p(g, ans, x):
    return g / (1 + x)


def math_expm1(g, ans, x):
    return g * (ans + 1)


def math_log2(g, ans, x):
    return g / (x * math.log(2.0))


def math_log10(g, ans, x):
    return g / (x * math.log(10.0))


def math_copysign_x(g, ans, x, y):
    """``copysign(x, y)`` is ``|x|`` with the sign of ``y``: in ``x`` the product of the signs; in
    ``y`` a step."""
    return g * math.copysign(1.0, x) * math.copysign(1.0, y)


defvjp(math.copysign, math_copysign_x, DISCRETE)
defjvp_as_vjp(math.copysign)


# --------------------------------------------------------------------------- complex numbers
# The convention (docs/reference.md): the gradient of a real function f at z = x + iy is
# df/dx - i df/dy, autograd's and JAX's. A holomorphic function's rule is then the real one,
# g f'(z); a function of z and conj(z) gets g dw/dz + conj(g dw/dconj(z)); a real result's
# adjoint is real, so a rule of one takes the real part of g, where a complex factor downstream
# (|z| * c) may have given it an imaginary part that means nothing.


def conjugate(g, ans, x):
    """``np.conj``: the identity on real numbers; for complex ones ``conj(g)``. (Not
    complex-linear: its tangent is ``conj(t)`` too.)"""
    return np.conj(g)


defvjp(np.conjugate, conjugate)
defjvp_as_vjp(np.conjugate)


def conjugate_jvp(t, ans, x):
    return np.conj(t)


for _name in ("conj", "conjugate"):
    defmethod(_name, conjugate)
    defjvp_method(_name, conjugate_jvp)


def real(g, ans, val):
    """``np.real``: a real result, whose adjoint is the real part of ``g``."""
    return np.real(g)


def real_jvp(t, ans, val):
    return np.real(t)


def imag(g, ans, val):
    """``np.imag(x + iy) = y``: ``-i Re(g)``; of a real value, a constant 0."""
    return np.real(g) * (-1j if np.iscomplexobj(val) else 0.0)


def imag_jvp(t, ans, val):
    return np.imag(t)


def angle(g, ans, z, deg=False):
    """``np.angle(z) = Im(log z)``: ``-i Re(g) / z``; of a real value, a step (0)."""
    return (
        np.real(g) * (-1j / z if np.iscomplexobj(z) else 0.0 * z) * (180 / math.pi if deg else 1.0)
    )


def angle_jvp(t, ans, z, deg=False):
    return (np.imag(t / z) if np.iscomplexobj(z) else 0.0 * t) * (180 / math.pi if deg else 1.0)


defvjp(np.real, real)
defjvp(np.real, real_jvp)
defvjp(np.imag, imag)
defjvp(np.imag, imag_jvp)
defvjp(np.angle, angle)
defjvp(np.angle, angle_jvp)


def real_attribute(g, ans, x):
    """``x.real``."""
    return np.real(g)


def real_attribute_jvp(t, ans, x):
    return np.real(t)


def imag_attribute(g, ans, x):
    """``x.imag``."""
    return np.real(g) * (-1j if np.iscomplexobj(x) else 0.0)


def imag_attribute_jvp(t, ans, x):
    return np.imag(t)


defattribute("real", real_attribute)
defjvp_attribute("real", real_attribute_jvp)
defattribute("imag", imag_attribute)
defjvp_attribute("imag", imag_attribute_jvp)


def math_fabs(g, ans, x):
    return g * math.copysign(1.0, x) if x != 0 else 0.0 * g


def math_pow_x(g, ans, x, y):
    """``y x^(y-1)``, as ``x ** y`` of Python numbers (``op.pow_number_x``): numpy's answers where
    Python's arithmetic raises (inf at 0 for ``0 < y < 1``, an overflow), 0 for ``y == 0``."""
    return g * y * x ** (y - 1) if y >= 1 or abs(x) >= 1 else g * op.power_slope(x, y)


def math_pow_y(g, ans, x, y):
    return g * ans * math.log(x) if x > 0 else 0.0 * g


def math_atan2_y(g, ans, y, x):
    """``x / (x^2 + y^2)`` as ``(x / h) / h``, ``h = hypot(x, y)``: the sum of squares underflows
    to 0 for a point near (0, 0) (1e-300), where the derivative is large but finite. NaN at
    (0, 0), where it has none (as ``np.arctan2``'s)."""
    return g * (x / math.hypot(x, y)) / math.hypot(x, y) if x or y else g * math.nan


def math_atan2_x(g, ans, y, x):
    return -g * (y / math.hypot(x, y)) / math.hypot(x, y) if x or y else g * math.nan


def math_hypot_x(g, ans, x, y):
    return g * x / ans if ans else 0.0 * g  # 0 at 0, as np.hypot


def math_hypot_y(g, ans, x, y):
    return g * y / ans if ans else 0.0 * g


def math_asinh(g, ans, x):
    return g / math.hypot(x, 1.0)


def math_acosh(g, ans, x):
    return g / (math.sqrt(x - 1) * math.sqrt(x + 1)) if x != 1 else g * math.inf


def math_atanh(g, ans, x):
    return g / (1 - x**2)


def math_erf(g, ans, x):
    return g * 2 / math.sqrt(math.pi) * math.exp(-x * x)


def math_erfc(g, ans, x):
    return -g * 2 / math.sqrt(math.pi) * math.exp(-x * x)


def math_degrees(g, ans, x):
    return g * (180 / math.pi)


def math_radians(g, ans, x):
    return g * (math.pi / 180)


def math_exp2(g, ans, x):
    return g * ans * math.log(2.0)


def math_cbrt(g, ans, x):
    return g / (3 * ans * ans) if ans else g * math.inf


for _f, _rule in [
    (math.exp, math_exp),
    (math.sqrt, math_sqrt),
    (math.sin, math_sin),
    (math.cos, math_cos),
    (math.tan, math_tan),
    (math.tanh, math_tanh),
    (math.sinh, math_sinh),
    (math.cosh, math_cosh),
    (math.asin, math_asin),
    (math.acos, math_acos),
    (math.atan, math_atan),
    (math.log1p, math_log1p),
    (math.expm1, math_expm1),
    (math.log2, math_log2),
    (math.log10, math_log10),
    (math.fabs, math_fabs),
    (math.asinh, math_asinh),
    (math.acosh, math_acosh),
    (math.atanh, math_atanh),
    (math.erf, math_erf),
    (math.erfc, math_erfc),
    (math.degrees, math_degrees),
    (math.radians, math_radians),
    (getattr(math, "exp2", None), math_exp2),  # Python >= 3.11
    (getattr(math, "cbrt", None), math_cbrt),
]:
    if _f is not None:
        defvjp(_f, _rule)
        defjvp_as_vjp(_f)
defvjp(math.log, math_log, math_log_base)
defvjp(math.pow, math_pow_x, math_pow_y)
defvjp(math.atan2, math_atan2_y, math_atan2_x)
defvjp(math.hypot, math_hypot_x, math_hypot_y)
# functions of numbers: each adjoint is g times a partial derivative, so is each tangent
for _f in (math.log, math.pow, math.atan2, math.hypot):
    defjvp_as_vjp(_f)

# --------------------------------------------------------------------------- builtins


defvjp(abs, absolute)  # as np.abs, a complex x too
defjvp(abs, absolute_jvp)


def builtin_float(g, ans, x=0.0):
    return g


defvjp(float, builtin_float)
defvjp(np.float64, builtin_float)


def builtin_float_jvp(t, ans, x=0.0):
    return float(t)


def float64_jvp(t, ans, x=0.0):
    return np.float64(t)


defjvp(float, builtin_float_jvp)
defjvp(np.float64, float64_jvp)


def float32(g, ans, x=0.0):
    return g


defvjp(np.float32, float32)


def float32_jvp(t, ans, x=0.0):
    return np.float32(t)


defjvp(np.float32, float32_jvp)


def builtin_pow_x(g, ans, base, exp, mod=None):
    return unbroadcast(g * op.power_slope(base, exp), base)


def builtin_pow_y(g, ans, base, exp, mod=None):
    return unbroadcast(
        g * ans * np.log(np.where(base == 0, 1, base), dtype=np.result_type(ans)), exp
    )


defvjp(pow, builtin_pow_x, builtin_pow_y, DISCRETE)


def builtin_pow_x_jvp(t, ans, base, exp, mod=None):
    return t * op.power_slope(base, exp)


def builtin_pow_y_jvp(t, ans, base, exp, mod=None):
    return t * ans * np.log(np.where(base == 0, 1, base), dtype=np.result_type(ans))


defjvp(pow, builtin_pow_x_jvp, builtin_pow_y_jvp, DISCRETE)
