"""What staged code reads of the world, changed after it was compiled (``cpsad.jit``).

Numba freezes what compiled code reads as globals -- numbers, arrays, functions -- and its cache
keys on the staged file alone. Each case here is a pair of modules, written afresh: ``user`` (whose
``f`` is differentiated) and ``lib`` (what it reads). Each way a value can reach the staged code --
a global name, a closure's cell, a module's attribute, an inlined helper's global, a function
called as it is and what it reads, a default -- is changed after the first call (rebound, or
changed in place), and the compiled gradient -- and tangent, forward mode -- must still be the
Python backpropagator's (tangent function's). Then the case runs again in new processes, ``lib``
edited on disk between them (Numba's cache).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

import cpsad  # noqa: E402

_COUNT = itertools.count()

# (lib's source, user's source, the arguments, a change: statements run with ``lib`` and
# ``user`` bound, and an edit of lib's file: (old, new) or None)
CASES = {
    "global number": (
        "",
        "K = 2.0\n\ndef f(x):\n    return x * x * K\n",
        (1.5,),
        "user.K = 5.0",
        None,
    ),
    "global array, in place": (
        "",
        "import numpy as np\nW = np.array([1.0, 2.0])\n\ndef f(x):\n    return np.sum(W * x * x)\n",
        (1.5,),
        "user.W[0] = 7.0",
        None,
    ),
    "module attribute number": (
        "K = 2.0\n",
        "import lib\n\ndef f(x):\n    return x * x * lib.K\n",
        (1.5,),
        "lib.K = 5.0",
        ("K = 2.0", "K = 3.0"),
    ),
    "module attribute array, in place": (
        "import numpy as np\nW = np.array([1.0, 2.0])\n",
        "import lib\nimport numpy as np\n\ndef f(x):\n    return np.sum(lib.W * x * x)\n",
        (1.5,),
        "lib.W[1] = -3.0",
        ("[1.0, 2.0]", "[1.0, 4.0]"),
    ),
    "an inlined helper's global": (
        "SCALE = 2.0\n\ndef scaled(x):\n    return x * SCALE\n",
        "from lib import scaled\n\ndef f(x):\n    return scaled(x) * x\n",
        (1.5,),
        "lib.SCALE = 5.0",
        ("SCALE = 2.0", "SCALE = 3.0"),
    ),
    "a function called as it is": (
        "def h(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n\n"
        "def h2(n):\n    return n * 10\n",
        "from lib import h\n\ndef f(x, n):\n    return x * x * h(n)\n",
        (1.5, 4),
        "user.h = lib.h2",
        ("s += i", "s += 2 * i"),
    ),
    "a global a function called as it is reads": (
        "K = 2\n\ndef h(n):\n    s = 0\n    for i in range(n):\n        s += i * K\n    return s\n",
        "from lib import h\n\ndef f(x, n):\n    return x * x * h(n)\n",
        (1.5, 4),
        "lib.K = 5",
        ("K = 2\n", "K = 3\n"),
    ),
    "a module attribute a function called as it is reads": (
        "K = 2\n",
        "import lib\n\ndef h(n):\n    s = 0\n    for i in range(n):\n        s += i * lib.K\n"
        "    return s\n\ndef f(x, n):\n    return x * x * h(n)\n",
        (1.5, 4),
        "lib.K = 5",
        ("K = 2\n", "K = 3\n"),
    ),
    "a numba.njit function through a module": (
        "import numba\n\n@numba.njit\ndef h(n):\n    s = 0\n    for i in range(n):\n"
        "        s += i\n    return s\n",
        "import lib\n\ndef f(x, n):\n    return x * x * lib.h(n)\n",
        (1.5, 4),
        None,
        ("s += i", "s += 3 * i"),
    ),
    "a function called as it is through a module": (
        "def h(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n\n"
        "def h2(n):\n    return n * 10\n",
        "import lib\n\ndef f(x, n):\n    return x * x * lib.h(n)\n",
        (1.5, 4),
        "lib.h = lib.h2",
        ("s += i", "s += 2 * i"),
    ),
    "a differentiated helper rebound": (
        "def g(x):\n    y = x * x\n    return y * 2.0\n\n\ndef g2(x):\n    return x * 3.0\n",
        "import lib\n\ndef f(x):\n    return lib.g(x) + x\n",
        (1.5,),
        "lib.g = lib.g2",
        ("y * 2.0", "y * 4.0"),
    ),
    "a recursive helper compiled apart": (
        "import math\n\ndef r(x, n):\n    if n == 0:\n        return x\n"
        "    return r(math.sin(x), n - 1) * 1.5\n\ndef r2(x, n):\n    return x * x * n\n",
        "import lib\n\ndef f(x, n):\n    return lib.r(x * 2.0, n) + x\n",
        (0.3, 3),
        "lib.r = lib.r2",
        ("* 1.5", "* 2.5"),
    ),
    "a recursive function called as it is, calling another": (
        "def depth(n):\n    if n <= 1:\n        return 0\n    return 1 + depth(n // 2)\n\n"
        "def twice(n):\n    return 2 * depth(n)\n\ndef three(n):\n    return 3\n",
        "from lib import twice\n\ndef f(x, n):\n    return x * x * twice(n) + x\n",
        (1.5, 40),
        "lib.depth = lib.three",
        ("1 + depth", "2 + depth"),
    ),
    "a closure's cell": (
        "",
        "def make(c):\n    def f(x):\n        return x * x * c\n    def set_c(v):\n"
        "        nonlocal c\n        c = v\n    return f, set_c\n\nf, set_c = make(2.0)\n",
        (1.5,),
        "user.set_c(5.0)",
        None,
    ),
    "a default": (
        "",
        "def f(x, c=2.0):\n    return x * x * c\n",
        (1.5,),
        "user.f.__defaults__ = (5.0,)",
        None,
    ),
}


def _modules(tmp_path, lib: str, user: str):
    """``lib`` and ``user`` written under names of their own, imported."""
    n = next(_COUNT)
    lib_name, user_name = f"jit_world_lib_{n}", f"jit_world_user_{n}"
    (tmp_path / f"{lib_name}.py").write_text(lib)
    (tmp_path / f"{user_name}.py").write_text(user.replace("lib", lib_name))
    sys.path.insert(0, str(tmp_path))
    try:
        return __import__(lib_name), __import__(user_name)
    finally:
        sys.path.remove(str(tmp_path))


def _both(f, args, mode="reverse"):
    """``(compiled, Python)``: the value and gradient -- or, forward, the value and tangent
    along the first argument."""
    if mode == "reverse":
        run = lambda g: cpsad.value_and_grad(g)(*args)  # noqa: E731
    else:
        tangents = (1.0,) + (None,) * (len(args) - 1)
        run = lambda g: cpsad.jvp(g, args, tangents)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        got = run(cpsad.jit(f))
    return got, run(f)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_changed_in_the_process(tmp_path, case, mode):
    lib_source, user_source, args, change, _ = CASES[case]
    lib, user = _modules(tmp_path, lib_source, user_source)
    got, want = _both(user.f, args, mode)
    assert got == pytest.approx(want, rel=1e-12)  # (to rounding: a recursion is scaled)
    if change is None:
        return
    marked = cpsad.jit(user.f)  # (its derivatives, called before and after the change: what
    held = cpsad.value_and_grad(marked)  # their first call found -- ``api._Plan`` -- goes stale)
    tangents = (1.0,) + (None,) * (len(args) - 1)

    def again():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cpsad.JitWarning)
            return held(*args) if mode == "reverse" else cpsad.jvp(marked, args, tangents)

    assert again() == pytest.approx(want, rel=1e-12)
    exec(change, {"lib": lib, "user": user})  # noqa: S102
    got, want_after = _both(user.f, args, mode)
    assert want_after != pytest.approx(want), "the change must change the gradient"
    assert got == pytest.approx(want_after, rel=1e-12)
    assert again() == pytest.approx(want_after, rel=1e-12)


_THROUGH_LIB = """
import numpy as np

def rowsum(x):
    out = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        out = out + x[i]
    return out

def bad(x):
    s = 0.0
    for v in x.tolist():
        s += v
    return x * s
"""


def test_a_data_helper_called_through_a_module_compiles(tmp_path):
    """``lib.rowsum(x)`` -- a function of yours the staged code calls as it is (its argument is
    data), reached through its module -- is compiled with it: Numba calls no Python function,
    and refused the whole function ("Unknown attribute 'rowsum' of type Module"). One Numba
    cannot compile is named where it fails, in its own file."""
    user = (
        "import numpy as np\nimport lib\n\n"
        "def f(w, x):\n    return np.sum(np.tanh(lib.rowsum(x) * w))\n\n"
        "def g(w, x):\n    return np.sum(np.tanh(lib.bad(x[0]) * w))\n"
    )
    lib, user = _modules(tmp_path, _THROUGH_LIB, user)
    rng = np.random.default_rng(3)
    w, x, t = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        got = cpsad.value_and_grad(cpsad.jit(user.f))(w, x)
        got_t = cpsad.jvp(cpsad.jit(user.f), (w, x), (t, None))
    want = cpsad.value_and_grad(user.f)(w, x)
    want_t = cpsad.jvp(user.f, (w, x), (t, None))
    assert got[0] == pytest.approx(want[0], rel=1e-12)
    assert np.allclose(got[1], want[1], rtol=1e-12, atol=0)
    assert np.allclose(got_t, want_t, rtol=1e-12, atol=0)
    cpsad.testing.check_grads(lambda w: user.f(w, x), w)
    with pytest.warns(cpsad.JitWarning, match=r"'tolist'.*jit_world_lib_\d+\.py\", line 12"):
        cpsad.grad(cpsad.jit(user.g))(w, x)


_SCRIPT = """
import sys, warnings
sys.path.insert(0, {folder!r})
warnings.simplefilter("ignore")
import cpsad, {user}
tangents = (1.0,) + (None,) * (len({args!r}) - 1)
for f in (cpsad.jit({user}.f), {user}.f):
    value, grad = cpsad.value_and_grad(f)(*{args!r})
    value_, tangent = cpsad.jvp(f, {args!r}, tangents)
    print(float(value), float(grad), float(value_), float(tangent))
"""


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c][4] is not None))
def test_edited_between_processes(tmp_path, case):
    lib_source, user_source, args, _, (old, new) = CASES[case]
    (tmp_path / "lib.py").write_text(lib_source)
    (tmp_path / "user.py").write_text(user_source)
    script = _SCRIPT.format(folder=str(tmp_path), user="user", args=args)
    env = {**os.environ, "CPSAD_CACHE_DIR": str(tmp_path / "cache")}
    wants = []
    for edit in (False, True):
        if edit:
            assert old in lib_source
            (tmp_path / "lib.py").write_text(lib_source.replace(old, new))
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        got, want = ([float(v) for v in line.split()] for line in run.stdout.splitlines())
        assert got == pytest.approx(want, rel=1e-12), f"compiled {got}, Python {want}"
        wants.append(want)
    assert wants[0] != pytest.approx(wants[1]), "the edit must change the gradient"
