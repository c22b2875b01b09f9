"""Live code: a cached transformation is used only while what it was made from is the same.

Each case is what users do in a notebook (``%autoreload``), while editing files, or in a training
loop, and each once returned the old function's value and gradient silently. The rule
(``cpsad.validity``, DESIGN.md 8): a transformation is valid while its code object, the defaults
it was linked with, every name it resolved (along attributes) and everything it inlined are the
same objects, and the rule table has not changed. Every gradient is checked against central
differences of the function as it is now.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import sys
import textwrap
import warnings
import weakref

import numpy as np
import pytest

import cpsad
from cpsad import compiler


def fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def check(f, x=0.7):
    """cpsad's value and gradient of ``f`` at ``x`` against plain Python and differences -- and,
    where Numba is installed, those of ``cpsad.jit(f)``, whose compiled code froze the functions
    it calls: it must be made again when they change. Each is checked twice: from a derivative
    made now, and from the one made at ``f``'s first check of the test, called again after
    whatever changed since (it keeps what its earlier calls found: ``api._Plan``)."""
    value, g = cpsad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert g == pytest.approx(fd(f, x), rel=1e-6, abs=1e-8)
    marked = _HELD.get(f, (None, None, cpsad.jit(f)))[2]
    held = _HELD.setdefault(f, (cpsad.value_and_grad(f), cpsad.value_and_grad(marked), marked))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)  # (where it falls back)
        assert held[0](x) == (value, g)
        assert cpsad.jvp(f, (x,), (1.0,)) == pytest.approx((value, g), rel=1e-12)
        if NUMBA:
            staged_value, staged = cpsad.value_and_grad(cpsad.jit(f))(x)
            assert staged_value == pytest.approx(value, rel=1e-12)
            assert staged == pytest.approx(g, rel=1e-10, abs=1e-12)
            assert held[1](x) == (staged_value, staged)
            assert cpsad.jvp(marked, (x,), (1.0,)) == pytest.approx((value, g), rel=1e-10)
    return g


_HELD: dict = {}  # f -> its derivatives made at its first check (``check``), and its jit mark


@pytest.fixture(autouse=True)
def _forget_held():
    yield
    _HELD.clear()


NUMBA = importlib.util.find_spec("numba") is not None


@pytest.fixture
def module(tmp_path, monkeypatch):
    """``module(name, source)``: write a module file and import it (fresh)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def write(name, source):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        sys.modules.pop(name, None)
        made.append(name)
        return importlib.import_module(name), path

    yield write
    for name in made:
        sys.modules.pop(name, None)


def rewrite(path, source):
    """Change a module's file so that a reload sees it (a new size: mtime may not move)."""
    path.write_text(textwrap.dedent(source) + "\n# edited\n")
    importlib.invalidate_caches()


# ----------------------------------------------------------------------------- never stale


def test_a_reloaded_helper_module_is_used(module):
    helpers, path = module("live_helpers", "def helper(x):\n    return x * x\n")
    user, _ = module(
        "live_user",
        """
        import live_helpers as H

        def f(x):
            return H.helper(x) + x
        """,
    )
    grad_f = cpsad.grad(user.f)
    staged_grad_f = cpsad.grad(cpsad.jit(user.f))
    assert grad_f(0.7) == pytest.approx(2 * 0.7 + 1)
    assert staged_grad_f(0.7) == pytest.approx(2 * 0.7 + 1)
    rewrite(path, "def helper(x):\n    return x * x * x\n")
    importlib.reload(helpers)  # what %autoreload does: the same module object, new functions
    assert check(user.f) == pytest.approx(3 * 0.7**2 + 1)
    assert grad_f(0.7) == pytest.approx(3 * 0.7**2 + 1)  # the grad made before, too
    assert staged_grad_f(0.7) == pytest.approx(3 * 0.7**2 + 1)


def test_a_helper_rebound_through_its_module(module):
    helpers, _ = module("live_helpers2", "def helper(x):\n    return x * x\n")
    user, _ = module(
        "live_user2",
        """
        import live_helpers2 as H

        def f(x):
            return H.helper(x)
        """,
    )
    check(user.f)

    def cube(x):
        return x * x * x

    helpers.helper = cube
    assert check(user.f) == pytest.approx(3 * 0.7**2)


def test_code_swapped_in_place(module):
    """IPython's autoreload replaces a function's ``__code__`` in the existing object."""
    user, _ = module(
        "live_code",
        """
        def helper(x):
            return x * x

        def other(x):
            return x * x * x

        def f(x):
            return helper(x) * 2.0
        """,
    )
    assert check(user.f) == pytest.approx(4 * 0.7)
    user.helper.__code__ = user.other.__code__
    assert check(user.f) == pytest.approx(6 * 0.7**2)
    user.f.__code__ = user.other.__code__  # the differentiated function itself
    assert check(user.f) == pytest.approx(3 * 0.7**2)


def test_an_inlined_helper_swapped_in_place(module):
    """A one-line helper is inlined into the emitted code: its code is a dependency too."""
    user, _ = module(
        "live_inline",
        """
        import numpy as np

        def act(z):
            return np.tanh(z)

        def act2(z):
            return np.sin(z)

        def f(x):
            return act(x * 2.0)
        """,
    )
    emitted = cpsad.transform(user.f).source
    assert "np.tanh(x * 2.0)" in emitted and "act_bp" not in emitted  # (inlined: no call)
    check(user.f)
    user.act.__code__ = user.act2.__code__
    assert check(user.f) == pytest.approx(2 * np.cos(1.4))


def test_defaults_replaced(module):
    user, _ = module(
        "live_defaults",
        """
        def scaled(x, c=2.0):
            return c * x * x

        def kw(x, *, c=2.0):
            return c * x * x

        def f(x):
            return scaled(x)
        """,
    )
    for fn in (user.scaled, user.f):
        check(fn)
    user.scaled.__defaults__ = (5.0,)
    assert check(user.scaled) == pytest.approx(10 * 0.7)
    assert check(user.f) == pytest.approx(10 * 0.7)  # a callee's defaults
    check(user.kw)
    user.kw.__kwdefaults__ = {"c": 7.0}
    assert check(user.kw) == pytest.approx(14 * 0.7)


def test_a_global_rebound_to_another_function(module):
    user, _ = module(
        "live_global",
        """
        import numpy as np

        def act(z):
            y = np.tanh(z)
            return y

        def f(x):
            return act(x) * x
        """,
    )
    check(user.f)

    def act(z):
        y = np.sin(z) * 3.0
        return y

    user.act = act
    assert check(user.f) == pytest.approx(np.sin(0.7) * 3 + 0.7 * 3 * np.cos(0.7))


def test_numpy_monkeypatched(module, monkeypatch):
    user, _ = module(
        "live_numpy",
        """
        import numpy as np

        def f(x):
            return np.tanh(x) * 2.0
        """,
    )
    assert check(user.f) == pytest.approx(2 * (1 - np.tanh(0.7) ** 2))

    def fake_tanh(x):  # a function of the user's: transformed, not np.tanh's rule
        y = x * x
        return y

    monkeypatch.setattr(user.np, "tanh", fake_tanh)
    assert check(user.f) == pytest.approx(4 * 0.7)


def test_a_rule_registered_after_the_first_call(module):
    user, _ = module(
        "live_rule",
        """
        def softplus(x):
            y = x * x
            return y

        def f(x):
            return softplus(x) + x
        """,
    )
    assert check(user.f) == pytest.approx(2 * 0.7 + 1)
    # its derivative is now the registered rule (here a deliberately different one: what the
    # user registered is what cpsad must use)
    cpsad.defvjp(user.softplus, lambda g, ans, x: g * 10.0)
    assert cpsad.grad(user.f)(0.7) == pytest.approx(10.0 + 1.0)


def test_the_source_file_edited_while_running(module):
    """The next transformation would read the new file at the old line numbers: refused."""
    user, path = module(
        "live_edited",
        """
        def f(x):
            return x * x

        def g(x):
            return x * 3.0
        """,
    )
    rewrite(
        path,
        """
        def g(x):
            return x * 3.0

        def f(x):
            return x * x * x
        """,
    )
    with pytest.raises(cpsad.TransformError, match="changed since"):
        cpsad.grad(user.f)(0.7)
    with pytest.raises(cpsad.TransformError, match="changed since"):
        cpsad.grad(user.g)(0.7)


def test_an_inlined_helper_edited_while_running_is_refused(module):
    """The file of a one-line helper edited after import, the function's own lines unchanged:
    Inline put the new file's body in place of the call (27.0, x * x * x's derivative at 3.0,
    for the running x * x's 6.0). A helper's source is checked as the function's is: refused
    (``parse.checked_source``; the aliasing analysis reads helpers' bodies through it too)."""
    helper = "def helper(x):\n    return x * x\n"
    main = "\n\ndef f(x):\n    return np.sum(helper(np.array([x, 1.0])))\n"
    source = "import numpy as np\n\n\n" + helper + main
    user, _ = module("live_inlined", source)
    check(user.f)
    other, path = module("live_inlined_b", source)
    rewrite(path, source.replace("return x * x\n", "return x * x * x\n"))
    with pytest.raises(cpsad.TransformError, match="changed since"):
        cpsad.grad(other.f)(0.7)


@pytest.mark.parametrize(
    "source, edited, call",
    [
        # the same names and constants, another operation: only the instructions tell
        ("def f(x):\n    return x * x\n", "x * x * x", lambda m: m.f),
        # a closure: its free variable compiles to a global on its own
        (
            "def make(c):\n    def inner(x):\n        return x * c\n    return inner\n",
            "x * x * c",
            lambda m: m.make(2.0),
        ),
        # one that assigns a variable of the function around it
        (
            "def make(c):\n    n = 0\n    def inner(x):\n        nonlocal n\n"
            "        n = n + 1\n        return x * c\n    return inner\n",
            "x * x * c",
            lambda m: m.make(2.0),
        ),
    ],
)
def test_the_source_edited_in_place_is_refused(module, source, edited, call):
    """An edit that keeps every name and constant (``x * x`` into ``x * x * x``) at the same
    lines: the code that runs is not what the file says, and the new file's derivative would be
    returned for the old function's value -- refused. Unedited, the same function is accepted."""
    user, path = module("live_in_place_" + str(abs(hash(source)) % 10**6), source)
    assert check(call(user)) == pytest.approx(fd(call(user), 0.7), rel=1e-6)
    other, other_path = module("live_in_place_b_" + str(abs(hash(source)) % 10**6), source)
    line = next(ln for ln in source.splitlines() if "return x" in ln)
    rewrite(other_path, source.replace(line, line.split("return")[0] + "return " + edited))
    with pytest.raises(cpsad.TransformError, match="changed since"):
        cpsad.grad(call(other))(0.7)


@pytest.mark.parametrize(
    "source, old, new, call",
    [
        ("f = lambda x: x * x\n", "x * x", "x * x * x", lambda m: m.f),
        (
            "import numpy as np\n\ndef make(c):\n    g = lambda x: np.sin(x) * c\n    return g\n",
            "np.sin(x) * c",
            "np.sin(x) * c * x",
            lambda m: m.make(2.0),
        ),
    ],
    ids=["module-level", "a-closure"],
)
def test_a_lambda_edited_in_place_is_refused(module, source, old, new, call):
    """A lambda's line edited in place (it returned 1.47, the new line's derivative, for the
    running ``x * x``'s 1.4): compiled where it stands, its code is told apart too."""
    user, _ = module("live_lambda_" + str(abs(hash(source)) % 10**6), source)
    assert check(call(user)) == pytest.approx(fd(call(user), 0.7), rel=1e-6)
    other, path = module("live_lambda_b_" + str(abs(hash(source)) % 10**6), source)
    rewrite(path, source.replace(old, new))
    with pytest.raises(cpsad.TransformError, match="changed since"):
        cpsad.grad(call(other))(0.7)


def test_a_method_of_an_imported_class_is_its_source_until_edited(module):
    """``Helper.twice(x)`` of an imported class compiles to other instructions than where
    ``Helper`` is not an import (what ``_compiled_in_place`` writes around it): the instructions
    are compared as such, and an edit is still told apart."""
    module(
        "live_helper_cls",
        """
        class Helper:
            @staticmethod
            def twice(x):
                return 2.0 * x
        """,
    )
    source = """
        from live_helper_cls import Helper

        def f(x):
            if x > 0.0:
                return Helper.twice(x) * x
            return x
        """
    user, _ = module("live_uses_helper", source)
    assert check(user.f) == pytest.approx(4 * 0.7)
    other, path = module("live_uses_helper_b", source)
    rewrite(path, source.replace("Helper.twice(x) * x", "Helper.twice(x) * x * x"))
    with pytest.raises(cpsad.TransformError, match="changed since"):
        cpsad.grad(other.f)(0.7)


def test_a_method_that_calls_super_without_arguments(module):
    """``super()`` finds its class's cell and the method's first parameter where it stands; the
    emitted method's first parameter is its continuation, so Parse says both (it raised
    ``TypeError: super(type, obj)`` from the emitted code)."""
    user, _ = module(
        "live_super",
        """
        import numpy as np

        class Base:
            def g(self, x):
                return np.sin(x) * 2.0

        class A(Base):
            def f(self, x):
                return super().g(x) * x
        """,
    )
    a = user.A()
    g = cpsad.grad(user.A.f, argnums=1)(a, 0.7)
    assert g == pytest.approx(fd(lambda x: a.f(x), 0.7), rel=1e-6)


def test_a_local_named_like_an_import_is_its_source(module):
    """Python 3.11 compiles ``nonzero.max()`` of a local ``nonzero`` as an attribute read where
    the module imports a ``nonzero`` (numpy's own ``_arg_trim_zeros`` does this): the function
    is what its file says, not a file edited since."""
    user, _ = module(
        "live_import_named",
        """
        import numpy as np
        from numpy import nonzero

        def f(x):
            nonzero = np.array([x, 2.0 * x])
            return nonzero.max() * x
        """,
    )
    assert check(user.f) == pytest.approx(4 * 0.7)


def test_a_method_that_reads_a_private_name_is_its_source(module):
    """Compiled where it stands -- in its class, which mangles ``__k`` -- an unedited method is
    what its file says (it was refused as edited), and its private names are the class's."""
    user, _ = module(
        "live_method",
        """
        class A:
            __k = 3.0

            def f(self, x):
                def __twice(y):
                    return 2.0 * y

                return __twice(x) * self.__k
        """,
    )
    assert check(user.A().f) == pytest.approx(6.0)


def test_an_unchanged_function_is_transformed_once(module):
    user, _ = module(
        "live_once",
        """
        import numpy as np

        def helper(x):
            y = np.sin(x)
            return y

        def f(x):
            return helper(x) * x
        """,
    )
    g = cpsad.grad(user.f)
    g(0.5)
    spec = compiler.specialize(user.f, ("x",), compiler.kinds_of(user.f.__code__, (0.5,), {}))
    for _ in range(3):
        g(0.5)
        assert (
            compiler.specialize(user.f, ("x",), compiler.kinds_of(user.f.__code__, (0.5,), {}))
            is spec
        )


# ----------------------------------------------------------------------------- closures


def test_a_closure_made_on_every_step_is_transformed_once():
    """``cpsad.grad(lambda w: loss(w, X, y))`` in a training loop: one transformation of the
    lambda's code, linked to each new closure's own cells."""

    def loss(w, X, y):
        return np.sum((np.tanh(X @ w) - y) ** 2)

    rng = np.random.default_rng(0)
    w = rng.normal(size=3)
    made = []
    for _ in range(5):
        X, y = rng.normal(size=(4, 3)), rng.normal(size=4)
        f = lambda w: loss(w, X, y)  # noqa: E731, B023
        g = cpsad.grad(f)(w)
        assert g == pytest.approx(cpsad.grad(loss)(w, X, y))
        t = compiler._TRANSFORMS[f.__code__]
        made.append(sum(len(v) for v in t.values()))
    assert made == [1] * 5


def test_nothing_keeps_a_dropped_closure_alive():
    def loss(w, X):
        return np.sum((X @ w) ** 2)

    X = np.ones((500, 3))
    f = lambda w: loss(w, X)  # noqa: E731, F821  (X is deleted below: what it holds must go)
    cpsad.grad(f)(np.ones(3))
    cpsad.value_and_grad(f)(np.ones(3))
    cpsad.vjp(f, np.ones(3))[1](1.0)
    cpsad.jvp(f, (np.ones(3),), (np.ones(3),))  # (twice: the second runs what the first found)
    cpsad.jvp(f, (np.ones(3),), (np.ones(3),))
    marked = cpsad.jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        cpsad.jvp(marked, (np.ones(3),), (np.ones(3),))
    del marked
    ref_f, ref_x = weakref.ref(f), weakref.ref(X)
    del f, X
    gc.collect()
    assert ref_f() is None and ref_x() is None


def test_closures_that_call_different_functions_get_their_own():
    def make(act):
        return lambda x: act(x) * 2.0

    def sq(x):
        return x * x

    def cube(x):
        return x * x * x

    assert check(make(sq)) == pytest.approx(4 * 0.7)
    assert check(make(cube)) == pytest.approx(6 * 0.7**2)
    assert check(make(sq)) == pytest.approx(4 * 0.7)


def test_two_files_with_the_same_function_get_their_own(module):
    """Code objects compare equal when their code is, whatever file they come from: each
    function still gets a transformation of its own file (its lines, its errors)."""
    a, path_a = module("live_same_a", "def f(x):\n    return x * x\n")
    b, path_b = module("live_same_b", "def f(x):\n    return x * x\n")
    assert a.f.__code__ == b.f.__code__ and a.f.__code__ is not b.f.__code__
    for m, path in ((a, path_a), (b, path_b)):
        check(m.f)
        text = cpsad.transform(m.f).at(0.7).source
        assert str(path.name) in text.splitlines()[0], text.splitlines()[0]


def _loop_sum(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x * i)
    return s


def _map_of_a_closure(x):
    ys = [(lambda t: np.sin(t * x))(v) for v in (x, 2.0 * x)]
    return ys[0] * ys[1]


def test_nothing_is_transformed_again_on_the_next_call(monkeypatch):
    """After the first call, a call of the same derivative makes no transformation: not the
    benchmark's RNN loss (at 93efbd0 transformed on every call -- 4x the hand-written backward
    pass's time --, its transformation depending on a name the pipeline itself had injected),
    not a second derivative (grad(grad(f)) depended on the seed's injected name: 6 ms a call),
    not a third one through a loop or one of code that passes closures (its closures are made
    anew on every run)."""
    from benchmarks.workloads import rnn

    runs = []
    real = compiler.run_pipeline

    def counted(fn, *args, **kwargs):
        runs.append(fn.__qualname__)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(compiler, "run_pipeline", counted)
    p = rnn.problem(True)
    calls = [
        (cpsad.grad(rnn.loss, 0), p.args),
        (cpsad.grad(cpsad.grad(_loop_sum)), (0.7,)),
        (cpsad.grad(cpsad.grad(cpsad.grad(_loop_sum))), (0.7,)),
        (cpsad.grad(cpsad.grad(_map_of_a_closure)), (0.7,)),
        (cpsad.hessian(_map_of_a_closure), (0.7,)),
    ]
    for f, args in calls:
        f(*args)
    runs.clear()
    for _ in range(3):
        for f, args in calls:
            f(*args)
    assert runs == []


def test_a_helper_rebound_after_a_third_derivative(module):
    """Higher derivatives are cached now (they were made again on every call, which hid any
    question of staleness): a helper rebound after the first calls is seen by the second and
    third derivatives of a loop that calls it."""
    user, _ = module(
        "live_higher",
        """
        def helper(y):
            return y * y

        def cube(y):
            return y * y * y

        def f(x):
            s = 0.0
            for i in range(2):
                s = s + helper(x)
            return s
        """,
    )
    g2 = cpsad.grad(cpsad.grad(user.f))
    g3 = cpsad.grad(g2)
    assert (g2(0.7), g3(0.7)) == (pytest.approx(4.0), pytest.approx(0.0))
    user.helper = user.cube
    assert (g2(0.7), g3(0.7)) == (pytest.approx(12 * 0.7), pytest.approx(12.0))
