"""Benchmarks are not tests -- nothing here is timed -- but their code must run."""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(script, *args):
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def run_module(*args):
    r = subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_long_loops_runs():
    out = run("long_loops.py", "--quick")
    assert "10,000" in out


def test_long_function_times_each_kind_and_reports_the_slowest():
    import json

    from benchmarks.report import lifecycle_section

    out = json.loads(run("long_function.py", "--n", "40", "--json").strip().splitlines()[-1])
    (row,) = out["rows"]
    assert set(row["kinds"]) == {"floats", "arrays", "none"}
    assert row["kinds"][row["slowest"]] == max(row["kinds"].values())
    assert round(row["seconds"], 4) == row["kinds"][row["slowest"]]
    table = "\n".join(lifecycle_section({"long": out}))
    assert "| 40 |" in table and "floats / arrays / none" in table


def test_import_time_runs():
    out = run("import_time.py", "--runs", "1")
    assert "import cpsad" in out and "first use" in out


def installed(name):
    return importlib.util.find_spec(name) is not None


WORKLOADS = ["scalar loop", "100k loop", "MLP", "RNN", "TreeLSTM", "CNN"]


def test_every_workload_agrees_at_a_tiny_size():
    """Each workload once, tiny: cpsad, autograd and PyTorch (if installed) against the
    hand-written backward pass -- the same code `make bench` times (a difference fails the run)."""
    frameworks = "cpsad,autograd" + (",torch" if installed("torch") else "")
    out = run_module("benchmarks.run", "--tiny", "--frameworks", frameworks)
    for name in WORKLOADS:
        assert f"{name}: " in out
    assert out.count("gradients agree: numpy (hand-written), cpsad, autograd") == len(WORKLOADS)


@pytest.mark.skipif(not installed("jax"), reason="jax is a benchmark peer (`make bench`)")
def test_every_workload_agrees_under_jax():
    """JAX on the same tiny workloads: jit on every one (it traces the same rebound loss as
    eager mode, or the workload's `jax_jit_loss`), eager on the loop that jit runs differently.
    Each eager operation is compiled on first use: eager everywhere would take 10 s."""
    out = run_module("benchmarks.run", "--tiny", "--frameworks", "jax-jit")
    assert out.count("gradients agree: numpy (hand-written), jax jit") == len(WORKLOADS)
    out = run_module(
        "benchmarks.run", "--tiny", "--only", "scalar loop", "--frameworks", "jax-eager"
    )
    assert "gradients agree: numpy (hand-written), jax eager" in out


def test_a_missing_peer_is_skipped_and_named():
    """With torch and jax hidden, the run skips them and says why."""
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['jax'] = None\n"
        "from benchmarks import run; run.main(['--tiny', '--only', 'MLP'])"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert r.returncode == 0, r.stderr
    assert "PyTorch: skipped -- not installed" in r.stdout
    assert "jax jit: skipped -- not installed" in r.stdout
    assert "gradients agree: numpy (hand-written), cpsad, cpsad shaped, autograd" in r.stdout


def test_the_gpu_benchmark_says_why_it_did_not_run_or_runs():
    """``benchmarks/gpu.py`` where there is no GPU: the reason, no number (and the report's
    line for it); where there is one, its table (checked by running it there)."""
    import json

    from benchmarks import report
    from benchmarks.gpu import unavailable

    out = json.loads(run("gpu.py", "--json").strip().splitlines()[-1])
    reason = unavailable()
    if reason is not None:
        assert out == {"skipped": reason}
        assert "not run -- " + reason in "\n".join(report._gpu_lines(out))
    else:  # pragma: no cover - a machine with a GPU
        assert [r["workload"] for r in out["rows"]] == ["MLP", "CNN", "RNN"]


def test_the_report_judges_the_shaped_column_against_staging_s_targets():
    from benchmarks import frameworks, report

    def row(name, shaped, jit):
        fws = {frameworks.CPSAD_SHAPED: {"ratio": shaped, "median": shaped}}
        if jit is not None:
            fws[frameworks.JAX_JIT] = {"ratio": jit, "median": jit}
        return {"name": name, "frameworks": fws}

    assert report._staged_verdict(row("MLP", 1.01, 1.19)) == "<= 1.05x met, jax jit yes"
    assert report._staged_verdict(row("RNN", 1.15, 1.12)) == "<= 1.05x **missed**, jax jit **no**"
    assert report._staged_verdict(row("TreeLSTM", 2.6, 0.9)) == "<= 1.3x **missed**"
    assert report._staged_verdict(row("CNN", 1.1, None)) == "<= 1.15x met"
    assert report._staged_verdict(row("scalar loop", 1.0, 0.3)) == ""


def test_the_round_robin_draws_its_order_each_round():
    """No framework always follows the same one (the allocator state and garbage another leaves
    biased a column by up to 13%): over the rounds each takes several places, after several
    others, and every one still runs its n calls."""
    from benchmarks import timing

    seen = []
    plan = {name: ((lambda name=name: seen.append(name)), 40) for name in "abcd"}
    times = timing.round_robin(plan)
    assert all(len(times[n].wall) == 40 for n in "abcd")
    rounds = [seen[i : i + 4] for i in range(0, len(seen), 4)]
    for name in "abcd":
        places = {r.index(name) for r in rounds}
        before = {r[r.index(name) - 1] for r in rounds if r.index(name) > 0}
        assert len(places) == 4 and len(before) == 3


def test_the_shaped_ab_reports_both_ratios():
    from benchmarks import shaped
    from benchmarks.run import by_name

    out = shaped.ab(by_name("MLP"), rounds=2, seconds=0.005)
    assert set(out) == {"MLP"}
    assert out["MLP"]["hand"] > 0 and out["MLP"]["generic"] > 0 and out["MLP"]["shaped"] > 0


def test_the_report_has_the_treebank_line():
    from benchmarks import report

    t = {"trees": 2, "rows": {"numpy (hand-written)": [0.003, 0.005], "jax jit": [20.0, 30.0]}}
    (line,) = [x for x in report._treebank_lines(t) if x]
    assert "2 distinct random trees" in line
    assert "numpy (hand-written) 4.0 ms" in line and "jax jit 25,000.0 ms" in line
    assert report._treebank_lines(None) == []
    assert "failed (boom)" in report._treebank_lines({"error": "boom"})[-1]


def test_jit_scope_runs_and_each_program_compiles():
    pytest.importorskip("numba")
    out = run("jit_scope.py")  # (it stops where a program does not compile)
    rows = [line for line in out.splitlines() if line.startswith("| ") and " ms |" in line]
    assert len(rows) == 4, out
