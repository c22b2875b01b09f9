"""How much code the backpropagator of each example is, against the code it was made from.

    python benchmarks/emitted_size.py       # a Markdown table (docs/reading.md includes it)

Lines are counted without blank lines and comments, the emitted code as `cpsad show` prints it
(black's layout): the function and the user functions it calls (each once), against their
backpropagators.
"""

import importlib.util
import inspect
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cpsad import api, compiler  # noqa: E402


def code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def examples():
    folder = os.path.join(ROOT, "examples")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        spec = importlib.util.spec_from_file_location(
            f"size_{name[:-3]}", os.path.join(folder, name)
        )
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for fname, wrt in getattr(mod, "BACKPROPAGATORS", {}).items():
            yield name, getattr(mod, fname), wrt


def table() -> str:
    rows = [
        "| example | function | source lines | emitted lines | ratio |",
        "|---|---|---:|---:|---:|",
    ]
    total_src = total_out = 0
    for file, fn, wrt in examples():
        params = list(inspect.signature(fn).parameters)
        nums = tuple(params.index(w.strip()) for w in wrt.split(","))
        spec = api.transform(fn, nums).spec
        src = out = 0
        for s in compiler.call_graph(spec):
            src += code_lines(inspect.getsource(s.fn))
            out += code_lines(api.format_source(s.text))
        total_src += src
        total_out += out
        rows.append(f"| {file} | `{fn.__name__}` | {src} | {out} | {out / src:.1f} |")
    rows.append(f"| all | | {total_src} | {total_out} | {total_out / total_src:.1f} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    os.chdir(ROOT)
    print(table(), end="")
