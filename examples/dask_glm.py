"""Logistic regression on more data than a worker's memory, by full-batch gradient descent on a
Dask cluster: the loss is plain numpy code, its gradient cpsad's backpropagator, run on Dask arrays.

    python examples/dask_glm.py            # 20 million rows x 20 features (3.2 GB) on 2 workers
                                           # of 1 GB each: 15 steps, a few minutes on 2 cores
    python examples/dask_glm.py --quick    # 200,000 rows, seconds
    python examples/dask_glm.py --rows 5000000 --steps 40 --memory-limit 500MB

The data are generated lazily (``dask.array.random``), chunk by chunk, never whole: each step
is one Dask graph -- generate a chunk of rows, its part of the loss and of the gradient, sum the
parts -- evaluated on a ``distributed.LocalCluster``. numpy dispatches ``X @ w``, ``np.logaddexp``
and ``np.mean`` on a Dask array to Dask (NEP 18 and 13), and so does every line of the
backpropagator cpsad writes for ``loss``: ``cpsad.value_and_grad(loss)(w, X, y)`` returns the
loss and the gradient as lazy Dask arrays, and ``dask.compute`` evaluates both in one graph.
The same model trained on an in-memory sample with numpy arrays reaches the same weights.
"""

import os
import resource
import time

import numpy as np
from common import one_blas_thread, parser, progress_bar, save_curves

import cpsad

# the functions whose backpropagators are committed as snapshots, and what they differentiate
BACKPROPAGATORS = {"loss": "w"}


def loss(w, X, y, penalty=1e-4):
    """The mean logistic loss of the weights ``w`` (``w[0]`` the intercept) on rows ``X`` with
    labels ``y`` in {0, 1}, and an L2 penalty on the slopes: ``log(1 + e^z) - y z``, written as
    ``np.logaddexp(0, z)`` so that it does not overflow."""
    z = X @ w[1:] + w[0]
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * penalty * np.sum(w[1:] ** 2)


def make_data(rows, features, chunk, seed=0):
    """``(X, y, w_true)``: rows of standard normal features and labels drawn from a logistic
    model with weights ``w_true`` -- lazy Dask arrays in chunks of ``chunk`` rows, each chunk
    generated when a computation needs it (from its own seed: the same numbers every time)."""
    import dask.array as da

    w_true = np.random.default_rng(seed).normal(0.0, 1.0, features + 1) / np.sqrt(features)
    rng = da.random.default_rng(seed + 1)
    X = rng.standard_normal((rows, features), chunks=(chunk, features))
    p = 1.0 / (1.0 + np.exp(-(X @ w_true[1:] + w_true[0])))
    y = (rng.random(rows, chunks=chunk) < p).astype(np.float64)
    return X, y, w_true


def train(X, y, steps, lr, on_step=None):
    """Full-batch gradient descent from zeros: ``(w, losses)``. Each step evaluates the loss and
    the gradient together -- one graph, ``dask.compute`` -- or, on numpy arrays, directly."""
    import dask

    value_and_grad = cpsad.value_and_grad(loss)
    w = np.zeros(X.shape[1] + 1)
    losses = []
    for _ in range(steps):
        value, g = dask.compute(*value_and_grad(w, X, y))  # (numpy values pass through)
        w = w - lr * np.asarray(g)
        losses.append(float(value))
        if on_step is not None:
            on_step(losses[-1])
    return w, losses


def reset_peak_memory(client) -> None:
    """Start each worker's peak resident memory from now: a worker inherits the peak of the
    process that started it (``ru_maxrss`` and ``VmHWM`` read this one's, its data and imports
    included). Linux: writing 5 to /proc/self/clear_refs resets VmHWM."""

    def reset():
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    client.run(reset)


def peak_memory_mb(client) -> dict:
    """Each worker process's peak resident memory since ``reset_peak_memory``, in MB (VmHWM;
    elsewhere than Linux ``ru_maxrss``, since the worker started)."""

    def peak():
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux

    return {addr.rsplit(":", 1)[-1]: round(mb) for addr, mb in client.run(peak).items()}


def check_on_sample(X, y, rows, steps, lr):
    """The largest difference between the weights of the same descent on an in-memory sample of
    ``rows`` rows: on chunked Dask arrays (in this process) and on numpy arrays."""
    import dask
    import dask.array as da

    Xs, ys = X[:rows].compute(), y[:rows].compute()
    w_numpy, _ = train(Xs, ys, steps, lr)
    chunk = max(rows // 4, 1)
    with dask.config.set(scheduler="threads"):  # (not the cluster: the sample is in memory here)
        Xd, yd = da.from_array(Xs, chunks=(chunk, -1)), da.from_array(ys, chunks=chunk)
        w_dask, _ = train(Xd, yd, steps, lr)
    return float(np.max(np.abs(w_dask - w_numpy)))


@one_blas_thread
def main(argv=None):
    p = parser(__doc__, rows=20_000_000, features=20, chunk=250_000, steps=15, lr=2.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="1GB", help="per worker (default 1GB)")
    args = p.parse_args(argv)
    if args.quick:  # (and the workers threads of this process: a cluster that starts at once)
        args.rows, args.chunk, args.steps = 100_000, 25_000, 8
    import dask
    from distributed import Client, LocalCluster

    X, y, w_true = make_data(args.rows, args.features, args.chunk, args.seed)
    size_gb = X.nbytes / 1e9
    t0 = time.perf_counter()
    with (
        dask.config.set({"distributed.worker.daemon": False}),
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            # (quick: the workers are threads of this process, whose memory -- a test session's,
            # say -- is not theirs: a limit would pause them, and the computation would wait)
            memory_limit=0 if args.quick else args.memory_limit,
            dashboard_address=None,
            processes=not args.quick,
        ) as cluster,
        Client(cluster) as client,
    ):
        print(
            f"dask_glm: {args.rows:,} rows x {args.features} features ({size_gb:.2f} GB, "
            f"{X.numblocks[0]} chunks) on {args.workers} workers "
            + ("(threads of this process)" if args.quick else f"of {args.memory_limit} each")
        )
        if not args.quick:
            reset_peak_memory(client)
        bar = progress_bar(args.steps, "dask_glm", show=not args.no_progress)

        def on_step(value):
            bar.set_postfix(loss=f"{value:.5f}", refresh=False)
            bar.update()

        w, losses = train(X, y, args.steps, args.lr, on_step)
        bar.close()
        seconds = time.perf_counter() - t0
        peaks = peak_memory_mb(client) if not args.quick else "n/a (workers in this process)"
        sample = min(args.rows, 100_000 if not args.quick else 20_000)
        gap = check_on_sample(X, y, sample, 5, args.lr)
    png = save_curves(
        os.path.join(args.out, "dask_glm.png"),
        f"logistic regression, {args.rows:,} x {args.features}, on Dask",
        {"training loss": {"cpsad on Dask": (list(range(1, len(losses) + 1)), losses)}},
        xlabel="step",
    )
    error = float(np.max(np.abs(w - w_true)))
    print(
        f"dask_glm: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps, "
        f"{seconds:.1f} s ({seconds / args.steps:.2f} s a step); peak memory per worker (MB): "
        f"{peaks}; |w - w_true| <= {error:.3f}; on a {sample:,}-row sample, Dask and numpy "
        f"weights differ by {gap:.1e}; curve in {png}"
    )
    return {"losses": losses, "w": w, "w_true": w_true, "peaks": peaks, "gap": gap}


if __name__ == "__main__":
    main()
