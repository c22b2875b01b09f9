"""Generated broadcasting programs, staged at shapes and not: the same numbers, bit for bit, and
the gradient of central differences.

The fuzzer of ``tests/fuzz`` draws its arrays from a few fixed shapes; what Shapes decides turns
on how operands broadcast -- a (3, 1) against a (1, 3), a bias of the last axis, a scalar, a
reduction that keeps its axis -- so this draws the shapes too: a result shape, and each argument
a broadcast-compatible part of it; then a straight-line program of elementwise operations,
reductions along drawn axes and products where the shapes allow one.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cpsad

_DIR = tempfile.mkdtemp(prefix="cpsad-shapes-fuzz-")
_COUNT = itertools.count()

BINARY = ["+", "-", "*"]
UNARY = ["np.tanh({})", "np.sin({})", "({} * 0.5)", "np.exp(-{} * {})"]


@st.composite
def programs(draw):
    ndim = draw(st.integers(0, 3))
    result = tuple(draw(st.integers(2, 3)) for _ in range(ndim))
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        keep = draw(st.integers(0, ndim))  # a suffix of the result's axes...
        shape = list(result[ndim - keep :])
        for i in range(len(shape)):  # ...some of them 1 (broadcast along them)
            if draw(st.booleans()) and draw(st.booleans()):
                shape[i] = 1
        shapes.append(tuple(shape))
    names = [f"a{i}" for i in range(len(shapes))]
    known = dict(zip(names, shapes))  # name -> shape, as numpy computes it
    lines = []
    for k in range(draw(st.integers(1, 6))):
        t = f"t{k}"
        kind = draw(st.sampled_from(["binary", "unary", "reduce", "matmul"]))
        x = draw(st.sampled_from(sorted(known)))
        y = draw(st.sampled_from(sorted(known)))
        sx, sy = known[x], known[y]
        if kind == "matmul" and len(sx) == 2 and len(sy) == 2 and sx[1] == sy[0]:
            lines.append(f"{t} = {x} @ {y}")
            known[t] = (sx[0], sy[1])
        elif kind == "reduce" and sx:
            axis = draw(st.integers(-len(sx), len(sx) - 1))
            keep = draw(st.booleans())
            fn = draw(st.sampled_from(["np.sum", "np.mean", "np.max"]))
            lines.append(f"{t} = {fn}({x}, axis={axis}, keepdims={keep})")
            known[t] = np.sum(np.zeros(sx), axis=axis, keepdims=keep).shape
        elif kind == "unary":
            lines.append(f"{t} = " + draw(st.sampled_from(UNARY)).format(x, x))
            known[t] = sx
        else:
            try:
                shape = np.broadcast_shapes(sx, sy)
            except ValueError:
                continue
            op = draw(st.sampled_from(BINARY))
            lines.append(f"{t} = {x} {op} {y}")
            known[t] = shape
    last = [n for n in known if n.startswith("t")]
    out = last[-1] if last else names[0]
    body = "\n".join(f"    {s}" for s in lines + [f"return np.sum({out} * {out})"])
    source = f"import numpy as np\n\n\ndef f({', '.join(names)}):\n{body}\n"
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    args = [rng.uniform(-1.0, 1.0, s) for s in shapes]
    return source, args


def _load(source):
    name = f"shapes_fuzz_{next(_COUNT)}"
    path = os.path.join(_DIR, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_a_generated_program_has_the_same_gradient_staged(program):
    source, args = program
    f = _load(source)
    nums = tuple(range(len(args)))
    value, want = cpsad.value_and_grad(f, argnums=nums)(*args)
    value2, got = cpsad.value_and_grad(cpsad.shaped(f), argnums=nums)(*args)
    assert value2 == value, source
    for a, b, x in zip(got, want, args):
        assert np.shape(a) == np.shape(x), source
        assert np.array_equal(a, b), source
    # and the derivative itself, along a random direction (max is smooth almost everywhere)
    rng = np.random.default_rng(0)
    dirs = [rng.standard_normal(np.shape(x)) for x in args]
    h = 1e-6
    plus = f(*[x + h * d for x, d in zip(args, dirs)])
    minus = f(*[x - h * d for x, d in zip(args, dirs)])
    slope = (plus - minus) / (2 * h)
    ad = sum(float(np.sum(g * d)) for g, d in zip(got, dirs))
    assert ad == pytest.approx(slope, rel=1e-4, abs=1e-6), source
