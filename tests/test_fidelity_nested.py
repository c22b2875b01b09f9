"""Fidelity of closures, decorators and derivatives taken inside differentiated functions.

Every value is checked against plain Python, every gradient against central finite differences
(of the function, or of the first derivative for a second one) and against autograd where it
runs the program. Nothing here is an expected number copied from cpsad's own output.
"""

import functools
import math

import numpy as np
import pytest

import cpsad
from cpsad.testing import check_grads
from tests.oracles import autograd, autograd_version

EPS = 1e-5


def fd(g, x, eps=EPS):
    return (g(x + eps) - g(x - eps)) / (2 * eps)


def close(a, b, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol)


# =========================================================================== closures, 2nd order
#
# Each program has a function defined inside that reads the differentiated variable. The first
# derivative is checked against finite differences of the function, grad(grad(f)) and hvp
# against finite differences of the first derivative and against autograd's grad(grad(f)).


def constant_argument_first(x):
    """A call with a constant argument, then one with x: the first call's continuation carries
    the whole rest of the program (grad(grad(f)) gave 0 for 8, running it forward only)."""

    def g(y):
        return y * y

    return g(2.0) * g(x)


def constant_argument_nested(x):
    def g(y):
        return y * y

    return g(2.0) * g(g(x))


def reads_closure_only(x):
    """g's result is x itself: its adjoint belongs to f and the continuation adds to it too
    (`x_bar = acc(x_bar, k(x))` read x_bar before k ran: 1 for 3)."""

    def g(y):
        return x

    return g(0.5) + g(x + 2.0) * 2.0


def reads_outer_local(x):
    c = (x - 0.5) * (2.0 - x)

    def g(y):
        return c

    return g(c - 2.0) * g(2.0 * c) * g(np.sin(x)) * g(g(c)) * (0.5 - c) * c


def closure_product(x):
    def g(y):
        return x * y * y

    return g(x) * x + x**3


def closure_called_twice(x):
    def g(y):
        return x * y

    return x * g(x) * g(2.0 * x)


def inner_result_unused(x):
    """g(g(x)): g ignores its argument, so the inner call's result reaches nothing (it ran
    forward only, with `call_primal`, which code transformed again cannot differentiate)."""

    def g(y):
        return x

    x = x**2
    return g(0.25 * x) + g(g(x)) * x


def constant_function(x):
    """A local function whose result is a constant, called on x (refused: `g` has no rule)."""

    def g(y):
        return 3.0

    return g(3.0) + g(x) * x


def copy_of_a_constant(x):
    """`x = x` after a use: the first-order code copies a constant adjoint, `x_bar = x_1_bar`
    (grad(grad) emitted `nonlocal x_1_bar_bar` with no binding: a SyntaxError)."""
    c = x * x
    x = x
    return c * 0.5


def nonlocal_accumulate(x):
    total = 0.0

    def add(y):
        nonlocal total
        total = total + x * y

    add(x)
    add(x * x)
    return total * x


def nested_closures(x):
    def g(y):
        def q(z):
            return x * y * z

        return q(y) * y

    return g(x) * x + g(0.5)


def closure_in_loop(x):
    def g(y):
        return np.sin(x * y)

    t = 0.0
    for i in range(3):
        t = t + g(x + i) * i
    return t


SECOND_ORDER = [
    constant_argument_first,
    constant_argument_nested,
    reads_closure_only,
    reads_outer_local,
    closure_product,
    closure_called_twice,
    inner_result_unused,
    constant_function,
    copy_of_a_constant,
    nonlocal_accumulate,
    nested_closures,
    closure_in_loop,
]


@pytest.mark.parametrize("f", SECOND_ORDER, ids=[f.__name__ for f in SECOND_ORDER])
@pytest.mark.parametrize("x", [1.5, -0.7, 2.0])
def test_closure_derivatives_first_and_second_order(f, x):
    g = cpsad.grad(f)
    value, first = cpsad.value_and_grad(f)(x)
    close(value, f(x), rtol=1e-12)
    close(first, fd(f, x), rtol=1e-6)
    second = cpsad.grad(g)(x)
    close(second, fd(g, x), rtol=1e-6, atol=1e-6)
    close(cpsad.hvp(f)(x, 1.0), second, rtol=1e-9, atol=1e-9)
    ag = autograd_version(f)
    close(first, autograd.grad(ag)(x), rtol=1e-9)
    close(second, autograd.grad(autograd.grad(ag))(x), rtol=1e-9, atol=1e-9)


def keyword_collected(x):
    """A local function's **kwargs receives x: its result depends on x through it."""

    def g(a, **kw):
        return a * kw["b"]

    return g(2.0, b=x) * x


def extra_positional(x):
    def g(a, *rest):
        return a * rest[1]

    return g(2.0, 1.0, x * x)


def keyword_default(x):
    def g(a, b=1.0):
        return a * b

    return g(2.0, b=x) + g(x)


@pytest.mark.parametrize("f", [keyword_collected, extra_positional, keyword_default])
def test_arguments_of_local_functions_carry_their_dependence(f):
    x = 0.8
    value, first = cpsad.value_and_grad(f)(x)
    close(value, f(x), rtol=1e-12)
    close(first, fd(f, x))
    close(cpsad.jvp(f, (x,), (1.0,))[1], first, rtol=1e-12)
    close(cpsad.hvp(f)(x, 1.0), fd(cpsad.grad(f), x), atol=1e-6)


def test_star_arguments_of_a_local_function_are_not_dropped():
    """``g(*xs)`` of a local function was refused (rather than its arguments' dependence
    dropped); now the call is bound when it runs, through the dispatch, to every order."""

    def f(x):
        def g(a, b):
            return a * b

        xs = (x, 2.0)
        return g(*xs) * x

    x = 0.7
    close(cpsad.grad(f)(x), 4.0 * x)
    close(cpsad.jvp(f, (x,), (1.0,))[1], 4.0 * x, rtol=1e-12)
    close(cpsad.hvp(f)(x, 1.0), 4.0, rtol=1e-12)


def apply_to(x):
    def g(y):
        return (x - 0.5) * x * y

    def apply(fn, v):
        return fn(v) * v

    return apply(g, 0.5) * apply(g, x)


def test_closure_passed_as_a_value_second_order():
    """The first-order code calls g through the runtime dispatch; transformed again, the
    dispatch of the next order (``bp_of``) differentiates it -- the closure's dependence on x
    included (it was refused: it ran the dispatch as plain code and transformed cpsad's own
    continuation wrapper, or said "`k` has no derivative rule")."""
    x = 0.7
    close(cpsad.grad(apply_to)(x), fd(apply_to, x))
    close(cpsad.grad(apply_to)(x), autograd.grad(autograd_version(apply_to))(x), rtol=1e-9)
    second = autograd.grad(autograd.grad(autograd_version(apply_to)))(x)
    close(cpsad.grad(cpsad.grad(apply_to))(x), second, rtol=1e-9)
    close(cpsad.grad(cpsad.grad(apply_to))(x), fd(cpsad.grad(apply_to), x))
    third = autograd.grad(autograd.grad(autograd.grad(autograd_version(apply_to))))(x)
    close(cpsad.grad(cpsad.grad(cpsad.grad(apply_to)))(x), third, rtol=1e-9)


def apply_constant(x):
    def g(y):
        return y * 2.0

    x = 1.0

    def apply(fn, v):
        return fn(v) * v

    return apply(g, x)


def test_function_value_of_inactive_code_second_order():
    assert cpsad.grad(apply_constant)(0.3) == 0.0
    assert cpsad.grad(cpsad.grad(apply_constant))(0.3) == 0.0


def test_second_order_agrees_with_math():
    x = 0.9
    # constant_argument_first: 4 x^2 -> 8
    assert cpsad.grad(cpsad.grad(constant_argument_first))(x) == pytest.approx(8.0, rel=1e-12)
    # closure_product: x^4 + x^3 -> 12 x^2 + 6 x
    expected = 12 * x * x + 6 * x
    assert cpsad.grad(cpsad.grad(closure_product))(x) == pytest.approx(expected, rel=1e-12)
    # reads_closure_only: 3 x -> 3
    assert cpsad.grad(reads_closure_only)(x) == pytest.approx(3.0, rel=1e-12)
    assert math.isclose(cpsad.grad(constant_function)(x), 3.0, rel_tol=1e-12)


# =========================================================================== decorators
#
# A decorated function is the wrapper the decorator returned: that is what runs, and what is
# differentiated -- never the function `functools.wraps` records in `__wrapped__`.


def doubling(f):
    @functools.wraps(f)
    def wrapper(x, y):
        return 2.0 * f(x, y)

    return wrapper


def shifting(f):
    @functools.wraps(f)
    def wrapper(x, y, shift=0.5):
        return f(x + shift, y) + x * y

    return wrapper


def squaring(f):  # no functools.wraps
    def wrapper(x, y):
        return f(x, y) ** 2

    return wrapper


def ignoring(f):
    @functools.wraps(f)
    def wrapper(x, y):
        return x * x * y

    return wrapper


def forwarding(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return 2.0 * f(*args, **kwargs)

    return wrapper


def poly(x, y):
    return x * x * y + 3.0 * y


@doubling
def doubled(x, y):
    return x * x * y + 3.0 * y


@doubling
@shifting
def stacked(x, y):
    return x * x * y + 3.0 * y


@squaring
@doubling
def stacked_plain(x, y):
    return x * x * y + 3.0 * y


@ignoring
def ignored(x, y):
    return x * x * x


@forwarding
def forwarded(x, y):
    return x * x * y + 3.0 * y


def calls_doubled(x, y):
    return doubled(x, y) + x


DECORATED = [doubled, stacked, stacked_plain, ignored, calls_doubled]


@pytest.mark.parametrize(
    "f", DECORATED, ids=["doubled", "stacked", "stacked_plain", "ignored", "calls"]
)
def test_a_decorated_function_is_its_wrapper(f):
    x, y = 0.7, -1.3
    value, (gx, gy) = cpsad.value_and_grad(f, (0, 1))(x, y)
    close(value, f(x, y), rtol=1e-12)
    check_grads(f, x, y, argnums=(0, 1))
    close(gx, fd(lambda t: f(t, y), x))
    # autograd runs the same wrappers (the wrapped function is a closure cell of the wrapper)
    close(gx, autograd.grad(f, 0)(x, y), rtol=1e-9)
    close(gy, autograd.grad(f, 1)(x, y), rtol=1e-9)
    close(cpsad.grad(f)(x, y), gx, rtol=1e-12)
    out, pullback = cpsad.vjp(f, x, y)
    close(out, value, rtol=1e-12)
    close(pullback(1.0), (gx, gy), rtol=1e-12)
    close(cpsad.jvp(f, (x, y), (1.0, 0.0))[1], gx, rtol=1e-12)
    gxx = cpsad.grad(cpsad.grad(f))(x, y)
    close(gxx, fd(lambda t: cpsad.grad(f)(t, y), x), rtol=1e-6, atol=1e-7)
    close(cpsad.hvp(f)(x, y, 1.0), gxx, rtol=1e-9, atol=1e-12)
    close(gxx, autograd.grad(autograd.grad(f, 0), 0)(x, y), rtol=1e-9, atol=1e-12)


def test_the_wrapper_doubles_the_gradient():
    x, y = 0.7, -1.3
    assert cpsad.grad(doubled)(x, y) == pytest.approx(2 * cpsad.grad(poly)(x, y), rel=1e-12)
    assert cpsad.grad(doubled.__wrapped__)(x, y) == pytest.approx(2 * x * y, rel=1e-12)
    assert "wrapper" in cpsad.show(doubled)


def scaled(x, y=1.0, *, scale=1.0):
    return scale * x * x * y


forwarded_scaled = forwarding(scaled)


def calls_forwarded(x):
    return forwarded(x, 1.0) + forwarded_scaled(x, x, scale=0.5)


@pytest.mark.parametrize("f", [forwarded, forwarded_scaled])
def test_a_forwarding_wrapper_is_differentiated(f):
    """`f(*args, **kwargs)` in the wrapper: the call is bound at run time (the dispatch), and the
    adjoints of *args come back item by item."""
    x, y = 0.7, -1.3
    value, (gx, gy) = cpsad.value_and_grad(f, (0, 1))(x, y)
    close(value, f(x, y), rtol=1e-12)
    check_grads(f, x, y, argnums=(0, 1))
    close(gx, autograd.grad(f, 0)(x, y), rtol=1e-9)
    close(cpsad.jvp(f, (x, y), (1.0, 0.0))[1], gx, rtol=1e-12)
    close(cpsad.vjp(f, x, y)[1](1.0), (gx, gy), rtol=1e-12)
    assert cpsad.grad(f)(x, y) == pytest.approx(2 * cpsad.grad(f.__wrapped__)(x, y), rel=1e-12)


def test_keywords_through_a_forwarding_wrapper():
    x = 0.7
    check_grads(calls_forwarded, x)
    close(cpsad.jvp(calls_forwarded, (x,), (1.0,))[1], fd(calls_forwarded, x))
    # a keyword reaches the wrapped function: scale 0.5 halves its gradient
    g = cpsad.grad(forwarded_scaled)
    assert g(x, 2.0, scale=0.5) == pytest.approx(0.5 * g(x, 2.0), rel=1e-12)


def keyword_differentiated(x):
    return forwarded_scaled(x, y=np.sin(x), scale=x)  # each keyword depends on x


def keyword_only_through_wrapper(x):
    return forwarded_scaled(x=x, y=2.0)


def _options(x, **opts):
    return x * opts["s"] + opts.get("t", 0.0) ** 2


def keyword_to_function_value(x):
    fn = _options
    return fn(x, s=x, t=2.0 * x)


def keywords_spread(x):
    d = {"s": np.cos(x), "t": x}
    fn = _options
    return fn(2.0, **d)


def keyword_array(w):
    return np.sum(forwarded_scaled(w, y=w, scale=np.tanh(w)))


KEYWORDS = [
    keyword_differentiated,
    keyword_only_through_wrapper,
    keyword_to_function_value,
    keywords_spread,
]


@pytest.mark.parametrize("f", KEYWORDS, ids=[f.__name__ for f in KEYWORDS])
def test_differentiated_keywords_through_function_values(f):
    """A keyword argument that depends on the input, passed through a function value (a
    decorator's `fn(*args, **kwargs)`, `fn(x, s=x)`, `fn(2.0, **d)`): its derivative comes back
    by name, in both modes (the dispatch once dropped the rest of the program for it, then
    refused it)."""
    x = 0.7
    value, g = cpsad.value_and_grad(f)(x)
    close(value, f(x), rtol=1e-12)
    close(g, fd(f, x))
    close(g, autograd.grad(f)(x), rtol=1e-9)
    close(cpsad.jvp(f, (x,), (1.0,))[1], g, rtol=1e-12)


def test_a_differentiated_keyword_array():
    w = np.array([0.3, -0.8, 1.1])
    check_grads(keyword_array, w)
    close(cpsad.grad(keyword_array)(w), autograd.grad(keyword_array)(w), rtol=1e-9)


def test_a_forwarding_wrapper_at_second_order():
    """Its derivative is taken with respect to items of *args: the second derivative
    differentiates a function of as many parameters that calls it (it was refused), and the
    wrapper's own ``f(*args, **kwargs)`` through the dispatch of the next order (``bp_of``).
    2 (x^2 y + 3 y): d2/dx2 = 4 y, d2/dxdy = 4 x; never the undecorated function's."""
    x, y = 0.7, 1.3
    assert cpsad.grad(cpsad.grad(forwarded))(x, y) == pytest.approx(4 * y, rel=1e-12)
    assert cpsad.grad(cpsad.grad(forwarded), 1)(x, y) == pytest.approx(4 * x, rel=1e-12)
    hvp = cpsad.hvp(forwarded)(x, y, 1.0)
    assert hvp == pytest.approx(4 * y, rel=1e-12)
    third = cpsad.grad(cpsad.grad(cpsad.grad(forwarded)))(x, y)
    assert third == pytest.approx(0.0, abs=1e-12)


def guarding(f):
    @functools.wraps(f)
    def wrapper(x):
        try:
            return f(x)
        except ValueError:
            return 0.0

    return wrapper


@guarding
def guarded(x):
    return x * x


def test_a_refused_wrapper_says_what_was_transformed():
    with pytest.raises(cpsad.TransformError) as info:
        cpsad.grad(guarded)(0.7)
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "guarded.__wrapped__" in notes and "wrapper" in notes
    assert cpsad.grad(guarded.__wrapped__)(0.7) == pytest.approx(1.4, rel=1e-12)


@functools.lru_cache(maxsize=64)
def cached_cube(x):
    return x * x * x


def cubic(a, x, b=1.0):
    return a * x * x * x + b * x


def test_lru_cache_and_partial_are_followed():
    x = 1.1
    assert cpsad.value_and_grad(cached_cube)(x) == pytest.approx((x**3, 3 * x * x), rel=1e-12)
    assert cpsad.grad(cpsad.grad(cached_cube))(x) == pytest.approx(6 * x, rel=1e-12)
    p = functools.partial(cubic, 2.0, b=5.0)
    value, g = cpsad.value_and_grad(p)(x)
    assert value == pytest.approx(p(x), rel=1e-12)
    check_grads(p, x)
    assert g == pytest.approx(6 * x * x + 5.0, rel=1e-12)
    assert cpsad.grad(cpsad.grad(p))(x) == pytest.approx(12 * x, rel=1e-12)
    assert cpsad.hvp(p)(x, 1.0) == pytest.approx(12 * x, rel=1e-12)
    assert cpsad.jvp(p, (x,), (1.0,))[1] == pytest.approx(g, rel=1e-12)
    assert cpsad.vjp(p, x)[1](1.0) == pytest.approx((g,), rel=1e-12)
    q = functools.partial(cubic, b=0.5)  # keywords only: argnums still count the call's arguments
    assert cpsad.grad(q, 1)(2.0, x) == pytest.approx(6 * x * x + 0.5, rel=1e-12)
    with pytest.raises(TypeError, match="partial"):
        cpsad.show(p)


def test_a_bound_method_is_its_function_with_the_object_first():
    class Model:
        scale = 3.0

        def loss(self, x):
            return self.scale * x * x

    assert cpsad.grad(Model().loss)(1.0) == pytest.approx(6.0, rel=1e-12)
    with pytest.raises(TypeError, match="type\\(obj\\).method"):
        cpsad.show(Model().loss)  # (show and transform take the function itself)


def base_square(x):
    return x * x


def twice_square(x):
    return 2.0 * base_square(x)


functools.update_wrapper(twice_square, base_square)  # no closure: the helper Inline would inline


def calls_twice_square(x):
    return twice_square(x)


def test_update_wrapper_function_at_the_entry():
    assert cpsad.value_and_grad(twice_square)(3.0) == pytest.approx((18.0, 12.0), rel=1e-12)


def test_update_wrapper_function_as_a_callee():
    """Inline reads the helper's own source, not what __wrapped__ names (it inlined
    base_square's body for twice_square: (9, 6))."""
    assert cpsad.value_and_grad(calls_twice_square)(3.0) == pytest.approx((18.0, 12.0))


# =========================================================================== derivatives inside
#
# A derivative taken inside a differentiated function returns exactly what the same call returns
# outside (type, structure, dtype), and the outer derivative through it is right: f below returns
# the inner result itself, so checking f's vjp and jvp against finite differences checks the
# second derivative against finite differences of the inner derivative. The table is
# {grad, value_and_grad, jvp, vjp} x {one float argument, a tuple of argnums, a list, a dict, a
# keyword argument, an array} x {h a local def, a lambda, a module function, a closure over x, a
# closure over a local of f}; each program is written to a file (cpsad reads source) and imported.

INSIDE_ARGS = {
    "float": dict(params="y, z", expr="y * y * z + np.sin(y)", call="x, 2.0", argnums="0",
                  tangents="1.0, 0.5", ct="1.5"),
    "tuple": dict(params="y, z", expr="y * y * z + np.sin(y) * z", call="x, 3.0 * x",
                  argnums="(0, 1)", tangents="1.0, -0.5", ct="1.5"),
    "list": dict(params="ys", expr="ys[0] * ys[1] + ys[0] ** 3", call="[x, 2.0 * x]",
                 argnums="0", tangents="[1.0, 0.5]", ct="1.5"),
    "dict": dict(params="p", expr="p['a'] * p['b'] + np.cos(p['a'])",
                 call="{'a': x, 'b': x * x}", argnums="0", tangents="{'a': 1.0, 'b': 0.5}",
                 ct="1.5"),
    "kwarg": dict(params="y, scale=1.0", expr="scale * y ** 3", call="x", kw="scale=2.0",
                  argnums="0", tangents="1.0", ct="1.5"),
    "array": dict(params="v", expr="np.sum(v * v) * v[0]", call="x * np.arange(1.0, 4.0)",
                  argnums="0", tangents="np.ones(3)", ct="np.array([1.0, -2.0])"),
}  # fmt: skip
INSIDE_H = ["def", "lambda", "module", "closure_x", "closure_local"]
INSIDE_OPS = ["grad", "value_and_grad", "jvp", "vjp"]


def _inside_source(op, arg, form):
    spec = INSIDE_ARGS[arg]
    kw = spec.get("kw")
    call = spec["call"] + (f", {kw}" if kw else "")
    expr, pre = spec["expr"], []
    if form == "closure_x":
        expr = f"({expr}) * x"
    elif form == "closure_local":
        pre, expr = ["c = np.sin(x) + 2.0"], f"({expr}) * c"
    h = f"h_{arg}" if form == "module" else "h"
    if form == "lambda":
        pre.append(f"h = lambda {spec['params']}: {expr}")
    elif form != "module":
        pre += [f"def h({spec['params']}):", f"    return {expr}"]
    body = {
        "grad": [f"return cpsad.grad({h}, argnums={spec['argnums']})({call})"],
        "value_and_grad": [f"return cpsad.value_and_grad({h}, argnums={spec['argnums']})({call})"],
        "jvp": [
            f"return cpsad.jvp({h}, ({spec['call']},), ({spec['tangents']},)"
            + (f", {kw})" if kw else ")")
        ],
        "vjp": [
            f"value, pullback = cpsad.vjp({h}, {call})",
            f"return value, pullback({spec['ct']})",
        ],
    }[op]
    return [f"def {op}__{arg}__{form}(x):"] + ["    " + line for line in pre + body]


def _inside_module_source():
    lines = ["import numpy as np", "", "import cpsad", "", ""]
    for op in INSIDE_OPS:
        for arg in INSIDE_ARGS:
            for form in INSIDE_H:
                lines += _inside_source(op, arg, form) + ["", ""]
    for arg, spec in INSIDE_ARGS.items():
        lines += [f"def h_{arg}({spec['params']}):", f"    return {spec['expr']}", "", ""]
    return "\n".join(lines)


INSIDE_CASES = [f"{o}__{a}__{h}" for o in INSIDE_OPS for a in INSIDE_ARGS for h in INSIDE_H]


@pytest.fixture(scope="module")
def inside_module(tmp_path_factory):
    import importlib.util

    path = tmp_path_factory.mktemp("inside") / "inside_programs.py"
    path.write_text(_inside_module_source())
    spec = importlib.util.spec_from_file_location("inside_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_same(a, b, path="result"):
    """``a`` and ``b`` are the same value: types (float is not np.float64, a tuple not a list),
    structure, dtypes and shapes, and numbers to rounding."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} where outside it is {type(b).__name__}"
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b), f"{path}: {len(a)} entries where outside {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(a)} where outside {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]")
    else:
        if isinstance(a, np.ndarray):
            assert (a.dtype, a.shape) == (b.dtype, b.shape), path
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=path)


def value_inside_reverse(f, x):
    """What the emitted backpropagator computes for f(x) (its continuation gets the value)."""
    from cpsad.runtime import as_adjoint, tangent_zeros

    got = []

    def k(result):
        got.append(result)
        return as_adjoint(tangent_zeros(result))

    cpsad.transform(f, 0).at(x).bp(k, x)
    return got[0]


@pytest.mark.parametrize("name", INSIDE_CASES)
def test_a_derivative_inside_is_the_derivative_outside(inside_module, name):
    from cpsad.testing import check_jvp, check_vjp

    f = getattr(inside_module, name)
    x = 0.7
    outside = f(x)  # plain Python: the inner cpsad call runs as it does anywhere
    assert_same(value_inside_reverse(f, x), outside)
    assert_same(cpsad.jvp(f, (x,), (1.0,))[0], outside)
    check_vjp(f, x)  # the outer reverse derivative, against differences of the inner result
    check_jvp(f, x)  # and forward mode


def test_the_symptoms_of_the_issue():
    def one_tuple(x):
        def h(y):
            return x * y * y

        g = cpsad.grad(h, argnums=(0,))(x)
        assert type(g) is tuple and len(g) == 1
        return g[0] * x  # 2 x^3

    def of_a_list(x):
        def h(ys):
            return ys[0] * ys[1] * x

        g = cpsad.grad(h)([x, 2.0])
        assert type(g) is list
        return g[0] + g[1]  # 2 x + x^2

    def pair(x):
        def h(y):
            return x * y * y

        v, g = cpsad.value_and_grad(h)(x)
        return v + g  # x^3 + 2 x^2

    x = 1.5
    assert cpsad.grad(one_tuple)(x) == pytest.approx(6 * x * x, rel=1e-12)
    assert cpsad.grad(of_a_list)(x) == pytest.approx(2 + 2 * x, rel=1e-12)
    assert cpsad.grad(pair)(x) == pytest.approx(3 * x * x + 4 * x, rel=1e-12)


def module_cube(y):
    return y * y * y


def test_derivatives_that_are_refused_inside_say_so():
    def hvp_inside(x):
        return cpsad.hvp(module_cube)(x, 1.0)  # a third derivative of module_cube, outside

    def jacobian_inside(x):
        return cpsad.jacobian(module_cube)(x)

    def defined_twice(x):
        if x > 0:

            def h(y):
                return y * y * x

        else:

            def h(y):
                return y * x

        return cpsad.grad(h)(x)

    def through_a_parameter(x):
        def h(y):
            return y * y * x

        def apply(fn, z):
            return cpsad.grad(fn)(z)

        return apply(h, x)

    def jvp_through_a_variable(x):
        def h(y):
            return y * y * x

        hs = [h]
        return cpsad.jvp(hs[0], (x,), (1.0,))[1]

    assert hvp_inside(0.5) == pytest.approx(3.0)  # plain Python runs them
    with pytest.raises(TypeError, match="third derivative"):
        cpsad.grad(hvp_inside)(0.5)
    with pytest.raises(TypeError, match="jacobian"):
        cpsad.grad(jacobian_inside)(0.5)
    for f in (defined_twice, through_a_parameter):
        with pytest.raises(cpsad.TransformError, match="defined in this function"):
            cpsad.grad(f)(0.5)
    with pytest.raises(TypeError, match="where it is defined"):
        cpsad.grad(jvp_through_a_variable)(0.5)
