"""One small wrapper per rule and call form, and the cases that check every rule with them.

A wrapper takes the differentiable arguments positionally and everything else by keyword, named
as the rule's parameters, so that ``cpsad.vjp(wrapper, *differentiable, **rest)`` differentiates
exactly the primitive. Each ``Case`` names the primitive, its arguments, which of them are checked,
and the wrapper; tests/test_rules.py runs the rule on its own and through the wrapper, against
central finite differences with random cotangents, and against autograd where it has the function.
"""

from __future__ import annotations

import math
import operator
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cpsad.rules import core
from cpsad.rules import joining as jn
from cpsad.runtime import (
    as_sequence,
)

# ----------------------------------------------------------------------------- primitives


class Operator:
    """A Python operator, as the rule table knows it (``"add"``) and as a function."""

    def __init__(self, name: str, fn: Callable):
        self.name, self.fn, self.rule = name, fn, core.OPERATORS[name]
        self.__name__ = f"operator {name}"

    def __call__(self, *args):
        return self.fn(*args)


class Method:
    """``x.name(*args, **kwargs)``: the receiver is the rule's first parameter."""

    def __init__(self, name: str):
        self.name, self.rule = name, core.METHODS[name]
        self.__name__ = f".{name}()"

    def __call__(self, x, *args, **kwargs):
        return getattr(x, self.name)(*args, **kwargs)


class Attribute:
    def __init__(self, name: str):
        self.name, self.rule = name, core.ATTRIBUTES[name]
        self.__name__ = f".{name}"

    def __call__(self, x):
        return getattr(x, self.name)


@dataclass
class Case:
    prim: object  # a function with a registered rule, an Operator / Method / Attribute, or None
    args: tuple  # the primitive's positional arguments
    wrt: tuple  # which of them are differentiated
    kwargs: dict  # the primitive's keyword arguments
    fn: Callable  # the wrapper: the wrt arguments positionally, the rest by keyword
    fn_kwargs: dict  # the keywords the wrapper gets
    autograd: str | None = None  # why autograd cannot be the oracle here, or None
    direction: Callable | None = None  # constrains directions (symmetric matrices, ...)
    float64: str | None = None  # why numpy computes this in float64 from float32 inputs
    xfail: str | None = None  # a known bug outside the rules (the pipeline) it runs into
    forward_xfail: str | None = None  # one forward mode's pipeline alone runs into
    rtol: float = 1e-5
    atol: float = 1e-7
    eps: float = 1e-6  # the finite differences' step (larger for results in float32)
    adjoint_form: Callable | None = None  # the cotangent as the rule receives it (check_rule)
    # why the tangent rule is the adjoint rule's transpose only up to more than rounding (two
    # integrations of an ODE, to its tolerance): its tangents are then checked end to end only
    inexact_transpose: str | None = None
    label: str = ""

    @property
    def rule(self):
        if self.prim is None:  # checked end to end only
            return None
        return getattr(self.prim, "rule", None) or core.lookup(self.prim)

    @property
    def id(self) -> str:
        return f"{self.fn.__name__}{self.label}"

    def diff_args(self) -> tuple:
        return tuple(self.args[i] for i in self.wrt)


CASES: list[Case] = []
_seen: dict[str, int] = {}


def case(fn, prim, *args, wrt=(0,), kw=None, fn_kw=None, autograd=None, **options):
    """Add a case; the wrapper's keywords default to the other positional arguments by name."""
    wrt = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    kw = dict(kw or {})
    if fn_kw is None:
        rule = getattr(prim, "rule", None) or core.lookup(prim)
        names = list(rule.signature.parameters)
        fn_kw = {names[j]: a for j, a in enumerate(args) if j not in wrt}
        fn_kw.update(kw)
    n = _seen[fn.__name__] = _seen.get(fn.__name__, -1) + 1
    c = Case(prim, tuple(args), wrt, kw, fn, fn_kw, autograd, label=f"-{n}", **options)
    CASES.append(c)
    return c


def end_to_end(fn, *args, autograd=None, xfail=None, **fn_kw):
    """A case checked through ``cpsad.vjp`` only: a wrapper of several primitives (``[a, b]`` and
    ``np.array``), whose finite differences are taken of the wrapper itself."""
    n = _seen[fn.__name__] = _seen.get(fn.__name__, -1) + 1
    c = Case(
        None, args, tuple(range(len(args))), {}, fn, fn_kw, autograd, xfail=xfail, label=f"-{n}"
    )
    CASES.append(c)
    return c


R = np.random.default_rng(20240531)


def u(*shape, lo=-1.0, hi=1.0):
    """Uniform random numbers: an array of ``shape`` (a 0-d array for no shape)."""
    return np.asarray(R.uniform(lo, hi, shape))


def away(*shape, lo=0.3, hi=1.5):
    """Random numbers of either sign, at least ``lo`` away from zero."""
    return u(*shape, lo=lo, hi=hi) * np.where(u(*shape) < 0, -1.0, 1.0)


def spd(n, batch=()):
    """Symmetric positive definite matrices."""
    a = u(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def symmetric(i, v):
    return (v + np.swapaxes(v, -1, -2)) / 2


NO_MATH = "the math module calls float() on autograd's boxes"

# ============================================================================= operators


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def div(x, y):
    return x / y


def pow_(x, y):
    return x**y


def square_op(x):
    return x**2


def cube_op(x):
    return x**3


def matmul(x, y):
    return x @ y


def mod(x, y):
    return x % y


def neg(x):
    return -x


def pos(x):
    return +x


def abs_builtin(x):
    return abs(x)


ADD = Operator("add", operator.add)
SUB = Operator("sub", operator.sub)
MUL = Operator("mul", operator.mul)
DIV = Operator("div", operator.truediv)
POW = Operator("pow", operator.pow)
MATMUL = Operator("matmul", operator.matmul)
MOD = Operator("mod", operator.mod)
NEG = Operator("neg", operator.neg)
POS = Operator("pos", operator.pos)

# every broadcasting direction, scalars and 0-d arrays
BROADCAST = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((3, 1), (1, 4)),
    ((2, 1, 3), (4, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((1,), (2, 3)),
]
for sx, sy in BROADCAST:
    for f, p in [(add, ADD), (sub, SUB), (mul, MUL)]:
        case(f, p, u(*sx), u(*sy), wrt=(0, 1))
    case(div, DIV, u(*sx), away(*sy), wrt=(0, 1))
    case(pow_, POW, u(*sx, lo=0.5, hi=2.0), u(*sy), wrt=(0, 1))
for f, p in [(add, ADD), (sub, SUB), (mul, MUL), (div, DIV), (pow_, POW)]:
    case(f, p, 0.7, u(2, 3, lo=0.5, hi=1.5), wrt=(0, 1))  # a Python float and an array
    case(f, p, u(3, lo=0.5, hi=1.5), 1.3, wrt=(0, 1))
    case(f, p, 0.7, 1.3, wrt=(0, 1))  # two Python floats
    case(f, p, np.float64(0.7), u(lo=0.5, hi=1.5), wrt=(0, 1))  # a numpy scalar, a 0-d array
case(square_op, POW, away(2, 3), 2, fn_kw={})
case(cube_op, POW, u(4), 3, fn_kw={})  # negative bases: only the base is differentiated
# x ** y of Python numbers (chosen by the kinds): Python's arithmetic, numpy's answers at x == 0
POW_NUMBER = Operator("pow_number", operator.pow)
FLOATS = "Python floats: the float32 checks are of arrays"
case(pow_, POW_NUMBER, 0.7, 1.3, wrt=(0, 1), float64=FLOATS)
case(pow_, POW_NUMBER, 1.6, -0.4, wrt=(0, 1), float64=FLOATS)
case(pow_, POW_NUMBER, -1.5, 3.0, wrt=0, float64=FLOATS)
case(square_op, POW_NUMBER, 0.8, 2, fn_kw={}, float64=FLOATS)
# x ** y where the kinds do not show it raises nothing (y a name, or a constant below 1 of a
# value that may be a Python float): power_slope, 0 for y == 0
POW_ANY = Operator("pow_any", operator.pow)
case(pow_, POW_ANY, u(2, 3, lo=0.5, hi=2.0), u(3), wrt=(0, 1))
case(pow_, POW_ANY, u(3, lo=0.5, hi=2.0), np.array([0.0, 1.0, 2.5]), wrt=(0, 1))
case(pow_, POW_ANY, 0.7, 1.3, wrt=(0, 1), float64=FLOATS)
case(pow_, POW_ANY, 0.4, -2.5, wrt=(0, 1), float64=FLOATS)
# x / y of a numpy x by what may be a Python number (chosen by the kinds): np.divide
DIV_NUMPY = Operator("div_numpy", operator.truediv)
case(div, DIV_NUMPY, u(2, 3), 1.3, wrt=(0, 1))
case(div, DIV_NUMPY, np.float64(0.7), -1.3, wrt=(0, 1))
INT64 = "float32 and an int64 array make float64"
case(pow_, POW, u(3, lo=0.5, hi=2.0), np.array([1, 2, 3]), float64=INT64)  # integer exponents


# `+` and `*` where operands may be lists or tuples: joined, repeated -- or arithmetic
def count_times(y, x):
    return x * y


ADD_ANY = Operator("add_any", operator.add)
REPEAT_X = Operator("repeat_x", operator.mul)
REPEAT_Y = Operator("repeat_y", operator.mul)
SEQUENCES = "autograd's boxes do not join lists"
case(add, ADD_ANY, [u(2), 0.3], [0.5, u(3)], wrt=(0, 1), autograd=SEQUENCES)
case(add, ADD_ANY, (0.2,), (u(2), 0.4), wrt=(0, 1), autograd=SEQUENCES)
case(add, ADD_ANY, u(2, 3), u(3), wrt=(0, 1))  # arrays: added
case(add, ADD_ANY, 0.7, 1.3, wrt=(0, 1))
case(mul, REPEAT_X, [u(2), 0.3], 3, autograd=SEQUENCES)
case(count_times, REPEAT_Y, 2, (0.5, u(3)), wrt=(1,), autograd=SEQUENCES)
case(neg, NEG, u(2, 3))
case(neg, NEG, 0.4)
case(pos, POS, u(2, 3), autograd="autograd's ArrayBox has no unary +")
case(abs_builtin, abs, away(2, 3))
case(abs_builtin, abs, -0.4)

# x % y away from its jumps: x / y not near an integer
case(mod, MOD, np.array([2.3, -1.7, 0.4, 5.2]), np.array([1.1, 0.9, -0.7, 1.5]), wrt=(0, 1))
case(mod, MOD, np.array([[2.3, -1.7], [0.4, 3.0]]), 1.1, wrt=(0, 1))

for sx, sy in [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
]:
    case(matmul, MATMUL, u(*sx), u(*sy), wrt=(0, 1))

# ============================================================================= indexing


def getitem(x, index):
    return x[index]


def index_slices(x):
    return x[1:, None, ::2]


def index_reversed(x):
    return x[::-1, -1]


def index_ellipsis(x):
    return x[..., 0]


def index_repeated(x):
    return x[[0, 0, 2]]


def index_mask(x):
    return x[x > 0]


def index_labels(logp, labels):
    n = logp.shape[0]
    return logp[np.arange(n), labels]


def index_scalar(x):
    return x[1, -1]


def index_list(xs):
    return xs[-1] * xs[0] + xs[1:][0]


def index_tuple(xs):
    return xs[-2] * xs[::-1][0]


GETITEM = Operator("getitem", operator.getitem)
X34 = u(3, 4)
LABELS = np.array([2, 0, 3])
for index in [
    0,
    -1,
    (1, -2),
    np.s_[1:],
    np.s_[::2],
    np.s_[::-1],
    np.s_[1:, None, ::2],
    np.s_[None],
    np.s_[..., 0],
    np.s_[..., None, 1:3],
    Ellipsis,
    [0, 0, 2],
    np.array([[0, 1], [1, 1]]),
    X34 > 0,
    (np.arange(3), LABELS),
    np.s_[:, [0, 0, 3]],
    (np.array([0, 2, 2]), slice(None)),
]:
    case(getitem, GETITEM, X34, index)
case(getitem, GETITEM, u(), ())  # a 0-d array
case(index_slices, GETITEM, X34, np.s_[1:, None, ::2], fn_kw={})
case(index_reversed, GETITEM, X34, np.s_[::-1, -1], fn_kw={})
case(index_ellipsis, GETITEM, u(2, 3, 4), np.s_[..., 0], fn_kw={})
case(index_repeated, GETITEM, u(4), [0, 0, 2], fn_kw={})
end_to_end(index_mask, u(3, 4))
case(index_labels, GETITEM, u(3, 4), (np.arange(3), LABELS), fn_kw={"labels": LABELS})
case(index_scalar, GETITEM, X34, (1, -1), fn_kw={})
case(getitem, GETITEM, [0.3, u(2), -0.5], -1)
# x[i] where x may be an object of a class of yours and i is differentiable: getitem's rules, and
# the index's derivative is zero for arrays, lists and dicts (an error for a Python __getitem__)
GETITEM_ANY = Operator("getitem_any", operator.getitem)
case(getitem, GETITEM_ANY, X34, (1, -2))
case(getitem, GETITEM_ANY, [0.3, u(2), -0.5], 1)
case(getitem, GETITEM_ANY, {"a": u(2), "b": 0.3}, "b")
case(getitem, GETITEM, (0.3, u(2), -0.5), np.s_[::-2])
end_to_end(index_list, [0.3, -0.8, 1.1])
end_to_end(index_tuple, (0.3, u(2), -0.5))

# ============================================================================= elementwise


def exp(x):
    return np.exp(x)


def exp2(x):
    return np.exp2(x)


def expm1(x):
    return np.expm1(x)


def log(x):
    return np.log(x)


def log2(x):
    return np.log2(x)


def log10(x):
    return np.log10(x)


def log1p(x):
    return np.log1p(x)


def sqrt(x):
    return np.sqrt(x)


def cbrt(x):
    return np.cbrt(x)


def square(x):
    return np.square(x)


def reciprocal(x):
    return np.reciprocal(x)


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def tan(x):
    return np.tan(x)


def arcsin(x):
    return np.arcsin(x)


def arccos(x):
    return np.arccos(x)


def arctan(x):
    return np.arctan(x)


def sinh(x):
    return np.sinh(x)


def cosh(x):
    return np.cosh(x)


def tanh(x):
    return np.tanh(x)


def arcsinh(x):
    return np.arcsinh(x)


def arccosh(x):
    return np.arccosh(x)


def arctanh(x):
    return np.arctanh(x)


def absolute(x):
    return np.absolute(x)


def abs_np(x):
    return np.abs(x)


def fabs(x):
    return np.fabs(x)


def negative(x):
    return np.negative(x)


def positive(x):
    return np.positive(x)


def deg2rad(x):
    return np.deg2rad(x)


def radians(x):
    return np.radians(x)


def rad2deg(x):
    return np.rad2deg(x)


def degrees(x):
    return np.degrees(x)


POSITIVE = dict(lo=0.3, hi=2.0)
for f, p, dom, ag in [
    (exp, np.exp, {}, None),
    (exp2, np.exp2, {}, None),
    (expm1, np.expm1, {}, None),
    (log, np.log, POSITIVE, None),
    (log2, np.log2, POSITIVE, None),
    (log10, np.log10, POSITIVE, None),
    (log1p, np.log1p, dict(lo=-0.5, hi=2.0), None),
    (sqrt, np.sqrt, POSITIVE, None),
    (cbrt, np.cbrt, POSITIVE, "autograd has no rule for np.cbrt"),
    (square, np.square, {}, None),
    (reciprocal, np.reciprocal, POSITIVE, None),
    (sin, np.sin, {}, None),
    (cos, np.cos, {}, None),
    (tan, np.tan, {}, None),
    (arcsin, np.arcsin, dict(lo=-0.9, hi=0.9), None),
    (arccos, np.arccos, dict(lo=-0.9, hi=0.9), None),
    (arctan, np.arctan, dict(lo=-2, hi=2), None),
    (sinh, np.sinh, {}, None),
    (cosh, np.cosh, {}, None),
    (tanh, np.tanh, {}, None),
    (arcsinh, np.arcsinh, dict(lo=-2, hi=2), None),
    (arccosh, np.arccosh, dict(lo=1.2, hi=3), None),
    (arctanh, np.arctanh, dict(lo=-0.9, hi=0.9), None),
    (negative, np.negative, {}, None),
    (positive, np.positive, {}, "autograd has no rule for np.positive"),
    (deg2rad, np.deg2rad, {}, None),
    (radians, np.radians, {}, None),
    (rad2deg, np.rad2deg, {}, None),
    (degrees, np.degrees, {}, None),
]:
    case(f, p, u(2, 3, **dom), autograd=ag)
    case(f, p, float(u(**dom)), autograd=ag)
    case(f, p, u(**dom), autograd=ag)
case(cbrt, np.cbrt, -u(3, **POSITIVE), autograd="autograd has no rule for np.cbrt")
for f, p in [(absolute, np.absolute), (abs_np, np.abs), (fabs, np.fabs)]:
    case(f, p, away(2, 3))
    case(f, p, -0.8)

# ----------------------------------------------------------------------------- two arguments


def add_np(x, y):
    return np.add(x, y)


def subtract(x, y):
    return np.subtract(x, y)


def multiply(x, y):
    return np.multiply(x, y)


def divide(x, y):
    return np.divide(x, y)


def true_divide(x, y):
    return np.true_divide(x, y)


def power(x, y):
    return np.power(x, y)


def float_power(x, y):
    return np.float_power(x, y)


def remainder(x, y):
    return np.remainder(x, y)


def fmod(x, y):
    return np.fmod(x, y)


def maximum(x, y):
    return np.maximum(x, y)


def minimum(x, y):
    return np.minimum(x, y)


def fmax(x, y):
    return np.fmax(x, y)


def fmin(x, y):
    return np.fmin(x, y)


def arctan2(y, x):
    return np.arctan2(y, x)


def hypot(x, y):
    return np.hypot(x, y)


def logaddexp(x, y):
    return np.logaddexp(x, y)


def logaddexp2(x, y):
    return np.logaddexp2(x, y)


for sx, sy in [((2, 3), (2, 3)), ((2, 3), (3,)), ((3, 1), (1, 4)), ((), (3,))]:
    for f, p, ag in [
        (add_np, np.add, None),
        (subtract, np.subtract, None),
        (multiply, np.multiply, None),
        (maximum, np.maximum, None),
        (minimum, np.minimum, None),
        (fmax, np.fmax, None),
        (fmin, np.fmin, None),
        (arctan2, np.arctan2, None),
        (hypot, np.hypot, None),
        (logaddexp, np.logaddexp, None),
        (logaddexp2, np.logaddexp2, None),
    ]:
        case(f, p, u(*sx), u(*sy), wrt=(0, 1), autograd=ag)
    for f, p, ag in [
        (divide, np.divide, None),
        (true_divide, np.true_divide, None),
    ]:
        case(f, p, u(*sx), away(*sy), wrt=(0, 1), autograd=ag)
    case(power, np.power, u(*sx, lo=0.5, hi=2.0), u(*sy), wrt=(0, 1))
    case(
        float_power,
        np.float_power,
        u(*sx, lo=0.5, hi=2.0),
        u(*sy),
        wrt=(0, 1),
        autograd="autograd has no rule for np.float_power",
        float64="np.float_power computes in float64",
    )
for f, p in [(maximum, np.maximum), (minimum, np.minimum), (hypot, np.hypot)]:
    case(f, p, 0.3, -0.6, wrt=(0, 1))
    case(f, p, u(2, 3), 0.3, wrt=(0, 1))  # a number against an array: its tangent broadcast
X_MOD = np.array([2.3, -1.7, 0.4, 5.2])
Y_MOD = np.array([1.1, 0.9, -0.7, 1.5])
case(remainder, np.remainder, X_MOD, Y_MOD, wrt=(0, 1))
case(fmod, np.fmod, X_MOD, Y_MOD, wrt=(0, 1), autograd="autograd has no rule for np.fmod")


def clip(a, a_min=None, a_max=None):
    return np.clip(a, a_min, a_max)


def clip_method(a, min=None, max=None):
    return a.clip(min, max)


def where(x, y, condition):
    return np.where(condition, x, y)


CLIPPED = np.array([[-0.9, -0.2, 0.1], [0.35, 0.6, 1.2]])
case(clip, np.clip, CLIPPED, -0.5, 0.5)
case(clip, np.clip, CLIPPED, None, 0.5)
case(clip, np.clip, CLIPPED, -0.5, None)
NO_BOUNDS = "autograd's clip has no derivative with respect to its bounds"
case(clip, np.clip, CLIPPED, np.array([-0.5, 0.0, 0.2]), 0.5, wrt=(0, 1, 2), autograd=NO_BOUNDS)
case(clip, np.clip, CLIPPED, -0.5, np.array([[0.3], [0.5]]), wrt=(0, 1, 2), autograd=NO_BOUNDS)
case(clip, np.clip, 0.7, -0.5, 0.5, wrt=(0, 1, 2), autograd=NO_BOUNDS)
case(clip_method, Method("clip"), CLIPPED, -0.5, 0.5, wrt=(0, 1, 2), autograd=NO_BOUNDS)
case(clip_method, Method("clip"), CLIPPED, -0.5, 0.5)
MASK = np.array([[True, False, True], [False, False, True]])
case(where, np.where, MASK, u(2, 3), u(2, 3), wrt=(1, 2))
NO_WHERE = "autograd's where cannot broadcast x and y against the condition"
case(where, np.where, MASK, u(3), 0.5, wrt=(1, 2), autograd=NO_WHERE)
case(where, np.where, MASK[0], u(2, 3), u(2, 1), wrt=(1, 2), autograd=NO_WHERE)

# ============================================================================= math module


def math_exp(x):
    return math.exp(x)


def math_log(x):
    return math.log(x)


def math_log_base(x, base):
    return math.log(x, base)


def math_sqrt(x):
    return math.sqrt(x)


def math_sin(x):
    return math.sin(x)


def math_cos(x):
    return math.cos(x)


def math_tan(x):
    return math.tan(x)


def math_tanh(x):
    return math.tanh(x)


def math_sinh(x):
    return math.sinh(x)


def math_cosh(x):
    return math.cosh(x)


def math_asin(x):
    return math.asin(x)


def math_acos(x):
    return math.acos(x)


def math_atan(x):
    return math.atan(x)


def math_asinh(x):
    return math.asinh(x)


def math_acosh(x):
    return math.acosh(x)


def math_atanh(x):
    return math.atanh(x)


def math_log1p(x):
    return math.log1p(x)


def math_expm1(x):
    return math.expm1(x)


def math_log2(x):
    return math.log2(x)


def math_log10(x):
    return math.log10(x)


def math_fabs(x):
    return math.fabs(x)


def math_erf(x):
    return math.erf(x)


def math_erfc(x):
    return math.erfc(x)


def math_degrees(x):
    return math.degrees(x)


def math_radians(x):
    return math.radians(x)


def math_pow(x, y):
    return math.pow(x, y)


def math_atan2(y, x):
    return math.atan2(y, x)


def math_hypot(x, y):
    return math.hypot(x, y)


def float_builtin(x):
    return float(x)


def pow_builtin(base, exp):
    return pow(base, exp)


def float64_builtin(x):
    return np.float64(x)


def float32_builtin(x):
    return np.float32(x)


def math_exp2(x):
    return math.exp2(x)


def math_cbrt(x):
    return math.cbrt(x)


for f, p, x in [
    (math_exp, math.exp, 0.3),
    (math_log, math.log, 1.7),
    (math_sqrt, math.sqrt, 1.7),
    (math_sin, math.sin, 0.3),
    (math_cos, math.cos, 0.3),
    (math_tan, math.tan, 0.3),
    (math_tanh, math.tanh, 0.3),
    (math_sinh, math.sinh, 0.3),
    (math_cosh, math.cosh, 0.3),
    (math_asin, math.asin, 0.3),
    (math_acos, math.acos, 0.3),
    (math_atan, math.atan, 0.3),
    (math_asinh, math.asinh, 0.3),
    (math_acosh, math.acosh, 1.3),
    (math_atanh, math.atanh, 0.3),
    (math_log1p, math.log1p, 0.3),
    (math_expm1, math.expm1, 0.3),
    (math_log2, math.log2, 1.3),
    (math_log10, math.log10, 1.3),
    (math_fabs, math.fabs, -0.3),
    (math_erf, math.erf, 0.3),
    (math_erfc, math.erfc, 0.3),
    (math_degrees, math.degrees, 0.3),
    (math_radians, math.radians, 0.3),
]:
    case(f, p, x, autograd=NO_MATH)
case(math_log_base, math.log, 1.7, 3.0, wrt=(0, 1), autograd=NO_MATH)
case(math_log_base, math.log, 1.7, 10, autograd=NO_MATH)
case(math_pow, math.pow, 1.7, 0.6, wrt=(0, 1), autograd=NO_MATH)
case(math_atan2, math.atan2, 0.4, -0.6, wrt=(0, 1), autograd=NO_MATH)
case(math_hypot, math.hypot, 0.4, -0.6, wrt=(0, 1), autograd=NO_MATH)
case(
    float_builtin,
    float,
    np.float64(0.4),
    autograd="autograd's boxes have no float()",
    float64="float() makes a Python float",
)
case(pow_builtin, pow, 1.3, 0.6, wrt=(0, 1))
NO_FLOAT = "autograd's boxes have no float()"
case(float_builtin, float, u(), autograd=NO_FLOAT, float64="float() makes a Python float")
case(float64_builtin, np.float64, 0.4, autograd=NO_FLOAT)
case(float64_builtin, np.float64, u(2, 3), autograd=NO_FLOAT, float64="np.float64 makes float64")
F32_OUT = "np.float32 makes float32"
case(float32_builtin, np.float32, 0.4, autograd=NO_FLOAT, float64=F32_OUT, eps=1e-3, rtol=1e-3)
case(float32_builtin, np.float32, u(3), autograd=NO_FLOAT, float64=F32_OUT, eps=1e-3, rtol=1e-3)
for name, x in [("exp2", 0.3), ("cbrt", -1.3)]:  # Python >= 3.11
    if hasattr(math, name):
        case(globals()[f"math_{name}"], getattr(math, name), x, autograd=NO_MATH)
case(pow_builtin, pow, u(3, lo=0.5, hi=1.5), 2.5, wrt=(0, 1))

# ============================================================================= reductions


def sum_(a, axis=None, keepdims=False):
    return np.sum(a, axis=axis, keepdims=keepdims)


def sum_all(a):
    return np.sum(a)


def mean(a, axis=None, keepdims=False):
    return np.mean(a, axis=axis, keepdims=keepdims)


def prod(a, axis=None, keepdims=False):
    return np.prod(a, axis=axis, keepdims=keepdims)


def max_(a, axis=None, keepdims=False):
    return np.max(a, axis=axis, keepdims=keepdims)


def min_(a, axis=None, keepdims=False):
    return np.min(a, axis=axis, keepdims=keepdims)


def amax(a, axis=None, keepdims=False):
    return np.amax(a, axis=axis, keepdims=keepdims)


def amin(a, axis=None, keepdims=False):
    return np.amin(a, axis=axis, keepdims=keepdims)


def var(a, axis=None, ddof=0, keepdims=False):
    return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)


def std(a, axis=None, ddof=0, keepdims=False):
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)


def sum_method(a, axis=None, keepdims=False):
    return a.sum(axis=axis, keepdims=keepdims)


def mean_method(a, axis=None, keepdims=False):
    return a.mean(axis=axis, keepdims=keepdims)


def prod_method(a, axis=None, keepdims=False):
    return a.prod(axis=axis, keepdims=keepdims)


def max_method(a, axis=None, keepdims=False):
    return a.max(axis=axis, keepdims=keepdims)


def min_method(a, axis=None, keepdims=False):
    return a.min(axis=axis, keepdims=keepdims)


def var_method(a, axis=None, ddof=0, keepdims=False):
    return a.var(axis=axis, ddof=ddof, keepdims=keepdims)


def std_method(a, axis=None, ddof=0, keepdims=False):
    return a.std(axis=axis, ddof=ddof, keepdims=keepdims)


def mean_literal(a):
    return np.mean(a, axis=(0, -1), keepdims=True)


def var_literal(a):
    return a.var(1, ddof=1)


AXES = [
    dict(),
    dict(axis=0),
    dict(axis=-1),
    dict(axis=1, keepdims=True),
    dict(axis=(0, 2)),
    dict(axis=(-1, 0), keepdims=True),
    dict(axis=None, keepdims=True),
]
X234 = u(2, 3, 4, lo=0.5, hi=1.5)  # positive: prod's rule divides only where no zero
for kw in AXES:
    for f, p in [
        (sum_, np.sum),
        (mean, np.mean),
        (prod, np.prod),
        (max_, np.max),
        (min_, np.min),
        (amax, np.amax),
        (amin, np.amin),
        (var, np.var),
        (std, np.std),
    ]:
        case(f, p, X234 * np.sign(u(2, 3, 4)), kw=kw)
    for f, m in [
        (sum_method, "sum"),
        (mean_method, "mean"),
        (prod_method, "prod"),
        (max_method, "max"),
        (min_method, "min"),
        (var_method, "var"),
        (std_method, "std"),
    ]:
        case(f, Method(m), X234, kw=kw)
for kw in [dict(ddof=1), dict(axis=0, ddof=1), dict(axis=(0, 1), ddof=2, keepdims=True)]:
    case(var, np.var, X234, kw=kw)
    case(std, np.std, X234, kw=kw)
case(sum_all, np.sum, u(3, 2), fn_kw={})
case(sum_all, np.sum, 0.4, fn_kw={})
case(mean_literal, np.mean, X234, kw=dict(axis=(0, -1), keepdims=True), fn_kw={})
case(var_literal, Method("var"), X234, 1, kw=dict(ddof=1), fn_kw={})
WITH_ZERO = np.array([[0.5, 0.0, 1.5], [2.0, 0.7, 0.0], [0.3, 0.4, 0.0]])
for kw in [dict(), dict(axis=0), dict(axis=1, keepdims=True), dict(axis=-1)]:
    case(prod, np.prod, WITH_ZERO, kw=kw, autograd="autograd's prod divides by zeros")


def cumsum(a, axis=None):
    return np.cumsum(a, axis=axis)


def cumprod(a, axis=None):
    return np.cumprod(a, axis=axis)


def cumsum_method(a, axis=None):
    return a.cumsum(axis=axis)


def cumprod_method(a, axis=None):
    return a.cumprod(axis=axis)


NO_CUMPROD = "autograd has no rule for np.cumprod"
for kw in [dict(), dict(axis=0), dict(axis=-1), dict(axis=1)]:
    case(cumsum, np.cumsum, u(2, 3, 4), kw=kw)
    case(cumsum_method, Method("cumsum"), u(2, 3, 4), kw=kw)
    case(cumprod, np.cumprod, X234, kw=kw, autograd=NO_CUMPROD)
    case(cumprod_method, Method("cumprod"), X234, kw=kw, autograd=NO_CUMPROD)
for kw in [dict(), dict(axis=0), dict(axis=1)]:
    case(cumprod, np.cumprod, WITH_ZERO, kw=kw, autograd=NO_CUMPROD)
case(cumprod, np.cumprod, np.array([0.5, 1.2, 0.0, 0.8, 0.0, 1.1]), autograd=NO_CUMPROD)
case(cumprod, np.cumprod, np.array([0.0, 1.2, 0.7]), autograd=NO_CUMPROD)

# ============================================================================= linear algebra


def dot(a, b):
    return np.dot(a, b)


def dot_method(a, b):
    return a.dot(b)


def matmul_np(x, y):
    return np.matmul(x, y)


def inner(a, b):
    return np.inner(a, b)


def outer(a, b):
    return np.outer(a, b)


def vdot(a, b):
    return np.vdot(a, b)


def tensordot(a, b, axes=2):
    return np.tensordot(a, b, axes=axes)


def tensordot_default(a, b):
    return np.tensordot(a, b)


for sa, sb in [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((), (3,)),
    ((2, 3), ()),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3,), (2, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((2, 3, 4), (5, 4, 2)),
]:
    case(dot, np.dot, u(*sa), u(*sb), wrt=(0, 1))
NO_DOT = "autograd's boxes have no .dot()"
case(dot_method, Method("dot"), u(2, 3), u(3, 4), wrt=(0, 1), autograd=NO_DOT)
case(dot_method, Method("dot"), u(2, 3, 4), u(4), wrt=(0, 1), autograd=NO_DOT)
case(matmul_np, np.matmul, u(5, 2, 3), u(3, 4), wrt=(0, 1))
for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (4, 3)), ((2, 3), (5, 4, 3)), ((), (2, 3))]:
    case(inner, np.inner, u(*sa), u(*sb), wrt=(0, 1))
case(outer, np.outer, u(3), u(4), wrt=(0, 1))
case(outer, np.outer, u(2, 2), u(3), wrt=(0, 1), autograd="autograd's outer takes vectors only")
case(vdot, np.vdot, u(2, 3), u(6), wrt=(0, 1), autograd="autograd has no rule for np.vdot")
case(tensordot_default, np.tensordot, u(2, 3, 4), u(3, 4, 5), wrt=(0, 1), fn_kw={})
for sa, sb, axes in [
    ((2, 3), (3, 4), 1),
    ((2, 3), (4, 5), 0),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (4, 5), ([-1], [0])),
    ((3, 4), (4, 3), ([0, 1], [1, 0])),
    ((2, 3), (3, 2), (1, 0)),
]:
    case(tensordot, np.tensordot, u(*sa), u(*sb), wrt=(0, 1), kw=dict(axes=axes))


def einsum1(a, subscripts):
    return np.einsum(subscripts, a)


def einsum2(a, b, subscripts):
    return np.einsum(subscripts, a, b)


def einsum3(a, b, c, subscripts):
    return np.einsum(subscripts, a, b, c)


def einsum_literal(a, b):
    return np.einsum("ij,jk->ik", a, b)


for subscripts, shapes in [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output
    ("ij,kj", [(2, 3), (4, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ij,j->", [(2, 3), (3,)]),  # j summed, i only in a
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),  # ellipsis, broadcasting
    ("...ij,...jk", [(1, 2, 3), (5, 3, 4)]),  # a broadcast batch, implicit output
    ("i...,i...->...", [(3, 2), (3, 1)]),
    ("ii,i->i", [(3, 3), (3,)]),  # a diagonal
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk->ik", [(40, 60), (60, 30)]),  # large enough for an optimized contraction order
    ("i,ij,j", [(2,), (2, 3), (3,)]),
]:
    ops = [u(*s) for s in shapes]
    fn = {1: einsum1, 2: einsum2, 3: einsum3}[len(ops)]
    wrt = tuple(range(1, len(ops) + 1))
    ag = "autograd's einsum cannot repeat a letter" if "ii" in subscripts else None
    case(fn, np.einsum, subscripts, *ops, wrt=wrt, fn_kw={"subscripts": subscripts}, autograd=ag)
for subscripts, shape in [
    ("ii->", (3, 3)),
    ("ii->i", (3, 3)),
    ("ij->", (2, 3)),
    ("ij->ji", (2, 3)),
]:
    ag = "autograd's einsum cannot repeat a letter" if "ii" in subscripts else None
    case(
        einsum1,
        np.einsum,
        subscripts,
        u(*shape),
        wrt=1,
        fn_kw={"subscripts": subscripts},
        autograd=ag,
    )
case(einsum_literal, np.einsum, "ij,jk->ik", u(2, 3), u(3, 4), wrt=(1, 2), fn_kw={})


def trace(a, offset=0, axis1=0, axis2=1):
    return np.trace(a, offset=offset, axis1=axis1, axis2=axis2)


def trace_method(a):
    return a.trace()


def diag(v, k=0):
    return np.diag(v, k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    return np.diagonal(a, offset, axis1, axis2)


def diagonal_method(a):
    return a.diagonal()


def tril(m, k=0):
    return np.tril(m, k)


def triu(m, k=0):
    return np.triu(m, k)


NO_TRACE = "autograd's trace takes no axis1, axis2"
case(trace, np.trace, u(3, 3), autograd=NO_TRACE)
case(trace, np.trace, u(3, 4), kw=dict(offset=1), autograd=NO_TRACE)
case(trace, np.trace, u(4, 3), kw=dict(offset=-2), autograd=NO_TRACE)
case(trace, np.trace, u(2, 3, 4), kw=dict(axis1=1, axis2=-1), autograd=NO_TRACE)
case(trace_method, Method("trace"), u(3, 3), fn_kw={})
case(diag, np.diag, u(3))
case(diag, np.diag, u(3), 1)
NO_DIAG = "autograd's diag of a matrix needs a square one"
NO_DIAGONAL = "autograd has no rule for np.diagonal"
case(diag, np.diag, u(3, 4), autograd=NO_DIAG)
case(diag, np.diag, u(3, 4), -1, autograd=NO_DIAG)
case(diag, np.diag, u(4, 3), 2, autograd=NO_DIAG)
case(diag, np.diag, u(3, 3))
case(diagonal, np.diagonal, u(3, 4), autograd=NO_DIAGONAL)
case(diagonal, np.diagonal, u(2, 3, 4), 1, 2, 0, autograd=NO_DIAGONAL)
case(diagonal_method, Method("diagonal"), u(3, 3), fn_kw={}, autograd=NO_DIAGONAL)
for k in (0, 1, -1):
    case(tril, np.tril, u(3, 4), k)
    case(triu, np.triu, u(3, 4), k)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def slogdet(a):
    return np.linalg.slogdet(a)


def logdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return logabsdet * 2.0


def logdet_attribute(a):
    return np.linalg.slogdet(a).logabsdet


def solve(a, b):
    return np.linalg.solve(a, b)


def cholesky(a, upper=False):
    return np.linalg.cholesky(a, upper=upper)


def cholesky_plain(a):
    return np.linalg.cholesky(a)


WELL = u(3, 3) + 3 * np.eye(3)  # well-conditioned
STACK = u(2, 3, 3) + 3 * np.eye(3)
case(inv, np.linalg.inv, WELL)
case(inv, np.linalg.inv, STACK)
case(det, np.linalg.det, WELL)
case(det, np.linalg.det, STACK)
case(det, np.linalg.det, -WELL)
# singular: det is 0, inv raises, the cofactors (det's derivative) are not 0
case(det, np.linalg.det, np.outer(u(3), u(3)) + np.outer(u(3), u(3)), autograd="autograd: inv")
case(det, np.linalg.det, np.array([[1.0, 2.0], [2.0, 4.0]]), autograd="autograd: inv")
case(slogdet, np.linalg.slogdet, WELL)
case(slogdet, np.linalg.slogdet, -STACK)
# `sign, logabsdet = ...` with `sign` unused: the continuation of the unpacking returns two
# adjoints where the shift expects one (transforms/cps.py epilogue vs shift_reset.py k_stmt)
end_to_end(logdet, WELL)
end_to_end(logdet_attribute, STACK, autograd="autograd's slogdet has no attributes")


def logabsdet_of(result):
    return result.logabsdet


NO_ATTRIBUTE = "autograd's slogdet has no attributes"
case(logabsdet_of, Attribute("logabsdet"), np.linalg.slogdet(WELL), autograd=NO_ATTRIBUTE)
case(logabsdet_of, Attribute("logabsdet"), np.linalg.slogdet(-STACK), autograd=NO_ATTRIBUTE)
case(solve, np.linalg.solve, WELL, u(3), wrt=(0, 1))
case(solve, np.linalg.solve, WELL, u(3, 2), wrt=(0, 1))
case(solve, np.linalg.solve, STACK, u(2, 3, 4), wrt=(0, 1))
NO_SOLVE = "autograd's solve follows numpy 1 (b a vector when a.ndim - 1), and cannot broadcast"
case(solve, np.linalg.solve, STACK, u(3), wrt=(0, 1), autograd=NO_SOLVE)
case(solve, np.linalg.solve, WELL, u(2, 3, 1), wrt=(0, 1), autograd=NO_SOLVE)
case(cholesky_plain, np.linalg.cholesky, spd(3), fn_kw={}, direction=symmetric)
case(cholesky_plain, np.linalg.cholesky, spd(3, (2,)), fn_kw={}, direction=symmetric)
case(
    cholesky,
    np.linalg.cholesky,
    spd(3),
    kw=dict(upper=True),
    direction=symmetric,
    autograd="autograd's cholesky has no upper",
)


def norm(x, ord=None, axis=None, keepdims=False):
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def norm_plain(x):
    return np.linalg.norm(x)


def no_norm(ord=None, keepdims=False, matrix=False):
    """Why autograd's np.linalg.norm cannot serve as the oracle, or None."""
    if keepdims:
        return "autograd's norm cannot keep dimensions"
    if matrix and ord not in (None, "fro", "nuc"):
        return "autograd has matrix norms fro and nuc only"
    if not matrix and ord == np.inf:
        return "autograd's inf-norm uses the p-norm formula (wrong)"
    if not matrix and ord is not None and ord <= 1:
        return "autograd has vector norms for ord > 1 only"
    return None


V = away(5)
case(norm_plain, np.linalg.norm, V, fn_kw={})
case(norm_plain, np.linalg.norm, u(2, 3, 4), fn_kw={})
for ord_ in [None, 2, 1, np.inf, -np.inf, 3, 0.5]:
    case(norm, np.linalg.norm, V, ord_, autograd=no_norm(ord_))
for kw in [
    dict(axis=1),
    dict(axis=-1, keepdims=True),
    dict(ord=1, axis=0),
    dict(ord=np.inf, axis=1),
]:
    case(norm, np.linalg.norm, u(3, 4), kw=kw, autograd=no_norm(kw.get("ord"), "keepdims" in kw))
M = u(3, 4)
for ord_ in [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
    case(norm, np.linalg.norm, M, ord_, autograd=no_norm(ord_, matrix=True), rtol=1e-4)
for kw in [
    dict(axis=(0, 2)),
    dict(ord="fro", axis=(2, 1), keepdims=True),
    dict(ord=2, axis=(1, 2)),
]:
    ag = no_norm(kw.get("ord"), "keepdims" in kw, matrix=True)
    case(norm, np.linalg.norm, u(2, 3, 4), kw=kw, autograd=ag, rtol=1e-4)

# ============================================================================= shapes


def reshape(a, shape):
    return np.reshape(a, shape)


def reshape_method(a):
    return a.reshape(4, 3)


def reshape_method_tuple(a):
    return a.reshape((2, -1))


def ravel(a):
    return np.ravel(a)


def ravel_method(a):
    return a.ravel()


def flatten_method(a):
    return a.flatten()


def transpose(a, axes=None):
    return np.transpose(a, axes)


def transpose_method(a):
    return a.transpose()


def transpose_method_axes(a):
    return a.transpose(1, 0, 2)


def transpose_method_tuple(a):
    return a.transpose((2, 0, 1))


def transpose_attribute(a):
    return a.T


def swapaxes(a, axis1, axis2):
    return np.swapaxes(a, axis1, axis2)


def swapaxes_method(a):
    return a.swapaxes(0, -1)


def moveaxis(a, source, destination):
    return np.moveaxis(a, source, destination)


def expand_dims(a, axis):
    return np.expand_dims(a, axis)


def squeeze(a, axis=None):
    return np.squeeze(a, axis)


def squeeze_method(a):
    return a.squeeze()


def broadcast_to(array, shape):
    return np.broadcast_to(array, shape)


def atleast_1d(a):
    return np.atleast_1d(a)


def atleast_2d(a):
    return np.atleast_2d(a)


def atleast_3d(a):
    return np.atleast_3d(a)


def flip(m, axis=None):
    return np.flip(m, axis)


def fliplr(m):
    return np.fliplr(m)


def flipud(m):
    return np.flipud(m)


def roll(a, shift, axis=None):
    return np.roll(a, shift, axis)


def copy(a):
    return np.copy(a)


def copy_method(a):
    return a.copy()


def astype_float(a):
    return a.astype(float)


X = u(2, 3, 2)
case(reshape, np.reshape, u(3, 4), (2, 6))
case(reshape, np.reshape, u(3, 4), (-1,))
case(reshape_method, Method("reshape"), u(3, 4), 4, 3, fn_kw={})
case(reshape_method_tuple, Method("reshape"), u(3, 4), (2, -1), fn_kw={})
case(ravel, np.ravel, X)
case(ravel_method, Method("ravel"), X)
case(flatten_method, Method("flatten"), X)
case(transpose, np.transpose, X)
case(transpose, np.transpose, X, (2, 0, 1))
case(transpose, np.transpose, X, (-1, 0, 1), autograd="autograd's transpose: no negative axes")
case(transpose_method, Method("transpose"), X, fn_kw={})
case(
    transpose_method_axes,
    Method("transpose"),
    X,
    1,
    0,
    2,
    fn_kw={},
    autograd="autograd's boxes take transpose axes as one tuple",
)
case(transpose_method_tuple, Method("transpose"), X, (2, 0, 1), fn_kw={})
case(transpose_attribute, Attribute("T"), X)
case(transpose_attribute, Attribute("T"), u(3, 4))
case(swapaxes, np.swapaxes, X, 0, 2)
case(swapaxes_method, Method("swapaxes"), X, 0, -1, fn_kw={})
case(moveaxis, np.moveaxis, X, 0, -1)
case(moveaxis, np.moveaxis, X, (0, 1), (2, 0))
case(expand_dims, np.expand_dims, u(3, 4), 1)
case(expand_dims, np.expand_dims, u(3, 4), (0, -1))
case(squeeze, np.squeeze, u(3, 1, 4, 1))
case(squeeze, np.squeeze, u(3, 1, 4, 1), -1)
case(squeeze_method, Method("squeeze"), u(1, 3, 1))
NO_BROADCAST = "autograd's broadcast_to cannot add leading axes"
case(broadcast_to, np.broadcast_to, u(3), (2, 3), autograd=NO_BROADCAST)
case(broadcast_to, np.broadcast_to, u(3, 1), (2, 3, 4), autograd=NO_BROADCAST)
case(broadcast_to, np.broadcast_to, 0.4, (2, 2), autograd=NO_BROADCAST)
case(broadcast_to, np.broadcast_to, u(3, 1), (3, 4))
case(atleast_1d, np.atleast_1d, u())
case(atleast_2d, np.atleast_2d, u(3))
case(atleast_3d, np.atleast_3d, u(3, 2))
NO_FLIP = "autograd has no rule for np.flip"
case(flip, np.flip, X, autograd=NO_FLIP)
case(flip, np.flip, X, 1, autograd=NO_FLIP)
case(flip, np.flip, X, (0, 2), autograd=NO_FLIP)
case(fliplr, np.fliplr, u(3, 4))
case(flipud, np.flipud, u(3, 4))
case(roll, np.roll, X, 2)
case(roll, np.roll, X, -1, 1)
case(roll, np.roll, X, (1, 2), (0, 2), autograd="autograd's roll takes one shift")
case(copy, np.copy, X, autograd="autograd has no rule for np.copy")
case(copy_method, Method("copy"), X, autograd="autograd's boxes have no .copy()")
case(astype_float, Method("astype"), u(3).astype(np.float32), float, fn_kw={}, rtol=1e-3)


def astype_int(a):
    return a.astype(int) * 1.0


def astype_bool(a):
    return a.astype(bool) * 1.0


# a cast to integers or bools is a step: the derivative is zero (it passed through)
CAST = "autograd's boxes have no .astype"
case(astype_int, Method("astype"), u(3) * 10, int, fn_kw={}, autograd=CAST, float64="ints")
case(astype_bool, Method("astype"), u(3), bool, fn_kw={}, autograd=CAST, float64="bools")

# ============================================================================= joining, splitting


def array(object):
    return np.array(object)


def array_literal(a, b):
    return np.array([a, b, a * b])


def array_nested(a, b):
    return np.array([[a, b], [b * 2.0, a]])


def asarray(a):
    return np.asarray(a)


def concatenate(arrays, axis=0):
    return np.concatenate(arrays, axis=axis)


def concatenate_literal(a, b):
    return np.concatenate([a, b * 2.0, a], axis=1)


def stack(arrays, axis=0):
    return np.stack(arrays, axis=axis)


def stack_literal(a, b):
    return np.stack((a, b), axis=-1)


def hstack(tup):
    return np.hstack(tup)


def vstack(tup):
    return np.vstack(tup)


def column_stack(tup):
    return np.column_stack(tup)


def dstack(tup):
    return np.dstack(tup)


def split(ary, indices_or_sections, axis=0):
    return np.split(ary, indices_or_sections, axis=axis)


def split_unpack(x):
    a, b = np.split(x, 2, axis=1)
    return a * 2.0 - b


def split_half_used(x):
    a, b = np.split(x, 2)
    return a * 2.0


def split_one_part(x):
    parts = np.split(x, [1, 3])
    return parts[1]


def array_split(ary, indices_or_sections, axis=0):
    return np.array_split(ary, indices_or_sections, axis=axis)


def tile(A, reps):
    return np.tile(A, reps)


def repeat(a, repeats, axis=None):
    return np.repeat(a, repeats, axis)


def repeat_method(a):
    return a.repeat(2, axis=0)


def pad(array, pad_width, mode="constant"):
    return np.pad(array, pad_width, mode)


def pad_values(array):
    return np.pad(array, 1, constant_values=2.0)


def take(a, indices, axis=None):
    return np.take(a, indices, axis=axis)


def take_method(a):
    return a.take([2, 0, 2], axis=1)


def take_along_axis(arr, indices, axis):
    return np.take_along_axis(arr, indices, axis)


def sort(a, axis=-1):
    return np.sort(a, axis)


case(array, np.array, [0.3, -0.5, 1.2])
case(array, np.array, [u(3), u(3)])
case(array, np.array, [[0.3, -0.5], [1.2, 0.1]])
case(array, np.array, u(2, 3))
case(array, np.array, (0.3, u()), float64="a Python float alone is float64")
end_to_end(array_literal, 0.3, -0.7)
end_to_end(array_literal, u(3), u(3))
end_to_end(array_nested, u(3), u(3))
NO_ASARRAY = "autograd has no rule for np.asarray"
case(asarray, np.asarray, [0.3, -0.5], autograd=NO_ASARRAY)
case(asarray, np.asarray, u(2, 2), autograd=NO_ASARRAY)


def array_of(object, dtype=None):
    return np.array(object, dtype) * 1.0


def asarray_of(a, dtype=None):
    return np.asarray(a, dtype) * 1.0


case(array_of, np.array, u(3) * 10, int, autograd=NO_ASARRAY, float64="ints")  # a step: 0
case(array_of, np.array, [0.3, -1.5], bool, autograd=NO_ASARRAY, float64="bools")
case(asarray_of, np.asarray, u(2, 2) * 10, int, autograd=NO_ASARRAY, float64="ints")
for arrays, kw in [
    ([u(2, 3), u(1, 3)], {}),
    ([u(2, 3), u(2, 1), u(2, 2)], dict(axis=1)),
    ((u(2, 3), u(2, 2)), dict(axis=-1)),
    ([u(2, 3), u(4)], dict(axis=None)),
    (u(3, 2, 2), dict(axis=1)),  # an array's rows
]:
    ag = "autograd's concatenate needs an axis" if kw.get("axis", 0) is None else None
    case(concatenate, np.concatenate, arrays, kw=kw, autograd=ag)
end_to_end(concatenate_literal, u(2, 3), u(2, 1))
for kw in [{}, dict(axis=1), dict(axis=-1)]:
    case(stack, np.stack, [u(2, 3), u(2, 3), u(2, 3)], kw=kw)
case(stack, np.stack, u(2, 3), kw=dict(axis=1))
end_to_end(stack_literal, u(2, 3), u(2, 3))
case(hstack, np.hstack, [u(3), u(2)])
case(hstack, np.hstack, [u(2, 3), u(2, 1)])
case(hstack, np.hstack, (0.5, u(2)), float64="a Python float alone is float64")
case(vstack, np.vstack, [u(3), u(2, 3)])
case(vstack, np.vstack, [u(3), u(3)])
case(column_stack, np.column_stack, [u(3), u(3, 2)], autograd="autograd has no column_stack")
NO_DSTACK = "autograd has no rule for np.dstack"
case(dstack, np.dstack, [u(3), u(3)], autograd=NO_DSTACK)
case(dstack, np.dstack, [u(2, 3), u(2, 3, 2)], autograd=NO_DSTACK)
case(split, np.split, u(6, 2), 3)
case(split, np.split, u(6, 2), [1, 4])
case(split, np.split, u(2, 6), 2, kw=dict(axis=1))
end_to_end(split_unpack, u(3, 4))
end_to_end(split_one_part, u(5))
end_to_end(split_half_used, u(4))
case(array_split, np.array_split, u(7), 3)
case(array_split, np.array_split, u(2, 5), 2, kw=dict(axis=-1))
NO_TILE = "autograd's tile lines reps up with the first axes, not the last (wrong)"
case(tile, np.tile, u(2, 3), 2, autograd=NO_TILE)
case(tile, np.tile, u(2, 3), (2, 1))
case(tile, np.tile, u(3), (2, 1, 2))
case(tile, np.tile, u(2, 1, 3), (2, 2), autograd=NO_TILE)
case(repeat, np.repeat, u(2, 3), 2)
case(repeat, np.repeat, u(2, 3), 3, 1)
NO_REPEATS = "autograd's repeat takes one number of repeats"
case(repeat, np.repeat, u(2, 3), [1, 0, 2], -1, autograd=NO_REPEATS)
case(repeat, np.repeat, u(4), np.array([2, 1, 0, 3]), autograd=NO_REPEATS)
case(repeat_method, Method("repeat"), u(2, 3), 2, kw=dict(axis=0), fn_kw={})
case(pad, np.pad, u(2, 3), 1)
case(pad, np.pad, u(2, 3), ((1, 2), (0, 1)))
NO_PAD = "autograd's pad pads with constants only"
case(pad, np.pad, u(4), (2, 1), "edge", autograd=NO_PAD)
case(pad, np.pad, u(3, 4), ((2, 1), (3, 2)), "reflect", autograd=NO_PAD)
case(pad, np.pad, u(3, 4), 2, "symmetric", autograd=NO_PAD)
case(pad, np.pad, u(3, 4), ((1, 1), (4, 2)), "wrap", autograd=NO_PAD)
case(pad_values, np.pad, u(2, 2), 1, kw=dict(constant_values=2.0), fn_kw={}, autograd=NO_PAD)
NO_TAKE = "autograd has no rule for np.take"
case(take, np.take, u(3, 4), [0, 5, 5, 11], autograd=NO_TAKE)
case(take, np.take, u(3, 4), np.array([[2, 0], [2, 2]]), 1, autograd=NO_TAKE)
case(take, np.take, u(3, 4), 1, -2, autograd=NO_TAKE)
case(take_method, Method("take"), u(3, 4), [2, 0, 2], kw=dict(axis=1), fn_kw={}, autograd=NO_TAKE)


def item_only(x):
    return x.item()


def item_flat(x):
    return x.item(-7)


def item_per_axis(x):
    return x.item(1, 2)


def item_tuple(x):
    return x.item((2, -1))


NO_ITEM = "autograd's boxes have no .item()"
case(item_only, Method("item"), u(1, 1), fn_kw={}, autograd=NO_ITEM)
case(item_flat, Method("item"), u(3, 4), -7, fn_kw={}, autograd=NO_ITEM)
case(item_per_axis, Method("item"), u(3, 4), 1, 2, fn_kw={}, autograd=NO_ITEM)
case(item_tuple, Method("item"), u(3, 4), (2, -1), fn_kw={}, autograd=NO_ITEM)
ORDER = np.argsort(u(3, 4), axis=1)
NO_ALONG = "autograd has no rule for np.take_along_axis"
case(take_along_axis, np.take_along_axis, u(3, 4), ORDER[:, :2], 1, autograd=NO_ALONG)
case(take_along_axis, np.take_along_axis, u(3, 4), np.array([[0, 2, 2, 1]]), 0, autograd=NO_ALONG)
NO_SORT = "autograd sorts vectors only"
case(sort, np.sort, u(5))
case(sort, np.sort, u(3, 4), autograd=NO_SORT)
case(sort, np.sort, u(3, 4), 0, autograd=NO_SORT)
case(sort, np.sort, u(3, 4), None, autograd=NO_SORT)


def full(fill_value, shape):
    return np.full(shape, fill_value)


def full_like(fill_value, a):
    return np.full_like(a, fill_value)


def linspace(start, stop, num=50, endpoint=True):
    return np.linspace(start, stop, num, endpoint)


def unique(ar):
    return np.unique(ar)


def bincount(weights, x, minlength=0):
    return np.bincount(x, weights, minlength)


NO_FULL = "autograd's full and full_like do not unbroadcast the fill value"
case(full, np.full, (2, 3), 0.4, wrt=1)
case(full, np.full, (2, 3), u(3), wrt=1, autograd=NO_FULL)
case(full_like, np.full_like, u(2, 3), 0.4, wrt=1, autograd=NO_FULL)
case(full_like, np.full_like, u(2, 3), u(2, 1), wrt=1, autograd=NO_FULL)
NO_LINSPACE = "autograd's linspace takes other arguments"
case(linspace, np.linspace, 0.3, 1.7, 5, wrt=(0, 1), autograd=NO_LINSPACE)
case(linspace, np.linspace, -0.3, 0.7, 4, False, wrt=(0, 1), autograd=NO_LINSPACE)
case(linspace, np.linspace, u(3), u(2, 3), 4, wrt=(0, 1), autograd=NO_LINSPACE)
case(linspace, np.linspace, 0.3, 1.7, 1, wrt=(0, 1), autograd=NO_LINSPACE)
case(linspace, np.linspace, u(3), 1.7, 0, wrt=(0, 1), autograd=NO_LINSPACE)  # no points
# distinct values: with repeated ones, any change of them changes the result's length
case(unique, np.unique, np.array([0.3, -0.2, 0.9, 0.1, 0.5]), autograd="autograd has no unique")
NO_BINCOUNT = "autograd has no rule for np.bincount"
case(bincount, np.bincount, np.array([0, 2, 2, 5]), u(4), wrt=1, autograd=NO_BINCOUNT)
case(bincount, np.bincount, np.array([1, 1, 0]), u(3), 4, wrt=1, autograd=NO_BINCOUNT)


def arange(start, step, stop=None):
    return np.arange(start, stop, step)


def arange_start(start, stop=None):
    return np.arange(start, stop)


def histogram(a, bins=10, range=None, density=None):
    return np.histogram(a, bins, range, density)


def histogram_weighted(a, weights, bins=10, range=None, density=None):
    return np.histogram(a, bins, range, density, weights)


def histogram_bin_edges(a, bins=10, range=None):
    return np.histogram_bin_edges(a, bins, range)


# np.arange(start, stop, step) is start + i step: linear in start and step, a step in stop
NO_ARANGE = "autograd's arange has no derivative"
case(arange, np.arange, 0.3, 2.9, 0.7, wrt=(0, 2), autograd=NO_ARANGE)
case(arange, np.arange, u(), 1.0, 0.45, wrt=(0, 2), autograd=NO_ARANGE)
case(arange_start, np.arange, -1.3, 2.0, autograd=NO_ARANGE)
case(arange_start, np.arange, 4.5, autograd=NO_ARANGE)  # np.arange(stop): 0, 1, ...
# The edges move with the minimum and maximum, a density with the width, counts with weights
HIST = np.array([0.3, -1.2, 0.8, 2.1, -0.4, 1.7, 0.05, -0.9, 1.1])
WEIGHTS = np.abs(u(9)) + 0.2
NO_HISTOGRAM = "autograd has no rule for np.histogram"
case(histogram, np.histogram, HIST, autograd=NO_HISTOGRAM)
case(histogram, np.histogram, HIST, 4, None, True, autograd=NO_HISTOGRAM)
case(histogram, np.histogram, HIST, "auto", autograd=NO_HISTOGRAM)
case(histogram, np.histogram, HIST, 5, (-2.0, 3.0), True, autograd=NO_HISTOGRAM)
case(histogram, np.histogram, HIST, np.array([-1.5, 0.0, 0.5, 2.5]), autograd=NO_HISTOGRAM)
case(histogram, np.histogram, np.array([1.5, 0.2, 1.5, 0.2]), 3, autograd=NO_HISTOGRAM)  # ties
for weighted in [
    (HIST, 10, None, None, WEIGHTS),
    (HIST, 4, None, True, WEIGHTS),
    (HIST, np.array([-1.5, 0.0, 0.5, 2.5]), None, True, WEIGHTS),
    (HIST, 3, (-1.0, 1.0), None, WEIGHTS),
]:
    case(histogram_weighted, np.histogram, *weighted, wrt=(0, 4), autograd=NO_HISTOGRAM)
case(histogram_bin_edges, np.histogram_bin_edges, HIST, autograd=NO_HISTOGRAM)
case(histogram_bin_edges, np.histogram_bin_edges, HIST, 3, autograd=NO_HISTOGRAM)
case(histogram_bin_edges, np.histogram_bin_edges, HIST, 3, (0.0, 1.0), autograd=NO_HISTOGRAM)

# ============================================================================= builtins on sequences


def get_entry(x, key, default=None):
    return x.get(key, default)


def get_or_default(x, default, key):
    return x.get(key, default)


NO_GET = "autograd's dict boxes have no .get"
GET = Method("get")
case(get_entry, GET, {"a": u(2), "b": 0.3}, "a", autograd=NO_GET)
case(get_entry, GET, {"a": u(2), "b": 0.3}, "b", 0.0, autograd=NO_GET)
case(get_or_default, GET, {"a": u(2)}, "c", u(3), wrt=(0, 2), fn_kw={"key": "c"}, autograd=NO_GET)
case(get_or_default, GET, {"a": u(2)}, "a", u(2), wrt=(0, 2), fn_kw={"key": "a"}, autograd=NO_GET)


def sum_builtin(iterable):
    return sum(iterable)


def sum_builtin_start(iterable, start):
    return sum(iterable, start)


def max_builtin(a, b, c):
    return max(a, b, c)


def min_builtin(a, b, c):
    return min(a, b, c)


def max_of(items):
    return max(items)


def min_of(items):
    return min(items)


def list_builtin(iterable):
    return list(iterable)


def tuple_builtin(iterable):
    return tuple(iterable)


def fsum_of(seq):
    return math.fsum(seq)


def mean_of(data):
    return statistics.mean(data)


def fmean_of(data):
    return statistics.fmean(data)


NO_CONTAINER_OUT = "autograd's vjp needs an array or a number out, not a list or tuple of them"
NO_STDLIB = "autograd has no rule for math.fsum or the statistics module"
PYTHON_FLOATS = "math.fsum and the statistics module compute in Python floats (float64)"
case(sum_builtin, sum, [0.3, u(3), -0.5])
case(fsum_of, math.fsum, [0.3, -0.2, 1.5], autograd=NO_STDLIB)
case(fsum_of, math.fsum, u(4), autograd=NO_STDLIB, float64=PYTHON_FLOATS)
case(mean_of, statistics.mean, [0.3, -0.2, 1.5], autograd=NO_STDLIB)
case(mean_of, statistics.mean, u(4), autograd=NO_STDLIB, float64=PYTHON_FLOATS)
case(fmean_of, statistics.fmean, [0.3, -0.2, 1.5], autograd=NO_STDLIB)
case(sum_builtin, sum, u(4, 2))
case(sum_builtin_start, sum, [u(3), u(3)], u(2, 3), wrt=(0, 1))
case(sum_builtin_start, sum, (0.3, -0.2), 1.5, wrt=(0, 1))
case(max_builtin, max, 0.3, 0.9, -0.2, wrt=(0, 1, 2), fn_kw={})
case(min_builtin, min, 0.3, 0.9, -0.2, wrt=(0, 1, 2), fn_kw={})
case(max_of, max, [0.3, 0.9, -0.2])
case(min_of, min, u(4))
case(list_builtin, list, (0.3, u(2)), autograd=NO_CONTAINER_OUT)
case(list_builtin, list, u(3, 2), autograd=NO_CONTAINER_OUT)
case(tuple_builtin, tuple, [0.3, u(2), -0.5], autograd=NO_CONTAINER_OUT)

# ============================================================================= displays, unpacking


def display_list(x):
    return [0.3, x, 2]


def display_tuple(x):
    return (x, -0.5)


def display_dict(x):
    return {"w": x, "n": 3}


def unpack_three(x):
    a, b, c = x
    return a, b, c


ITEM_LIST = Operator("item", lambda key, x: [0.3, x, 2])
ITEM_TUPLE = Operator("item", lambda key, x: (x, -0.5))
ITEM_DICT = Operator("item", lambda key, x: {"w": x, "n": 3})
UNPACK = Operator("unpack", tuple)
case(display_list, ITEM_LIST, 1, u(3), wrt=1, fn_kw={}, autograd=NO_CONTAINER_OUT)
case(display_tuple, ITEM_TUPLE, 0, 0.4, wrt=1, fn_kw={}, autograd=NO_CONTAINER_OUT)
case(display_dict, ITEM_DICT, "w", u(2, 2), wrt=1, fn_kw={}, autograd=NO_CONTAINER_OUT)
# the unpack rule receives the tuple of the targets' adjoints, not a Sparse
for xs in ([0.3, u(2), -0.5], (u(2), u(2), u(2))):
    case(unpack_three, UNPACK, xs, autograd=NO_CONTAINER_OUT, adjoint_form=tuple)
end_to_end(unpack_three, u(3, 2), autograd=NO_CONTAINER_OUT)  # an array's rows: an array back


def unpack_one_of_two(x):
    a, _ = x
    return a * 2.0


end_to_end(unpack_one_of_two, u(2, 3))  # the row with no adjoint gets zeros

# ============================================================================= the runtime's helpers
# (what a `for` loop becomes)


def as_sequence_(x):
    return as_sequence(x)


case(as_sequence_, as_sequence, [0.3, u(2)], autograd=NO_CONTAINER_OUT)
case(as_sequence_, as_sequence, u(3), autograd="as_sequence makes a list of autograd's boxes")

# functions rules call (they are called again when emitted code is differentiated)


def copysign_(x, y):
    return math.copysign(x, y)


def conjugate_(x):
    return np.conj(x)


case(copysign_, math.copysign, 0.7, -0.3, autograd=NO_MATH)  # in y a step
case(copysign_, math.copysign, -0.7, 0.4, autograd=NO_MATH)
case(conjugate_, np.conjugate, u(2, 3))

# ============================================================================= complex numbers
# The gradient of a real function at z = x + iy is df/dx - i df/dy (docs/reference.md); check_rule
# and check_vjp take complex directions and cotangents for complex values.

Z = u(2, 3) + 1j * u(2, 3)
NO_BOX_ATTR = "autograd's boxes have no .real, .imag, .conj()"


def real_(val):
    return np.real(val)


def imag_(val):
    return np.imag(val)


def angle_(z, deg=False):
    return np.angle(z, deg=deg)


def conj_method(x):
    return x.conj()


def conjugate_method(x):
    return x.conjugate()


def real_attribute(x):
    return x.real


def imag_attribute(x):
    return x.imag


CX = "complex values: the float32 checks are of real ones"
NO_ANGLE = "autograd's np.angle takes no deg"
for x in (Z, u(2, 3)):
    cx = dict(float64=CX) if np.iscomplexobj(x) else {}
    case(real_, np.real, x, **cx)
    case(imag_, np.imag, x, **cx)
    case(conj_method, Method("conj"), x, autograd=NO_BOX_ATTR, **cx)
    case(conjugate_method, Method("conjugate"), x, autograd=NO_BOX_ATTR, **cx)
    case(real_attribute, Attribute("real"), x, autograd=NO_BOX_ATTR, **cx)
    case(imag_attribute, Attribute("imag"), x, autograd=NO_BOX_ATTR, **cx)
case(angle_, np.angle, Z, autograd=NO_ANGLE, float64=CX)
case(angle_, np.angle, Z, kw=dict(deg=True), autograd=NO_ANGLE, float64=CX)
case(angle_, np.angle, away(2, 3), autograd=NO_ANGLE)  # of real numbers, a step
case(conjugate_, np.conjugate, Z, float64=CX)
case(absolute, np.absolute, Z, float64=CX)
case(abs_builtin, abs, 0.3 - 0.8j, autograd="autograd's abs of a complex box is a float()")


def sign_(x):
    return np.sign(x)


def heaviside(x2, x1):
    return np.heaviside(x1, x2)


# np.sign is a step on real numbers, z / |z| on complex ones; np.heaviside(x1, x2) is x2 at x1 == 0
case(sign_, np.sign, away(2, 3))
case(sign_, np.sign, Z, float64=CX, autograd="autograd's np.sign of a complex box is a step")
NO_HEAVISIDE = "autograd has no rule for np.heaviside in x2"
case(heaviside, np.heaviside, np.array([0.0, 0.5, -1.0, 0.0]), u(4), wrt=1, autograd=NO_HEAVISIDE)
case(heaviside, np.heaviside, np.array([[0.0], [1.0]]), u(3), wrt=1, autograd=NO_HEAVISIDE)
case(heaviside, np.heaviside, np.array([0.0, 2.0]), u(), wrt=1, autograd=NO_HEAVISIDE)

# ============================================================================= index tricks
# np.r_[...] and the like are calls of r_(key) and the like (cpsad.rules.core.defsubscript)


def r_key(key):
    return np.r_[key]


def c_key(key):
    return np.c_[key]


def s_key(key):
    return np.s_[key]


def index_exp_key(key):
    return np.index_exp[key]


def r_literal(a, b):
    return np.r_[a, 2.0 * b, 0:2, a[0]]


def r_directive(a, b):
    return np.r_["0,2", a, b]


def r_last_axis(a, b):
    return np.r_["-1", a, b]


def c_literal(a, b):
    return np.c_[a, b * b]


NO_INDEX_TRICKS = "autograd's np.r_ and the like are numpy's: they make arrays of its boxes"
for key in [(u(2), u(3)), (u(2), 0.5, u(1)), (u(2, 3), u(1, 3))]:
    case(r_key, jn.r_, key, autograd=NO_INDEX_TRICKS)
case(r_key, jn.r_, u(3), autograd=NO_INDEX_TRICKS)
case(c_key, jn.c_, (u(3), u(3, 2)), autograd=NO_INDEX_TRICKS)
case(c_key, jn.c_, (u(2, 2), u(2)), autograd=NO_INDEX_TRICKS)
case(s_key, jn.s_, u(3), autograd=NO_INDEX_TRICKS)
case(s_key, jn.s_, (u(3), u(2)), autograd=NO_INDEX_TRICKS)
case(index_exp_key, jn.index_exp, u(3), autograd=NO_INDEX_TRICKS)
case(index_exp_key, jn.index_exp, (u(3), u(2)), autograd=NO_INDEX_TRICKS)
end_to_end(r_literal, u(3), u(2), autograd=NO_INDEX_TRICKS)
end_to_end(c_literal, u(3), u(3), autograd=NO_INDEX_TRICKS)
end_to_end(r_directive, u(2), u(1, 2), autograd=NO_INDEX_TRICKS)
end_to_end(r_last_axis, u(2, 1), u(2, 2), autograd=NO_INDEX_TRICKS)

# ============================================================================= no derivative


def floordiv_and_comparisons(x):
    """``//`` and comparisons are steps: only the other factors carry the derivative."""
    return (x // 0.7) * x + (x > 0.1) * x**2 + (x <= -0.2) * 3.0 * x


def nondiff_functions(x):
    n = len(x)
    i = np.argmax(x)
    steps = np.floor(x) + np.trunc(x) + np.round(x) + np.isfinite(x)
    shape_only = np.zeros_like(x) + np.ones_like(x) * n + np.full_like(x, 2.0)
    return x[i] * n + np.sum(steps * x) + np.sum(shape_only * x) + x.shape[0] * x[0]


def math_steps(x):
    return math.floor(x) * x + math.ceil(x) * x**2 + math.trunc(x)


NO_FLOORDIV = "autograd's boxes have no //"
end_to_end(floordiv_and_comparisons, np.array([0.35, -0.45, 1.6, 2.2, -1.3]), autograd=NO_FLOORDIV)
end_to_end(floordiv_and_comparisons, 1.6, autograd=NO_FLOORDIV)
end_to_end(nondiff_functions, np.array([0.35, -0.45, 1.6, 2.2, -1.3]))
end_to_end(math_steps, 1.3, autograd=NO_MATH)

# ============================================================================= in-place changes


def aug_assign_rebinds(x):
    """``y += x`` on a name rebinds it (``y = y + x``): ``y`` is a new array, ``x`` unchanged."""
    y = x * 2.0
    y += x
    y *= x
    return y


end_to_end(aug_assign_rebinds, u(3))
end_to_end(aug_assign_rebinds, 0.7)


def store_into_active(x):
    y = x * 2.0  # an array the function made: stored into with rebinding semantics
    y[0] = 1.0
    return np.sum(y * x)


def aug_store_into_active(x):
    y = x * 2.0
    y[1:] += x[0]
    return np.sum(y * y)


end_to_end(store_into_active, u(3), autograd="autograd refuses item assignment")
end_to_end(aug_store_into_active, u(3), autograd="autograd refuses item assignment")


def store_into_parameter(x):
    x[0] = 1.0  # the caller's array: Python would change it there
    return np.sum(x)


def aug_store_into_parameter(x):
    y = x
    y[1:] += 1.0
    return np.sum(y)


def alias_then_aug_assign(x):
    """In Python ``y += 1.0`` changes the array ``x`` names too; cpsad rebinds ``y`` alone."""
    y = x
    y += 1.0
    return np.sum(x * y)


# ============================================================================= container adjoints


def list_to_sum_and_item(a, b):
    """One list reaches ``np.sum`` (an array adjoint) and ``lst[0]`` (a Sparse adjoint)."""
    lst = [a, b * 2.0]
    return np.sum(lst) + lst[0] * 3.0


def overwrite_then_sum(a, b, c):
    """``np.sum(lst)`` gives the list a dense adjoint (an array): the overwritten entry gets none
    of it."""
    lst = [a, b]
    lst[0] = c
    return np.sum(lst) + lst[0] * lst[1]


def extend_then_sum(a, b, c):
    """The entries ``extend`` adds get their part of a dense adjoint of the list."""
    lst = [a]
    more = [b, c * 2.0]
    lst.extend(more)
    return np.sum(lst) * lst[2]


end_to_end(overwrite_then_sum, 0.3, -0.7, 1.1, autograd="autograd's lists are not assignable")
end_to_end(extend_then_sum, 0.3, -0.7, 1.1, autograd="autograd's lists have no extend of boxes")

# ============================================================================= float32 end to end


def float32_model(W, b, x):
    h = np.tanh(x @ W + b)
    z = np.maximum(h, 0.0) ** 2 + np.exp2(h) * np.clip(h, -0.5, 0.5)
    return np.mean(z, axis=0).sum() + 1e-3 * np.linalg.norm(W) + np.log(np.sum(np.exp(h)))
