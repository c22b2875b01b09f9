"""Namedtuples, dataclasses and classes given to ``cpsad.register_pytree`` as pytrees: arguments
differentiated field by field (a gradient of the same type), fields read in differentiated code
(``params.w``), in reverse and forward mode, against central differences."""

from __future__ import annotations

import dataclasses
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
    return Affine(**{**vars(p), name: value})


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
