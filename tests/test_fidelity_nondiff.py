"""Fidelity of the no-derivative list (issue 13): a function cpsad differentiates as a constant
must be one, or it is a silent zero gradient -- the worst kind of bug.

Part 1 audits the list itself: every function and attribute registered as having no derivative
(``cpsad.rules.core.NONDIFF``, ``NONDIFF_ATTRIBUTES``) is run on random inputs at generic points,
and its outputs must not move when its float inputs do. Each entry needs a sample here, so a
function added to the list without one fails, and so does a differentiable one added with one.

Part 2 is the regressions of the silent zeros found on main, each against finite differences
(real and imaginary directions for complex values), forward mode and numpy's values: a user
class's ``__getitem__`` with a differentiable index, ``getattr``, ``np.histogram``'s edges, its
density and weights, ``np.arange`` with float bounds, ``np.heaviside``, ``np.sign`` of complex
numbers, ``np.random``'s samplers and in-place shuffles -- and numpy functions of Python floats,
whose kinds were taken for scalars (``np.full(3, x)``).

Part 3: Python-float programs at the points where a derivative is infinite or zero get numpy's
answer, never a ZeroDivisionError from emitted code.
"""

from __future__ import annotations

import builtins
import collections
import functools
import math
import warnings

import numpy as np
import pytest

import cpsad
from cpsad import dispatch, runtime
from cpsad.rules import composite, core
from cpsad.rules import containers as ctn
from cpsad.rules import fft as fft_rules
from cpsad.rules import joining as jn
from cpsad.rules import linalg as la
from cpsad.rules import operators as ops
from cpsad.rules import reductions as rd
from cpsad.rules.emitted import elements as em_elements
from cpsad.rules.emitted import norms as em_norms
from cpsad.rules.emitted import shapes as em_shapes
from cpsad.rules.emitted import solve as em_solve
from cpsad.testing import check_grads, check_jvp

R = np.random.default_rng(1313)
X = R.uniform(0.3, 2.0, 5)  # generic points: no value near a step of any function below
M = R.uniform(-2.0, 2.0, (3, 4))
INTS = np.array([3, 5, 6, 12])

# =========================================================================== 1. the list itself

# One call per entry of the list: (function, positional arguments, keyword arguments). Float
# inputs (floats, float arrays, complex ones) are moved; everything else stays.
_Pair = collections.namedtuple("_Pair", "w b")

SAMPLES: list[tuple] = [
    (builtins.len, (X,), {}),
    (builtins.range, (3, 9), {}),
    (builtins.int, (X[0] * 3,), {}),
    (builtins.bool, (X[0],), {}),
    (builtins.round, (X[0] * 3,), {}),
    (builtins.round, (X[0], 2), {}),
    (builtins.isinstance, (X[0], float), {}),
    (builtins.print, (), {}),  # None, whatever it prints
    (builtins.type, (X,), {}),
    (builtins.callable, (X,), {}),
    (builtins.hasattr, (X, "shape"), {}),
    (np.shape, (M,), {}),
    (np.ndim, (M,), {}),
    (np.size, (M,), {}),
    (np.zeros_like, (M,), {}),
    (np.ones_like, (M,), {}),
    (np.empty_like, (M,), {}),
    (np.zeros, (3,), {}),
    (np.ones, ((2, 3),), {}),
    (np.empty, (4,), {}),
    (np.eye, (3, 4, 1), {}),
    (np.identity, (3,), {}),
    (np.argmax, (M,), {"axis": 1}),
    (np.argmin, (X,), {}),
    (np.argsort, (M,), {}),
    (np.argwhere, (M > 0,), {}),
    (np.nonzero, (M > 0,), {}),
    (np.flatnonzero, (M > 0,), {}),
    (np.searchsorted, (np.sort(X), M), {}),
    (np.floor, (M * 3,), {}),
    (np.ceil, (M * 3,), {}),
    (np.round, (M * 3,), {}),
    (np.round, (M, 1), {}),
    (np.around, (M * 3,), {}),
    (np.rint, (M * 3,), {}),
    (np.trunc, (M * 3,), {}),
    (np.fix, (M * 3,), {}),
    (np.floor_divide, (M, X[0]), {}),  # a step in both operands
    (np.isfinite, (M,), {}),
    (np.isnan, (M,), {}),
    (np.isinf, (M,), {}),
    (np.signbit, (M,), {}),
    (np.equal, (M, np.round(M, 1)), {}),
    (np.not_equal, (M, np.round(M, 1)), {}),
    (np.less, (M, X[0]), {}),
    (np.less_equal, (M, X[0]), {}),
    (np.greater, (M, X[0]), {}),
    (np.greater_equal, (M, X[0]), {}),
    (np.logical_and, (M, X[0]), {}),
    (np.logical_or, (M > 0, X[0]), {}),
    (np.logical_not, (M,), {}),
    (np.logical_xor, (M > 0, M > 1), {}),
    (np.any, (M > 1,), {}),
    (np.all, (M > -3,), {}),
    (np.allclose, (M, M + 0.5), {}),
    (np.isclose, (M, M + 1e-3), {}),
    (np.array_equal, (M, M + 1e-3), {}),
    (np.count_nonzero, (M > 0,), {}),
    (np.result_type, (M, np.float32), {}),
    (np.dtype, ("float32",), {}),
    (np.iinfo, (np.int32,), {}),
    (np.finfo, (np.float32,), {}),
    (runtime.keys_of, ({"a": X[0], "b": X[1]},), {}),
    (runtime.field_key, (_Pair(X, X[0]), "b"), {}),  # which entry a field is
    # the FFTs' shapes and weights (cpsad/rules/fft.py)
    (fft_rules.fft_axes, (M, None, (1,)), {}),
    (fft_rules.fft_sizes, (M,), {}),
    (fft_rules.fft_length, (X,), {"n": 8}),
    (fft_rules.hermitian_weights, (M, np.zeros((3, 6)), (1,)), {}),
    (np.digitize, (M, np.sort(X)), {}),
    (np.argpartition, (X, 2), {}),
    (np.lexsort, ((X, X[::-1]),), {}),
    (np.isin, (M, X), {}),
    (np.array_equiv, (M, M[0] + 1e-3), {}),
    (np.isneginf, (M,), {}),
    (np.isposinf, (M,), {}),
    (np.isreal, (M + 0.1j * M,), {}),
    (np.iscomplex, (M + 0.1j * M,), {}),
    (np.iscomplexobj, (M,), {}),
    (np.isrealobj, (M,), {}),
    (np.isscalar, (X[0],), {}),
    (np.issubdtype, (M.dtype, np.floating), {}),
    (np.can_cast, (M.dtype, np.float32), {}),
    (np.shares_memory, (M, X), {}),
    (np.may_share_memory, (M, X), {}),
    (np.broadcast_shapes, ((3, 1), (4,)), {}),
    (np.indices, ((2, 3),), {}),
    (np.unravel_index, (INTS, (4, 4)), {}),
    (np.ravel_multi_index, ((INTS % 4, INTS % 3), (4, 3)), {}),
    (np.tril_indices, (3,), {}),
    (np.triu_indices, (3, 1), {}),
    (np.diag_indices, (3,), {}),
    (np.bitwise_and, (INTS, 6), {}),
    (np.bitwise_or, (INTS, 6), {}),
    (np.bitwise_xor, (INTS, 6), {}),
    (np.invert, (INTS,), {}),
    (np.left_shift, (INTS, 2), {}),
    (np.right_shift, (INTS, 1), {}),
    (np.gcd, (INTS, 4), {}),
    (np.lcm, (INTS, 4), {}),
    (math.floor, (X[0] * 3,), {}),
    (math.ceil, (X[0] * 3,), {}),
    (math.trunc, (X[0] * 3,), {}),
    (math.isnan, (X[0],), {}),
    (math.isinf, (X[0],), {}),
    (math.isfinite, (X[0],), {}),
    (math.isclose, (X[0], X[1]), {}),
    (math.factorial, (5,), {}),
    (math.comb, (6, 2), {}),
    (math.perm, (6, 2), {}),
    (math.gcd, (12, 18), {}),
    # np.random: functions of sizes and seeds, and samplers of integers, whose values are steps
    # in their parameters (each call starts from the same seed)
    (np.random.seed, (3,), {}),
    (np.random.get_state, (), {}),
    (np.random.set_state, (np.random.RandomState(0).get_state(),), {}),
    (np.random.get_bit_generator, (), {}),
    (np.random.set_bit_generator, (np.random.get_bit_generator(),), {}),
    (np.random.default_rng, (0,), {}),
    (np.random.bytes, (4,), {}),
    (np.random.rand, (3,), {}),
    (np.random.randn, (3,), {}),
    (np.random.random, (3,), {}),
    (np.random.random_sample, (3,), {}),
    (np.random.ranf, (3,), {}),
    (np.random.sample, (3,), {}),
    (np.random.standard_normal, (3,), {}),
    (np.random.standard_cauchy, (3,), {}),
    (np.random.standard_exponential, (3,), {}),
    (np.random.randint, (0, 10, 3), {}),
    (np.random.random_integers, (0, 10, 3), {}),
    (np.random.binomial, (10, X[0] / 3, 4), {}),
    (np.random.geometric, (X[0] / 3, 4), {}),
    (np.random.hypergeometric, (5, 6, 4, 3), {}),
    (np.random.logseries, (X[0] / 3, 4), {}),
    (np.random.multinomial, (10, X[:3] / np.sum(X[:3])), {}),
    (np.random.negative_binomial, (5, X[0] / 3, 4), {}),
    (np.random.poisson, (X * 3,), {}),
    (np.random.zipf, (X[0] + 1.5, 4), {}),
    # emitted code's own functions of shapes, counts and masks
    (runtime.zeros_like, (M,), {}),
    (runtime.like, (M,), {}),
    (runtime.tangent_zeros, ((X, X[0]),), {}),
    (runtime.foreign, (X,), {}),  # is it another library's array (Dask, CuPy)
    (runtime.maybe_any, (X,), {}),  # np.any where reading the values is cheap
    (runtime.scalar_seed, (X[0],), {}),
    (runtime.index_step, ([X[0], X[1]], 1), {}),
    (ctn.sort_order, (list(X), False), {}),  # (the order of generic points: no tie to move)
    (ctn.combination_indices, (4, 2, "c"), {}),  # (positions: of a count)
    (ctn.same_lengths, ([3, 3],), {}),  # (zip's strict check: of lengths)
    (ctn.unweighted_count, (list(X), None), {}),  # (a count)
    (runtime.method_read, (_Pair(X, M), "w"), {}),  # (a bool: is it a method of the struct)
    (runtime.first_extreme, (list(X), True), {}),  # (generic points: no tie to move)
    (runtime.first_extreme, (list(X), False), {}),
    (runtime.is_field, (_Pair(X, M), "w"), {}),  # (a field, or an array's attribute: a bool)
    (runtime.array_attribute, (M, "shape"), {}),  # (an array's: a struct's refused)
    (jn.first_occurrences, (X,), {}),  # (where values repeat, they repeat exactly)
    (composite._conditions, ([X > 0.2, X < -0.1],), {}),  # np.piecewise's masks, stacked
    (composite._count, (M,), {}),  # np.size, from the shape
    (rd.count, (M, 1), {}),
    (jn.linspace_weights, (5, True, X), {}),
    (runtime.check_unchanged, (X, None, "changed"), {}),  # (None: nothing kept to compare)
    (ops.item_index, ((3, 4), (-5,)), {}),
    (ops.item_index, ((3, 4), ((1, 2),)), {}),
    (jn.given, (X[0],), {}),
    (la.tensordot_subscripts, (M, M.T, 1), {}),
    (la.inner_subscripts, (M, M), {}),
    (la.dot_subscripts, (M, M.T), {}),
    (em_shapes.inverse_axes, ((1, 0), 2), {}),
    (em_solve.transposed_times, (M,), {}),
    (em_solve.outer_times, (X,), {}),
    (em_elements.axis_or_0, (None,), {}),
    (em_elements.zeros_along, (M, 1), {}),  # (masks of exact zeros: no zero at a generic point)
    (em_elements.first_zeros, (M, 1), {}),
    (em_elements.from_first_zero, (M, 1), {}),
    (em_elements.zero_count, (M, 1), {}),
    (em_elements.second_zeros, (M, 1), {}),
    (em_norms.norm_axes, (M, None, None), {}),
    (em_norms.norm_exponent, (M, 3, 1), {}),
    (runtime.check_in_place, (M, "+=", "y += v", 1, None, ("z",), X), {}),  # None
    (runtime.check_growable, ([X], "xs.append(v)", 1), {}),  # None
    (functools.wraps, (np.sum,), {}),
    (functools.update_wrapper, (lambda v: v, np.sum), {}),
]
try:  # (scipy.linalg's rules' options: checked before a rule applies)
    from cpsad.rules import scipy_linalg

    SAMPLES += [
        (scipy_linalg.overwritten, (False, False), {}),
        (scipy_linalg.known, ("sym", "scipy.linalg.solve"), {}),
    ]
    from cpsad.rules import scipy_stats

    SAMPLES += [
        (scipy_stats.mvn_refused, (X, X, np.eye(len(X)), False), {}),
        (scipy_stats.dirichlet_refused, (X, X), {}),
    ]
except ImportError:  # pragma: no cover - scipy is in the test extra
    pass

# Entries whose results are no numbers at all, so that "does not move" means nothing: a hash or
# an identity changes with every value, text with every digit. (float(str(x)) is a known gap: it
# is differentiated as a constant; autograd and JAX cannot run it at all.)
NOT_NUMBERS = {builtins.str, builtins.repr, builtins.hash, builtins.id}

# The stop-gradient of the composites (cpsad/rules/composite.py): numpy's own value, whose
# derivative the formula beside it gives -- its output moves, by design, so it is checked apart;
# and the copy emitted code keeps of an array with no derivative, to check a helper left it
# unchanged (``runtime.kept_copy``: only ever of a variable Activity found inactive); and the
# user's own, ``cpsad.stop_gradient``, whose value moves by design (tests/test_api_parity.py)
STOP_GRADIENTS = {composite._numpy_value, runtime.kept_copy, cpsad.stop_gradient}

# Functions of functions: they take a function (and arguments, for their kinds) and return one
# -- a closure of emitted code used as a value, the backpropagator the runtime dispatch would run
# (code transformed again: cpsad.dispatch.bp_of) -- or a check of one that returns nothing
# (``check_callee``), or the function a call of an object runs (``callee_function``,
# ``method_function``: the method of its class, which the dispatch differentiates) -- no number
# to move
FUNCTIONS_OF_FUNCTIONS = {
    runtime.Closure,
    dispatch.bp_of,
    dispatch.bp_of_spread,
    dispatch.bp_later,
    dispatch.check_callee,
    dispatch.callee_function,
    dispatch.method_function,
    dispatch.is_as_is,
    dispatch.callee_of,
}


def test_the_stop_gradient_is_used_beside_a_formula_only():
    """``_numpy_value`` is called in ``_exactly`` alone, where ``formula`` gives the derivative:
    anywhere else it would be a silent zero gradient."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(composite))
    callers = {
        fn.name
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef)
        for n in ast.walk(fn)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "_numpy_value"
    }
    assert callers == {"_exactly"}, callers
    assert _moves(composite._numpy_value, (np.sin, X), {}) is not None  # (it is not a constant)


# Results whose values are not defined (np.empty's memory): only their shapes and types compared
SHAPES_ONLY = {np.empty, np.empty_like, runtime.like}


def _label(fn) -> str:
    return core._label(fn)


def _moved(value, rng, eps):
    """``value`` with its floats moved by ``eps`` along a random direction (nested containers
    followed; ints, bools and everything else kept)."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_moved(v, rng, eps) for v in value)
    if isinstance(value, dict):
        return {k: _moved(v, rng, eps) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        step = rng.standard_normal(value.shape)
        if value.dtype.kind == "c":
            step = step + 1j * rng.standard_normal(value.shape)
        return value + eps * step
    if isinstance(value, (float, np.floating)) and not isinstance(value, bool):
        return type(value)(value + eps * rng.standard_normal())
    return value


def _leaves(value):
    if isinstance(value, dict):
        for k in sorted(value):
            yield from _leaves(value[k])
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _call(fn, args, kwargs):
    np.random.seed(20240613)  # the samplers draw the same numbers each time
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _same(a, b, shapes_only=False) -> bool:
    if isinstance(a, (np.ndarray, np.generic, int, float, complex, bool)):
        if shapes_only:
            return np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, (str, bytes, type(None), np.dtype, type)):
        return a == b
    return True  # an object (a Generator, np.finfo): nothing numeric to compare


def _moves(fn, args, kwargs) -> str | None:
    """What moved when the float inputs did (None: nothing)."""
    base = _call(fn, args, kwargs)
    rng = np.random.default_rng(7)
    for eps in (1e-7, 1e-9):
        moved = _call(fn, _moved(args, rng, eps), kwargs)
        a, b = list(_leaves(base)), list(_leaves(moved))
        if len(a) != len(b):
            return f"{len(a)} results, then {len(b)}"
        for x, y in zip(a, b):
            if not _same(x, y, fn in SHAPES_ONLY):
                return f"{x!r} -> {y!r}"
    return None


@pytest.mark.parametrize(
    "fn, args, kwargs", SAMPLES, ids=[f"{_label(f)}-{i}" for i, (f, _, _) in enumerate(SAMPLES)]
)
def test_a_function_without_derivative_does_not_move(fn, args, kwargs):
    """Its outputs at moved float inputs are its outputs: a function whose result changes with
    its input (a differentiable one, as np.histogram's edges were) fails here."""
    moved = _moves(fn, args, kwargs)
    assert moved is None, f"{_label(fn)} moved: {moved}"


@pytest.mark.parametrize(
    "fn, args",
    [
        (np.histogram, (X,)),  # the edges
        (np.histogram_bin_edges, (X,)),
        (np.arange, (X[0], 5.0)),
        (np.heaviside, (np.array([0.0, 1.0]), X[:2])),
        (np.sign, (X[:2] + 1j * X[2:4],)),
        (getattr, (M, "T")),
        (np.random.normal, (X, 1.0)),
        (np.random.permutation, (X,)),
        (np.sin, (X,)),
    ],
)
def test_the_check_finds_functions_that_move(fn, args):
    """Those that were on the list, or would be wrongly: the check above would fail for them."""
    assert _moves(fn, args, {}) is not None


def test_every_function_without_derivative_has_a_sample():
    """So that a function added to the list is checked here (or named as no number)."""
    named = NOT_NUMBERS | STOP_GRADIENTS | FUNCTIONS_OF_FUNCTIONS
    sampled = {id(f) for f, _, _ in SAMPLES} | {id(f) for f in named}
    missing = sorted(_label(o) for o in core.NONDIFF if id(o) not in sampled)
    assert not missing, f"no sample in SAMPLES for {missing}"
    stale = sorted(_label(f) for f, _, _ in SAMPLES if not core.is_nondiff(f))
    assert not stale, f"sampled but not on the list (any more): {stale}"


def test_the_functions_found_differentiable_are_off_the_list():
    """Each has a rule, or refuses differentiable values, now (part 2)."""
    for fn in (
        np.histogram,
        np.histogram_bin_edges,
        np.arange,
        np.heaviside,
        np.sign,
        getattr,
        np.random.normal,
        np.random.uniform,
        np.random.permutation,
        np.random.choice,
        np.random.shuffle,
    ):
        assert not core.is_nondiff(fn), _label(fn)
        assert core.lookup(fn) is not None, _label(fn)


# Attributes and methods with no derivative, and a call of each (the receiver moved)
ATTRIBUTE_SAMPLES = {
    "shape": (),
    "ndim": (),
    "dtype": (),
    "size": (),
    "itemsize": (),
    "nbytes": (),
    "strides": (),
    "argmax": ((), {"axis": 0}),
    "argmin": ((), {}),
    "argsort": ((), {}),
    "nonzero": ((), {}),
    "any": ((), {}),
    "all": ((), {}),
    "argpartition": ((2,), {"axis": 1}),
    "searchsorted": ((0.5,), {}),
    "round": ((1,), {}),
}


@pytest.mark.parametrize("name", sorted(ATTRIBUTE_SAMPLES))
def test_an_attribute_without_derivative_does_not_move(name):
    receiver = np.sort(M, axis=1) if name == "searchsorted" else M
    if name == "searchsorted":
        receiver = np.sort(M.ravel())
    call = ATTRIBUTE_SAMPLES[name]

    def read(x):
        value = getattr(x, name)
        return value(*call[0], **call[1]) if call else value

    base = read(receiver)
    for x, y in zip(_leaves(base), _leaves(read(_moved(receiver, np.random.default_rng(3), 1e-7)))):
        assert _same(x, y), f".{name} moved"


def test_every_attribute_without_derivative_has_a_sample():
    assert set(ATTRIBUTE_SAMPLES) == core.NONDIFF_ATTRIBUTES


# The operators Activity treats as having no derivative: //, &, |, ^, <<, >>, not, ~
@pytest.mark.parametrize(
    "f",
    [
        lambda x, y: x // y,
        lambda x, y: (x > 1) & (y > 1),
        lambda x, y: (x > 1) | (y > 1),
        lambda x, y: (x > 1) ^ (y > 1),
        lambda x, y: ~(x > y),
        lambda x, y: [not (a > b) for a, b in zip(x, y)],
    ],
)
def test_operators_without_derivative_do_not_move(f):
    rng = np.random.default_rng(5)
    y = X[::-1] * 0.7
    a = f(X, y)
    b = f(_moved(X, rng, 1e-7), _moved(y, rng, 1e-7))
    assert np.array_equal(np.asarray(a), np.asarray(b))


# =========================================================================== 2. the silent zeros


def agrees(f, *args):
    """cpsad's gradient passes central finite differences along random directions, and forward
    mode agrees with it (both checked by cpsad.testing)."""
    check_grads(f, *args)
    check_jvp(f, *args)


# --- obj[x] with a differentiable index ------------------------------------------------------


class Squares:
    __getitem__ = lambda self, t: 3 * t * t  # noqa: E731


class Product:
    def __getitem__(self, t):
        return t[0] * t[1]


SQUARES = Squares()


def subscript_of_new_object(x):
    return Squares()[x]


def subscript_of_global_object(x):
    return SQUARES[x]


def subscript_by_tuple(x):
    return Product()[x, 2.0]


def getitem_by_name(x):
    return Squares.__getitem__(Squares(), x)


@pytest.mark.parametrize("f", [subscript_of_new_object, subscript_of_global_object])
def test_a_python_getitem_with_a_differentiable_index_is_an_error_naming_the_class(f):
    """It gave 0 (right: 12): a subscript's index carried no derivative."""
    with pytest.raises(TypeError, match=r"Squares\.__getitem__` is Python code"):
        cpsad.grad(f)(2.0)
    with pytest.raises(TypeError, match=r"Squares\.__getitem__` is Python code"):
        cpsad.jvp(f, (2.0,), (1.0,))


def test_a_tuple_index_into_a_python_getitem_is_an_error():
    with pytest.raises(TypeError, match=r"Product\.__getitem__` is Python code"):
        cpsad.grad(subscript_by_tuple)(2.0)
    with pytest.raises(TypeError, match=r"Product\.__getitem__` is Python code"):
        cpsad.jvp(subscript_by_tuple, (2.0,), (1.0,))


def test_getitem_called_by_name_is_differentiated():
    assert cpsad.grad(getitem_by_name)(2.0) == pytest.approx(12.0)
    agrees(getitem_by_name, 2.0)


def dict_keyed_by_the_value(x):
    table = {1.5: 2.0, 2.0: 3.0}
    return table[x] * x


def array_at_a_counter(x, n):
    s = 0.0
    i = 0
    while i < n:  # i is carried with s: the analysis takes it for differentiable
        s = s + x[i] * x[i - 1]
        i = i + 1
    return s


def windows_of_a_list(xs, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + sum(xs[i : i + 2])
        i = i + 1
    return s


def test_a_differentiable_index_into_arrays_lists_and_dicts_is_a_step():
    """The index picks an entry: its derivative is zero there, and nothing refuses."""
    assert cpsad.grad(dict_keyed_by_the_value)(1.5) == 2.0
    assert cpsad.jvp(dict_keyed_by_the_value, (1.5,), (1.0,))[1] == 2.0
    x = R.standard_normal(4)
    g = cpsad.grad(array_at_a_counter)(x, 4)
    check_grads(array_at_a_counter, x, 4, gradient=g)
    assert cpsad.grad(windows_of_a_list)([1.0, 2.0, 3.0], 2) == [1.0, 2.0, 1.0]
    assert cpsad.jvp(windows_of_a_list, ([1.0, 2.0, 3.0], 2), ([1.0, 2.0, 3.0], 0))[1] == 8.0


# --- getattr ---------------------------------------------------------------------------------


def getattr_T(x):
    return np.sum(getattr(x, "T") * np.arange(6.0).reshape(3, 2))  # noqa: B009 (getattr itself)


def getattr_real(z):
    return np.sum(getattr(z, "real") * 2 + getattr(z, "imag") ** 2)  # noqa: B009 (getattr itself)


def getattr_shape(x):
    n = getattr(x, "shape")[0]  # noqa: B009 (getattr itself)
    return np.sum(x) * n


def getattr_named_by_a_variable(x):
    name = "T"
    return np.sum(getattr(x, name) * np.arange(6.0).reshape(3, 2))


class Box:
    pass


def getattr_after_a_store(x):
    o = Box()
    o.w = x * 2
    return getattr(o, "w")  # noqa: B009 (getattr itself)


def test_getattr_of_a_constant_name_is_the_attribute():
    """getattr(x, "T") gave 0: getattr was on the no-derivative list."""
    x = R.standard_normal((2, 3))
    g = cpsad.grad(getattr_T)(x)
    np.testing.assert_array_equal(g, np.arange(6.0).reshape(3, 2).T)
    agrees(getattr_T, x)
    agrees(getattr_real, np.array([1.0 + 0.5j, -0.3 + 2j]))
    assert cpsad.grad(getattr_shape)(np.ones(3)).tolist() == [3.0, 3.0, 3.0]


def test_getattr_that_cpsad_cannot_follow_is_refused():
    with pytest.raises(cpsad.TransformError, match="constant string"):
        cpsad.grad(getattr_named_by_a_variable)(np.ones((2, 3)))
    # as o.w is: the store of a differentiable value into an attribute (it gave 0)
    with pytest.raises(cpsad.TransformError, match="assigning into part"):
        cpsad.grad(getattr_after_a_store)(1.5)


# --- np.histogram --------------------------------------------------------------------------

C10 = R.standard_normal(10)
C11 = R.standard_normal(11)
DATA = R.standard_normal(40)


def edges(x):
    return np.sum(np.histogram(x)[1] * C11)


def density(x):
    return np.sum(np.histogram(x, density=True)[0] * C10)


def weighted(x):
    return np.sum(np.histogram(x, bins=10, weights=x**2)[0] * C10)


def weighted_density(x):
    h, e = np.histogram(x, 10, density=True, weights=np.exp(x))
    return np.sum(h * C10) + np.sum(e * C11)


def estimated_bins(x):
    e = np.histogram(x, bins="auto")[1]
    return np.sum(e * np.arange(e.size))


def given_edges(x):
    return np.sum(np.histogram(x, bins=np.linspace(-3, 3, 11), weights=x, density=True)[0] * C10)


def given_range(x):
    return np.sum(np.histogram(x, range=(-1, 2), weights=x)[0] * C10)


def bin_edges(x):
    return np.sum(np.histogram_bin_edges(x, 10) * C11)


def counts(x):
    return np.sum(np.histogram(x)[0] * x[:10])  # the counts alone are steps


@pytest.mark.parametrize(
    "f",
    [
        edges,
        density,
        weighted,
        weighted_density,
        estimated_bins,
        given_edges,
        given_range,
        bin_edges,
        counts,
    ],
)
def test_histograms(f):
    """The edges move with the minimum and maximum (they gave 0), a density with the width,
    counts with the weights."""
    agrees(f, DATA)


def test_histogram_of_equal_values_moves_every_edge():
    g = cpsad.grad(edges)(np.full(4, 0.7))
    np.testing.assert_allclose(g, np.full(4, np.sum(C11) / 4))


def histogram_of_active_edges(x, y):
    return np.sum(np.histogram(y, bins=np.linspace(x[0], x[1], 5))[1])


def test_histogram_with_differentiable_edges_is_refused():
    with pytest.raises(cpsad.TransformError, match="no derivative with respect to its argument"):
        cpsad.grad(histogram_of_active_edges)(np.array([-1.0, 1.0]), DATA)


# --- np.arange, np.heaviside, np.sign ------------------------------------------------------

W20 = R.standard_normal(20)


def arange_from(x):
    return np.sum(np.arange(x, 5.0) * W20[: np.arange(x, 5.0).size])


def arange_by(x):
    return np.sum(np.arange(0.0, 5.0, x) * W20[: np.arange(0.0, 5.0, x).size])


def arange_to(x):
    return np.sum(np.arange(x) * x)  # np.arange(stop): its values do not move


def arange_of_both(x):
    return np.sum(np.arange(x, x + 4, x / 3) ** 2)


@pytest.mark.parametrize("f", [arange_from, arange_by, arange_to, arange_of_both])
def test_arange_with_float_bounds(f):
    """Linear in start and step (np.arange(0, T, dt) gave 0 in dt)."""
    agrees(f, 1.3)
    agrees(f, np.float64(1.3))


def heaviside_at_zero(x):
    return np.sum(np.heaviside(x - x, x) + np.heaviside(x - 1, 0.5) * x)


def test_heaviside_is_its_second_argument_at_zero():
    agrees(heaviside_at_zero, X)


def sign_times(z):
    return np.real(np.sign(z) * (1 - 2j))


def sign_of_square(z):
    return np.sum(np.abs(np.sign(z * z) + z))


def sign_real(x):
    return np.sum(np.sign(x - 1) * x)


def test_sign_of_complex_numbers_is_z_over_its_modulus():
    """It was a step (0): the brief's numbers, -0.54 along 1 and 1.07 along i, are the finite
    differences; the gradient is df/dx - i df/dy."""
    z = 1 + 0.5j
    g = cpsad.grad(sign_times)(z)
    eps = 1e-6
    along_1 = (sign_times(z + eps) - sign_times(z - eps)) / (2 * eps)
    along_i = (sign_times(z + 1j * eps) - sign_times(z - 1j * eps)) / (2 * eps)
    assert along_1 == pytest.approx(-0.5367, abs=1e-4) and along_i == pytest.approx(
        1.0733, abs=1e-4
    )
    assert g == pytest.approx(along_1 - 1j * along_i, abs=1e-7)
    agrees(sign_times, z)
    agrees(sign_of_square, np.array([1 + 0.5j, -0.3 + 2j]))
    agrees(sign_real, X)  # real values: a step


# --- np.random ------------------------------------------------------------------------------


def sampled_around(x):
    np.random.seed(0)
    return np.sum(np.random.normal(x, 1.0))


def uniform_up_to(x):
    return np.sum(np.random.uniform(0, x))


def permuted(x):
    return np.sum(np.random.permutation(x) * np.arange(5.0))


def chosen(x):
    return np.sum(np.random.choice(x, 3))


def noise_of_its_shape(x):
    return np.sum(np.random.normal(size=x.shape) * x)


def shuffled(x):
    np.random.shuffle(x)
    return np.sum(x * np.arange(5.0))


def shuffled_by_a_generator(x):
    rng = np.random.default_rng(0)
    rng.shuffle(x)
    return np.sum(x * np.arange(5.0))


def copied_into(x):
    np.copyto(x, np.arange(5.0))
    return np.sum(x * x)


@pytest.mark.parametrize("f", [sampled_around, uniform_up_to, permuted, chosen])
def test_samplers_that_move_with_their_parameters_refuse_differentiable_ones(f):
    """Their values move with loc, scale, bounds, the values permuted: they gave 0."""
    with pytest.raises(cpsad.TransformError, match="np.random.* has no derivative"):
        cpsad.grad(f)(X.copy())
    with pytest.raises(cpsad.TransformError, match="np.random.* has no derivative"):
        cpsad.jvp(f, (X.copy(),), (X.copy(),))


def test_noise_of_a_shape_is_a_constant():
    cpsad.grad(noise_of_its_shape)(X)  # transformed (no draw in between below)
    np.random.seed(4)
    g = cpsad.grad(noise_of_its_shape)(X)
    np.random.seed(4)
    np.testing.assert_array_equal(g, np.random.normal(size=X.shape))


@pytest.mark.parametrize("f", [shuffled, shuffled_by_a_generator, copied_into])
def test_changing_a_differentiable_array_in_place_is_refused(f):
    """np.random.shuffle(x) gave the unshuffled gradient."""
    with pytest.raises(cpsad.TransformError, match="in place"):
        cpsad.grad(f)(X.copy())
    with pytest.raises(cpsad.TransformError, match="in place"):
        cpsad.jvp(f, (X.copy(),), (X.copy(),))


# --- numpy functions of Python floats: arrays, not scalars ---------------------------------

W3 = np.array([1.0, 2.0, 3.0])


def full_of(x):
    return np.sum(np.full(3, x) * W3)


def full_times(x):
    return np.sum(np.full(3, 2.0) * x)


def linspace_times(x):
    return np.sum(np.linspace(0.0, 1.0, 3) * x)


def linspace_to(x):
    return np.sum(np.linspace(0.0, x, 3) * W3)


@pytest.mark.parametrize("f", [full_of, full_times, linspace_times, linspace_to])
def test_numpy_arrays_made_from_python_floats(f):
    """The kinds took np.full(3, x) of a Python float x for a number: the gradient was an array
    (the product's adjoint, never summed)."""
    g = cpsad.grad(f)(1.3)
    assert np.shape(g) == ()
    agrees(f, 1.3)


# =========================================================================== 3. Python floats


def power_zero(x):
    return x**0


def power_half(x):
    return x**0.5


def power_of(x, y):
    return x**y


def math_sqrt(x):
    return math.sqrt(x)


def math_cbrt(x):
    return math.cbrt(x)


def math_asin(x):
    return math.asin(x)


def math_acosh(x):
    return math.acosh(x)


def math_pow(x, y):
    return math.pow(x, y)


def math_atan2(y, x):
    return math.atan2(y, x)


def np_log(x):
    return np.log(x)


def np_divide(x, y):
    return np.divide(x, y)


def np_arctanh(x):
    return np.arctanh(x)


def np_arcsinh(x):
    return np.arcsinh(x)


def math_erf(x):
    return math.erf(x)


@pytest.mark.parametrize(
    "f, args, expected",
    [
        (power_zero, (0.0,), (0.0,)),  # the constant 1 (JAX, autograd)
        (power_half, (0.0,), (math.inf,)),
        (power_of, (0.0, 0.0), (0.0, 0.0)),
        (power_of, (0.0, 0.5), (math.inf, 0.0)),
        (power_of, (0.0, 1.0), (1.0, 0.0)),
        (power_of, (0.0, 2.0), (0.0, 0.0)),
        (math_sqrt, (0.0,), (math.inf,)),  # np.sqrt's and JAX's
        (math_cbrt, (0.0,), (math.inf,)),
        (math_asin, (1.0,), (math.inf,)),
        (math_acosh, (1.0,), (math.inf,)),
        (math_pow, (0.0, 0.5), (math.inf, 0.0)),
        (math_pow, (0.0, 0.0), (0.0, 0.0)),
        (math_atan2, (0.0, 0.0), (math.nan, math.nan)),  # as np.arctan2's
        (np_log, (0.0,), (math.inf,)),
        (np_divide, (1.0, 0.0), (math.inf, -math.inf)),
        (np_arctanh, (1.0,), (math.inf,)),
        (np_arcsinh, (1e200,), (1e-200,)),  # x**2 overflowed
        (math_erf, (1e200,), (0.0,)),
    ],
)
def test_python_floats_at_singular_points_get_numpys_answer(f, args, expected):
    """They raised ZeroDivisionError or OverflowError from emitted code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = cpsad.grad(f, argnums=tuple(range(len(args))))(*args)
        np.testing.assert_allclose(np.array(g, float), expected, rtol=1e-12)
        if len(args) == 1:  # (of two, a zero tangent times an infinite derivative is NaN)
            tangent = cpsad.jvp(f, args, (1.0,))[1]
            np.testing.assert_allclose(float(tangent), expected[0], rtol=1e-12)


def test_python_float_powers_away_from_zero():
    for x, y in [(0.7, 1.3), (1.6, -0.4), (2.0, 3.0), (0.3, 0.5)]:
        check_grads(power_of, x, y, argnums=(0, 1))
        check_jvp(power_of, x, y)


# =========================================================================== 4. parameters
# Parameters of rules taken for discrete (no derivative, no error) whose values do move the result


def padded_with(c):
    return np.sum(np.pad(np.ones(3), 1, constant_values=c))


def std_with(d):
    return np.std(np.array([1.0, 2.0, 4.0]), ddof=d)


def method_std_with(d):
    return np.array([1.0, 2.0, 4.0]).std(ddof=d)


def norm_of_order(p):
    return np.linalg.norm(np.array([1.0, 2.0, 4.0]), ord=p)


@pytest.mark.parametrize("f", [padded_with, std_with, method_std_with, norm_of_order])
def test_parameters_that_move_the_result_refuse_differentiable_values(f):
    """They gave 0: np.pad's constant_values, var's and std's ddof, a norm's order."""
    with pytest.raises(cpsad.TransformError, match="no derivative with respect to its argument"):
        cpsad.grad(f)(0.5 if f is not norm_of_order else 3.0)


def entry_or_default(x):
    d = {"a": x * 2, "b": x}
    return d.get("a") * 3 + d.get("c", x) ** 2


def parameter_entry(p):
    return p.get("w") * 2 + p.get("z", 1.0)


def test_dict_get_is_the_entry():
    """d.get(key) on a dict of differentiable values was refused (a method with no rule)."""
    agrees(entry_or_default, 1.5)
    assert cpsad.grad(parameter_entry)({"w": 2.0}) == {"w": 2.0}


def applied(f, x):
    return np.sum(f(x, 1.0))


def test_a_function_value_without_derivative_in_a_float_argument_is_an_error():
    """Called through a function value (the runtime dispatch), a parameter with no rule got a
    zero: np.random.normal's loc gave 0."""
    with pytest.raises(TypeError, match="no derivative with respect to its argument `loc`"):
        cpsad.grad(applied, argnums=1)(np.random.normal, X)
    g = cpsad.grad(applied, argnums=1)(np.heaviside, X)  # a step in x1: zero, rightly
    np.testing.assert_array_equal(g, np.zeros_like(X))
    check_grads(applied, np.maximum, X - 1, argnums=1)


# =========================================================================== 5. casts to integers


def cast_to_int(x):
    return np.sum((x * 10).astype(int) * 1.0)


def cast_to_bool(x):
    return np.sum(x.astype(bool) * 1.0)


def array_of_ints(x):
    return np.sum(np.array(x * 10, dtype=int) * 1.0)


def asarray_of_ints(x):
    return np.sum(np.asarray(x * 10, dtype=int) * 1.0)


def table_at(x):
    return np.sum(np.linspace(0.0, 1.0, 30)[(x * 10).astype(int)] * x)


@pytest.mark.parametrize("f", [cast_to_int, cast_to_bool, array_of_ints, asarray_of_ints, table_at])
def test_a_cast_to_integers_is_a_step(f):
    """.astype(int), np.array(x, dtype=int), np.asarray(x, dtype=int) passed the adjoint through
    (10 for (10 * x).astype(int)); forward mode gave 0. A step: zero."""
    agrees(f, X)
    if f is not table_at:
        np.testing.assert_array_equal(cpsad.grad(f)(X), np.zeros_like(X))
