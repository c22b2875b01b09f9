"""Loops and recursion as deep as users need, under the recursion limit they left."""

import sys

import pytest

import cpsad
from tests import corpus_control as C


def test_a_million_iterations_of_a_scalar_loop():
    limit = sys.getrecursionlimit()
    g = cpsad.grad(C.loop_range)(0.5, 1_000_000)
    assert g == pytest.approx(sum(range(1_000_000)))  # d/dx of x * sum(i)
    assert sys.getrecursionlimit() == limit


def test_recursion_ten_thousand_deep():
    limit = sys.getrecursionlimit()
    g = cpsad.grad(C.power)(1.0001, 10_000)
    assert g == pytest.approx(10_000 * 1.0001**9_999)
    assert sys.getrecursionlimit() == limit


def test_mutual_recursion_deep():
    g = cpsad.grad(C.is_even)(0.3, 5_000)
    assert g == g  # finite
    from cpsad.testing import check_grads

    check_grads(C.is_even, 0.3, 200)


def test_the_limit_is_restored_after_an_error():
    limit = sys.getrecursionlimit()

    def bad(x):
        return x * undefined_name  # noqa: F821

    with pytest.raises(NameError):
        cpsad.grad(bad)(1.0)
    assert sys.getrecursionlimit() == limit


def test_emitted_code_stays_in_the_accepted_subset():
    """cpsad's output is input cpsad accepts: what `grad(grad(f))` will need -- the code made to
    be transformed again entirely; the usual code but for the `del` statements of the release
    stage (names only), which the code made to be transformed again does without."""
    from cpsad.calls import params_for
    from cpsad.compiler import CONTEXT, NESTED, call_graph, specialize
    from tests.test_gradients import CASES
    from transforms import astlib as A
    from transforms.fence import UNSUPPORTED, Fence
    from transforms.unit import SourceInfo, Unit

    but_del = {k: v for k, v in UNSUPPORTED.items() if k is not A.Delete}
    deletes = 0
    for f, args, argnums in CASES:
        nums = (argnums,) if isinstance(argnums, int) else argnums
        active, _ = params_for(f.__code__, nums, len(args))
        for mode, fence in (("reverse" + NESTED, Fence()), ("reverse", Fence(but_del))):
            try:
                spec = specialize(f, active, (), mode)
            except cpsad.TransformError:
                continue
            for s in call_graph(spec):
                module = A.parse(s.text)
                fdef = next(n for n in module.body if isinstance(n, A.FunctionDef))
                unit = Unit(s.bp, (), CONTEXT)
                unit.tree = fdef
                unit.source = SourceInfo(s.path, 1, 0, s.text.splitlines(True))
                fence.run(unit)
                for n in A.walk(fdef):
                    if isinstance(n, A.Delete):
                        deletes += 1
                        names = [x for t in n.targets for x in getattr(t, "elts", [t])]
                        assert all(isinstance(t, A.Name) for t in names), s.text
    assert deletes  # the check of the usual code saw some


def long_function_source(n: int, seed: int = 0) -> str:
    """A generated straight-line function of ``n`` lines, each a numpy operation of two of the
    last dozen values (what a code generator or a long hand-written model step looks like)."""
    import random

    r = random.Random(seed)
    lines = ["def f(x, w):", "    a = x * 1.0", "    b = w * 1.0", "    c = x + w"]
    names = ["a", "b", "c"]
    for i in range(n):
        fn = r.choice(["np.sin", "np.tanh", "np.cos", ""])
        u, v, op = r.choice(names), r.choice(names), r.choice("+-*")
        lines.append(f"    t{i} = {fn}({u} {op} {v} * 0.5)")
        names = (names + [f"t{i}"])[-12:]
    lines.append(f"    return {names[-1]} + {names[-2]}")
    return "\n".join(lines) + "\n"


def test_a_long_function_is_transformed():
    """A function of 600 lines (~1,800 operations): the passes nest no Python frames per
    statement (one of ~90 lines once failed with a RecursionError inside cps)."""
    import numpy as np

    from transforms.testing import function_from_source

    f = function_from_source(long_function_source(600))
    value, (gx, gw) = cpsad.value_and_grad(f, argnums=(0, 1))(0.3, 0.2)
    assert value == f(0.3, 0.2)
    h = 1e-6
    assert np.isclose(gx, (f(0.3 + h, 0.2) - f(0.3 - h, 0.2)) / (2 * h), rtol=1e-5, atol=1e-8)
    assert np.isclose(gw, (f(0.3, 0.2 + h) - f(0.3, 0.2 - h)) / (2 * h), rtol=1e-5, atol=1e-8)
