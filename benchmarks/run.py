"""cpsad against a hand-written backward pass, HIPS autograd, PyTorch and JAX, on six workloads.

    python -m benchmarks.run --out docs/benchmarks.md   # what `make bench` runs (~12 minutes)
    python -m benchmarks.run --only MLP,RNN             # some workloads, printed only
    python -m benchmarks.run --tiny                     # every workload once at a tiny size:
                                                        # gradients checked, nothing timed

For each workload, in this one process: every framework's value and gradient are checked against
the hand-written ones (a difference stops the run), then the frameworks are timed interleaved,
round after round, and the median of each one's calls is reported with its ratio to the
hand-written numpy. float64 and one thread throughout (see benchmarks/__init__.py). cpsad's
first-call latency is measured apart, in a fresh process with an empty cache folder per workload,
for every workload before any timing.
A peer that is not installed is skipped, and the report says so.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import check, frameworks, pin_one_cpu, report, timing
from benchmarks.workloads import ALL

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def by_name(names: str | None) -> list:
    if not names:
        return ALL
    wanted = [n.strip().lower() for n in names.split(",")]
    found = [w for w in ALL if w.NAME.lower() in wanted]
    if len(found) != len(wanted):
        raise SystemExit(f"unknown workload in {names!r}; the workloads: {[w.NAME for w in ALL]}")
    return found


def chosen(keys: str | None) -> list[str]:
    if not keys:
        return frameworks.FRAMEWORKS
    out = [frameworks.KEYS.get(k.strip()) for k in keys.split(",")]
    if None in out:
        raise SystemExit(f"unknown framework in {keys!r}; the frameworks: {list(frameworks.KEYS)}")
    return [fw for fw in frameworks.FRAMEWORKS if fw == frameworks.HAND or fw in out]


def measure(w, tiny: bool, budget: float, fws=frameworks.FRAMEWORKS, log=print) -> dict:
    """Check, then time, the frameworks ``fws`` on workload ``w``; the row of the results table."""
    problem = w.problem(tiny)
    row = {"name": w.NAME, "title": w.TITLE, "frameworks": {}, "skipped": {}, "notes": {}}
    runners = {}
    for fw in fws:
        reason = frameworks.why_not(fw, problem)
        if reason:
            row["skipped"][fw] = reason
            log(f"  {fw}: skipped -- {reason}")
        else:
            runners[fw] = frameworks.make(fw, w, problem)
            if runners[fw].note:
                row["notes"][fw] = runners[fw].note
    want = runners[frameworks.HAND].result(runners[frameworks.HAND].call())
    warm = {}
    for fw, r in runners.items():
        t0 = time.perf_counter()
        out = r.call()  # the first call: transforms, traces or compiles
        first = time.perf_counter() - t0
        check.agree(fw, w.NAME, r.result(out), want, problem.rtol)
        row["frameworks"][fw] = {"first_call": first}
        if not tiny and first > 2.0 and fw != frameworks.JAX_JIT:
            warm[fw] = first  # a slow call (not a compilation) has nothing left to warm up
        elif not tiny:
            t0 = time.perf_counter()
            r.call()
            warm[fw] = time.perf_counter() - t0
    log(f"  gradients agree: {', '.join(runners)}")
    if tiny:
        return row
    share = budget / len(runners)
    plan = {fw: (r.call, timing.calls_for(warm[fw], share)) for fw, r in runners.items()}
    load = os.getloadavg()[0]
    times = timing.round_robin(plan)
    row["load"] = (load, os.getloadavg()[0])
    log(f"  load average {load:.2f} before, {row['load'][1]:.2f} after")
    base = times[frameworks.HAND].median
    for fw, t in times.items():
        row["frameworks"][fw].update(
            median=t.median, ratio=t.median / base, calls=len(t.wall), cpu_ratio=t.cpu_ratio
        )
        log(
            f"  {fw:22} {t.median * 1e3:10.3f} ms  {t.median / base:8.2f}x  "
            f"({len(t.wall)} calls, cpu/wall {t.cpu_ratio:.2f})"
        )
    return row


# --------------------------------------------------------------------------- first-call latency


def latency(name: str) -> dict:
    """In this (fresh) process: cpsad's first call of the workload against a warm one, and the
    transformation time of every function it differentiates."""
    os.environ["CPSAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="cpsad-bench-")
    import cpsad
    from cpsad import compiler

    (w,) = by_name(name)
    problem = w.problem(False)
    nums = problem.argnums
    vg = cpsad.value_and_grad(w.loss, nums[0] if len(nums) == 1 else nums)
    t0 = time.perf_counter()
    vg(*problem.args)
    first = time.perf_counter() - t0
    warm = []
    for _ in range(5):
        t0 = time.perf_counter()
        vg(*problem.args)
        warm.append(time.perf_counter() - t0)
    # the transformations the first call made (specialized to the arguments' kinds), not new
    # generic ones made now
    used = cpsad.transform(w.loss, nums[0] if len(nums) == 1 else nums).at(*problem.args)
    specs = compiler.call_graph(used.spec)
    return {
        "first_call": first,
        "warm_call": statistics.median(warm),
        "latency": first - statistics.median(warm),
        "functions": {s.fn.__qualname__: s.seconds for s in specs},
        "passes": {s.fn.__qualname__: s.timings for s in specs},
    }


def latency_in_fresh_process(name: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--latency", name],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(out.stdout)


# --------------------------------------------------------------------------- command line


# --------------------------------------------------------------------------- over a program's life

LIFECYCLE = {
    # a closure made on every step of a training loop: its step against a module-level function's,
    # and the memory 10,000 steps keep
    "closure": ["benchmarks/closure_steps.py", "--steps", "10000", "--json"],
    # a long generated function: its transformation's time and peak memory
    "long": ["benchmarks/long_function.py", "--json"],
    # what cpsad.checkpoint saves in memory and costs in time
    "checkpoint": ["benchmarks/checkpoint.py", "--json"],
    # what `import cpsad` costs, and the first use of its API (fresh interpreters)
    "import": ["benchmarks/import_time.py", "--json"],
    # a logistic regression's step on a Dask cluster, data larger than a worker's memory: cpsad's
    # gradient against one written by hand for Dask (skipped where dask is not installed)
    "dask": ["benchmarks/dask_glm.py", "--json"],
    # cpsad.jit: the scalar loops' gradients compiled by Numba, against the hand-written pass
    "jit": ["benchmarks/jit.py", "--json"],
    # the MLP, CNN and RNN on CuPy arrays against PyTorch on the same GPU (where there is one)
    "gpu": ["benchmarks/gpu.py", "--json"],
    # the Tree-LSTM as a treebank user sees it: every tree new (jax.jit compiles each again)
    "treebank": ["-m", "benchmarks.treebank", "--trees", "3", "--json"],
}


def lifecycle_in_fresh_processes() -> dict:
    """Each of ``LIFECYCLE``'s measurements in a fresh process (JSON on its last line); a
    script that is missing or fails is reported as such."""
    out = {}
    for key, cmd in LIFECYCLE.items():
        script = cmd[1].replace(".", "/") + ".py" if cmd[0] == "-m" else cmd[0]
        if not os.path.exists(os.path.join(ROOT, script)):
            continue
        print(f"{key}: {' '.join(cmd)}", flush=True)
        r = subprocess.run(
            [sys.executable, *cmd], capture_output=True, text=True, cwd=ROOT, check=False
        )
        try:
            out[key] = json.loads(r.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            out[key] = {"error": (r.stderr or r.stdout).strip()[-400:]}
        print(f"  {out[key]}", flush=True)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--only", help="comma-separated workload names (default: all)")
    p.add_argument("--tiny", action="store_true", help="tiny sizes, one checked call, no timing")
    p.add_argument("--budget", type=float, default=30.0, help="seconds of timed calls per workload")
    p.add_argument(
        "--frameworks",
        help=f"comma-separated, of {', '.join(frameworks.KEYS)} (default: all; hand is always run)",
    )
    p.add_argument("--out", help="write the report (markdown) to this file")
    p.add_argument("--latency", metavar="NAME", help=argparse.SUPPRESS)  # the child process
    args = p.parse_args(argv)
    if not args.tiny:
        pin_one_cpu()
    if args.latency:
        print(json.dumps(latency(args.latency)))
        return
    rows = []
    workloads = by_name(args.only)
    # First-call latencies first, each in a fresh process, before minutes of timing leave the
    # machine slower: measured after them, a transformation took up to a quarter longer (while
    # the calls timed beside it took a tenth longer), which is not what a program's first call
    # meets.
    latencies = {} if args.tiny else {w.NAME: latency_in_fresh_process(w.NAME) for w in workloads}
    lifecycle = {} if args.tiny or args.only else lifecycle_in_fresh_processes()
    for w in workloads:
        print(f"{w.NAME}: {w.TITLE}", flush=True)
        row = measure(
            w, args.tiny, args.budget, chosen(args.frameworks), log=lambda s: print(s, flush=True)
        )
        if not args.tiny:
            row["latency"] = lat = latencies[w.NAME]
            print(
                f"  cpsad first call: {lat['latency'] * 1e3:.1f} ms over a warm call; transforming "
                f"{len(lat['functions'])} function(s): "
                + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in lat["functions"].items()),
                flush=True,
            )
        rows.append(row)
    if args.out:
        given = argv if argv is not None else sys.argv[1:]
        command = "python -m benchmarks.run " + shlex.join(given)
        if command.endswith("run --out docs/benchmarks.md"):
            command = "make bench"
        with open(args.out, "w") as fh:
            fh.write(report.markdown(rows, command, lifecycle))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
