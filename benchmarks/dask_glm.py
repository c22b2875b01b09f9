"""cpsad's gradient on Dask against a hand-written Dask gradient and dask-glm's: time per step,
peak memory.

    python benchmarks/dask_glm.py                    # 20 million rows x 20 features, 2 workers
    python benchmarks/dask_glm.py --rows 2000000     # smaller
    python benchmarks/dask_glm.py --json             # one JSON line last (make bench reads it)

The model and data are examples/dask_glm.py's: logistic regression, rows generated lazily chunk
by chunk (3.2 GB at the default size), on a ``distributed.LocalCluster`` of 2 single-threaded
workers with a memory limit (1 GB each) below the data's size. A step is the loss and its
gradient in the weights, evaluated by one ``dask.compute``:

* cpsad: ``cpsad.value_and_grad(loss)(w, X, y)`` -- the backpropagator of the numpy loss,
  run on Dask arrays;
* by hand: the same loss and ``[sum(r), X.T @ r + penalty * w[1:]]`` with ``r = (sigmoid(z) - y)
  / n``, written for Dask (what one writes without AD);
* dask-glm (where it is installed: ``pip install dask-glm``, in the ``bench`` extra): the same
  model through ``dask_glm.families.Logistic`` -- its ``loglike`` and ``gradient`` of the rows
  with a column of ones appended by ``dask_glm.utils.add_intercept`` (how dask-glm fits an
  intercept), divided by ``n``, with the penalty on the slopes added.

They run in alternation, each phase on a fresh cluster, so that the peak resident memory of each
worker process (``VmHWM``, reset when the workers start: see examples/dask_glm.py ``reset_peak_memory``) belongs to one
of them. The gradients are checked to agree first.
Timing: the median step of each; the ratio cpsad / by hand (target: within 1.2x), and cpsad /
dask-glm.

dask-glm 0.4.0 (2026) installs from the package index with numpy 2.4 and dask 2026.8 and runs:
it brings numba, llvmlite, scikit-learn, sparse and multipledispatch.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    spec = importlib.util.spec_from_file_location(
        "dask_glm_example", os.path.join(ROOT, "examples", "dask_glm.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def hand_value_and_grad(w, X, y, penalty=1e-4):
    """The loss of examples/dask_glm.py and its gradient, written by hand for Dask."""
    z = X @ w[1:] + w[0]
    value = np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * penalty * np.sum(w[1:] ** 2)
    r = (1.0 / (1.0 + np.exp(-z)) - y) / X.shape[0]
    grad = np.concatenate([np.sum(r)[None], X.T @ r + penalty * w[1:]])
    return value, grad


def dask_glm_value_and_grad(w, X, y, penalty=1e-4):
    """The same loss and gradient by dask-glm's logistic family, as dask-glm fits an intercept:
    a column of ones appended to the rows (the intercept last in its coefficients)."""
    families, utils = _dask_glm()
    n = X.shape[0]
    X1 = utils.add_intercept(X)
    z = X1.dot(np.concatenate([w[1:], w[:1]]))
    value = families.Logistic.loglike(z, y) / n + 0.5 * penalty * np.sum(w[1:] ** 2)
    g = families.Logistic.gradient(z, X1, y) / n
    return value, np.concatenate([g[-1:], g[:-1] + penalty * w[1:]])


_DASK_GLM: list = []


def _dask_glm():
    """dask-glm's ``families`` and ``utils`` modules, or None where it is not installed. This
    file and examples/dask_glm.py have its name: it is imported with their folders off
    ``sys.path`` (``python benchmarks/dask_glm.py`` puts this one first)."""
    if not _DASK_GLM:
        import importlib

        mine = {os.path.join(ROOT, "benchmarks"), os.path.join(ROOT, "examples")}
        saved = sys.path[:]
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) not in mine]
        try:
            found = importlib.import_module("dask_glm.families"), importlib.import_module(
                "dask_glm.utils"
            )
        except ImportError:
            found = None
        finally:
            sys.path[:] = saved
        _DASK_GLM.append(found)
    return _DASK_GLM[0]


def phase(step, X, y, w, steps, workers, memory_limit, persist=False):
    """``steps`` steps of ``step`` on a fresh cluster: (seconds of each step, each worker's peak
    resident memory in MB). ``persist``: the data generated once and kept in the workers' memory
    (what is left of a step is the loss and the gradient alone)."""
    import dask
    from distributed import Client, LocalCluster, wait

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            memory_limit=memory_limit,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        example = _example()  # (its measures of the workers' memory: one copy of them)
        example.reset_peak_memory(client)
        if persist:
            X, y = client.persist([X, y])
            wait([X, y])
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            value, g = dask.compute(*step(w, X, y))
            times.append(time.perf_counter() - t0)
            w = w - 2.0 * np.asarray(g)
        peaks = sorted(example.peak_memory_mb(client).values())
    return times, peaks


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", type=int, default=20_000_000)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--chunk", type=int, default=250_000)
    p.add_argument("--steps", type=int, default=3, help="steps per phase (two phases each)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="1GB")
    p.add_argument("--persist", action="store_true", help="data generated once, kept in memory")
    p.add_argument("--json", action="store_true", help="print one JSON line last")
    args = p.parse_args(argv)

    import dask

    import cpsad

    glm = _example()
    X, y, _ = glm.make_data(args.rows, args.features, args.chunk)
    w = np.random.default_rng(0).normal(size=args.features + 1) * 0.1
    ours = cpsad.value_and_grad(glm.loss)

    # the gradients agree (on a part of the data, in this process)
    Xs, ys = X[: args.chunk * 2], y[: args.chunk * 2]
    steps = {"cpsad": ours, "hand": hand_value_and_grad}
    if _dask_glm() is not None:
        steps["dask_glm"] = dask_glm_value_and_grad
    else:
        print("  dask-glm is not installed (pip install dask-glm): not measured", flush=True)
    a = dask.compute(*ours(w, Xs, ys), scheduler="threads")
    for name, step in steps.items():
        b = dask.compute(*step(w, Xs, ys), scheduler="threads")
        np.testing.assert_allclose(a[0], b[0], rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-9, atol=1e-14, err_msg=name)

    results = {name: {"times": [], "peaks": []} for name in steps}
    for _ in range(2):  # cpsad, hand, dask-glm, cpsad, ...: each phase on a fresh cluster
        for name, step in steps.items():
            times, peaks = phase(
                step, X, y, w, args.steps, args.workers, args.memory_limit, args.persist
            )
            print(
                f"  {name:8s} steps {', '.join(f'{t:.2f}' for t in times)} s; "
                f"peak memory per worker {', '.join(f'{m:.0f}' for m in peaks)} MB",
                flush=True,
            )
            results[name]["times"] += times
            results[name]["peaks"].append(peaks)
    out = {
        "rows": args.rows,
        "features": args.features,
        "chunk": args.chunk,
        "gb": X.nbytes / 1e9,
        "workers": args.workers,
        "memory_limit": args.memory_limit,
        "steps": 2 * args.steps,
        "persist": args.persist,
    }
    for name, r in results.items():
        out[name] = {
            "median_s": statistics.median(r["times"]),
            "peak_mb": max(max(p) for p in r["peaks"]),
        }
    out["ratio"] = out["cpsad"]["median_s"] / out["hand"]["median_s"]
    theirs = ""
    if "dask_glm" in out:
        out["ratio_dask_glm"] = out["cpsad"]["median_s"] / out["dask_glm"]["median_s"]
        theirs = (
            f"; dask-glm's {out['dask_glm']['median_s']:.2f} s ({out['ratio_dask_glm']:.2f}x), "
            f"{out['dask_glm']['peak_mb']:.0f} MB"
        )
    print(
        f"dask_glm: {args.rows:,} x {args.features} ({out['gb']:.1f} GB) on {args.workers} workers "
        f"of {args.memory_limit}: a step {out['cpsad']['median_s']:.2f} s with cpsad, "
        f"{out['hand']['median_s']:.2f} s by hand ({out['ratio']:.2f}x); peak memory per worker "
        f"{out['cpsad']['peak_mb']:.0f} MB and {out['hand']['peak_mb']:.0f} MB{theirs}"
    )
    if args.json:
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
