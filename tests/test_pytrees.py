"""Namedtuples, dataclasses and classes given to ``cpsad.register_pytree`` as pytrees: arguments
differentiated field by field (a gradient of the same type), fields read in differentiated code
(``params.w``), in reverse and forward mode, against central differences."""

from __future__ import annotations

import dataclasses
import typing
from collections import namedtuple

import numpy as np
import pytest

import cpsad

RNG = np.random.default_rng(5)
W = RNG.normal(size=3)
B = 0.3
X = RNG.normal(size=3)

Params = namedtuple("Params", "w b")


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float
    name: str = "dense"  # data: no gradient


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    b: float


class Affine:  # a class of yours, registered
    def __init__(self, w, b):
        self.w, self.b = w, b


cpsad.register_pytree(Affine, lambda a: ((a.w, a.b), None), lambda aux, ch: Affine(*ch))


def loss(p, x):
    return np.sum(np.tanh(p.w * x + p.b) ** 2) + p.b * np.sum(p.w)


def numeric(f, p, fields, eps=1e-6):
    """Central differences of ``f(p)`` in each field of ``p`` (arrays element by element)."""
    out = {}
    for name in fields:
        v = getattr(p, name)
        if isinstance(v, np.ndarray):
            g = np.zeros_like(v)
            for i in np.ndindex(v.shape):
                e = np.zeros_like(v)
                e[i] = eps
                hi = f(_with(p, name, v + e))
                lo = f(_with(p, name, v - e))
                g[i] = (hi - lo) / (2 * eps)
            out[name] = g
        else:
            out[name] = (f(_with(p, name, v + eps)) - f(_with(p, name, v - eps))) / (2 * eps)
    return out


def _with(p, name, value):
    if isinstance(p, tuple):
        return p._replace(**{name: value})
    if dataclasses.is_dataclass(p):
        return dataclasses.replace(p, **{name: value})
    return type(p)(**{**vars(p), name: value})  # (a registered class of the fields' names)


@pytest.mark.parametrize(
    "p",
    [Params(W, B), Layer(W, B), Frozen(W, B), Affine(W, B)],
    ids=["namedtuple", "dataclass", "frozen", "registered"],
)
def test_a_struct_argument_gets_a_gradient_of_its_type(p):
    g = cpsad.grad(loss)(p, X)
    assert type(g) is type(p)
    expected = numeric(lambda q: loss(q, X), p, ("w", "b"))
    np.testing.assert_allclose(g.w, expected["w"], rtol=1e-6)
    assert g.b == pytest.approx(expected["b"], rel=1e-6)
    if isinstance(p, Layer):
        assert g.name is None  # not a number: no gradient, as for a list's or dict's entries


@pytest.mark.parametrize(
    "p", [Params(W, B), Layer(W, B), Affine(W, B)], ids=["namedtuple", "dataclass", "registered"]
)
def test_forward_mode_along_a_struct_tangent(p):
    t = _with(_with(p, "w", RNG.normal(size=3)), "b", 0.7)
    _, got = cpsad.jvp(loss, (p, X), (t, None))
    expected = numeric(lambda q: loss(q, X), p, ("w", "b"))
    want = np.dot(expected["w"], t.w) + expected["b"] * t.b
    assert got == pytest.approx(want, rel=1e-6)


def test_structs_nested_in_containers():
    params = {"layers": [Params(W, B), Params(W * 2.0, -B)], "scale": 1.5}

    def f(ps, x):
        h = x
        for p in ps["layers"]:
            h = np.tanh(p.w * h + p.b)
        return ps["scale"] * np.sum(h * h)

    g = cpsad.grad(f)(params, X)
    assert isinstance(g["layers"][1], Params)
    eps = 1e-6
    for i in range(2):
        for j in range(3):
            up = {**params, "layers": list(params["layers"])}
            dn = {**params, "layers": list(params["layers"])}
            e = np.zeros(3)
            e[j] = eps
            up["layers"][i] = params["layers"][i]._replace(w=params["layers"][i].w + e)
            dn["layers"][i] = params["layers"][i]._replace(w=params["layers"][i].w - e)
            fd = (f(up, X) - f(dn, X)) / (2 * eps)
            assert g["layers"][i].w[j] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_an_attribute_of_an_object_that_is_no_pytree_is_refused_when_it_runs():
    class Plain:
        def __init__(self, w):
            self.w = w

    def f(x):
        obj = Plain(x)
        return np.sum(obj.w)

    with pytest.raises((TypeError, cpsad.TransformError)):
        cpsad.grad(f)(X)


def test_jacobian_of_a_struct_argument():
    jac = cpsad.jacobian(lambda p: np.tanh(p.w) * p.b)(Params(W, B))
    assert isinstance(jac, Params)
    np.testing.assert_allclose(jac.w, np.diag((1 - np.tanh(W) ** 2) * B), rtol=1e-10)
    np.testing.assert_allclose(jac.b, np.tanh(W), rtol=1e-10)


# ----------------------------------------------------------------------------- made in the code

Point = namedtuple("Point", "x y", defaults=(1.0,))


class Typed(NamedTupleBase := __import__("typing").NamedTuple):  # noqa: F841
    w: np.ndarray
    b: float


@dataclasses.dataclass
class WithDefault:
    w: np.ndarray
    b: float = 0.5
    name: str = "dense"


@dataclasses.dataclass
class Scaled:  # __post_init__ computes from the arguments: not a plain struct
    w: np.ndarray

    def __post_init__(self):
        self.w = self.w * 2.0


def step(p, x):
    return np.tanh(p.w * x + p.b)


def made_namedtuple(x):
    p = Params(x * 2.0, np.sum(x))
    q = Params(w=p.w * p.b, b=p.b)
    return np.sum(step(q, x))


def made_with_defaults(x):
    a = Point(np.sin(x[0]))  # y from the default
    b = Point(y=x[1], x=a.x * a.y)
    return a.x * b.x + b.y * b.y


def made_typed_and_dataclass(x):
    t = Typed(x * x, x[0])
    d = WithDefault(t.w + 1.0)
    f = Frozen(w=d.w * t.b, b=d.b)
    return np.sum(step(f, x)) + d.b * np.sum(t.w)


def made_in_a_helper_and_a_loop(x):
    p = _make(x)
    for _ in range(3):
        p = Params(p.w * 0.5 + x, p.b + np.sum(p.w))
    return np.sum(p.w) * p.b


def _make(x):
    return Layer(np.cos(x), np.sum(x * x))


MADE = [made_namedtuple, made_with_defaults, made_typed_and_dataclass, made_in_a_helper_and_a_loop]


@pytest.mark.parametrize("f", MADE)
def test_a_struct_made_in_the_code_is_differentiated(f):
    x = RNG.normal(size=3)
    value, g = cpsad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    v = RNG.normal(size=3)
    fd = (f(x + 1e-6 * v) - f(x - 1e-6 * v)) / 2e-6
    assert np.dot(g, v) == pytest.approx(fd, rel=1e-6, abs=1e-9)
    _, t = cpsad.jvp(f, (x,), (v,))
    assert t == pytest.approx(fd, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("f", [made_namedtuple, made_typed_and_dataclass])
def test_a_struct_made_in_the_code_at_second_order(f):
    x, v = RNG.normal(size=3), RNG.normal(size=3)
    g = cpsad.grad(f)
    fd = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(cpsad.hvp(f)(x, v), fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(cpsad.grad(lambda y: np.dot(g(y), v))(x), fd, rtol=1e-5, atol=1e-7)


def made_with_post_init(x):
    return np.sum(Scaled(x).w)


def test_a_dataclass_that_computes_in_its_init_is_refused():
    with pytest.raises(cpsad.TransformError, match="Scaled"):
        cpsad.grad(made_with_post_init)(np.ones(3))


# ------------------------------------------------- methods of a struct whose fields are differentiated
#
# The style of PyTorch's modules and Equinox's: a layer is an object whose fields are the
# parameters, called as ``layer(x)`` or ``layer.apply(x)``. Before, ``layer(x)`` gave a zero
# gradient (the dispatch ran ``__call__`` with the object as data), then was refused, and
# ``layer.apply(x)`` was refused where it was written ("no derivative rule"). Now the method
# runs as the function of the object it is, differentiated with respect to the object too.


class TypedLayer(typing.NamedTuple):
    w: np.ndarray
    b: float

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)

    def apply(self, x, scale):
        return self(x) * scale + self.penalty()

    def penalty(self):
        return 0.1 * np.sum(self.w**2)


@dataclasses.dataclass
class DataLayer:
    w: np.ndarray
    b: float
    name: str = "dense"

    __call__ = TypedLayer.__call__
    apply = TypedLayer.apply
    penalty = TypedLayer.penalty


@dataclasses.dataclass(frozen=True)
class FrozenLayer:
    w: np.ndarray
    b: float

    __call__ = TypedLayer.__call__
    apply = TypedLayer.apply
    penalty = TypedLayer.penalty


class PlainLayer:  # registered
    def __init__(self, w, b):
        self.w, self.b = w, b

    __call__ = TypedLayer.__call__
    apply = TypedLayer.apply
    penalty = TypedLayer.penalty


cpsad.register_pytree(PlainLayer, lambda a: ((a.w, a.b), None), lambda aux, ch: PlainLayer(*ch))


def by_call(p, x):
    return np.sum(p(x) ** 2)


def by_method(p, x):
    return np.sum(p.apply(x, 2.0))


def by_layers(p, x):
    h = x
    for layer in [p, p]:
        h = layer(h)
    return np.sum(h) + p.penalty()


def by_a_helper(p, x):
    return np.sum(_run_layer(p, x)) + by_call(p, x)


def _run_layer(layer, v):
    return layer.apply(v, -1.0)


LAYERS = [TypedLayer(W, B), DataLayer(W, B), FrozenLayer(W, B), PlainLayer(W, B)]
LAYER_IDS = ["namedtuple", "dataclass", "frozen", "registered"]


def _numeric_layer(f, p):
    return numeric(f, p, ("w", "b"))


@pytest.mark.parametrize("f", [by_call, by_method, by_layers, by_a_helper])
@pytest.mark.parametrize("p", LAYERS, ids=LAYER_IDS)
def test_a_method_of_a_differentiated_struct(p, f):
    """Reverse mode, forward mode along a struct tangent, and the gradient in ``x`` beside it
    (the object as data there), against central differences."""
    g = cpsad.grad(f)(p, X)
    assert type(g) is type(p)
    expected = _numeric_layer(lambda q: f(q, X), p)
    np.testing.assert_allclose(g.w, expected["w"], rtol=1e-6, atol=1e-9)
    assert g.b == pytest.approx(expected["b"], rel=1e-6)
    t = _with(_with(p, "w", RNG.normal(size=3)), "b", 0.7)
    _, got = cpsad.jvp(f, (p, X), (t, None))
    assert got == pytest.approx(np.dot(expected["w"], t.w) + expected["b"] * t.b, rel=1e-6)
    gx = cpsad.grad(f, argnums=1)(p, X)
    e = np.eye(3) * 1e-6
    fd = [(f(p, X + e[i]) - f(p, X - e[i])) / 2e-6 for i in range(3)]
    np.testing.assert_allclose(gx, fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("p", LAYERS, ids=LAYER_IDS)
def test_a_method_of_a_differentiated_struct_at_the_second_order(p):
    """The gradient in the object's ``w`` differentiated in ``x`` (the backpropagator's call of
    the method through the dispatch, transformed again), against central differences of it."""

    def mixed(x):
        return np.sum(cpsad.grad(by_method)(p, x).w * W)

    got = cpsad.grad(mixed)(X)
    e = np.eye(3) * 1e-5
    fd = [(mixed(X + e[i]) - mixed(X - e[i])) / 2e-5 for i in range(3)]
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-8)


def made_and_called(w, x):
    layers = [DataLayer(w, 0.3), TypedLayer(w * 0.5, np.sum(w))]
    h = x
    for layer in layers:
        h = layer.apply(h, 0.5)
    return np.sum(h * h)


def test_a_struct_made_in_the_code_and_called():
    from tests.faithful import assert_faithful

    assert_faithful(made_and_called, W, X)


@pytest.mark.parametrize(
    "p",
    [Params(W, B), Layer(W, B), Frozen(W, B), Affine(W, B)],
    ids=["namedtuple", "dataclass", "frozen", "registered"],
)
def test_a_struct_gradient_differentiated_again(p):
    """``cpsad.grad(loss)(p, x).w`` differentiated in ``x``: zero for a dataclass or a registered
    pytree (the transpose of ``gradient_of`` knew tuples, lists and dicts, and gave a struct's
    cotangent no entries); a namedtuple, a tuple, was right. Reverse and forward mode, and
    ``value_and_grad``, against central differences."""

    def mixed(x):
        return np.sum(cpsad.grad(loss)(p, x).w * W)

    def mixed_with_value(x):
        v, g = cpsad.value_and_grad(loss)(p, x)
        return np.sum(g.w * W) * v

    e = np.eye(3) * 1e-5
    for f in (mixed, mixed_with_value):
        fd = np.array([(f(X + e[i]) - f(X - e[i])) / 2e-5 for i in range(3)])
        np.testing.assert_allclose(cpsad.grad(f)(X), fd, rtol=1e-5, atol=1e-8)
        t = RNG.normal(size=3)
        assert cpsad.jvp(f, (X,), (t,))[1] == pytest.approx(fd @ t, rel=1e-5)


# ---------------------------------------------------------- functional updates of a struct
#
# ``dataclasses.replace(p, w=a)``, a namedtuple's ``p._replace(w=a)``, and a struct's class
# called as a value -- ``type(self)(...)`` in a method, ``cls(...)`` in a classmethod -- were
# refused (the first two read the fields by ``getattr`` of a name, the last "has no derivative
# rule"). Resolve writes the first two as ``struct_replaced(p, (a,), ("w",))`` (each value's
# adjoint its field's, ``p``'s the rest), and the dispatch makes the last with ``struct_of``'s
# rule.


@dataclasses.dataclass
class Updated:
    w: np.ndarray
    b: float

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)

    def scaled(self, c):
        return dataclasses.replace(self, w=self.w * c)

    def shifted(self, d):
        return type(self)(self.w, self.b + d)  # (by keyword: refused at the second order)

    @classmethod
    def make(cls, w):
        return cls(w, w[0] * 0.5)


class UpdatedTuple(typing.NamedTuple):
    w: np.ndarray
    b: float

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)

    def scaled(self, c):
        return self._replace(w=self.w * c)


def by_replace(w, x):
    layer = Updated(w, 0.3).scaled(2.0)
    other = dataclasses.replace(layer, b=np.sum(w))
    return np.sum(layer(x) * other(x))


def by_class_value(w, x):
    layer = Updated.make(w).shifted(w[1])
    return np.sum(layer(x) ** 2)


def by_namedtuple_replace(w, x):
    layer = UpdatedTuple(w, w[1])._replace(b=w[0] * 2.0).scaled(w[2])
    return np.sum(layer(x))


@pytest.mark.parametrize("f", [by_replace, by_class_value, by_namedtuple_replace])
def test_a_functional_update_of_a_struct(f):
    """Both modes against central differences (``assert_faithful``), and the second order: the
    gradient's derivative along a direction, in reverse and forward mode, against central
    differences of the gradient."""
    from tests.faithful import assert_faithful

    assert_faithful(f, W, X)
    v = RNG.normal(size=3)
    eps = 1e-5
    fd = (cpsad.grad(f)(W + eps * v, X) - cpsad.grad(f)(W - eps * v, X)) / (2 * eps)
    hv = cpsad.grad(lambda w: np.sum(cpsad.grad(f)(w, X) * v))(W)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-8)
    _, jv = cpsad.jvp(lambda w: cpsad.grad(f)(w, X), (W,), (v,))
    np.testing.assert_allclose(jv, fd, rtol=1e-5, atol=1e-8)


def test_a_replaced_struct_argument_gets_its_other_fields_gradient():
    """The gradient of the struct given to ``dataclasses.replace`` is that of the fields it
    kept: the replaced field's is zero (its value was not the argument's)."""

    def f(p, x):
        q = dataclasses.replace(p, b=2.0 * np.sum(x))
        return np.sum(q(x))

    p = Updated(W, B)
    g = cpsad.grad(f)(p, X)
    assert type(g) is Updated and g.b == 0.0
    expected = _numeric_layer(lambda q: f(q, X), p)
    np.testing.assert_allclose(g.w, expected["w"], rtol=1e-6)
    _, t = cpsad.jvp(f, (p, X), (Updated(np.ones(3), 1.0), None))
    assert t == pytest.approx(np.sum(expected["w"]), rel=1e-6)


@dataclasses.dataclass
class WithProperty:
    w: np.ndarray

    @property
    def norm(self):
        return np.sum(self.w**2)


def test_a_property_of_a_differentiated_struct_is_refused_when_it_runs():
    """Its getter runs with the object as data: the derivative through it would be lost, so it
    is refused -- with a message that says to write it as a method (which is differentiated),
    not that the class is no dataclass (it said so)."""

    def f(w):
        return WithProperty(w).norm * 2.0

    for run in (lambda: cpsad.grad(f)(W), lambda: cpsad.jvp(f, (W,), (W,))):
        with pytest.raises(TypeError, match=r"the property `\.norm` of a differentiable"):
            run()


# ------------------------------------------------------------ a model of layers, PyTorch style


@dataclasses.dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray
    act: object = np.tanh  # a function held in a field: called as it is, no gradient

    def __call__(self, x):
        return self.act(x @ self.W + self.b)


@dataclasses.dataclass
class Model:
    layers: list

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def loss(self, x, y):
        return np.mean((self(x) - y) ** 2)


def model_of(W, b):
    return Model([Dense(W, b), Dense(W.T * 0.5, b[::-1], act=np.sin)])


def model_loss(W, b, x):
    return model_of(W, b).loss(x, 0.5)


def test_a_model_of_layers():
    """A model holding a list of layers, each a dataclass with ``__call__`` applying a function
    held in a field: made in the function (both modes, the second order), and given as the
    argument -- its gradient a ``Model`` of ``Dense``, each holding the gradient of its
    arrays (the sum of both layers' parts of ``W``'s and ``b``'s gradients), ``None`` for the
    function."""
    from tests.faithful import assert_faithful

    rng = np.random.default_rng(11)
    Wm, bm, x = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(4, 3))
    assert_faithful(model_loss, Wm, bm, x)
    v = rng.normal(size=(3, 3))
    fd = (
        cpsad.grad(model_loss)(Wm + 1e-5 * v, bm, x) - cpsad.grad(model_loss)(Wm - 1e-5 * v, bm, x)
    ) / 2e-5
    hv = cpsad.grad(lambda W: np.sum(cpsad.grad(model_loss)(W, bm, x) * v))(Wm)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-8)
    g = cpsad.grad(lambda m: m.loss(x, 0.5))(model_of(Wm, bm))
    assert type(g) is Model and all(type(d) is Dense for d in g.layers)
    assert g.layers[0].act is None and g.layers[1].act is None
    gW, gb = cpsad.grad(model_loss, argnums=(0, 1))(Wm, bm, x)
    np.testing.assert_allclose(g.layers[0].W + g.layers[1].W.T * 0.5, gW, rtol=1e-10)
    np.testing.assert_allclose(g.layers[0].b + g.layers[1].b[::-1], gb, rtol=1e-10)


def method_kept_but_not_called(w, x):
    layer = TypedLayer(w, w[0])
    kept = [layer.penalty, lambda: layer.b * 2.0]
    return kept[1]() + np.sum(layer(x))


def method_kept_and_called(w, x):
    layer = TypedLayer(w, w[0])
    kept = [layer.penalty]
    return kept[0]() + np.sum(layer(x))


def test_a_method_read_as_a_value():
    """``layer.penalty`` read as a value carries no derivative: not called, the program is
    differentiated (it was refused: "the attribute `.penalty` ... has no derivative", a
    namedtuple's method taken for a missing field); called later, it is refused when it runs
    (``check_callee``: its object would be data there)."""
    from tests.faithful import assert_faithful

    assert_faithful(method_kept_but_not_called, W, X)
    v = RNG.normal(size=3)
    f = method_kept_but_not_called
    fd = (cpsad.grad(f)(W + 1e-5 * v, X) - cpsad.grad(f)(W - 1e-5 * v, X)) / 2e-5
    hv = cpsad.grad(lambda w: np.sum(cpsad.grad(f)(w, X) * v))(W)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-8)
    for run in (
        lambda: cpsad.grad(method_kept_and_called)(W, X),
        lambda: cpsad.jvp(method_kept_and_called, (W, X), (W, None)),
    ):
        with pytest.raises(TypeError, match="a bound method of an object of `TypedLayer`"):
            run()
