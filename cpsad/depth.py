"""How deep a call of cpsad may nest Python frames, given to the calling thread alone.

Continuation-passing code nests about two frames per level of the user's recursion, where plain
Python nests one, and three per iteration of a loop that calls a function of the user's (the
loops ``defunctionalize`` turns into ``while`` loops nest none). So a call of a backpropagator
may nest ``max(DEPTH, DEPTH_FACTOR * limit)`` frames, ``limit`` the recursion limit the caller
set (``sys.getrecursionlimit()``): under cpsad a recursion 10,000 deep, or such a loop of 60,000
iterations, is fine at Python's default limit of 1,000, and ten times as much at ten times the
limit. A bound at all, because a runaway recursion must fail fast: 200,000 frames fail in about
a second and 200 MB (a frame costs ~5 us and ~0.7 kB to unwind, its traceback included).

Invariant: **no other thread sees anything change.** ``sys.setrecursionlimit`` is one setting
for the whole interpreter, and raising it while a call ran let another thread's recursion run
past the limit it had set (into a C stack overflow, on 3.11, where C recursion counts against the
same limit). Yet CPython counts each thread's depth against a copy of the limit in its own thread
state (``recursion_remaining`` and ``recursion_limit`` on 3.11; ``py_recursion_remaining`` and
``py_recursion_limit`` on 3.12 and later), which it refreshes from the interpreter's only when
``sys.setrecursionlimit`` is called. ``deep_recursion`` raises the calling thread's copy, and
only that, for the duration of the call; ``sys.getrecursionlimit()`` keeps saying what the user
set, everywhere. The two counters are found by probing the thread state once (the pair of
integers that moves with the depth, next to the limit) and the raise is tried before it is
trusted; where the probe fails (another interpreter, a layout it does not recognize) the calling
thread runs under the limit the user set, and a recursion deeper than that fails as it would in
plain Python -- never by changing what other threads see. On CPython >= 3.11 calls between
Python functions do not use the C stack, so the counter is the only bound; on 3.10 every frame
also uses the C stack, and nothing is raised.

If someone calls ``sys.setrecursionlimit`` while a call runs, CPython resets every thread's copy
(the call's raise with it): the call then runs under the new limit, and on exit the thread's copy
is left as CPython set it.
"""

from __future__ import annotations

import ctypes
import sys
import threading

DEPTH = 200_000  # frames a call of cpsad may nest, at least
DEPTH_FACTOR = 10  # ... or this many times the limit the caller set, if that is more


def allowed(limit: int) -> int:
    """The frames a call may nest under the caller's recursion limit ``limit``."""
    return max(DEPTH, DEPTH_FACTOR * limit)


# --------------------------------------------------------------------------- the thread's counters

_WINDOW = 32  # ints of the thread state searched for the counters (3.11-3.13: at index 8)


def _thread_state() -> int:
    """The address of the calling thread's ``PyThreadState``."""
    get = ctypes.pythonapi.PyThreadState_Get
    get.restype, get.argtypes = ctypes.c_void_p, ()
    return get()


def _ints_at(depth: int, address: int) -> list[int]:
    """The thread state's first ints, read ``depth`` frames deeper than the caller."""
    if depth:
        return _ints_at(depth - 1, address)
    return list((ctypes.c_int * _WINDOW).from_address(address))


def _probe() -> int | None:
    """The index (in ints) of the calling thread's remaining-depth counter, which the limit's
    copy follows; None where there is no such pair."""
    if sys.implementation.name != "cpython" or sys.version_info < (3, 11):
        return None
    try:
        address = _thread_state()
        shallow, deep = _ints_at(1, address), _ints_at(6, address)
    except (AttributeError, OSError, ValueError):  # no pythonapi (a build without it)
        return None
    limit = sys.getrecursionlimit()
    found = [
        i
        for i in range(_WINDOW - 1)
        if shallow[i] - deep[i] == 5 and shallow[i + 1] == deep[i + 1] == limit
    ]
    if len(found) != 1:
        return None
    return found[0]


def _pair(index: int):
    """The calling thread's two counters, as a ctypes array: ``[remaining, limit]`` -- the
    frames it may still nest, and its copy of the limit (``limit - remaining`` is its depth)."""
    return (ctypes.c_int * 2).from_address(_thread_state() + 4 * index)


def _nest(n: int) -> int:
    return n if n == 0 else _nest(n - 1)


def _works(index: int) -> bool:
    """Try the counters on this thread, whatever its limit: left with 30 frames to go, a nest of
    100 must fail; raised by 200 more, it must not; and the thread is left exactly as it was."""
    pair = _pair(index)
    # (read by indexing: inside a call of a C function, as in ``tuple(pair)``, CPython 3.11
    # counts one frame more)
    before = (pair[0], pair[1])
    limit = sys.getrecursionlimit()
    try:
        pair[0], pair[1] = 30, limit  # (at 0 left, CPython finds the depth at the limit: raises)
        try:
            _nest(100)
            return False
        except RecursionError:
            pass
        pair[0], pair[1] = 230, limit + 200
        try:
            _nest(100)
        except RecursionError:
            return False
    finally:
        pair[0], pair[1] = before
    return (pair[0], pair[1]) == before


_INDEX_LOCK = threading.Lock()
_index: int | None | bool = False  # False: not probed yet


def _counters_index() -> int | None:
    global _index
    if _index is False:
        with _INDEX_LOCK:
            if _index is False:
                # (with no trace or profile function: ``_works`` makes RecursionErrors, and one
                # raised inside a debugger's trace function makes CPython unset it -- the first
                # call of cpsad under pdb stopped at no breakpoint after it)
                trace, profile = sys.gettrace(), sys.getprofile()
                sys.settrace(None)
                sys.setprofile(None)
                try:
                    index = _probe()
                    _index = index if index is not None and _works(index) else None
                finally:
                    sys.settrace(trace)
                    sys.setprofile(profile)
    return _index


# --------------------------------------------------------------------------- the context manager


class _Thread:
    """What ``deep_recursion`` keeps per thread: calls running (nested), the thread's counters
    (None where the probe failed), and the raise the outermost call made (0: none)."""

    __slots__ = ("calls", "pair", "extra")

    def __init__(self):
        index = _counters_index()
        self.calls, self.pair, self.extra = 0, None if index is None else _pair(index), 0


_local = threading.local()


class deep_recursion:
    """Let the emitted code a call runs nest ``allowed(limit)`` frames in the calling thread,
    ``limit`` the recursion limit the caller set; other threads see nothing change (see the
    module's docstring). Calls nested in one thread (a derivative called inside a differentiated
    function) run under the outermost's raise. If CPython reset the counters meanwhile (someone
    called ``sys.setrecursionlimit``), they are left as it set them. (A class, not a generator:
    it runs on every call of a backpropagator.)"""

    __slots__ = ()

    def __enter__(self):
        try:
            t = _local.thread
        except AttributeError:
            t = _local.thread = _Thread()
        t.calls += 1
        if t.calls == 1 and t.pair is not None:
            pair, limit = t.pair, sys.getrecursionlimit()
            if pair[1] == limit:  # as CPython keeps it (else: leave it alone)
                t.extra = extra = allowed(limit) - limit
                pair[0] += extra
                pair[1] += extra
        return self

    def __exit__(self, *exc):
        t = _local.thread
        t.calls -= 1
        if t.calls == 0 and t.extra:
            pair, extra = t.pair, t.extra
            if pair[1] == sys.getrecursionlimit() + extra:  # not reset meanwhile
                pair[0] -= extra
                pair[1] -= extra
            t.extra = 0
        return False


def raised() -> bool:
    """Whether this thread's calls run under a raised limit (False where the probe failed)."""
    return _counters_index() is not None


def recursion_note() -> str:
    """What a RecursionError raised in a call of cpsad says of the limit it ran under."""
    limit = sys.getrecursionlimit()
    if not raised():
        return (
            f"cpsad ran this call under your recursion limit of {limit:,} frames (on this Python "
            "it cannot raise the limit for one thread alone): its code nests about two Python "
            "frames per level of your recursion (three per iteration of a loop that calls a "
            "function of yours); for a recursion this deep on purpose, raise "
            "sys.setrecursionlimit before calling cpsad"
        )
    return (
        f"cpsad ran this call under a recursion limit of {allowed(limit):,} frames, "
        f"max({DEPTH:,}, {DEPTH_FACTOR} x sys.getrecursionlimit()), in this thread alone: its "
        "code nests about two Python frames per level of your recursion (three per iteration of "
        "a loop that calls a function of yours). A recursion that never ends stops here; for "
        f"one this deep on purpose, raise sys.setrecursionlimit before calling cpsad: it allows "
        f"{DEPTH_FACTOR} times that"
    )
