"""The oracle: run one generated program in plain Python and under cpsad, and say what happened.

``check(program)`` returns a ``Result`` whose ``cls`` is one of

* ``ok`` -- cpsad's value equals Python's and its gradient agrees with central differences;
* ``nonsmooth`` -- the value agrees, but the two finite-difference step sizes disagree: the point
  is not smooth enough to judge a gradient (a branch flips, a maximum ties), so none is judged;
* ``refused`` -- a ``cpsad.TransformError`` in the program's file (or one of the documented
  refusals when it runs, ``y += v`` on an array another name shares, a helper changing an array
  the backward pass reads); ``message`` is its first
  line with names and numbers normalized, for counts by message;
* ``bad-refusal`` -- a refusal because of how a function value reached a call ("has no derivative
  rule and cpsad cannot read its source" for a local lambda, "cannot tell which lambda"): no
  program may be refused for that;
* ``wrong-value``, ``wrong-grad`` -- cpsad returned a number, and it is wrong;
* ``crash`` -- any other exception from cpsad: ``InternalError``, an error raised inside emitted
  code, a ``TransformError`` that does not point into the program, a time-out.

Judges, all independent of cpsad: Python itself for the value; for the gradient, central
differences along two random directions at two step sizes (1e-4 and 1e-6); HIPS autograd, run on
the same source with ``np`` bound to ``autograd.numpy``, where it can run the program (a third
opinion, recorded in ``autograd``, never the verdict -- asked of refused programs too, so that the
report can list the refusals of programs a peer differentiates). Forward mode, ``cpsad.jvp`` along the same
directions, is judged the same way and reported separately (``jvp_cls``).

``perturb="grad"`` (or ``"value"``) makes cpsad's answer deliberately wrong -- the gradient
scaled by 1.001 plus 1e-3 (1 + |g|), the value by 1 + 1e-6 -- to show that the oracle catches it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import re
import signal
import sys
import tempfile
import traceback
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

from tests.fuzz.gen import Program, generate_source

STEPS = (1e-4, 1e-6)
DIRECTIONS = 2
VALUE_RTOL = 1e-9
GRAD_RTOL = 1e-5
SMOOTH_RTOL = 1e-4
ATOL = 1e-8  # times (1 + |f|)
MAX_ABS = 1e5  # larger results are discarded: finite differences lose their digits
PLAIN_SECONDS = 5.0
CPSAD_SECONDS = 60.0

# Refusals because of how a function value reached a call: never acceptable (issue 13).
BAD_REFUSALS = (
    "has no derivative rule and cpsad cannot read its source",
    "cannot tell which lambda",
)
# Refusals the documentation announces for code that is not plain value code (docs/reference.md).
DOCUMENTED_REFUSALS = (
    "would change in place an array that another name shares",
    "changes an array that another name shares",  # a store into one (`buf[i] = v`)
    # a store into an array a closure reads, or one not made in the function (docs/reference.md)
    "the function did not make itself",
    "changed in place the array",  # a helper changing what the backward pass reads
)

CLASSES = ("ok", "nonsmooth", "refused", "bad-refusal", "wrong-value", "wrong-grad", "crash")
FAILURES = ("bad-refusal", "wrong-value", "wrong-grad", "crash")


@dataclass
class Result:
    seed: int
    attempt: int
    cls: str
    message: str = ""  # normalized first line (refusals and crashes)
    detail: str = ""  # the numbers, or the traceback's last lines
    features: list = field(default_factory=list)
    jvp_cls: str = ""
    jvp_detail: str = ""
    jit: str = ""  # with JIT: "compiled", "fallback: why", or "-" (see ``_check_jit``)
    autograd: str = "n/a"  # "agrees" / "disagrees" with the finite differences, "n/a"
    source: str = ""
    discarded: int = 0  # generated programs of this seed that plain Python rejected
    order: int = 1  # of the derivatives judged (tests/fuzz/higher.py judges 2 and 3)

    @property
    def failed(self) -> bool:
        return self.cls in FAILURES

    @property
    def key(self) -> tuple:
        """What a reduced program must keep to count as the same failure."""
        return (self.cls, self.message)

    @property
    def jvp_key(self) -> tuple:
        """The same for forward mode (a crash's or refusal's message is in ``jvp_detail``)."""
        msg = self.jvp_detail if self.jvp_cls in ("crash", "refused", "bad-refusal") else ""
        return ("jvp:" + self.jvp_cls, msg)


class Timeout(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` in cpsad swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float):
    def on_alarm(signum, frame):
        raise Timeout(f"ran longer than {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------- loading programs

_DIR = None
_COUNT = itertools.count()


def workdir() -> str:
    """A private folder for this process's program files and cpsad cache."""
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="cpsad-fuzz-")
        os.environ.setdefault("CPSAD_CACHE_DIR", os.path.join(_DIR, "cache"))
    return _DIR


def load(source: str, stem: str = "prog"):
    """Write ``source`` to a fresh file and import it under a unique name: (module, path)."""
    n = next(_COUNT)
    name = f"cpsad_fuzz_{stem}_{os.getpid()}_{n}"
    path = os.path.join(workdir(), name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(mod)
    return mod, path


def unload(mod) -> None:
    sys.modules.pop(mod.__name__, None)


def as_scalar(v):
    """A float for a finite scalar result, else None."""
    if isinstance(v, bool) or not isinstance(v, (float, int, np.floating, np.ndarray)):
        return None
    if np.ndim(v) != 0 or isinstance(v, (int, np.integer)):
        return None
    v = float(v)
    return v if np.isfinite(v) and abs(v) < MAX_ABS else None


def plain_value(f, program: Program):
    """f's value in plain Python on fresh arguments, or None if it raises, runs too long, or
    returns anything but a finite float (twice: it must also be deterministic)."""
    try:
        with time_limit(PLAIN_SECONDS), np.errstate(all="ignore"):
            a = as_scalar(f(*program.args()))
            b = as_scalar(f(*program.args()))
    except Exception:
        return None
    except Timeout:
        return None
    if a is None or b is None or a != b:
        return None
    return a


# Features of the bugs on the lead's list (issue 13). Seeds from CLEAN on write programs without
# them (``python -m tests.fuzz --seed 1000000``), so that the known bugs do not hide the others.
KNOWN_BUG_FEATURES = (
    "apply_1line",
    "decorator",
    "neg_const_pow",
    "late_binding",
    "default_capture",
    "capture_before_assign",
    "capture_reassigned",
    "list_concat",
    "alias_fn",
    "default_binding",
)
CLEAN = 1_000_000


def valid_program(seed: int, tries: int = 12, exclude=()):
    """The first program of ``seed`` that runs in plain Python, and uses none of the features
    ``exclude`` (nor, for a seed from ``CLEAN`` on, ``KNOWN_BUG_FEATURES``): (program or None,
    how many programs plain Python rejected)."""
    exclude = set(exclude) | (set(KNOWN_BUG_FEATURES) if seed >= CLEAN else set())
    rejected = 0
    for attempt in range(tries * (25 if exclude else 1)):
        p = generate_source(seed, attempt)
        if exclude & p.features:
            continue
        try:
            mod, _ = load(p.source, f"s{seed}")
        except Exception:
            rejected += 1
            continue
        try:
            if plain_value(mod.f, p) is not None:
                return p, rejected
            rejected += 1
        finally:
            unload(mod)
        if rejected >= tries:
            break
    return None, rejected


# --------------------------------------------------------------------------- finite differences


def directions(program: Program, args):
    rng = np.random.default_rng([program.seed, program.attempt, 7])
    out = []
    for _ in range(DIRECTIONS):
        out.append([rng.standard_normal(np.shape(args[i])) for i in program.float_argnums])
    return out


def shifted(program: Program, args, direction, h):
    a = list(args)
    for i, d in zip(program.float_argnums, direction):
        a[i] = (a[i] + h * d) if np.ndim(a[i]) else float(a[i] + h * float(d))
    return tuple(a)


def fd_slopes(f, program: Program, direction):
    """The central difference along ``direction`` at each step size, or None where f fails."""
    out = []
    for h in STEPS:
        try:
            with time_limit(PLAIN_SECONDS), np.errstate(all="ignore"):
                up = as_scalar(f(*shifted(program, program.args(), direction, h)))
                down = as_scalar(f(*shifted(program, program.args(), direction, -h)))
        except (Exception, Timeout):
            return None
        if up is None or down is None:
            return None
        out.append((up - down) / (2 * h))
    return out


def smooth(slopes, value) -> bool:
    a, b = slopes
    return abs(a - b) <= SMOOTH_RTOL * max(abs(a), abs(b)) + ATOL * (1 + abs(value))


def slope_agrees(ad, slopes, value) -> bool:
    a, b = slopes
    tol = GRAD_RTOL * max(abs(ad), abs(a)) + 2 * abs(a - b) + ATOL * (1 + abs(value))
    return min(abs(ad - a), abs(ad - b)) <= tol


def value_agrees(got, want) -> bool:
    return abs(got - want) <= VALUE_RTOL * abs(want) + 1e-12


# --------------------------------------------------------------------------- classification


def normalize(message: str) -> str:
    line = message.strip().split("\n")[0]
    line = re.sub(r"`[^`]*`", "`_`", line)
    line = re.sub(r"'[^']*'", "'_'", line)
    line = re.sub(r"\b\d+(\.\d+)?\b", "N", line)
    line = re.sub(r"[\w./-]+\.py", "FILE", line)
    line = re.sub(r"0x[0-9a-f]+", "ADDR", line)
    return line[:160]


def _notes(exc) -> str:
    return "\n".join(getattr(exc, "__notes__", []) or [])


def classify_exception(exc: BaseException, path: str) -> tuple[str, str, str]:
    """(class, normalized message, detail) of an exception cpsad raised on the program at ``path``."""
    from cpsad import TransformError
    from cpsad.transforms.errors import InternalError

    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    if isinstance(exc, Timeout):
        return "crash", "time-out", str(exc)
    if isinstance(exc, TransformError) and not isinstance(exc, InternalError):
        msg = normalize(exc.message)
        where = os.path.realpath(exc.filename) if exc.filename else None
        if where != os.path.realpath(path):
            return "crash", "TransformError outside the program: " + msg, str(exc)
        if any(b in exc.message for b in BAD_REFUSALS):
            return "bad-refusal", msg, str(exc)
        return "refused", msg, str(exc)
    text = str(exc)
    if any(d in text for d in DOCUMENTED_REFUSALS):
        msg = normalize(text)
        # the generator's `acc = np.zeros(3); for ...: acc += term`, if nothing else holds acc
        m = re.search(r":(\d+): (acc\d+) [-+*]= ", _notes(exc).split("\n")[-1])
        if m and _held_by_nobody_else(path, m.group(2)):
            msg = "[an array nobody else holds] " + msg
        return "refused", msg, text + "\n" + _notes(exc)
    if isinstance(exc, InternalError):
        return "crash", "InternalError: " + normalize(text), tb
    return "crash", f"{type(exc).__name__}: " + normalize(text), tb + _notes(exc)


# numpy functions whose result never shares its argument's memory (np.reshape, np.transpose and
# the like return views)
_COPYING = set(
    "sum mean dot tanh sin cos exp log sqrt square cumsum maximum minimum where stack concatenate "
    "outer tril max min prod arctan vstack matmul array".split()
)


def _held_by_nobody_else(path: str, name: str) -> bool:
    """Whether every read of ``name`` in the program makes a new value (an operand, an argument
    of a numpy function, indexed): no other name, container, closure or helper can hold it."""
    import ast

    with open(path) as fh:
        tree = ast.parse(fh.read())
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Lambda, ast.FunctionDef)):
            inner = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if name in inner and not (isinstance(node, ast.FunctionDef) and node.name == "f"):
                return False  # a closure may keep it
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        up = parents.get(node)
        if isinstance(up, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign)):
            continue
        if (
            isinstance(up, ast.Subscript)
            and up.value is node
            and isinstance(up.slice, ast.Constant)
        ):
            continue  # an element: a number
        fn = getattr(up, "func", None)
        if (
            isinstance(up, ast.Call)
            and isinstance(fn, ast.Attribute)
            and getattr(fn.value, "id", "") == "np"
            and fn.attr in _COPYING
        ):
            continue
        return False
    return True


def _dot(grads, direction) -> float:
    return float(sum(np.sum(np.asarray(g, dtype=np.float64) * d) for g, d in zip(grads, direction)))


def _shapes_ok(grads, program, args) -> str:
    if len(grads) != len(program.float_argnums):
        return f"{len(grads)} gradients for {len(program.float_argnums)} arguments"
    for g, i in zip(grads, program.float_argnums):
        if np.shape(g) != np.shape(args[i]):
            return f"gradient of argument {i} has shape {np.shape(g)}, the argument {np.shape(args[i])}"
        if not np.all(np.isfinite(np.asarray(g, dtype=np.float64))):
            return f"gradient of argument {i} is not finite: {g!r}"
    return ""


def _perturbed(g):
    """A deliberately wrong derivative: ``2e-3 (1 + |g|)`` off ``g``, ten times what the oracle
    tolerates (a relative ``2e-4``, at most, for a smooth point); the same sign whatever ``g``'s,
    so the two parts never cancel (``1.001 g + 1e-3 (1 + |g|)`` did, for a negative ``g``)."""
    g = np.asarray(g, dtype=np.float64)
    return g + 2e-3 * (1 + np.abs(g))


def run_cpsad_grad(f, program, perturb=None):
    import cpsad

    nums = program.float_argnums
    val, grads = cpsad.value_and_grad(f, argnums=nums)(*program.args())
    grads = list(grads)
    if perturb == "grad":
        grads = [_perturbed(g) for g in grads]
    if perturb == "value":
        val = val * (1 + 1e-6) + 1e-6
    return val, grads


def autograd_run(source: str, judge):
    """``judge(autograd, module globals)`` with the program's module run on ``autograd.numpy``
    (time-limited, warnings off); None where autograd is missing or cannot run it."""
    try:
        import autograd
    except ImportError:
        return None
    src = source.replace("import numpy as np", "import autograd.numpy as np", 1)
    module = types.ModuleType("cpsad_fuzz_autograd")  # (a module: ``sys.modules[__name__]``
    g: dict = module.__dict__  # finds it, as the ``module`` rewrite's ``lib`` does)
    sys.modules[module.__name__] = module
    try:
        with time_limit(PLAIN_SECONDS * 4), np.errstate(all="ignore"):
            exec(compile(src, "<autograd version>", "exec"), g)
            return judge(autograd, g)
    except (Exception, Timeout):
        return None
    finally:
        sys.modules.pop(module.__name__, None)


def autograd_slopes(source, program, dirs):
    """autograd's value and directional derivatives, or None where it cannot run the program."""

    def judge(autograd, g):
        af = g["f"]
        args = program.args()
        nums = program.float_argnums

        def h(floats):
            a = list(program.args())
            for i, x in zip(nums, floats):
                a[i] = x
            return af(*a)

        val, grads = autograd.value_and_grad(h)(tuple(args[i] for i in nums))
        return float(val), [_dot(grads, d) for d in dirs]

    return autograd_run(source, judge)


def check(
    program: Program, perturb: str | None = None, use_autograd: bool = True, forward: bool = True
) -> Result:
    """Judge cpsad on ``program`` (see the module docstring); ``forward``: judge ``jvp`` too."""
    res = Result(program.seed, program.attempt, "ok", features=sorted(program.features))
    res.source = program.source
    mod, path = load(program.source, f"s{program.seed}")
    try:
        return _check(mod.f, path, program, res, perturb, use_autograd, forward)
    finally:
        unload(mod)


def _check(f, path, program, res, perturb, use_autograd, forward):
    want = plain_value(f, program)
    if want is None:
        res.cls, res.message = "crash", "program does not run in plain Python"
        return res
    args = program.args()
    dirs = directions(program, args)
    slopes = [fd_slopes(f, program, d) for d in dirs]
    try:
        with time_limit(CPSAD_SECONDS), np.errstate(all="ignore"):
            got, grads = run_cpsad_grad(f, program, perturb)
    except (Exception, Timeout) as exc:
        res.cls, res.message, res.detail = classify_exception(exc, path)
        if res.cls == "refused" and use_autograd:
            res.autograd = _autograd_verdict(program, dirs, slopes, want)
        _check_jvp(f, path, program, res, want, dirs, slopes, perturb, forward)
        return res
    got_s = as_scalar(got) if np.ndim(got) == 0 else None
    if got_s is None or not value_agrees(got_s, want):
        res.cls, res.detail = "wrong-value", f"cpsad value {got!r}, Python {want!r}"
        _check_jvp(f, path, program, res, want, dirs, slopes, perturb, forward)
        return res
    bad = _shapes_ok(grads, program, args)
    if bad:
        res.cls, res.message, res.detail = "wrong-grad", "gradient shape", bad
        _check_jvp(f, path, program, res, want, dirs, slopes, perturb, forward)
        return res
    if perturb is None:  # (a perturbed gradient is the finite differences' to catch)
        _check_shaped(f, path, program, res, got, grads)
        if res.failed:
            _check_jvp(f, path, program, res, want, dirs, slopes, perturb, forward)
            return res
    if JIT:
        _check_jit(f, path, program, res, got, grads)
        if res.failed:
            return res
    ag = autograd_slopes(program.source, program, dirs) if use_autograd else None
    judged = False
    notes = []
    for k, (d, sl) in enumerate(zip(dirs, slopes)):
        if sl is None or not smooth(sl, want):
            continue
        judged = True
        ad = _dot(grads, d)
        if ag is not None and value_agrees(ag[0], want):
            res.autograd = "agrees" if slope_agrees(ag[1][k], sl, want) else "disagrees"
        if not slope_agrees(ad, sl, want):
            res.cls = "wrong-grad"
            extra = f", autograd {ag[1][k]!r}" if ag is not None else ""
            notes.append(
                f"direction {k}: <cpsad grad, v> = {ad!r}, central differences {sl[0]!r} "
                f"(h=1e-4) {sl[1]!r} (h=1e-6){extra}"
            )
    if not judged:
        res.cls = "nonsmooth"
    res.detail = "\n".join(notes)
    _check_jvp(f, path, program, res, want, dirs, slopes, perturb, forward)
    return res


def _autograd_verdict(program, dirs, slopes, want) -> str:
    """Of a program cpsad refused: does autograd run it and give the central differences'
    slopes ("agrees"), other ones ("disagrees"), or neither ("n/a": it cannot run it, or no
    direction is smooth)? A refusal autograd agrees on is of a program a peer differentiates:
    the report lists those as refusals to make precise, or features to support."""
    ag = autograd_slopes(program.source, program, dirs)
    if ag is None or not value_agrees(ag[0], want):
        return "n/a"
    verdict = "n/a"
    for k, sl in enumerate(slopes):
        if sl is None or not smooth(sl, want):
            continue
        if not slope_agrees(ag[1][k], sl, want):
            return "disagrees"
        verdict = "agrees"
    return verdict


JIT = bool(os.environ.get("CPSAD_FUZZ_JIT"))  # --jit: judge cpsad.jit(f) too
REWRITE = os.environ.get("CPSAD_FUZZ_REWRITE", "")  # --rewrite KIND: judge the rewritten program


def _check_shaped(f, path, program, res, got, grads) -> None:
    """``cpsad.shaped(f)`` -- the backpropagator specialized to the arguments' shapes -- against
    the generic one's value and gradient (``got``, ``grads``): what Shapes drops (an
    ``unbroadcast`` of an adjoint already of its operand's shape, a matrix product's rule called
    for its one case) changes no number, so they must be equal, not close -- a differential
    test of the shape analysis on programs nobody wrote for it."""
    import cpsad

    nums = program.float_argnums
    try:
        with time_limit(CPSAD_SECONDS * 4), np.errstate(all="ignore"):
            val, sgrads = cpsad.value_and_grad(cpsad.shaped(f), argnums=nums)(*program.args())
    except (Exception, Timeout) as exc:
        res.cls, res.message, res.detail = classify_exception(exc, path)
        res.message = "shaped: " + res.message
        return
    same = lambda a, b: np.array_equal(  # noqa: E731
        np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True
    ) and np.shape(a) == np.shape(b)
    if not same(val, got):
        res.cls, res.message = "wrong-value", "shaped"
        res.detail = f"cpsad.shaped value {val!r}, generic backpropagator {got!r}"
        return
    for i, (a, b) in enumerate(zip(sgrads, grads)):
        if not same(a, b):
            res.cls, res.message = "wrong-grad", "shaped"
            res.detail = f"argument {nums[i]}: cpsad.shaped {a!r}, generic backpropagator {b!r}"
            return


def _check_jit(f, path, program, res, got, grads) -> None:
    """``cpsad.jit(f)`` against the Python backpropagator's value and gradient (``got``,
    ``grads``): compiled by Numba or not (a fallback warns and must give exactly the Python
    numbers), they must agree to rounding -- a differential test of Flatten and of the Numba
    versions of the runtime's helpers."""
    import cpsad

    nums = program.float_argnums
    try:
        with time_limit(CPSAD_SECONDS * 4), np.errstate(all="ignore"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", cpsad.JitWarning)
                val, jgrads = cpsad.value_and_grad(cpsad.jit(f), argnums=nums)(*program.args())
    except (Exception, Timeout) as exc:
        res.cls, res.message, res.detail = classify_exception(exc, path)
        res.message = "jit: " + res.message
        return
    why = [str(w.message) for w in caught if issubclass(w.category, cpsad.JitWarning)]
    # (the reason without its file and line, which differ per program: grouped in the report)
    reason = re.sub(r" ?\((?:/|File |\.\./)[^)]*\)", "", why[0].split(": ", 2)[-1]) if why else ""
    res.jit = "fallback: " + reason[:160] if why else "compiled"
    if why and "a bug in cpsad" in why[0]:  # (it fell back, with the numbers: still a bug)
        res.cls, res.message, res.detail = "crash", "jit: a bug in cpsad's staging", why[0]
        return
    v, w = np.float64(np.asarray(val, dtype=np.float64)), np.float64(
        np.asarray(got, dtype=np.float64)
    )
    if not (abs(v - w) <= 1e-9 * abs(w) + 1e-12 or v == w or (np.isnan(v) and np.isnan(w))):
        res.cls, res.message = "wrong-value", "jit"
        res.detail = f"cpsad.jit value {val!r}, Python backpropagator {got!r}"
        return
    for i, (a, b) in enumerate(zip(jgrads, grads)):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        if a.shape != b.shape or not np.allclose(
            a, b, rtol=1e-7, atol=1e-9 * scale, equal_nan=True
        ):
            res.cls, res.message = "wrong-grad", "jit"
            res.detail = f"argument {nums[i]}: cpsad.jit {a!r}, Python backpropagator {b!r}"
            return
    _check_jit_jvp(f, path, program, res)


def _check_jit_jvp(f, path, program, res) -> None:
    """``cpsad.jvp(cpsad.jit(f))`` against ``cpsad.jvp(f)`` along one random direction (the
    tangent function compiled, or not: the same numbers). A mismatch or a crash is the
    program's verdict (message ``jit jvp``); forward mode itself is judged by _check_jvp."""
    import cpsad

    args = program.args()
    tangents = [None] * len(args)
    for i, d in zip(program.float_argnums, directions(program, args)[0]):
        tangents[i] = d if np.ndim(args[i]) else float(d)
    try:
        with time_limit(CPSAD_SECONDS * 4), np.errstate(all="ignore"):
            want = cpsad.jvp(f, program.args(), tangents)
    except (Exception, Timeout):
        return  # (forward mode refused or failed: judged by _check_jvp)
    try:
        with time_limit(CPSAD_SECONDS * 4), np.errstate(all="ignore"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cpsad.JitWarning)
                got = cpsad.jvp(cpsad.jit(f), program.args(), tangents)
    except (Exception, Timeout) as exc:
        res.cls, res.message, res.detail = classify_exception(exc, path)
        res.message = "jit jvp: " + res.message
        return
    for name, a, b in (("value", got[0], want[0]), ("tangent", got[1], want[1])):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        if a.shape != b.shape or not np.allclose(
            a, b, rtol=1e-7, atol=1e-9 * scale, equal_nan=True
        ):
            res.cls = "wrong-value" if name == "value" else "wrong-grad"
            res.message = "jit jvp"
            res.detail = f"cpsad.jvp(cpsad.jit(f)) {name} {a!r}, cpsad.jvp(f) {b!r}"
            return


def _check_jvp(f, path, program, res, want, dirs, slopes, perturb, forward=True):
    import cpsad

    if not forward:
        return
    args = program.args()
    nums = program.float_argnums
    verdicts = []
    for d, sl in zip(dirs, slopes):
        tangents = [None] * len(args)
        for i, t in zip(nums, d):
            tangents[i] = t if np.ndim(args[i]) else float(t)
        try:
            with time_limit(CPSAD_SECONDS), np.errstate(all="ignore"):
                val, tan = cpsad.jvp(f, program.args(), tangents)
        except (Exception, Timeout) as exc:
            cls, msg, detail = classify_exception(exc, path)
            res.jvp_cls, res.jvp_detail = cls, msg
            return
        if perturb == "grad":
            tan = _perturbed(tan)
        if perturb == "value":
            val = val * (1 + 1e-6) + 1e-6
        v = as_scalar(val) if np.ndim(val) == 0 else None
        if v is None or not value_agrees(v, want):
            res.jvp_cls, res.jvp_detail = "wrong-value", f"jvp value {val!r}, Python {want!r}"
            return
        if sl is None or not smooth(sl, want):
            continue
        t = float(np.asarray(tan, dtype=np.float64)) if np.ndim(tan) == 0 else None
        if t is None or not slope_agrees(t, sl, want):
            verdicts.append(f"jvp {tan!r}, central differences {sl[0]!r} {sl[1]!r}")
    if verdicts:
        res.jvp_cls, res.jvp_detail = "wrong-grad", "\n".join(verdicts)
    else:
        res.jvp_cls = (
            "ok" if any(sl is not None and smooth(sl, want) for sl in slopes) else "nonsmooth"
        )


def check_seed(
    seed: int, perturb: str | None = None, use_autograd: bool = True, exclude=()
) -> Result:
    """Generate the first valid program of ``seed`` and judge cpsad on it."""
    program, discarded = valid_program(seed, exclude=exclude)
    if program is None:
        return Result(seed, discarded, "discarded", discarded=discarded)
    if REWRITE:  # (--rewrite: the program written another way, where the rewrite applies)
        from tests.fuzz.rewrite import rewritten

        program = rewritten(program, REWRITE)
    res = check(program, perturb, use_autograd)
    res.discarded = discarded
    return res
