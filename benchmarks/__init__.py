"""Benchmarks of cpsad against a hand-written backward pass and its peers (``make bench``).

Importing the package asks for one thread *before* numpy, torch or jax is imported: the BLAS and
OpenMP thread counts are set to 1 and XLA is asked for one thread. ``pin_one_cpu`` then binds
the process to one CPU before anything is timed: XLA's CPU client sizes its thread pool from the
CPUs the process may use when it first runs, and otherwise uses both cores of this machine for a
matrix product whatever the flags say.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()


def pin_one_cpu() -> int | None:
    """Bind this process to one of the CPUs it may use (the lowest); which one, if it could."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu
