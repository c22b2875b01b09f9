"""cpsad on a GPU: the MLP, CNN and RNN workloads' value and gradient on CuPy arrays, against
PyTorch on the same GPU (float64 both, as on the CPU).

    python benchmarks/gpu.py            # a table
    python benchmarks/gpu.py --json     # one JSON line (for benchmarks/run.py)

cpsad's code is the workload's numpy ``loss`` unchanged: its arguments are CuPy arrays, and the
backpropagator's numpy calls dispatch to CuPy (docs/backends.md). Each call ends with a
synchronization of the device, so the time is the GPU's work, not the launch. Before timing,
both gradients are checked against the hand-written numpy pass on the host.

Where CuPy, a GPU or a CUDA build of PyTorch is missing, it says so (and ``--json`` prints
``{"skipped": reason}``): no number is made up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKLOADS = ("mlp", "cnn", "rnn")


def unavailable() -> str | None:
    """Why the benchmark cannot run here (None: it can)."""
    from tests.gpu import gpu_reason

    reason = gpu_reason()
    if reason is not None:
        return reason
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "this PyTorch has no CUDA device"
    return None


def _tree(x, leaf):
    if isinstance(x, dict):
        return {k: _tree(v, leaf) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_tree(v, leaf) for v in x)
    return leaf(x)


def _leaves(x) -> list:
    if isinstance(x, dict):
        return [v for e in x.values() for v in _leaves(e)]
    if isinstance(x, (tuple, list)):
        return [v for e in x for v in _leaves(e)]
    return [x]


def _median_ms(call, sync, seconds: float) -> float:
    for _ in range(3):  # (warm: kernels compiled, memory pool filled)
        call()
        sync()
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        t0 = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def measure(name: str, seconds: float, device: str = "cuda") -> dict:
    import cupy
    import torch

    import cpsad
    from benchmarks import workloads

    w = getattr(workloads, name)
    problem = w.problem(False)
    argnums = problem.argnums
    want = w.handwritten(*problem.args)

    gpu_args = [
        _tree(a, lambda v: cupy.asarray(v) if isinstance(v, np.ndarray) else v)
        for a in problem.args
    ]
    vg = cpsad.value_and_grad(w.loss, argnums[0] if len(argnums) == 1 else argnums)

    def cpsad_call():
        return vg(*gpu_args)

    sync = cupy.cuda.Device().synchronize
    _, got = cpsad_call()
    got_host = [cupy.asnumpy(g) if isinstance(g, cupy.ndarray) else g for g in _leaves(got)]
    want_grads = want[1]
    for g, e in zip(got_host, _leaves(want_grads)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)

    leaves: list = []

    def to_torch(i, a):
        def leaf(v):
            if not isinstance(v, np.ndarray):
                return v
            t = torch.tensor(v, dtype=torch.float64, device=device)
            if i in argnums:
                t.requires_grad_(True)
                leaves.append(t)
            return t

        return _tree(a, leaf)

    torch_args = [to_torch(i, a) for i, a in enumerate(problem.args)]

    def torch_call():
        value = w.torch_loss(*torch_args)
        return value, torch.autograd.grad(value, leaves)

    _, tgrads = torch_call()
    for g, e in zip(tgrads, _leaves(want_grads)):
        np.testing.assert_allclose(g.detach().cpu().numpy(), e, rtol=1e-6, atol=1e-9)

    cpsad_ms = _median_ms(cpsad_call, sync, seconds)
    sync_torch = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    torch_ms = _median_ms(torch_call, sync_torch, seconds)
    return {
        "workload": w.NAME,
        "cpsad_ms": cpsad_ms,
        "torch_ms": torch_ms,
        "ratio": cpsad_ms / torch_ms,
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--seconds", type=float, default=5.0, help="timed calls per framework")
    a = p.parse_args(argv)
    reason = unavailable()
    if reason is not None:
        if a.json:
            print(json.dumps({"skipped": reason}))
        else:
            print(f"not run: {reason}")
        return
    import cupy

    rows = [measure(n, a.seconds) for n in WORKLOADS]
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    device = device.decode() if isinstance(device, bytes) else device
    if a.json:
        print(json.dumps({"device": device, "rows": rows}))
        return
    print(f"{device}, float64; median of a value-and-gradient call, device synchronized")
    for r in rows:
        print(
            f"  {r['workload']:8s} cpsad {r['cpsad_ms']:8.3f} ms   PyTorch {r['torch_ms']:8.3f} "
            f"ms   {r['ratio']:.2f}x"
        )


if __name__ == "__main__":
    main()
