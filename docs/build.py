"""Regenerate the parts of the docs that show what cpsad does, so they never drift from it.

    python docs/build.py          # rewrite them in place (make snapshots does this too)
    python docs/build.py --check  # exit 1 if any is out of date (tests/test_docs.py runs this)

A generated part sits between ``<!-- gen:KIND ARGS -->`` and ``<!-- end -->``:

* ``gen:rules``                    -- the rule table (``python -m cpsad.rules``)
* ``gen:stages``, ``gen:stage-names`` -- the pipeline's stages (transforms/pipeline.py), a table
  or the list ``stage=`` takes (README.md too)
* ``gen:sizes``                    -- source and emitted lines of every example
* ``gen:stage FILE FUNC WRT STAGE`` -- a function's program after one pipeline stage
* ``gen:show FILE FUNC WRT``       -- a function's backpropagator (as ``cpsad show`` prints it)
* ``gen:cli show FILE [ARGS ...]``  -- ``cpsad show`` in a shell, its output saved to a file: what
  it says on stderr, and its exit status
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
BLOCK = re.compile(r"(<!-- gen:(?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- end -->)", re.S)


def _function(file: str, name: str):
    path = os.path.join(ROOT, file)
    folder = os.path.dirname(path)
    if folder not in sys.path:  # the examples import their shared helpers as `common`
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"docs_{os.path.basename(file)[:-3]}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _argnums(fn, wrt: str):
    import inspect

    params = list(inspect.signature(fn).parameters)
    return tuple(params.index(w) for w in wrt.split(","))


def generate(spec: str) -> str:
    from cpsad import api, compiler
    from cpsad.rules import core

    kind, *args = spec.split()
    if kind == "rules":
        return core.table()
    if kind == "sizes":
        sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
        import emitted_size

        return emitted_size.table()
    if kind == "stage":
        file, name, wrt, stage = args
        fn = _function(file, name)
        active = api.transform(fn, _argnums(fn, wrt)).active
        _, stages = compiler.run_pipeline(fn, active, record=True)
        (s,) = [s for s in stages if s.name == stage]
        notes = "".join(f"# {n}\n" for n in s.notes)
        return "```python\n" + notes + api.format_source(s.source) + "```\n"
    if kind == "show":
        file, name, wrt = args
        fn = _function(file, name)
        return "```python\n" + api.show(fn, argnums=_argnums(fn, wrt)) + "```\n"
    if kind == "forward":
        file, name, wrt = args
        fn = _function(file, name)
        text = api.show(fn, argnums=_argnums(fn, wrt), mode="forward")
        return "```python\n" + text + "```\n"
    if kind == "stages":  # the pipeline's stages, as transforms/pipeline.py declares them
        from cpsad.transforms import pipeline

        rows = [f"| {cls.name} | {what} |" for cls, what in pipeline.PIPELINE]
        forward = [cls.name for cls, _ in pipeline.FORWARD if cls.name not in pipeline.STAGES]
        extra = [f"| {cls.name} (forward mode) | {what} |" for cls, what in pipeline.FORWARD]
        extra = [r for r, (cls, _) in zip(extra, pipeline.FORWARD) if cls.name in forward]
        return "| stage | establishes |\n|---|---|\n" + "\n".join(rows + extra) + "\n"
    if kind == "stage-names":  # the same, as the list `stage=` takes
        from cpsad.transforms import pipeline

        names = ", ".join(f"`{n}`" for n in pipeline.STAGES)
        only = [n for n in pipeline.STAGES if n not in pipeline.FORWARD_STAGES]
        new = [n for n in pipeline.FORWARD_STAGES if n not in pipeline.STAGES]
        gone = [f"`{n}`" for n in only]
        gone = ", ".join(gone[:-1]) + " and " + gone[-1] if len(gone) > 1 else "".join(gone)
        return f"reverse: {names}; forward: {', '.join(f'`{n}`' for n in new)} in place of {gone}\n"
    if kind == "cli":
        return _cli_session(args)
    if kind == "second":  # the backpropagator of the backpropagator
        file, name, wrt = args
        fn = _function(file, name)
        (i,) = _argnums(fn, wrt)
        return "```python\n" + api.show(api.grad(fn, i), argnums=i, callees=False) + "```\n"
    raise ValueError(f"unknown generated part {spec!r}")


def _cli_session(args: list[str]) -> str:
    """``cpsad ARGS`` with its output saved to a file, as a console session: stderr (where a whole
    file's listing reports each function it could not show) and the exit status."""
    import contextlib
    import io

    from cpsad import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main([*args, "--color", "never"])
    saved = os.path.basename(args[1]).replace(".py", "_bp.py")
    return (
        "```console\n"
        f"$ cpsad {' '.join(args)} > {saved}; echo \"exit status $?\"\n"
        f"{err.getvalue()}exit status {status}\n```\n"
    )


def render(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + generate(m.group("spec")) + m.group(4), text)


def main(check: bool = False) -> int:
    os.chdir(ROOT)  # paths in the emitted headers are relative to the project
    stale = []
    pages = [os.path.join(DOCS, n) for n in sorted(os.listdir(DOCS)) if n.endswith(".md")]
    for path in [os.path.join(ROOT, "README.md"), *pages]:
        name = os.path.relpath(path, DOCS) if path.startswith(DOCS) else "README.md"
        with open(path) as fh:
            text = fh.read()
        new = render(text)
        if new != text:
            stale.append(name)
            if not check:
                with open(path, "w") as fh:
                    fh.write(new)
    if check and stale:
        print("out of date (run `make snapshots`): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main(check="--check" in sys.argv))
