"""What glibc's malloc does to a workload's time: each workload's hand-written pass and cpsad's
``value_and_grad`` alone in a loop, in a fresh process each, with malloc as it comes and as the
benchmark pins it (``benchmarks.keep_freed_memory``), and the minor page faults a call.

    python -m benchmarks.allocator --only CNN,RNN --processes 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from benchmarks import frameworks


def one(workload: str, who: str, calls: int) -> dict:
    """Time ``calls`` calls of one framework in this process (20 calls first, not timed)."""
    import resource
    import time

    from benchmarks.workloads import ALL

    module = next(m for m in ALL if m.NAME == workload)
    runner = frameworks.make(who, module, module.problem(False))
    for _ in range(20):
        runner.call()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    for _ in range(calls):
        runner.call()
    seconds = (time.perf_counter() - start) / calls
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / calls
    return {"us": seconds * 1e6, "faults": faults}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="CNN,RNN,MLP,TreeLSTM")
    p.add_argument("--processes", type=int, default=2, help="fresh processes per cell")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--one", help=argparse.SUPPRESS)  # (a child: WORKLOAD,FRAMEWORK)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one.split(","), args.calls)))
        return
    print("| workload | framework | malloc | us a call | page faults a call |")
    print("|---|---|---|---|---|")
    for workload in args.only.split(","):
        for who in (frameworks.HAND, frameworks.CPSAD):
            for malloc in ("default", "pinned"):
                env = {**os.environ, "CPSAD_BENCH_MALLOC": malloc}
                cells = []
                for _ in range(args.processes):
                    child = [sys.executable, "-m", "benchmarks.allocator", "--calls"]
                    child += [str(args.calls), "--one", f"{workload},{who}"]
                    out = subprocess.run(child, env=env, capture_output=True, text=True, check=True)
                    cells.append(json.loads(out.stdout.strip().splitlines()[-1]))
                us = ", ".join(f"{c['us']:.0f}" for c in cells)
                faults = ", ".join(f"{c['faults']:.0f}" for c in cells)
                print(f"| {workload} | {who.split()[0]} | {malloc} | {us} | {faults} |", flush=True)


if __name__ == "__main__":
    main()
