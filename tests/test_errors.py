"""Unsupported code is a TransformError at the user's line, with a caret and a hint -- never a crash."""

import inspect
import math
import os
import re
import statistics
import warnings

import numpy as np
import pytest

import cpsad
from tests import corpus_errors


def expected(f):
    lines, first = inspect.getsourcelines(f)
    for i, line in enumerate(lines):
        m = re.search(r"# E: (.*?)(  #|$)", line)
        if m:
            return first + i, m.group(1).strip(), line.rstrip("\n")
    raise AssertionError(f"{f.__name__} has no '# E:' marker")


def args_for(f):
    if f in (
        corpus_errors.stores_into_active,
        corpus_errors.method_without_rule,
        corpus_errors.inplace_method,
        corpus_errors.bad_kwarg,
    ):
        return (np.array([1.0, 2.0]),), 0
    return (0.5,), 0


@pytest.mark.parametrize("f", corpus_errors.CASES, ids=[f.__name__ for f in corpus_errors.CASES])
def test_error_points_at_the_line(f):
    lineno, message, line = expected(f)
    args, argnums = args_for(f)
    with pytest.raises(cpsad.TransformError) as info:
        cpsad.grad(f, argnums=argnums)(*args)
    e = info.value
    assert isinstance(e, SyntaxError)
    assert e.filename == inspect.getsourcefile(corpus_errors)
    assert e.lineno == lineno, str(e)
    assert message in e.message, str(e)
    assert e.hint, "every error says what to write instead"
    text = str(e)
    first, src, caret, *rest = text.splitlines()
    assert first.startswith(f"{e.filename}:{lineno}:{e.col + 1}: error: ")
    assert src.strip() == line.strip()
    # the caret sits under the construct: the first caret is on a non-blank character
    col = caret.index("^")
    assert src[col] != " "
    assert rest[-1].startswith("hint: ")


def test_storing_into_an_active_array_is_refused_at_its_line():
    with pytest.raises(TypeError, match="did not make") as info:
        cpsad.grad(corpus_errors.stores_into_active)(np.array([1.0, 2.0]))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    first = inspect.getsourcelines(corpus_errors.stores_into_active)[1]
    assert f"corpus_errors.py:{first + 2}: y[0] = 3.0" in notes


def test_zero_derivative_function_is_not_an_error():
    g = cpsad.grad(corpus_errors.indexed_nondiff)(1.7)
    assert g == pytest.approx(np.floor(1.7))


def test_grad_of_vector_output_says_scalar():
    def f(x):
        return x * 2.0

    with pytest.raises(TypeError, match="scalar"):
        cpsad.grad(f)(np.ones(3))


def test_function_without_source():
    ns = {}
    exec("def f(x):\n    return x * 2\n", ns)
    with pytest.raises(cpsad.TransformError, match="cannot read the source"):
        cpsad.grad(ns["f"])(1.0)


def test_not_a_function():
    """Neither a Python function nor one with a rule (``cpsad.grad(np.sin)`` is differentiated:
    tests/test_api_parity.py)."""
    with pytest.raises(TypeError, match="Python functions"):
        cpsad.grad(np.vectorize(lambda t: t * t))(1.0)


# --------------------------------------------------------------------------- errors a person can act on


def all_positive(x):
    return np.all(x > 0)


@pytest.mark.parametrize(
    "f,x",
    [(lambda x: x > 0, 1.5), (all_positive, np.ones(3)), (lambda x: x > 0, np.ones(3))],
    ids=["comparison", "np.all", "array of bools"],
)
def test_a_bool_result_is_named_a_bool_with_what_to_return(f, x):
    with pytest.raises(TypeError) as info:
        cpsad.grad(f)(x)
    text = str(info.value)
    assert "bool" in text and "has no gradient" in text, text
    assert "shape ()" not in text and "np.sum" not in text, text  # (a sum of bools is no better)
    assert "Return the float quantity it is computed from (`x`, not `x > 0`)" in text


def test_elementwise_grad_of_bools_says_bools_not_scalar():
    with pytest.raises(TypeError) as info:
        cpsad.elementwise_grad(lambda x: x > 0)(np.ones(3))
    text = str(info.value)
    assert text.startswith("elementwise_grad requires a real output"), text
    assert "of bools" in text and "scalar" not in text, text


def two(x, y):
    return x * y


@pytest.mark.parametrize(
    "derivative",
    [cpsad.grad, cpsad.value_and_grad, cpsad.hessian, cpsad.jacobian],
    ids=lambda d: d.__name__,
)
def test_argnums_of_an_argument_passed_by_keyword_says_so(derivative):
    """JAX's argnums selects positional arguments only; cpsad refuses the same, naming the
    parameter and how it was passed (it said "refers to argument 1, but the call passes 1")."""
    with pytest.raises(TypeError) as info:
        derivative(two, argnums=1)(2.0, y=3.0)
    assert str(info.value) == (
        "argnums=1 selects positional argument 1, `y`, but the call passes `y` by keyword "
        "(..., y=...); argnums counts the positional arguments of the call only, as in JAX: "
        "pass `y` by position"
    )


def test_argnums_past_the_arguments_counts_them():
    with pytest.raises(
        ValueError,
        match=r"argnums=\(0, 2\) selects positional argument 2, but "
        r"the call passes 2 positional arguments",
    ):
        cpsad.grad(two, argnums=(0, 2))(2.0, 3.0)


def apply_to_pair(g, x):
    return g(x, x)


def lambda_given_two_arguments(x):
    return apply_to_pair(lambda a: a * 2.0, x)


def test_a_call_of_a_lambda_that_does_not_match_names_the_lambda_not_its_made_up_name():
    with pytest.raises(cpsad.TransformError) as info:
        cpsad.grad(lambda_given_two_arguments)(1.0)
    line = inspect.getsourcelines(lambda_given_two_arguments)[1] + 1
    e = info.value
    assert e.lineno == line
    assert e.message == (
        f"this call does not match the parameters (a) of the lambda at line {line}: too many "
        "positional arguments"
    )
    assert "_L" not in str(e), str(e)


def scaled(t, scale=1.0):
    return np.sin(t) * scale


def by_keyword_through_a_value(x):
    fns = [scaled, np.cos]
    return fns[0](x, scale=2.0) * x


def test_a_refusal_in_emitted_code_points_at_the_users_line_with_a_caret():
    """A refusal made while transforming emitted code (the first derivative's, which calls a
    function value with a keyword argument) is shown at the line of yours it came from, a caret
    under it, naming the derivative in your words."""
    second = cpsad.grad(cpsad.grad(by_keyword_through_a_value))
    with pytest.raises(cpsad.TransformError) as info:
        second(1.5)
    e = info.value
    first = inspect.getsourcelines(by_keyword_through_a_value)[1]
    assert e.filename == __file__ and e.lineno == first + 2, str(e)
    head, src, caret, *_ = str(e).splitlines()
    assert src.strip() == "return fns[0](x, scale=2.0) * x"
    assert caret.strip() == "^" * len(src.strip()) and caret.index("^") == src.index("return")
    assert "(in the derivative of `by_keyword_through_a_value`: emitted code " in head
    assert "keyword arguments" in head and "_bp`" not in head


def keeps_a_lambda_in_a_list(x):
    fs = [lambda a: a.shape]
    return x * fs[0](x)


def test_the_note_of_a_runtime_error_names_the_users_lines_and_functions():
    """A lambda kept in a list runs as a copy in the emitted code, transformed when it is
    called: the note maps its line back to yours too (it named the cache file and
    `__cpsad_factory__.<locals>.f_bp.<locals>.lambda_L2`)."""
    with pytest.raises(TypeError, match="scalar") as info:
        cpsad.grad(keeps_a_lambda_in_a_list)(np.ones(2))
    note = next(n for n in info.value.__notes__ if n.startswith("in your code"))
    first = inspect.getsourcelines(keeps_a_lambda_in_a_list)[1]
    lines = note.splitlines()[1:]
    assert all(line.strip().startswith(f"{__file__}:") for line in lines), note
    where = f"{__file__}:{first + 1}: fs = [lambda a: a.shape]  (the backpropagator of the lambda"
    assert f"{where} at line {first + 1} of `keeps_a_lambda_in_a_list`, " in note
    for line in lines:  # what each frame runs, in your words (the cache file's name aside)
        what = line.split("  (", 1)[1].rsplit(", ", 1)[0]
        assert "__cpsad_factory__" not in what and "_L" not in what and "_bp" not in what, line


def joins_constants(x):
    return "-".join([str(x)]) and x  # (the result's name is differentiable: `and` rebinds it)


def test_a_method_of_a_constant_is_not_called_a_differentiable_value():
    """It was refused: "the method `.join()` on a differentiable value has no derivative rule"."""
    assert cpsad.grad(joins_constants)(1.5) == 1.0
    assert cpsad.jvp(joins_constants, (1.5,), (1.0,)) == (1.5, 1.0)


def updates_a_dict(x):
    d = {"a": 1.0}
    d.update({"b": x})
    return d["b"]


def formats_a_number(x):
    s = "{:.2f}"
    return float(s.format(x)) * x


def samples_at(x):
    return np.random.normal(x, 1.0)


def samples_from_a_generator(x):
    return np.random.default_rng(0).normal(x)


def log_gamma(x):
    return math.lgamma(x)


def vectorized(x):
    return np.sum(np.vectorize(lambda t: t * t)(x))


def as_a_list(x):
    return sum(x.tolist())


@pytest.mark.parametrize(
    "f,x,said,hint",
    [
        (
            updates_a_dict,
            1.0,
            "calling `.update()` for its effect on `d` (a differentiable value, or a container",
            "make a new dict, `d = {**d, k: v}`, or store the entry, `d[k] = v`",
        ),
        (
            formats_a_number,
            1.0,
            "`str.format` was called with differentiable values",
            "where it is used as data (a label, a key), pass `cpsad.stop_gradient(x)`",
        ),
        (
            samples_at,
            1.0,
            "`np.random.normal` has no derivative with respect to its argument `loc`",
            "`loc + scale * rng.standard_normal(size)`",
        ),
        (
            samples_from_a_generator,
            1.0,
            "`Generator.normal` was called with differentiable values",
            "`loc + scale * rng.standard_normal(size)`",
        ),
        (
            log_gamma,
            1.5,
            "`math.lgamma` has no derivative rule",
            "`math.lgamma` is compiled code, which cpsad cannot read: compute it with functions",
        ),
        (
            vectorized,
            np.ones(2),
            "`np.vectorize` has no derivative rule",
            "call the function on the array itself",
        ),
        (as_a_list, np.ones(2), "the method `.tolist()`", "`list(x)` gives the rows of `x`"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_hints_point_to_the_documented_fix(f, x, said, hint):
    """Each said "register a rule with cpsad.defvjp" (or "write it in Python in a .py file",
    or "e.g. `y = np.sort(x)`"), where docs/reference.md documents another fix."""
    with pytest.raises((TypeError, cpsad.TransformError)) as info:
        cpsad.grad(f)(x)
    text = str(info.value)
    assert said in text and hint in text, text
    assert "in a .py file" not in text and "np.sort" not in text, text
    if f is not log_gamma:
        assert "defvjp" not in text, text


def calls_a_kept_lambda_with_two(x):
    fs = [lambda a: a * 2.0]
    return fs[0](x, x)


def calls_a_kept_helper_with_two(x):
    fs = [two_times]
    return fs[0](x, x)


def two_times(y):
    return y * 2.0


def calls_a_derivative_with_two(x):
    g = cpsad.grad(lambda a: a * x)
    return g(x, x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize(
    "f,callee",
    [
        (calls_a_kept_lambda_with_two, "the parameters (a) of the lambda at line {}"),
        (calls_a_kept_helper_with_two, "the parameters (y) of `two_times`"),
        (calls_a_derivative_with_two, "the parameters (a) of cpsad.grad of the lambda at line {}"),
    ],
    ids=["lambda", "helper", "derivative"],
)
def test_a_call_through_a_value_that_does_not_match_names_the_function_in_your_words(
    f, callee, mode
):
    """It said `__cpsad_factory__.<locals>.f_bp.<locals>.lambda_L4_bp() takes 2 positional
    arguments but 3 were given` (counting the continuation), or only `too many positional
    arguments`."""
    with pytest.raises(TypeError) as info:
        if mode == "reverse":
            cpsad.grad(f)(1.0)
        else:
            cpsad.jvp(f, (1.0,), (1.0,))
    line = inspect.getsourcelines(f)[1] + 1
    expected = f"this call does not match {callee.format(line)}: too many positional arguments"
    assert str(info.value) == expected


def sqrt_sum(x):
    y = np.sqrt(x)  # infinitely steep at 0: the backward pass divides by zero
    return np.sum(y)


def log_of(x):
    return np.log(x) * 2.0


def test_a_numpy_warning_in_emitted_code_is_at_your_line():
    """numpy warns where the operation ran -- a line of a cache file; cpsad says it at the line
    of yours that line came from, naming the emitted line too, in both modes."""
    first = inspect.getsourcelines(sqrt_sum)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpsad.grad(sqrt_sum)(np.array([0.0, 1.0]))
        cpsad.jvp(log_of, (np.float64(0.0),), (1.0,))
    where = [(w.filename, w.lineno, w.category) for w in caught]
    log_line = inspect.getsourcelines(log_of)[1] + 1
    assert where == [(__file__, first + 1, RuntimeWarning)] + [
        (__file__, log_line, RuntimeWarning)
    ] * (len(caught) - 1), [(w.filename, w.lineno, str(w.message)) for w in caught]
    message = str(caught[0].message)
    assert message.startswith(
        "divide by zero encountered in the backpropagator of `sqrt_sum` (emitted code "
    ), message
    assert message.endswith("x_bar = y_bar * 0.5 / y)"), message
    assert "in the tangent function of `log_of`" in str(caught[-1].message)


def test_a_numpy_warning_keeps_your_filters_and_modes():
    x = np.array([0.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        cpsad.grad(sqrt_sum)(x)
    assert caught == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # raised where the operation runs, as numpy's own
        with pytest.raises(RuntimeWarning, match="divide by zero") as info:
            cpsad.grad(sqrt_sum)(x)
    line = inspect.getsourcelines(sqrt_sum)[1] + 1
    assert f"{__file__}:{line}: y = np.sqrt(x)" in "\n".join(info.value.__notes__)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        cpsad.grad(sqrt_sum)(x)
    with np.errstate(divide="ignore"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpsad.grad(sqrt_sum)(x)
    assert caught == []


def noisy(rng, x):
    return x * rng.standard_normal()


def test_a_method_of_a_differentiated_parameter_names_it_and_argnums():
    """`cpsad show` differentiates every parameter: a random generator among them was "a
    differentiable value", which did not say which, nor that it is differentiated by choice."""
    with pytest.raises(cpsad.TransformError) as info:
        cpsad.grad(noisy)(np.random.default_rng(0), 1.0)  # argnums=0: the generator
    e = info.value
    assert e.message == (
        "the method `.standard_normal()` of `rng`, a parameter being differentiated, has no "
        "derivative rule"
    )
    assert e.hint.startswith("if the parameter is not a number to differentiate")
    assert "`argnums` (`--wrt` on the command line)" in e.hint
    assert cpsad.grad(noisy, 1)(np.random.default_rng(0), 1.0) == pytest.approx(
        np.random.default_rng(0).standard_normal()
    )


def _scaled_and_named(x, folder):
    path = os.path.join(folder, "out.png")  # the standard library's, frozen: no source to read
    return x * 2.0 + len(path) * 0.0


def _scaled_and_joined(x, folder):
    return x * 2.0, os.path.join(folder, "out.png")


def test_a_frozen_standard_library_function_is_refused_at_your_call():
    """``os.path.join`` is Python, but frozen into the interpreter: cpsad cannot read its source.
    Called with a differentiated value that reaches the result, the refusal is at the call in
    your file (it pointed at ``<frozen posixpath>:71``); with values that are not differentiated
    it just runs."""
    assert cpsad.grad(_scaled_and_named)(1.5, "plots") == 2.0
    with pytest.raises(cpsad.TransformError) as info:
        _ = cpsad.transform(_scaled_and_joined, argnums=(0, 1)).source
    err = info.value
    assert err.filename == __file__
    assert err.lineno == _scaled_and_joined.__code__.co_firstlineno + 1
    assert "`os.path.join`" in str(err) and "frozen" not in str(err)


class _Box:
    def __init__(self):
        self.items = []


def _appends_to_an_attribute(x):
    a = _Box()
    a.items.append(x * 2.0)
    a.items.append(np.sin(x))
    return a.items[0] * a.items[1]


def test_forward_mode_refuses_a_change_of_an_attributes_container():
    """Forward mode had no tangent for ``a.items`` (a plain class's object has none) and crashed
    with "'NoneType' object has no attribute 'append'"; it refuses, as reverse mode does."""
    with pytest.raises(TypeError, match="attribute of an object holds") as info:
        cpsad.jvp(_appends_to_an_attribute, (0.7,), (1.0,))
    assert "a.items.append(x * 2.0)" in str(info.value)
    with pytest.raises(TypeError, match="shares"):
        cpsad.grad(_appends_to_an_attribute)(0.7)


# ----------------------------------------------------------------------------- nonlocal


def _closure(body: str):
    """``make(2.0)``: the closure ``inner`` of a module written to a real file."""
    from cpsad.transforms.testing import function_from_source

    make = function_from_source(
        "def make(c):\n    total = 0.0\n    calls = 0\n\n    def inner(x):\n"
        + "".join("        " + line + "\n" for line in body.strip().splitlines())
        + "    return inner\n",
        "make",
    )
    return make(2.0)


def test_a_derivative_through_a_variable_of_the_function_around_is_refused():
    """``total`` belongs to the function around the differentiated one: no adjoint is carried
    through it, and the gradient was 0.0 where autograd and differences give 2.0 -- refused, at
    the assignment."""
    f = _closure("nonlocal total\ntotal = total + x * c\nreturn total * 1.0")
    assert f(3.0) == 6.0
    with pytest.raises(cpsad.TransformError, match=r"variable of the function\s+around it") as e:
        cpsad.grad(f)(3.0)
    assert "total = total + x * c" in str(e.value) and "^" in str(e.value)


@pytest.mark.parametrize(
    "body",
    [
        "nonlocal total\nfor i in range(3):\n    total = total * x + c\nreturn total",
        "nonlocal total\ntotal = x * c\ndef inner(u):\n    return u * total\nreturn inner(x)",
        "nonlocal total\ntotal = x * c\ndef setter(u):\n    nonlocal total\n"
        "    total = total * u\nsetter(x)\nreturn total",
        "nonlocal total\nif x > 0:\n    total = total * x\nelse:\n    total = total - x\n"
        "return np.sin(total) * x",
    ],
    ids=["loop", "read-by-a-closure", "changed-by-a-closure", "branches"],
)
def test_a_variable_of_the_function_around_read_back_is_refused_however_it_flows(body):
    """In a loop, read by a closure the entry defines, changed by one, in branches: refused,
    at first and second order (a derivative through ``total`` would be missed at either)."""
    f = _closure(body)
    for d in (cpsad.grad(f), cpsad.grad(cpsad.grad(f))):
        with pytest.raises(cpsad.TransformError, match=r"variable of the function\s+around it"):
            d(0.7)


@pytest.mark.parametrize(
    "body",
    [
        "nonlocal calls\ncalls = calls + 1\nreturn x * c * x",  # a counter: not x's
        "nonlocal total\ntotal = x * c\nreturn x * x",  # kept there, not read back
        "nonlocal total\ny = total + x\ntotal = 1.0\nreturn y * x",  # read before it changes
    ],
)
def test_a_variable_of_the_function_around_that_carries_no_derivative_is_accepted(body):
    f = _closure(body)
    g = cpsad.grad(f)(0.7)
    h = 1e-6
    assert g == pytest.approx((_closure(body)(0.7 + h) - _closure(body)(0.7 - h)) / (2 * h))


def population_variance(x):
    return statistics.pvariance(x)


def test_an_error_in_a_library_function_names_the_caller():
    """``statistics.pvariance`` is refused inside the standard library's source (a walrus in
    a comprehension, in its ``_ss``): the error named only ``statistics.py``, not which line of
    the user's made cpsad read it. A note now names the function of the user's that calls it."""
    with pytest.raises(cpsad.TransformError) as info:
        cpsad.grad(population_variance)([1.0, 2.0, 4.0])
    assert info.value.filename.endswith("statistics.py")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "`population_variance`" in notes and "test_errors.py" in notes, notes
