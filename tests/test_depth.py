"""Loops and recursion as deep as users need, under the recursion limit they left."""

import contextlib
import re
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
    from cpsad.transforms import astlib as A
    from cpsad.transforms.fence import UNSUPPORTED, Fence
    from cpsad.transforms.unit import SourceInfo, Unit
    from tests.test_gradients import CASES

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

    from cpsad.transforms.testing import function_from_source

    f = function_from_source(long_function_source(600))
    value, (gx, gw) = cpsad.value_and_grad(f, argnums=(0, 1))(0.3, 0.2)
    assert value == f(0.3, 0.2)
    h = 1e-6
    assert np.isclose(gx, (f(0.3 + h, 0.2) - f(0.3 - h, 0.2)) / (2 * h), rtol=1e-5, atol=1e-8)
    assert np.isclose(gw, (f(0.3, 0.2 + h) - f(0.3, 0.2 - h)) / (2 * h), rtol=1e-5, atol=1e-8)


def _cyclic_garbage(transform) -> list:
    """The objects ``transform()`` leaves in reference cycles (freed only by a collection)."""
    import gc

    was = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        transform()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


@pytest.mark.parametrize(
    "name", ["loop_range", "loop_nested", "containers", "comprehensions", "higher_order", "rnn"]
)
def test_a_transformation_leaves_no_cycles(name):
    """What the passes make is freed by reference counting when the transformation ends: no
    syntax tree is kept alive by a cycle (a local function that calls itself, a record naming
    its own function) until the garbage collector runs -- on a long function, a collection of
    half a million nodes (0.3 s) in whatever runs next."""
    from cpsad import compiler
    from cpsad.transforms import astlib as A

    f = getattr(C, name)
    garbage = _cyclic_garbage(lambda: compiler.specialize(f, (f.__code__.co_varnames[0],)))
    nodes = [type(o).__name__ for o in garbage if isinstance(o, A.AST)]
    assert not nodes, f"{len(nodes)} syntax-tree nodes in cycles, of {len(garbage)} objects"
    assert len(garbage) < 50


def test_a_long_function_leaves_no_cycles():
    from cpsad import compiler
    from cpsad.transforms.testing import function_from_source

    f = function_from_source(long_function_source(300))
    garbage = _cyclic_garbage(lambda: compiler.specialize(f, ("x", "w")))
    assert len(garbage) < 50


# --------------------------------------------------------------------------- runaway recursion


def runaway(x):
    return x * runaway(x)


def ping(x):
    y = x + 1.0  # (two statements: not inlined into pong)
    return pong(y)


def pong(x):
    y = x * 1.01
    return ping(y)


def deep_error(x, n):
    if n == 0:
        return x * undefined_name  # noqa: F821
    return x * deep_error(x, n - 1)


def limit_seen(x, seen):
    seen.append(sys.getrecursionlimit())
    return x * 2.0


def _notes(exc) -> str:
    return "\n".join(getattr(exc, "__notes__", []))


def test_a_runaway_recursion_fails_fast_with_a_short_note():
    """Plain Python stops a runaway recursion in a millisecond; under cpsad it stopped after
    5,000,000 frames (a minute, gigabytes) with a note of one line a frame. Now it stops at
    200,000 frames (about a second, ~200 MB), and the note says once what repeated, as
    Python's traceback does, and under what limit."""

    limit = sys.getrecursionlimit()
    with pytest.raises(RecursionError) as info:
        cpsad.grad(runaway)(1.0)
    notes = _notes(info.value)
    assert len(notes.splitlines()) < 12, notes
    assert "runaway(x)" in notes
    assert re.search(r"\[Previous line repeated 199,\d{3} more times\]", notes), notes
    assert "recursion limit of 200,000 frames" in notes
    assert sys.getrecursionlimit() == limit


def test_an_error_deep_in_a_recursion_has_a_short_note():
    """An error 10,000 levels deep: its note had 10,002 lines, one a frame."""
    with pytest.raises(NameError) as info:
        cpsad.grad(deep_error)(1.0, 10_000)
    notes = _notes(info.value)
    assert len(notes.splitlines()) < 10, notes
    assert "[Previous line repeated 9,997 more times]" in notes
    located = [n for n in notes.splitlines() if "CPSAD_TRACEBACK" not in n]  # (tracebacks.NOTE)
    assert "undefined_name" in located[-1]  # the innermost line, last


def test_mutual_recursion_is_collapsed_as_a_cycle():
    with pytest.raises(RecursionError) as info:
        cpsad.grad(ping)(1.0)
    notes = _notes(info.value)
    assert len(notes.splitlines()) < 12, notes
    assert "[Previous 2 lines repeated" in notes


def test_the_limit_the_user_set_is_what_every_thread_sees():
    """The depth a call may nest is given to the calling thread alone: ``sys.getrecursionlimit()``
    says what the user set, inside a call too, before and after."""
    limit = sys.getrecursionlimit()
    seen = []
    cpsad.grad(limit_seen)(1.0, seen)
    assert seen == [limit]
    try:
        sys.setrecursionlimit(30_000)
        cpsad.grad(limit_seen)(1.0, seen)
        assert seen[-1] == 30_000
        assert sys.getrecursionlimit() == 30_000
    finally:
        sys.setrecursionlimit(limit)


def test_the_raise_is_per_thread_where_cpython_allows_it():
    """On CPython >= 3.11 the probe of the thread state must succeed (else every deep test
    here would pass only by luck of a fallback)."""
    from cpsad import depth

    if sys.implementation.name == "cpython" and sys.version_info >= (3, 11):
        assert depth.raised()


@contextlib.contextmanager
def _nondiff(fn):
    """``fn`` has no derivative while the block runs (registered, then taken out again)."""
    from cpsad.rules import core

    core.defnondiff(fn)
    try:
        yield
    finally:
        core.NONDIFF.discard(fn)
        core._changed()


def _plain_depth(n=0):
    """How much deeper plain Python may nest from here, in this thread."""
    try:
        return _plain_depth(n + 1)
    except RecursionError:
        return n


def test_the_trial_of_the_counters_leaves_the_thread_as_it_was():
    """The probe's trial raise, at any limit, leaves this thread exactly the depth it had (a
    value read inside a C call is one frame off: restored as read, it moved the thread's depth
    by one)."""
    from cpsad import depth

    index = depth._counters_index()
    if index is None:
        pytest.skip("no per-thread counters on this Python")
    before = _plain_depth()
    assert depth._works(index)
    assert _plain_depth() == before
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(1_000_000)  # the trial does not nest as deep as the limit
        assert depth._works(index)
    finally:
        sys.setrecursionlimit(limit)
    assert _plain_depth() == before


def test_another_thread_keeps_its_limit_while_a_call_runs():
    """While one thread is inside a call of cpsad (under its raised depth), another thread's
    plain recursion fails where it fails without cpsad: raising the interpreter's limit let it
    run 200,000 frames deep (and, in C, past the end of its stack)."""
    import threading

    limit = sys.getrecursionlimit()
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def pause():
        inside.set()
        assert done.wait(30)
        return 0.0

    def f(x):
        return power_of(x, 3_000) + pause()

    def other():
        assert inside.wait(30)
        seen["limit"] = sys.getrecursionlimit()
        seen["depth"] = _plain_depth()
        done.set()

    t = threading.Thread(target=other)
    t.start()
    try:
        with _nondiff(pause):
            g = cpsad.grad(f)(1.0001)
    finally:
        done.set()
        t.join()
    assert g == pytest.approx(3_000 * 1.0001**2_999)
    assert seen["limit"] == limit
    assert 0 < seen["depth"] < limit


def power_of(x, n):
    if n == 0:
        return 1.0
    return x * power_of(x, n - 1)


def test_the_limit_set_during_a_call_is_kept():
    """A limit the user's code sets while a call runs is theirs: the call goes on under it, and
    it is what the thread has after, in full."""
    limit = sys.getrecursionlimit()

    def set_limit():
        sys.setrecursionlimit(limit + 2_000)
        return 0.0

    def f(x):
        return x * x + set_limit()

    try:
        with _nondiff(set_limit):
            assert cpsad.grad(f)(3.0) == pytest.approx(6.0)
        assert sys.getrecursionlimit() == limit + 2_000
        assert limit + 1_000 < _plain_depth() < limit + 2_000
    finally:
        sys.setrecursionlimit(limit)
    assert _plain_depth() < limit


def test_recursion_as_deep_as_the_raised_limit_allows():
    """A user who raises the limit for a deep recursion of their own gets ten times it."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(40_000)
        g = cpsad.grad(C.power)(1.00001, 120_000)
        assert g == pytest.approx(120_000 * 1.00001**119_999)
    finally:
        sys.setrecursionlimit(limit)


def step(acc, x):
    y = acc + x  # (two statements: a function of the user's the loop calls, not inlined)
    return y * 1.0


def stepping(x, n):
    acc = 0.0
    for _ in range(n):
        acc = step(acc, x)
    return acc


def test_a_loop_that_calls_a_function_of_yours():
    """Such a loop keeps its recursion (three frames an iteration): 50,000 iterations at the
    default limit."""
    assert cpsad.grad(stepping)(0.5, 50_000) == pytest.approx(50_000)


# --------------------------------------------------------------------------- threads


def test_threads_differentiating_at_once_do_not_interfere():
    """Several threads calling grad at once, recursion (10,000 frames deep, ten times the default
    limit) and loops: no RecursionError -- each thread's depth is its own -- correct gradients,
    and the caller's limit exactly, after."""
    import threading

    limit = sys.getrecursionlimit()
    errors, rounds, threads = [], 6, 6
    barrier = threading.Barrier(threads)

    def work(i):
        try:
            for r in range(rounds):
                barrier.wait()
                if (i + r) % 2:
                    g = cpsad.grad(C.power)(1.0001, 5_000)
                    assert g == pytest.approx(5_000 * 1.0001**4_999)
                else:
                    g = cpsad.grad(C.loop_range)(0.5, 20_000)
                    assert g == pytest.approx(sum(range(20_000)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors, errors
    assert sys.getrecursionlimit() == limit
