"""Benchmarks of cpsad against a hand-written backward pass and its peers (``make bench``).

Importing the package asks for one thread *before* numpy, torch or jax is imported: the BLAS and
OpenMP thread counts are set to 1 and XLA is asked for one thread. ``pin_one_cpu`` then binds
the process to one CPU before anything is timed: XLA's CPU client sizes its thread pool from the
CPUs the process may use when it first runs, and otherwise uses both cores of this machine for a
matrix product whatever the flags say.

It also keeps glibc's malloc from handing freed memory back to the system (``keep_freed_memory``):
by default it returns the top of its heap once more than about twice the largest block freed so
far lies free there, and then every call of a workload faults its big arrays in again, page by
page. Whether that happens depends on the order of the process's earlier allocations and frees,
not on the code timed: the hand-written CNN pass, run alone in a loop, faults 771 pages a call
and takes 1.9 ms, against 0.46 ms when it does not; cpsad's CNN backpropagator took 2.3 ms or
0.53 ms in one process or the next, the same code (docs/performance.md, "The allocator").
Pinned, no workload's time depends on which ran before it.
"""

import ctypes
import ctypes.util
import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep what is freed for the next allocation: blocks up to 32 MiB (its
    most) from the heap, not each one mapped afresh, and the heap's top kept up to 1 GiB.
    Whether it could (False: not glibc, e.g. macOS, where nothing is changed)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(M_TRIM_THRESHOLD, 1 << 30))


# (``CPSAD_BENCH_MALLOC=default`` leaves it as it is: ``python -m benchmarks.allocator`` compares)
MALLOC_PINNED = os.environ.get("CPSAD_BENCH_MALLOC") != "default" and keep_freed_memory()


def pin_one_cpu() -> int | None:
    """Bind this process to one of the CPUs it may use (the lowest); which one, if it could."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu
