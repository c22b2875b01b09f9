"""Where cpsad's time goes on a workload: the API, the emitted lines, the runtime helpers.

    python -m benchmarks.profile MLP            # one workload (names as in the results table)
    python -m benchmarks.profile MLP --calls 50

Prints, for the workload at benchmark size:

1. the median time of the hand-written backward pass, of ``cpsad.value_and_grad``, and of the
   backpropagator called directly (``spec.bp(k, *args)``): the difference is the API's own cost;
2. cProfile's functions by own time (runtime helpers, rules called by name, numpy);
3. the emitted code's lines by exclusive time -- each line's own work including the helpers and
   numpy functions it calls, excluding the emitted functions it calls -- measured with a trace
   function that charges the time between two events to the line that was running (the tracer's
   own time is left out; each event still costs the traced code about a microsecond of cache
   and branch disturbance, so lines of scalar code look dearer than they are).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict

os.environ.setdefault("CPSAD_CACHE_DIR", tempfile.mkdtemp(prefix="cpsad-profile-"))

from benchmarks import frameworks, pin_one_cpu  # noqa: E402  (after the cache folder is chosen)
from benchmarks.run import by_name  # noqa: E402
from cpsad import compiler  # noqa: E402
from cpsad.calls import params_for  # noqa: E402


def median_time(call, n: int) -> float:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def line_times(call, files: set[str], n: int) -> dict:
    """``(file, line) -> [hits, seconds]`` over ``n`` calls, exclusive of traced callees."""
    stats: dict = defaultdict(lambda: [0, 0.0])
    clock = time.perf_counter
    state = {"cur": None, "last": 0.0}

    def charge(now):
        cur = state["cur"]
        if cur is not None:
            stats[cur][1] += now - state["last"]

    def local(frame, event, arg):
        now = clock()
        charge(now)
        key = (frame.f_code.co_filename, frame.f_lineno)
        if event == "line":
            stats[key][0] += 1
            state["cur"] = key
        elif event == "return":
            back = frame.f_back
            traced = back is not None and back.f_code.co_filename in files
            state["cur"] = (back.f_code.co_filename, back.f_lineno) if traced else None
        state["last"] = clock()
        return local

    def global_(frame, event, arg):
        now = clock()
        if frame.f_code.co_filename not in files:  # a helper or numpy: its time is the line's,
            state["last"] += clock() - now  # but not this tracer's
            return None
        charge(now)
        state["cur"] = None
        state["last"] = clock()
        return local

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1_000_000))
    sys.settrace(global_)
    try:
        for _ in range(n):
            state["cur"] = None
            call()
    finally:
        sys.settrace(None)
    return stats


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("workload")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    pin_one_cpu()
    (w,) = by_name(args.workload)
    problem = w.problem(False)
    hand = frameworks.make(frameworks.HAND, w, problem).call
    api = frameworks.make(frameworks.CPSAD, w, problem).call
    api()
    active, _ = params_for(w.loss.__code__, problem.argnums, len(problem.args))
    spec = compiler.specialize(w.loss, active)
    specs = compiler.call_graph(spec)

    def seed(result):
        return 1.0

    def direct():
        return spec.bp(seed, *problem.args)

    n = args.calls
    t_hand, t_api, t_bp = (median_time(c, n) for c in (hand, api, direct))
    print(f"{w.NAME}: median of {n} calls")
    print(f"  hand-written                {t_hand * 1e3:9.3f} ms  1.00x")
    print(f"  cpsad.value_and_grad        {t_api * 1e3:9.3f} ms  {t_api / t_hand:.2f}x")
    print(f"  backpropagator called alone {t_bp * 1e3:9.3f} ms  {t_bp / t_hand:.2f}x")
    print(f"  the API's own cost          {(t_api - t_bp) * 1e6:9.1f} us")

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        api()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
    print("\ncProfile, by own time (the profiler inflates the cost of each Python call):")
    print("\n".join(out.getvalue().splitlines()[4:]))

    files = {s.path for s in specs}
    stats = line_times(api, files, n)
    total = sum(v[1] for v in stats.values())
    print(f"emitted lines by exclusive time ({n} calls, {total / n * 1e3:.3f} ms a call in them):")
    texts = {s.path: s.text.splitlines() for s in specs}
    names = {s.path: s.fn.__qualname__ for s in specs}
    rows = sorted(stats.items(), key=lambda kv: -kv[1][1])[: args.top]
    for (path, line), (hits, sec) in rows:
        src = texts[path][line - 1].strip() if line <= len(texts[path]) else "?"
        print(
            f"  {sec / n * 1e6:9.1f} us {100 * sec / total:5.1f}%  {hits // n:6d}x  "
            f"{names[path]}:{line:<4} {src[:90]}"
        )


if __name__ == "__main__":
    main()
