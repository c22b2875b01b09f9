"""``python -m tests.fuzz``: generate programs, judge cpsad on each, report (see tests/fuzz/__init__.py).

python -m tests.fuzz --seed 0 --n 2000 -j 2                 # counts, messages, failing seeds
python -m tests.fuzz --seed 0 --n 2000 -j 2 --features      # and failures by feature
python -m tests.fuzz --seed 0 --n 500 --reduce --out DIR    # and reduced programs of each cause
python -m tests.fuzz --show 19                              # one seed: its program and verdict
python -m tests.fuzz --exclude apply_1line,decorator ...    # only programs without those features
python -m tests.fuzz --perturb grad --n 200                 # self-check: everything must fail
python -m tests.fuzz --order 2 --n 400 -j 2 --features      # second derivatives (fuzz/higher.py)
python -m tests.fuzz --jit --n 400 -j 2                     # cpsad.jit against the Python one
python -m tests.fuzz --ci-known                             # the KNOWN table of tests/test_fuzz.py
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import sys
import time
import warnings

from tests.fuzz.oracle import CLASSES, FAILURES, Result


def _work(task):
    seed, perturb, exclude, use_autograd, order = task
    from tests.fuzz.higher import check_seed_higher
    from tests.fuzz.oracle import check_seed

    try:
        if order > 1:
            r = check_seed_higher(seed, order, perturb, use_autograd, exclude)
        else:
            r = check_seed(seed, perturb=perturb, use_autograd=use_autograd, exclude=exclude)
    except Exception as exc:  # a bug of the fuzzer itself: reported, not hidden
        r = Result(seed, 0, "crash", message=f"fuzzer error: {type(exc).__name__}: {exc}")
    if not r.failed and r.cls != "refused" and r.jvp_cls not in FAILURES:
        r.source = ""
    return r


def _reduce_work(task):
    seed, key, exclude, seconds, *rest = task
    order = rest[0] if rest else 1
    from tests.fuzz.oracle import valid_program
    from tests.fuzz.reduce import reduce

    program, _ = valid_program(seed, exclude=exclude)
    t0 = time.monotonic()
    try:
        small = reduce(program, tuple(key), seconds=seconds, order=order)
    except Exception as exc:  # a bug of the reducer: hand back the program unreduced
        print(f"reducer error on seed {seed}: {type(exc).__name__}: {exc}", file=sys.stderr)
        small = program
    if small.values is None:  # (a program the reducer could not shorten: its own arguments)
        small.values = small.args()
    return seed, tuple(key), small, time.monotonic() - t0


def _init():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # (autograd says so of every program whose result does not depend on an argument: noise)
    warnings.filterwarnings("ignore", message="Output seems independent of input")
    from tests.fuzz.oracle import workdir

    workdir()  # a private CPSAD_CACHE_DIR per worker


def run(seeds, jobs, perturb=None, exclude=(), use_autograd=True, progress=True, order=1):
    tasks = [(s, perturb, tuple(exclude), use_autograd, order) for s in seeds]
    results = []
    t0 = time.monotonic()
    if jobs <= 1:
        _init()
        it = map(_work, tasks)
        pool = None
    else:
        pool = multiprocessing.get_context("fork").Pool(jobs, _init, maxtasksperchild=250)
        it = pool.imap_unordered(_work, tasks, chunksize=4)
    try:
        for k, r in enumerate(it, 1):
            results.append(r)
            if progress and k % 250 == 0:
                bad = sum(x.failed for x in results)
                print(
                    f"  {k}/{len(tasks)} programs, {bad} failures, {time.monotonic() - t0:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    results.sort(key=lambda r: r.seed)
    return results


def _seeds(xs, limit=30):
    xs = sorted(xs)
    text = " ".join(map(str, xs[:limit]))
    return text + (f" ... ({len(xs)} in all)" if len(xs) > limit else "")


def report(results, features=False, out=sys.stdout):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    judged = [r for r in results if r.cls != "discarded"]
    p(
        f"programs: {len(judged)} judged ({sum(r.discarded for r in results)} generated programs "
        f"discarded by plain Python, {len(results) - len(judged)} seeds without a valid program)"
    )
    counts = collections.Counter(r.cls for r in judged)
    order = max((r.order for r in judged), default=1)
    if order > 1:
        p(f"\nreverse mode (grad applied 1 .. {order} times; the first order that fails):")
    else:
        p("\nreverse mode (value_and_grad):")
    for c in CLASSES:
        p(f"  {c:12s} {counts.get(c, 0):6d}")
    jc = collections.Counter(r.jvp_cls or "-" for r in judged)
    p("forward over reverse (hessian, hvp):" if order > 1 else "forward mode (jvp):")
    for c in CLASSES:
        p(f"  {c:12s} {jc.get(c, 0):6d}")
    ag = collections.Counter(r.autograd for r in judged if r.cls != "refused")
    p(f"autograd beside finite differences: {dict(ag)}")
    taken = collections.defaultdict(list)  # refused by cpsad, differentiated right by autograd
    for r in judged:
        if r.cls == "refused" and r.autograd == "agrees":
            taken[r.message].append(r.seed)
    refused = sum(1 for r in judged if r.cls == "refused")
    p(
        f"refused programs autograd differentiates (its slopes those of central differences): "
        f"{sum(map(len, taken.values()))} of {refused}"
    )
    for msg, seeds in sorted(taken.items(), key=lambda kv: -len(kv[1])):
        p(f"  {len(seeds):5d}  {msg}")
        p(f"         seeds: {_seeds(seeds, 12)}")
    jit = collections.Counter(r.jit for r in judged if r.jit)
    if jit:
        p("cpsad.jit (the same numbers as the Python backpropagator; a mismatch is wrong-*):")
        for why, n in jit.most_common(20):
            p(f"  {n:6d}  {why}")
    by_msg = collections.defaultdict(list)
    for r in judged:
        if r.cls in ("refused", "bad-refusal", "crash"):
            by_msg[(r.cls, r.message)].append(r.seed)
    for cls in ("bad-refusal", "refused", "crash"):
        rows = sorted(
            ((k, v) for k, v in by_msg.items() if k[0] == cls), key=lambda kv: -len(kv[1])
        )
        if rows:
            p(f"\n{cls} by message:")
            for (_, msg), seeds in rows:
                p(f"  {len(seeds):5d}  {msg}")
                p(f"         seeds: {_seeds(seeds, 12)}")
    for cls in ("wrong-value", "wrong-grad"):
        seeds = [r.seed for r in judged if r.cls == cls]
        if seeds:
            p(f"\n{cls}: {_seeds(seeds)}")
    jbad = collections.defaultdict(list)
    for r in judged:
        if r.jvp_cls in FAILURES:
            jbad[(r.jvp_cls, r.jvp_detail if r.jvp_cls in ("crash", "bad-refusal") else "")].append(
                r.seed
            )
    if jbad:
        p("\nforward-mode failures:")
        for (cls, msg), seeds in sorted(jbad.items(), key=lambda kv: -len(kv[1])):
            p(f"  {len(seeds):5d}  {cls} {msg[:120]}")
            p(f"         seeds: {_seeds(seeds, 12)}")
    if features:
        p("\nby feature (programs with it; share of them per outcome):")
        feats = collections.defaultdict(collections.Counter)
        for r in judged:
            for ft in r.features:
                feats[ft][r.cls] += 1
        rows = []
        for ft, cnt in feats.items():
            n = sum(cnt.values())
            bad = sum(cnt[c] for c in FAILURES)
            rows.append((bad / n, ft, n, cnt))
        p(
            f"  {'feature':26s} {'n':>6s} {'fail%':>6s} "
            + " ".join(f"{c[:10]:>10s}" for c in CLASSES)
        )
        for rate, ft, n, cnt in sorted(rows, reverse=True):
            p(
                f"  {ft:26s} {n:6d} {100 * rate:5.1f}% "
                + " ".join(f"{cnt.get(c, 0):10d}" for c in CLASSES)
            )


def write_finding(path, small, key, seed, exclude):
    from tests.fuzz.findings import render

    with open(path, "w") as fh:
        fh.write(render(small, key, seed, exclude))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--n", type=int, default=200, help="how many seeds")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--reduce", action="store_true", help="reduce a failing program of each cause")
    ap.add_argument("--reduce-each", type=int, default=1, help="programs to reduce per cause")
    ap.add_argument("--reduce-seconds", type=float, default=240.0)
    ap.add_argument("--out", help="folder for results.jsonl, report.txt and reduced programs")
    ap.add_argument("--features", action="store_true", help="failures by feature")
    ap.add_argument("--exclude", default="", help="comma-separated features no program may use")
    ap.add_argument("--perturb", choices=["grad", "value"], help="self-check: a wrong cpsad")
    ap.add_argument("--no-autograd", action="store_true")
    ap.add_argument(
        "--order", type=int, default=1, choices=[1, 2, 3], help="derivatives judged (higher.py)"
    )
    ap.add_argument(
        "--jit", action="store_true", help="judge cpsad.jit(f) against the Python backpropagator"
    )
    ap.add_argument(
        "--rewrite", help="judge each program rewritten this way (tests/fuzz/rewrite.py KINDS)"
    )
    ap.add_argument("--show", type=int, help="print one seed's program and its verdict")
    ap.add_argument(
        "--ci-known", action="store_true", help="print the KNOWN table for test_fuzz.py"
    )
    a = ap.parse_args(argv)
    if a.jit:  # (read by the oracle, in this process and the workers it forks)
        os.environ["CPSAD_FUZZ_JIT"] = "1"
        import tests.fuzz.oracle as oracle

        oracle.JIT = True
    if a.rewrite:  # (read by the oracle, as --jit)
        os.environ["CPSAD_FUZZ_REWRITE"] = a.rewrite
        import tests.fuzz.oracle as oracle

        oracle.REWRITE = a.rewrite
    exclude = tuple(x for x in a.exclude.split(",") if x)

    if a.show is not None:
        _init()
        from tests.fuzz.higher import check_higher, phi_source
        from tests.fuzz.oracle import check, directions, valid_program

        program, _ = valid_program(a.show, exclude=exclude)
        if a.rewrite:
            from tests.fuzz.rewrite import rewritten

            program = rewritten(program, a.rewrite)
        print(program.source)
        if a.order > 1:
            args = program.args()
            print(phi_source(program, args, directions(program, args)[0]))
            r = check_higher(program, a.order, perturb=a.perturb)
        else:
            r = check(program, perturb=a.perturb)
        print(f"# {r.cls}: {r.message}\n# {r.detail}\n# jvp: {r.jvp_cls} {r.jvp_detail}")
        print(f"# autograd: {r.autograd}; features: {', '.join(r.features)}")
        return 0

    if a.ci_known:
        print_known(a.jobs, a.reduce_seconds)
        return 0

    t0 = time.monotonic()
    results = run(
        range(a.seed, a.seed + a.n), a.jobs, a.perturb, exclude, not a.no_autograd, order=a.order
    )
    took = time.monotonic() - t0
    out = sys.stdout
    cmd = "python -m tests.fuzz " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"{cmd}\nseeds {a.seed}..{a.seed + a.n - 1}, {took:.0f} s with -j {a.jobs}\n", file=out)
    report(results, a.features, out)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "results.jsonl"), "w") as fh:
            for r in results:
                fh.write(json.dumps(r.__dict__) + "\n")
        with open(os.path.join(a.out, "report.txt"), "w") as fh:
            print(f"{cmd}\nseeds {a.seed}..{a.seed + a.n - 1}, {took:.0f} s\n", file=fh)
            report(results, True, fh)
    if a.perturb:
        judged = [r for r in results if r.cls not in ("discarded", "refused", "bad-refusal")]
        escaped = [r.seed for r in judged if not r.failed and r.cls != "nonsmooth"]
        print(
            f"\nself-check: {len(escaped)} of {len(judged)} checked programs escaped: {escaped[:20]}"
        )
        return 1 if escaped else 0
    if a.reduce:
        by_key = collections.defaultdict(list)
        for r in results:
            if r.failed:
                by_key[r.key].append(r.seed)
            if a.order > 1 and r.jvp_cls in FAILURES:
                by_key[r.jvp_key].append(r.seed)
        tasks = [
            (s, key, exclude, a.reduce_seconds, a.order)
            for key, seeds in by_key.items()
            for s in seeds[: a.reduce_each]
        ]
        print(f"\nreducing {len(tasks)} programs ...", file=sys.stderr)
        if a.jobs <= 1:
            done = map(_reduce_work, tasks)
        else:
            pool = multiprocessing.get_context("fork").Pool(a.jobs, _init, maxtasksperchild=1)
            done = pool.imap_unordered(_reduce_work, tasks)
        for seed, key, small, secs in done:
            print(f"\n# ---- seed {seed}: {key[0]} {key[1]} (reduced in {secs:.0f} s)")
            print(small.source.rstrip())
            print(f"# arguments: {small.values!r}")
            if a.order > 1:
                from tests.fuzz.higher import phi_source
                from tests.fuzz.oracle import directions

                args = small.args()
                print(phi_source(small, args, directions(small, args)[0]).rstrip())
            if a.out:
                name = f"{key[0].replace(':', '_')}_{seed}.py"
                if a.order > 1:
                    name = f"order{a.order}_{name}"
                write_finding(os.path.join(a.out, name), small, key, seed, exclude)
    return 0


def print_known(jobs, seconds):
    """The KNOWN and KNOWN_JVP tables of tests/test_fuzz.py for its CI seeds, each failing seed
    attributed to a finding (wrong values and gradients reduced first, to see which)."""
    from tests.fuzz.findings import attribute
    from tests.test_fuzz import CI_SEEDS, acceptable, acceptable_jvp

    results = run(CI_SEEDS, jobs)
    tasks = [(r.seed, r.key, (), min(seconds, 30)) for r in results if r.cls.startswith("wrong")]
    tasks += [
        (r.seed, r.jvp_key, (), min(seconds, 30))
        for r in results
        if r.jvp_cls.startswith("wrong") and acceptable(r)  # forward mode alone fails
    ]
    print(f"reducing {len(tasks)} programs ...", file=sys.stderr)
    reduced = {}
    if jobs <= 1:
        done = map(_reduce_work, tasks)
    else:
        pool = multiprocessing.get_context("fork").Pool(jobs, _init, maxtasksperchild=1)
        done = pool.imap_unordered(_reduce_work, tasks)
    for seed, _, small, _ in done:
        reduced[seed] = small.source
    for name, ok, get in (
        ("KNOWN", acceptable, lambda r: (r.cls, r.message + "\n" + r.detail)),
        ("KNOWN_JVP", acceptable_jvp, lambda r: (r.jvp_cls, r.jvp_detail + "\n" + r.detail)),
    ):
        print(f"{name} = {{")
        for r in results:
            if not ok(r):
                cls, msg = get(r)
                label = attribute(cls, msg, reduced.get(r.seed, r.source)).split("\n")[0]
                print(f"    {r.seed}: {label!r},")
        print("}")


if __name__ == "__main__":
    sys.exit(main())
