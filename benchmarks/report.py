"""The results as markdown: the machine, the command, the tables, the reference numbers."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from importlib import metadata

import numpy as np

import benchmarks
from benchmarks import frameworks
from benchmarks.workloads import ALL

# The peer measurements on this class of machine (ratio to hand-written numpy), and
# cpsad's targets, by workload.
REFERENCE = {
    "scalar loop": {"autograd": 139, "PyTorch": 61, "jax eager": 2000, "jax jit": 0.13},
    "100k loop": {"autograd": 252, "PyTorch": 85},
    "MLP": {"autograd": 1.55, "PyTorch": 1.42, "jax jit": 1.07},
    "RNN": {"autograd": 3.6, "PyTorch": 1.85, "jax jit": 1.10},
    "TreeLSTM": {"autograd": 9.7, "PyTorch": 3.1},
    "CNN": {"autograd": 1.25, "PyTorch": 0.80, "jax jit": 0.38},
}
TARGET = {
    "scalar loop": 1.5,
    "100k loop": 2.0,
    "MLP": 1.15,
    "RNN": 1.15,
    "TreeLSTM": 1.3,
    "CNN": 1.15,
}
# staging's targets (issue 18, Part 2), for the backpropagator staged at shapes (cpsad.shaped):
# a ratio to the hand-written pass, and whether it must be faster than jax.jit
STAGED_TARGET = {
    "MLP": (1.05, True),
    "RNN": (1.05, True),
    "TreeLSTM": (1.3, False),
    "CNN": (1.15, True),
}
LATENCY_TARGET = 0.050  # seconds per function


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def blas() -> str:
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return (
            f"{info.get('name')} {info.get('version')} ({info.get('openblas configuration', '')})"
        )
    except Exception:  # numpy < 1.26 has no dict mode
        return "see np.show_config()"


def machine() -> list[str]:
    return [
        f"- CPU: {cpu_model()}; {os.cpu_count()} cores on the machine, the benchmark pinned to one "
        "(one thread everywhere: `OMP/MKL/OPENBLAS_NUM_THREADS=1`, `torch.set_num_threads(1)`, "
        "`XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1`, and the "
        "process bound to one CPU, since XLA's CPU client otherwise uses both for a matrix product)",
        "- glibc's malloc keeps freed memory (`mallopt`: blocks up to 32 MiB from the heap, its top "
        "kept up to 1 GiB): "
        + ("set" if benchmarks.MALLOC_PINNED else "not glibc, left as it is")
        + ". By default it may give the heap's top back after each call, and the next faults it "
        "in again: 2-4x on the CNN and RNN, by the order of earlier allocations, not the code",
        f"- OS: {platform.platform()}",
        f"- Python {platform.python_version()} ({sys.implementation.name})",
        f"- numpy {np.__version__}, BLAS: {blas()}",
        f"- cpsad {version('cpsad')}, autograd {version('autograd')}, torch {version('torch')}, "
        f"jax {version('jax')}, jaxlib {version('jaxlib')}",
    ]


def seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def ratio(r: float) -> str:
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x" if r >= 100 else f"{r:.1f}x"


def lifecycle_section(lifecycle: dict) -> list[str]:
    """What a transformation costs over a program's life: closures made on every step, long
    functions (``benchmarks/run.py``'s ``LIFECYCLE``)."""
    if not lifecycle:
        return []
    out = ["", "## Over a program's life", ""]
    c = lifecycle.get("closure")
    if c and "ratio" in c:
        flat = max(c["held_kb"]) - min(c["held_kb"]) if c["held_kb"] else 0.0
        out += [
            "`cpsad.grad(lambda w: loss(w, X, y))(w)` made anew on every step, against",
            "`cpsad.grad(loss)(w, X, y)` made once (`benchmarks/closure_steps.py`): the closure's",
            "code is transformed once and each new closure linked to it. Target: a step within",
            "1.5x, memory flat.",
            "",
            "| step of the module-level function | step of a fresh closure | ratio | memory held "
            f"after each 1,000 of {c['steps']:,} steps (KiB) | |",
            "|---:|---:|---:|---|---|",
            f"| {c['module_us']:.1f} us | {c['closure_us']:.1f} us | {c['ratio']:.2f}x | "
            + ", ".join(f"{h:.1f}" for h in c["held_kb"])
            + f" | {'met' if c['ratio'] <= 1.5 and flat < 64 else '**missed**'} |",
            "",
        ]
    elif c:
        out += [f"closure steps: failed ({c.get('error', '?')})", ""]
    g = lifecycle.get("long")
    if g and "rows" in g:
        out += [
            "A generated straight-line function of n lines (`benchmarks/long_function.py`),",
            "transformed in a fresh process for the argument kinds a call brings (floats, arrays,",
            "none known as for `cpsad.transform`): the slowest kind's time, each kind's, the peak",
            "memory (tracemalloc), and the passes that take most of the slowest. Target at 2,000",
            "lines: under 2 s and 200 MB.",
            "",
            "| lines | seconds (slowest) | floats / arrays / none (s) | peak MB | dearest passes (s) |",
            "|---:|---:|---|---:|---|",
        ]
        for r in g["rows"]:
            dear = ", ".join(
                f"{k} {v:.2f}" for k, v in sorted(r["passes"].items(), key=lambda kv: -kv[1])[:3]
            )
            kinds = " / ".join(f"{v:.2f}" for v in r.get("kinds", {}).values())
            out.append(
                f"| {r['n']:,} | {r['seconds']:.2f} | {kinds} | {r['peak_mb']:.0f} | "
                f"{r.get('slowest', '')}: {dear} |"
            )
        out.append("")
    elif g:
        out += [f"long functions: failed ({g.get('error', '?')})", ""]
    k = lifecycle.get("checkpoint")
    if k and "plain" in k:
        out += [
            "`cpsad.checkpoint(block)` in a chain of 8 blocks, each making 5 temporaries the size",
            f"of x ({k['n']:,} float64, `benchmarks/checkpoint.py`): the gradient's peak memory",
            "(tracemalloc) and time, the block's forward pass run again in the backward pass.",
            "",
            "| | peak MB | ms |",
            "|---|---:|---:|",
            f"| plain | {k['plain']['peak_mb']:.0f} | {k['plain']['seconds'] * 1e3:.0f} |",
            f"| checkpointed | {k['checkpointed']['peak_mb']:.0f} | "
            f"{k['checkpointed']['seconds'] * 1e3:.0f} |",
            f"| ratio | {k['memory_ratio']:.2f}x | {k['time_ratio']:.2f}x |",
            "",
        ]
    elif k:
        out += [f"checkpoint: failed ({k.get('error', '?')})", ""]
    m = lifecycle.get("import")
    if m and "import_cpsad" in m:
        met = "met" if m["import_cpsad"] < m["target"] else "**missed**"
        out += [
            "`import cpsad`, and the first use of its API that loads the rest (the pipeline, the",
            f"rules), in fresh interpreters (`benchmarks/import_time.py`, median of {m['runs']}).",
            f"Target: `import cpsad` under {m['target'] * 1e3:.0f} ms.",
            "",
            "| import cpsad | cpsad.grad, first use | import numpy, for scale | |",
            "|---:|---:|---:|---|",
            f"| {m['import_cpsad'] * 1e3:.1f} ms | {m['first_use'] * 1e3:.0f} ms | "
            f"{m['import_numpy'] * 1e3:.0f} ms | {met} |",
            "",
        ]
    elif m:
        out += [f"import time: failed ({m.get('error', '?')})", ""]
    d = lifecycle.get("dask")
    if d and "ratio" in d:
        met = "met" if d["ratio"] <= 1.2 else "**missed**"
        out += [
            f"Logistic regression on {d['rows']:,} lazily generated rows x {d['features']} features",
            f"({d['gb']:.1f} GB) on a Dask `LocalCluster` of {d['workers']} workers of "
            f"{d['memory_limit']} each",
            "(`benchmarks/dask_glm.py`, examples/dask_glm.py's model): a step -- the loss and its",
            "gradient, one `dask.compute` -- with cpsad's backpropagator of the numpy loss, against",
            "the gradient written by hand for Dask; the median of "
            f"{d['steps']} steps each, and each worker's peak",
            "resident memory. Target: within 1.2x. ([backends.md](backends.md))",
            "",
            "| step, cpsad | step, by hand | ratio | peak memory per worker, cpsad | by hand | |",
            "|---:|---:|---:|---:|---:|---|",
            f"| {d['cpsad']['median_s']:.2f} s | {d['hand']['median_s']:.2f} s | "
            f"{d['ratio']:.2f}x | {d['cpsad']['peak_mb']:.0f} MB | {d['hand']['peak_mb']:.0f} MB "
            f"| {met} |",
            "",
        ]
        if "dask_glm" in d:
            out += [
                f"dask-glm's gradient of the same model (`dask_glm.families.Logistic`): a step "
                f"{d['dask_glm']['median_s']:.2f} s, peak memory per worker "
                f"{d['dask_glm']['peak_mb']:.0f} MB; cpsad / dask-glm {d['ratio_dask_glm']:.2f}x.",
                "",
            ]
    elif d:
        out += [f"dask: failed ({d.get('error', '?')})", ""]
    out += _jit_lines(lifecycle.get("jit"))
    out += _gpu_lines(lifecycle.get("gpu"))
    out += _treebank_lines(lifecycle.get("treebank"))
    return out


def _treebank_lines(t) -> list[str]:
    """The Tree-LSTM over distinct trees (``benchmarks/treebank.py``): each call the first for
    its tree, as training on a treebank meets them."""
    if not t:
        return []
    if "rows" not in t:
        return ["", f"- treebank: failed ({t.get('error', '?')})"]
    cells = ", ".join(
        f"{fw} {sum(ts) / len(ts) * 1e3:,.1f} ms" for fw, ts in t["rows"].items() if ts
    )
    return [
        "",
        f"- **Tree-LSTM over a treebank** (`benchmarks/treebank.py`: {t['trees']} distinct random "
        "trees of 32 words, each call the first for its tree -- jax.jit's trace unrolls the "
        "recursion, so each new tree compiles again; the table above times one tree called "
        f"again and again), mean time per new tree: {cells}.",
    ]


def _gpu_lines(g) -> list[str]:
    """The GPU benchmark (``benchmarks/gpu.py``): cpsad on CuPy arrays against PyTorch on the
    same GPU, or why it did not run."""
    if not g:
        return []
    if "skipped" in g:
        return [
            f"On a GPU (`benchmarks/gpu.py`: MLP, CNN, RNN on CuPy arrays against PyTorch on the "
            f"same GPU): not run -- {g['skipped']}. ([backends.md](backends.md))",
            "",
        ]
    if "rows" not in g:
        return [f"gpu: failed ({g.get('error', '?')})", ""]
    out = [
        f"On a GPU, {g['device']} (`benchmarks/gpu.py`): cpsad's value and gradient on CuPy "
        "arrays against PyTorch on the same GPU, float64, the device synchronized after each call.",
        "",
        "| workload | cpsad | PyTorch | ratio |",
        "|---|---:|---:|---:|",
    ]
    for r in g["rows"]:
        out.append(
            f"| {r['workload']} | {r['cpsad_ms']:.3f} ms | {r['torch_ms']:.3f} ms | "
            f"{r['ratio']:.2f}x |"
        )
    return out + [""]


def _jit_lines(j) -> list[str]:
    """cpsad.jit on the scalar loops (benchmarks/jit.py)."""
    if not j:
        return []
    if "error" in j:
        return ["", f"- **cpsad.jit** (Numba): not measured: {j['error']}"]
    c = j["compile"]
    out = ["", "- **cpsad.jit** (the backpropagator compiled by Numba; `benchmarks/jit.py`):"]
    for name in ("scalar loop", "100k loop"):
        m = j[name]
        floor = (
            f" (the hand-written pass itself compiled by `numba.njit`: "
            f"{m['hand_njit_s'] * 1e6:,.1f} us, {m['hand_njit_ratio']:.3f}x)"
            if "hand_njit_s" in m
            else ""
        )
        out.append(
            f"  - {name}: {m['jit_s'] * 1e6:,.1f} us a call against the hand-written pass's "
            f"{m['hand_s'] * 1e6:,.1f} us: **{m['ratio']:.3f}x**{floor}"
        )
    second = c.get("cache_hit_second_function_s")
    out.append(
        f"  - first call (transformation, staging, Numba's compile): {c['first_call_s']:.2f} s; "
        f"first call in a new process with Numba's cache: {c['cache_hit_first_call_s'] * 1e3:.0f}"
        f" ms, and `import numba` {c['import_numba_s'] * 1e3:.0f} ms apart"
        + (
            f"; then, in that process, another function's first call (its cache hit): "
            f"{second * 1e3:.0f} ms"
            if second is not None
            else ""
        )
    )
    return out


def _staged_verdict(row: dict) -> str:
    """``cpsad.shaped`` against staging's target for the workload (issue 18, Part 2)."""
    target = STAGED_TARGET.get(row["name"])
    sm = row["frameworks"].get(frameworks.CPSAD_SHAPED, {})
    if target is None or "ratio" not in sm:
        return ""
    ratio, against_jit = target
    out = f"<= {ratio}x " + ("met" if sm["ratio"] <= ratio else "**missed**")
    jm = row["frameworks"].get(frameworks.JAX_JIT, {})
    if against_jit and "median" in jm:
        out += ", jax jit " + ("yes" if sm["median"] < jm["median"] else "**no**")
    return out


def markdown(rows: list[dict], command: str, lifecycle: dict | None = None) -> str:
    fws = frameworks.FRAMEWORKS
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# Benchmarks: cpsad against a hand-written backward pass and its peers",
        "",
        "Generated by `make bench` (`benchmarks/run.py`); do not edit by hand. Where the time goes",
        "in cpsad's emitted code, and what would save it: [performance.md](performance.md).",
        "",
        f"Run on {date} with `{command}`"
        + (
            " (`.venv/bin/python -m benchmarks.run --out docs/benchmarks.md`)."
            if command == "make bench"
            else "."
        ),
        "",
        *machine(),
        "",
        "## Median time of one value-and-gradient call",
        "",
        "Each cell: the median of the timed calls, and its ratio to the hand-written numpy",
        'backward pass (lower is faster). `-`: not measured (see "Not measured" below).',
        "",
        "| workload | "
        + " | ".join(fws)
        + " | cpsad target | cpsad faster than | cpsad shaped: staging's target |",
        "|---|" + "---:|" * (len(fws) + 1) + "---|---|",
    ]
    for row in rows:
        cells = []
        for fw in fws:
            m = row["frameworks"].get(fw)
            if m is None or "median" not in m:
                cells.append("-")
            elif fw == frameworks.HAND:
                cells.append(seconds(m["median"]))
            else:
                cells.append(f"{seconds(m['median'])} **{ratio(m['ratio'])}**")
        target = TARGET.get(row["name"])
        verdict = ""
        cm = row["frameworks"].get(frameworks.CPSAD, {})
        if target and "ratio" in cm:
            verdict = " met" if cm["ratio"] <= target else " **missed**"
        cells.append(f"<= {target}x{verdict}" if target else "")
        beats = []
        for peer in (frameworks.AUTOGRAD, frameworks.TORCH):
            pm = row["frameworks"].get(peer, {})
            if "median" in pm and "median" in cm:
                beats.append(f"{peer} {'yes' if cm['median'] < pm['median'] else '**no**'}")
        cells.append(", ".join(beats))
        cells.append(_staged_verdict(row))
        out.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    out += [
        "",
        "## cpsad's first-call latency",
        "",
        "In a fresh process with an empty cache folder: the first call's time minus a warm call's",
        "(transforming, compiling and linking every function the loss calls, plus the process's",
        "one-time costs), and each function's own transformation time (`Spec.seconds`). Measured",
        "for every workload before the timing runs (after minutes of them the machine transforms",
        "up to a quarter slower).",
        f"Target: < {LATENCY_TARGET * 1e3:.0f} ms per function.",
        "",
        "| workload | first call - warm call | functions transformed (ms each) | slowest | "
        "its dearest passes (ms) | target |",
        "|---|---:|---|---:|---|---|",
    ]
    for row in rows:
        lat = row.get("latency")
        if not lat:
            continue
        fns = ", ".join(f"`{k}` {v * 1e3:.1f}" for k, v in lat["functions"].items())
        worst_fn = max(lat["functions"], key=lat["functions"].get)
        worst = lat["functions"][worst_fn]
        passes = sorted(lat["passes"][worst_fn].items(), key=lambda kv: -kv[1])[:3]
        dear = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in passes)
        ok = "met" if worst < LATENCY_TARGET else "**missed**"
        out.append(
            f"| {row['name']} | {lat['latency'] * 1e3:.1f} ms | {fns} | {worst * 1e3:.1f} ms "
            f"| {dear} | {ok} |"
        )
    out += lifecycle_section(lifecycle or {})
    out += [
        "",
        "## The workloads",
        "",
    ]
    for w in ALL:
        if any(r["name"] == w.NAME for r in rows):
            out.append(f"- **{w.NAME}**: {w.TITLE}. {_first_paragraph(w.__doc__)}")
    out += [
        "",
        "## How it was measured",
        "",
        "- Every workload is a loss written in plain numpy (`benchmarks/workloads/`). cpsad",
        "  differentiates it as written; autograd and JAX differentiate the same source with `np`",
        "  bound to `autograd.numpy` / `jax.numpy` (and `math.sin` to their `sin`); PyTorch runs",
        "  the same operations written with `torch` (the same algorithm: im2col by slicing, the same",
        "  log-sum-exp), float64 tensors with `requires_grad`, gradients by `torch.autograd.grad`.",
        "- The hand-written backward pass runs the same forward operations as the loss and a",
        "  backward pass written for speed: in-place updates where safe, and weight gradients",
        "  computed as one product over all time steps (RNN) or tree nodes (Tree-LSTM) instead of",
        "  one per step. It is the denominator of every ratio.",
        "- Every call returns the value and the gradient (`value_and_grad` everywhere; JAX's",
        "  result is waited for with `block_until_ready`). Inputs are converted to each framework's",
        "  arrays beforehand; transforming (cpsad), tracing and compiling (JAX jit) happen in the",
        "  untimed first calls. JAX jit treats loop counts and trees as static: it is compiled for",
        "  one tree and one trip count.",
        "- Before timing, every framework's value and gradient are checked against the",
        "  hand-written ones (relative tolerance 1e-8, 1e-7 for the 100k loop); a difference",
        "  stops the run.",
        "- Timing: all frameworks of a workload in one process, interleaved round-robin: round",
        "  after round, each framework's call in turn. Each framework gets as many calls as fit",
        "  its share of a 30 s budget per workload (at least 5 -- 3 for calls over 5 s -- at",
        "  most 500), spread evenly over the rounds; the median of its calls is reported. The",
        "  objects alive before timing are frozen out of the garbage collector (a full collection",
        "  takes 0.4 s with torch and jax loaded, which no cpsad user pays) and the rest is",
        "  collected between rounds.",
        "- The machine is shared: other processes ran during the measurement. The table below",
        "  gives the load average around each workload's timing and each framework's process CPU",
        "  time over wall time: 1 is a call that had the CPU to itself, less is a call that",
        "  waited for it (more than 1 would be a second thread: none was). Interleaving spreads",
        "  such waits over every framework alike; the medians are robust to the occasional one.",
        "",
        "| workload | load average (before, after) | CPU time / wall time, by framework |",
        "|---|---|---|",
    ]
    for row in rows:
        if "load" not in row:
            continue
        ratios = ", ".join(
            f"{fw} {m['cpu_ratio']:.2f}" for fw, m in row["frameworks"].items() if "cpu_ratio" in m
        )
        out.append(f"| {row['name']} | {row['load'][0]:.2f}, {row['load'][1]:.2f} | {ratios} |")
    notes = [(row["name"], fw, why) for row in rows for fw, why in row.get("notes", {}).items()]
    if notes:
        out += ["", "## Written differently for one framework", ""]
        out += [f"- {name}, {fw}: {why}" for name, fw, why in notes]
    skipped = [(row["name"], fw, why) for row in rows for fw, why in row["skipped"].items()]
    if skipped:
        out += ["", "## Not measured", ""]
        out += [f"- {name}, {fw}: {why}" for name, fw, why in skipped]
    out += [
        "",
        "## For reference: the issue's peer measurements",
        "",
        "Ratios to hand-written numpy measured on this class of machine, as the issue states them:",
        "",
        "| workload | autograd | PyTorch | jax eager | jax jit |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, ref in REFERENCE.items():
        cells = [
            f"{ref[k]}x" if k in ref else ""
            for k in ("autograd", "PyTorch", "jax eager", "jax jit")
        ]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    paras = [p for p in doc.strip().split("\n\n") if p.strip()]
    return " ".join(paras[1].split()) if len(paras) > 1 else ""
