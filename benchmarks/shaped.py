"""cpsad.shaped against the generic backpropagator, on the same workloads, as an A/B: the
hand-written pass, the generic and the staged code timed in turn, the order reversed every other
round; the medians' ratios to the hand-written pass.

    python -m benchmarks.shaped --only MLP,RNN,CNN,TreeLSTM --rounds 16
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import cpsad
from benchmarks.run import by_name


def _time(fn, args, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - t0) / n


def ab(workloads, rounds: int, seconds: float = 0.15) -> dict:
    """``{workload name: {"hand": s, "generic": ratio, "shaped": ratio}}`` (medians)."""
    made = {}
    for w in workloads:
        pb = w.problem(False)
        nums = pb.argnums[0] if len(pb.argnums) == 1 else pb.argnums
        generic = cpsad.value_and_grad(w.loss, argnums=nums)
        shaped = cpsad.value_and_grad(cpsad.shaped(w.loss), argnums=nums)
        generic(*pb.args), shaped(*pb.args)
        made[w.NAME] = (
            [("hand", w.handwritten), ("generic", generic), ("shaped", shaped)],
            pb.args,
        )
    times: dict = {}
    for r in range(rounds):
        for name, (fns, args) in made.items():
            n = max(3, int(seconds / _time(fns[0][1], args, 2)))
            for which, fn in fns if r % 2 else fns[::-1]:
                times.setdefault((name, which), []).append(_time(fn, args, n))
    out = {}
    for name in made:
        hand = float(np.median(times[(name, "hand")]))
        out[name] = {"hand": hand}
        for which in ("generic", "shaped"):
            out[name][which] = float(np.median(times[(name, which)])) / hand
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="MLP,RNN,CNN,TreeLSTM")
    p.add_argument("--rounds", type=int, default=16)
    a = p.parse_args(argv)
    for name, r in ab(by_name(a.only), a.rounds).items():
        print(
            f"{name}: hand {r['hand'] * 1e3:.3f} ms, generic {r['generic']:.3f}x, "
            f"shaped {r['shaped']:.3f}x (medians of {a.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
