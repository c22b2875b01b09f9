"""Interleaved round-robin timing: each framework's call in turn, round after round; the median.

Interleaving spreads slow drifts of the machine (frequency, other processes, the allocator's
state) over every framework alike instead of charging them to whichever ran last. Frameworks
differ by four orders of magnitude on one workload, so each gets its own number of calls -- as
many as fit its share of the time budget -- spread evenly over the rounds: a call of 4 s runs in
every round, a call of 1 ms in each of a few hundred.

Each call's process CPU time is recorded too: on one thread it equals the wall time, so a ratio
well above 1 would betray a framework that escaped the one-thread setting.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Timings:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_ratio(self) -> float:
        return sum(self.cpu) / sum(self.wall)


def calls_for(seconds: float, share: float, least: int = 5, most: int = 500) -> int:
    """How many calls of ``seconds`` each fit ``share`` seconds, between ``least`` and ``most``
    (at least 3 for a call of more than 5 s)."""
    if seconds > 5.0:
        least = 3
    return max(least, min(most, int(share / max(seconds, 1e-9))))


def round_robin(calls: dict[str, tuple[Callable[[], object], int]]) -> dict[str, Timings]:
    """Time each ``name: (call, n)`` n times, interleaved: in every round each framework that is
    due runs once, in turn, in an order drawn anew for each round.

    The objects alive before timing (the frameworks' modules: a full collection takes 0.4 s with
    torch and jax loaded) are frozen out of the collector; the rest is collected between rounds,
    so that no call pays for another's garbage.
    """
    rounds = max(n for _, n in calls.values())
    out = {name: Timings() for name in calls}
    clock, cpu = time.perf_counter, time.process_time
    gc.collect()
    gc.freeze()
    try:
        _rounds(calls, rounds, out, clock, cpu)
    finally:
        gc.unfreeze()
    return out


def _rounds(calls, rounds, out, clock, cpu) -> None:
    names = list(calls)
    order = random.Random(0)  # (seeded: a run is repeatable)
    for r in range(rounds):
        gc.collect()
        # each round in an order of its own: no framework always follows the same one, whose
        # garbage and allocations it would meet (in a fixed order, or one only rotated, the
        # Tree-LSTM's same code measured 6.2 and 5.5 ms a call as the two frameworks after
        # the hand-written pass)
        order.shuffle(names)
        for name in names:
            call, n = calls[name]
            if (r + 1) * n // rounds == r * n // rounds:
                continue  # not due this round: its n calls are spread over the rounds
            c0, t0 = cpu(), clock()
            call()
            t1, c1 = clock(), cpu()
            out[name].wall.append(t1 - t0)
            out[name].cpu.append(c1 - c0)
