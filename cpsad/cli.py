"""The command line: ``cpsad show`` prints the backpropagators cpsad generates for a file's functions;
``cpsad cache info`` and ``cpsad cache clear`` describe and empty the folder of emitted modules."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
import textwrap
import traceback
import types
import warnings

from cpsad import api, compiler, diskcache
from transforms.errors import TransformError
from transforms.pipeline import FORWARD, FORWARD_STAGES, PIPELINE, STAGES

DESCRIPTION = """\
Print the backpropagator cpsad generates for each function of a Python file.

cpsad imports FILE as a module, transforms each named function (every function
defined at the top level of FILE when none is named) and prints the emitted
Python: the forward computation, the call of the continuation k -- the rest of
the program, which hands back the adjoint of the result -- and the backward
pass, with each of your source lines as a comment above the code it became.
Functions it calls are printed after it.
"""

EPILOG = """\
stages (in order), for --stage and --stages:
{stages}

examples:
  cpsad show examples/mlp.py loss           the backpropagator of loss
  cpsad show examples/mlp.py::loss --wrt W1,b1
  cpsad show model.py --stages              every stage, for every function
  cpsad show model.py f --stage shift/reset
  cpsad show model.py --out generated/      write each module as a .py file

exit status: 0 on success, 1 when a function cannot be transformed (a
compiler-style error says where and what to write instead), 2 for a usage
error: a missing file or function, or a file that fails to import.
"""


def parser() -> argparse.ArgumentParser:
    stages = "\n".join(f"  {cls.name:<12} {what}" for cls, what in PIPELINE)
    p = argparse.ArgumentParser(
        prog="cpsad",
        description="cpsad: source-to-source reverse-mode AD for Python + numpy.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    show = sub.add_parser(
        "show",
        help="print the generated backpropagator of functions in a file",
        description=DESCRIPTION,
        epilog=EPILOG.format(stages=stages),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument(
        "file", metavar="FILE[::FUNC]", help="a Python file (FILE::FUNC names a function)"
    )
    show.add_argument(
        "functions", nargs="*", metavar="FUNC", help="functions to show (default: all)"
    )
    which = show.add_mutually_exclusive_group()
    which.add_argument(
        "--stage",
        metavar="NAME",
        choices=sorted(set(STAGES) | set(FORWARD_STAGES)),
        help="show the program after stage NAME",
    )
    which.add_argument("--stages", action="store_true", help="show the program after every stage")
    show.add_argument(
        "--wrt",
        metavar="NAMES",
        help="comma-separated parameters to differentiate (default: every positional parameter)",
    )
    show.add_argument(
        "--order",
        type=int,
        default=1,
        metavar="N",
        help="the code of the N-th derivative: the backpropagator of the backpropagator ... "
        "(N >= 2 needs one parameter to differentiate, --wrt NAME)",
    )
    show.add_argument(
        "--forward",
        action="store_true",
        help="show the forward-mode tangent function (f_jvp) instead of the backpropagator",
    )
    show.add_argument(
        "--out", metavar="DIR", help="also write each emitted module to DIR as a .py file"
    )
    show.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the output (default: when printing to a terminal)",
    )
    show.add_argument(
        "--no-callees", action="store_true", help="do not print the functions it calls"
    )
    cache = sub.add_parser(
        "cache",
        help="describe or empty the folder of emitted modules",
        description=CACHE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cache.add_argument(
        "action",
        choices=["info", "clear"],
        help="info: the folder, its files and bytes; clear: remove the emitted modules",
    )
    return p


CACHE_DESCRIPTION = """\
cpsad writes each emitted module to a private cache folder, for tracebacks,
debuggers and IDEs (what runs is compiled from memory, never read back):
$CPSAD_CACHE_DIR, else $XDG_CACHE_HOME/cpsad or ~/.cache/cpsad. It keeps at most
$CPSAD_CACHE_MAX_FILES files (default 1000) and $CPSAD_CACHE_MAX_MB megabytes
(default 64), the least recently used out.
"""


def main(argv=None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.command == "cache":
        return cache(args.action)
    if args.command != "show":
        p.print_help()
        return 2
    return show(args)


def cache(action: str) -> int:
    """``cpsad cache info`` / ``cpsad cache clear``; 1 when the folder is refused as unsafe."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", diskcache.CacheWarning)  # said below, once
        where = diskcache.place()
        if action == "clear" and not where.refused:
            n = diskcache.clear_cache()
            print(f"removed {n} file{'s' if n != 1 else ''} from {where.path}")
        i = diskcache.info()
    if action == "info":
        print(f"folder: {i.path}")
        print(f"files: {i.files}")
        print(f"bytes: {i.bytes}")
        print(
            f"bound: {i.max_files} files, {i.max_bytes / 2**20:g} MB (the least recently used"
            " out; CPSAD_CACHE_MAX_FILES, CPSAD_CACHE_MAX_MB)"
        )
    if i.refused:
        print(f"cpsad cache: error: {where.why()}", file=sys.stderr)
        return 1
    return 0


def fail(message: str, status: int = 2) -> int:
    print(f"cpsad show: error: {message}", file=sys.stderr)
    return status


def load(path: str) -> types.ModuleType:
    name = os.path.splitext(os.path.basename(path))[0]
    # the file's folder (as `python FILE` would) and the working directory (as `python -m`)
    for folder in (os.getcwd(), os.path.dirname(os.path.abspath(path))):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def top_level_functions(module) -> list:
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__
    ]
    return sorted(found, key=lambda f: f.__code__.co_firstlineno)


def argnums_for(fn, wrt: str | None):
    if not wrt:
        return None
    params = list(inspect.signature(fn).parameters)
    nums = []
    for name in wrt.split(","):
        name = name.strip()
        if name not in params:
            raise ValueError(
                f"`{fn.__name__}` has no parameter {name!r} (it has: {', '.join(params)})"
            )
        nums.append(params.index(name))
    return tuple(nums)


def show(args) -> int:
    path, _, named = args.file.partition("::")
    names = ([named] if named else []) + list(args.functions)
    if not os.path.exists(path):
        return fail(f"no such file: {path}")
    try:
        module = load(path)
    except SystemExit as exc:
        return fail(f"importing {path} exited ({exc.code})")
    except BaseException:
        detail = "".join(traceback.format_exc(limit=-3))
        return fail(f"importing {path} failed:\n{textwrap.indent(detail, '  ')}")
    available = top_level_functions(module)
    if names:
        fns = []
        for n in names:
            obj = getattr(module, n, None)
            if not inspect.isfunction(obj):
                listing = ", ".join(f.__name__ for f in available) or "none"
                return fail(f"{path} has no function `{n}` (its functions: {listing})")
            fns.append(obj)
    else:
        fns = available
        if not fns:
            return fail(f"{path} defines no functions")
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    out: list[str] = []
    shown: set = set()
    for fn in fns:
        try:
            argnums = argnums_for(fn, args.wrt)
            out += render(fn, argnums, args, shown)
        except TransformError as e:
            emit("\n".join(out), color)
            print(str(e), file=sys.stderr)
            return 1
        except ValueError as e:
            return fail(str(e))
    emit("\n".join(out), color)
    return 0


def render(fn, argnums, args, shown: set) -> list[str]:
    if args.order < 1:
        raise ValueError("--order is 1 or more")
    target = fn
    if args.order > 1:
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums or (0,))
        if len(nums) != 1:
            raise ValueError("--order 2 and more differentiates one parameter: give --wrt NAME")
        for _ in range(args.order - 1):
            target = api.grad(target, nums[0])
        argnums = nums[0]
    t = api.transform(target, argnums, "forward" if args.forward else "reverse")
    if args.stages or args.stage:
        _, stages = compiler.run_pipeline(t.fn, t.active, record=True, mode=t.mode)
        if args.stage and args.stage not in [s.name for s in stages]:
            raise ValueError(
                f"no stage {args.stage!r} in {t.mode} mode; its stages are "
                + ", ".join(s.name for s in stages)
            )
        blocks = []
        for s in stages:
            if args.stage and s.name != args.stage:
                continue
            head = f"# ---- {fn.__name__}: after {s.name} -- {_invariant(s.name)}"
            notes = "".join(f"# {n}\n" for n in s.notes)
            blocks.append(head + "\n" + notes + api.format_source(s.source))
        return blocks
    spec = t.spec
    blocks = []
    for s in compiler.call_graph(spec) if not args.no_callees else [spec]:
        if id(s) in shown:
            continue
        shown.add(id(s))
        text = api.format_source(s.text)
        blocks.append(text)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            target = os.path.join(args.out, f"{s.bp_name}.py")
            with open(target, "w") as fh:
                fh.write(text)
    return blocks


def _invariant(stage: str) -> str:
    for cls, what in PIPELINE + FORWARD:
        if cls.name == stage:
            return what
    return ""


def emit(text: str, color: bool) -> None:
    if not text:
        return
    if color:
        try:
            from pygments import highlight
            from pygments.formatters import TerminalFormatter
            from pygments.lexers import PythonLexer

            text = highlight(text, PythonLexer(), TerminalFormatter())
        except ImportError:  # pragma: no cover - pygments is a dependency; plain text if absent
            pass
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
