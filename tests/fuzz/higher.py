"""The judge of higher derivatives: ``check_higher(program, order)`` (``python -m tests.fuzz
--order N``, N = 2 or 3).

For a program ``f(*args)`` and one random direction ``d`` (``oracle.directions``), the judge
writes into the program's module a function of one float,

    def fuzz_phi(t):
        return f(np.array([...]) + t * np.array([...]), 0.31 + t * -1.2, 3)

-- the arguments shifted along ``d``, as literals; an int argument stays as it is -- which calls
the program's ``f`` by name, so that it is the program's own code cpsad differentiates N times
(not a wrapper of the judge's). What is judged, at ``t = 0``:

* ``cls``: ``D^k = cpsad.grad`` applied ``k`` times to ``fuzz_phi``, for each ``k = 1 .. N``,
  against the central differences of ``D^(k-1)`` (plain Python's ``fuzz_phi`` for ``k = 1``,
  cpsad's own ``D^(k-1)`` above) at the oracle's two step sizes. Judging every order below N too
  anchors the chain in plain Python: a wrong ``D^(N-1)`` cannot make a wrong ``D^N`` look right.
  Where the two step sizes disagree the point is not smooth enough for that order (``nonsmooth``:
  not judged). The verdict is ``wrong-grad`` at the first order that disagrees (``message``:
  "order k", so that the reducer keeps the same order); ``nonsmooth`` if order N could not be
  judged; else ``ok``.
* ``jvp_cls`` (order 2 only): ``cpsad.hessian(fuzz_phi)(0.0)`` and ``cpsad.hvp(fuzz_phi)(0.0,
  1.0)`` -- forward mode over reverse -- judged the same way against the differences of cpsad's
  ``D^1`` (``jvp_detail`` says which of the two failed first).
* ``autograd``: HIPS autograd's ``grad`` applied N times to the same ``fuzz_phi`` (the module
  run on ``autograd.numpy``), where it runs the program: "agrees" / "disagrees" with the
  differences at order N -- a third opinion, recorded, never the verdict.

Classes as the first-order oracle's (``oracle.classify_exception``): a ``TransformError`` at the
program's line is ``refused`` (``bad-refusal`` for the messages no program may get); the
dispatch's documented refusal when it runs -- a ``TypeError`` saying a call through a value "is
not supported for ... (a derivative of this order)" -- is ``refused`` too; never ``ok``. Any
other exception, a derivative that is not a finite float, or a run past the time limit is a
``crash``. A derivative larger than ``oracle.MAX_ABS`` (differences lose their digits) is not
judged. Programs without a float argument are ``discarded``.

``perturb="grad"`` makes the derivative of order N (and the Hessian and hvp) deliberately wrong
(``oracle._perturbed``), to show that the judge catches it; the orders below are left alone.
"""

from __future__ import annotations

import numpy as np

from tests.fuzz.gen import Program
from tests.fuzz.oracle import (
    CPSAD_SECONDS,
    MAX_ABS,
    PLAIN_SECONDS,
    STEPS,
    Result,
    Timeout,
    _perturbed,
    autograd_run,
    classify_exception,
    directions,
    load,
    normalize,
    slope_agrees,
    smooth,
    time_limit,
    unload,
    valid_program,
)

PHI = "fuzz_phi"
ORDERS = (2, 3)
# the dispatch's refusal, when it runs, of a call through a value differentiated once more
# (cpsad/dispatch.py, _not_next_order; docs/higher.md "Any order")
ORDER_REFUSAL = ("is not supported for", "(a derivative of this order)")


def _literal(v) -> str:
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()!r})"
    return repr(float(v))


def phi_source(program: Program, args, direction) -> str:
    """The text of ``fuzz_phi(t)``: ``f`` at ``args + t * direction`` (ints unchanged)."""
    shifted = {i: d for i, d in zip(program.float_argnums, direction)}
    parts = []
    for i, a in enumerate(args):
        if i in shifted:
            parts.append(f"{_literal(a)} + t * {_literal(shifted[i])}")
        else:
            parts.append(repr(a))
    return f"def {PHI}(t):\n    return f({', '.join(parts)})\n"


def with_phi(program: Program, args, direction) -> str:
    """The program's module with ``fuzz_phi`` at its end (and ``np``, which a reduced program
    may no longer import)."""
    src = program.source.rstrip() + "\n"
    if "import numpy as np" not in src:
        src = "import numpy as np\n\n" + src
    return src + "\n\n" + phi_source(program, args, direction)


def nth(f, n: int):
    import cpsad

    for _ in range(n):
        f = cpsad.grad(f)
    return f


def _float(v):
    """A float for a finite scalar (a float, a 0-d array), else None."""
    if isinstance(v, bool) or np.ndim(v) != 0:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def _refusal_when_it_runs(exc) -> bool:
    return isinstance(exc, TypeError) and all(s in str(exc) for s in ORDER_REFUSAL)


def _classify(exc, path):
    if _refusal_when_it_runs(exc):
        return "refused", normalize(str(exc)), str(exc)
    return classify_exception(exc, path)


class _Failed(Exception):
    """A derivative of cpsad's could not be judged: (class, message, detail)."""


def _cpsad_at(fn, t: float, path: str, what: str) -> float:
    """``fn(t)``, cpsad's: a finite float, or ``_Failed`` with the class it earns."""
    try:
        with time_limit(CPSAD_SECONDS), np.errstate(all="ignore"):
            v = fn(t)
    except (Exception, Timeout) as exc:
        raise _Failed(*_classify(exc, path)) from None
    x = _float(v)
    if x is None:
        raise _Failed("crash", f"{what} is not a finite float", f"{what} = {v!r}")
    return x


def _slopes(fn, plain: bool, path: str, what: str):
    """The central differences of ``fn`` at 0 at each step size; None where plain Python fails
    or a value is out of range."""
    out = []
    for h in STEPS:
        if plain:
            try:
                with time_limit(PLAIN_SECONDS), np.errstate(all="ignore"):
                    up, down = _float(fn(h)), _float(fn(-h))
            except (Exception, Timeout):
                return None
        else:
            up, down = _cpsad_at(fn, h, path, what), _cpsad_at(fn, -h, path, what)
        if up is None or down is None or max(abs(up), abs(down)) > MAX_ABS:
            return None
        out.append((up - down) / (2 * h))
    return out


def _judge(got, slopes, scale):
    """'ok', 'nonsmooth' or 'wrong-grad' for the derivative ``got`` against ``slopes``."""
    if slopes is None or abs(got) > MAX_ABS or not smooth(slopes, scale):
        return "nonsmooth"
    return "ok" if slope_agrees(got, slopes, scale) else "wrong-grad"


def autograd_nth(source: str, order: int):
    """autograd's derivative of order ``order`` of ``fuzz_phi`` at 0, or None where it cannot
    run the program."""

    def judge(autograd, g):
        fn = g[PHI]
        for _ in range(order):
            fn = autograd.grad(fn)
        return _float(fn(0.0))

    return autograd_run(source, judge)


def check_higher(
    program: Program,
    order: int,
    perturb: str | None = None,
    use_autograd: bool = True,
    forward: bool = True,
) -> Result:
    """Judge cpsad's derivatives of order 1 .. ``order`` of ``fuzz_phi`` (module docstring);
    ``forward``: at order 2, judge ``hessian`` and ``hvp`` too."""
    if order not in ORDERS:
        raise ValueError(f"order is one of {ORDERS}, not {order!r}")
    res = Result(program.seed, program.attempt, "ok", features=sorted(program.features))
    res.order = order
    res.source = program.source
    if not program.float_argnums:
        res.cls = "discarded"
        return res
    args = program.args()
    d = directions(program, args)[0]
    source = with_phi(program, args, d)
    mod, path = load(source, f"h{program.seed}")
    try:
        return _check_higher(mod, path, source, order, res, perturb, use_autograd, forward)
    finally:
        unload(mod)


def _check_higher(mod, path, source, order, res, perturb, use_autograd, forward):
    phi = getattr(mod, PHI)
    try:
        with time_limit(PLAIN_SECONDS), np.errstate(all="ignore"):
            value = _float(phi(0.0))
    except (Exception, Timeout):
        value = None
    if value is None or abs(value) > MAX_ABS:
        res.cls, res.message = "crash", "program does not run in plain Python"
        return res
    scale = abs(value)
    notes = []
    lower, first = phi, None  # D^(k-1); D^1 and its value at 0, kept for the Hessian
    try:
        for k in range(1, order + 1):
            dk = nth(phi, k)
            got = _cpsad_at(dk, 0.0, path, f"D^{k}")
            if k == order and perturb == "grad":
                got = float(_perturbed(got))
            slopes = _slopes(lower, k == 1, path, f"D^{k - 1}")
            verdict = _judge(got, slopes, scale)
            if verdict == "wrong-grad":
                res.cls, res.message = "wrong-grad", f"order {k}"
                res.detail = (
                    f"order {k}: cpsad {got!r}, central differences of "
                    f"{'Python' if k == 1 else 'cpsad'}'s order {k - 1}: {slopes[0]!r} (h=1e-4) "
                    f"{slopes[1]!r} (h=1e-6)"
                )
                break
            if k == order:
                if verdict == "nonsmooth":
                    res.cls = "nonsmooth"
                else:
                    res.detail = f"order {k}: cpsad {got!r}, differences {slopes!r}"
                if use_autograd:
                    ag = autograd_nth(source, order)
                    if ag is not None:
                        notes.append(f"autograd {ag!r}")
                        if verdict != "nonsmooth":
                            agrees = slope_agrees(ag, slopes, scale)
                            res.autograd = "agrees" if agrees else "disagrees"
            if k == 1:
                first = (dk, got)
            scale = max(scale, abs(got))
            lower = dk
    except _Failed as exc:
        res.cls, res.message, res.detail = exc.args
        res.message = f"order {k}: {res.message}"
    if notes:
        res.detail = (res.detail + "\n" + "\n".join(notes)).strip()
    if forward and order == 2 and first is not None:
        _check_forward_over_reverse(phi, first, path, res, value, perturb)
    return res


def _check_forward_over_reverse(phi, first, path, res, value, perturb):
    """``hessian`` and ``hvp`` of ``fuzz_phi`` at 0 against the differences of cpsad's D^1
    (``first``: D^1 and its value at 0)."""
    import cpsad

    d1, d1_at_0 = first
    try:
        slopes = _slopes(d1, False, path, "D^1")
    except _Failed:
        slopes = None  # (D^1 near 0 fails: judged, as reverse mode, in ``cls``)
    scale = max(abs(value), abs(d1_at_0))
    verdicts = []
    for name, fn in (
        ("hessian", cpsad.hessian(phi)),
        ("hvp", lambda t: cpsad.hvp(phi)(t, 1.0)),
    ):
        try:
            got = _cpsad_at(fn, 0.0, path, name)
        except _Failed as exc:
            cls, msg, _ = exc.args
            res.jvp_cls, res.jvp_detail = cls, f"{name}: {msg}"
            return
        if perturb == "grad":
            got = float(_perturbed(got))
        verdict = _judge(got, slopes, scale)
        if verdict == "wrong-grad":
            res.jvp_cls = "wrong-grad"
            res.jvp_detail = f"{name} {got!r}, central differences of cpsad's D^1 {slopes!r}"
            return
        verdicts.append(verdict)
    res.jvp_cls = "ok" if "ok" in verdicts else "nonsmooth"


def check_seed_higher(
    seed: int, order: int, perturb=None, use_autograd: bool = True, exclude=()
) -> Result:
    """Generate the first valid program of ``seed`` and judge its derivatives up to ``order``."""
    program, discarded = valid_program(seed, exclude=exclude)
    if program is None:
        return Result(seed, discarded, "discarded", discarded=discarded)
    res = check_higher(program, order, perturb, use_autograd)
    res.discarded = discarded
    return res
