"""The command line: ``cpsad show`` prints the backpropagators cpsad generates for a file's functions;
``cpsad cache info`` and ``cpsad cache clear`` describe and empty the folder of emitted modules."""

from __future__ import annotations

import argparse
import ast
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import textwrap
import traceback
import types
import warnings

from cpsad import api, compiler, diskcache, staging
from cpsad.transforms.errors import TransformError
from cpsad.transforms.pipeline import FORWARD, FORWARD_STAGES, PIPELINE, STAGES

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

examples (the files are in cpsad's repository):
  cpsad show examples/mlp.py loss            the backpropagator of loss
  cpsad show examples/mlp.py::loss --wrt params
                                             ... with respect to params alone
  cpsad show examples/cnn.py --wrt params    each function with a parameter params
  cpsad show examples/tutorial.py --stages   every stage, for every function
  cpsad show examples/tutorial.py f --stage shift/reset
  cpsad show examples/mlp.py loss --out generated/
                                             write each module as a .py file that
                                             runs on its own (python generated/loss_bp.py)

Without FUNC, every function of FILE that can be transformed is shown, and
each one that cannot is reported on stderr (FILE:LINE and why, one line each;
name it to see the full error). --wrt NAMES then shows the functions that have
parameters of all those names, and says which it skipped.

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
        help="comma-separated parameters to differentiate (default: every positional "
        "parameter; cpsad.grad(f) and cpsad.show(f) differentiate the first)",
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
        "--jit",
        action="store_true",
        help="show the backpropagator (with --forward: the tangent function) flattened for Numba, "
        "as cpsad.jit compiles it (for arguments of unknown kinds, unless --at gives them: a "
        "call specializes it to its arguments' kinds)",
    )
    show.add_argument(
        "--at",
        metavar="EXPR",
        help="show the backpropagator staged at the arguments EXPR evaluates to (a Python "
        "expression in the file's namespace, numpy as np: '(np.ones((64, 784)), np.ones(784))'), "
        "specialized to their kinds and their arrays' shapes, as cpsad.shaped(f) runs it (with "
        "--jit: to their kinds, as cpsad.jit compiles it)",
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


def note(message: str) -> None:
    print(f"cpsad show: {message}", file=sys.stderr)


def load(path: str) -> types.ModuleType:
    name = os.path.splitext(os.path.basename(path))[0]
    # the file's folder (as `python FILE` would) and the working directory (as `python -m`)
    for folder in _offered(path):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _offered(path: str) -> tuple[str, str]:
    """The folders ``load`` puts on ``sys.path`` for FILE's imports."""
    return os.getcwd(), os.path.dirname(os.path.abspath(path))


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
    for name in _names(wrt):
        if name not in params:
            raise ValueError(
                f"`{fn.__name__}` has no parameter {name!r} (it has: {', '.join(params)})"
            )
        nums.append(params.index(name))
    return tuple(nums)


def _names(wrt: str) -> list[str]:
    return [n.strip() for n in wrt.split(",") if n.strip()]


def _with_parameters(fns: list, wrt: str) -> tuple[list, list[str]]:
    """The functions that have a parameter of each name in ``wrt``, and for the others, why not
    (``--wrt`` without a function named applies to each function it fits)."""
    wanted = _names(wrt)
    keep, skipped = [], []
    for fn in fns:
        params = list(inspect.signature(fn).parameters)
        missing = [n for n in wanted if n not in params]
        if missing:
            has = f"it has {', '.join(params)}" if params else "it has none"
            skipped.append(f"{fn.__name__} (no {', '.join(missing)}: {has})")
        else:
            keep.append(fn)
    return keep, skipped


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
        if args.wrt:
            fns, skipped = _with_parameters(fns, args.wrt)
            if not fns:
                return fail(
                    f"no function of {path} has parameters {args.wrt}: " + "; ".join(skipped)
                )
            if skipped:
                total = len(skipped) + len(fns)
                note(
                    f"--wrt {args.wrt} skipped {len(skipped)} of {total} functions, without "
                    "parameters of those names: " + "; ".join(skipped)
                )
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    out: list[str] = []
    shown: set = set()
    written = Written(args.out, _offered(path)) if args.out else None
    failed: list[tuple[int, str]] = []  # (exit status, message) of each function not shown
    for fn in fns:
        try:
            argnums = argnums_for(fn, args.wrt)
            out += render(fn, argnums, args, shown, written)
        except TransformError as e:
            failed.append((1, str(e) if names else _one_line(e, fn)))
        except ValueError as e:
            failed.append((2, f"cpsad show: error: {e}" if names else _one_line(e, fn)))
        except Exception as e:  # a bug in cpsad: said, and the other functions still shown
            if names:
                raise
            failed.append((1, _one_line(e, fn)))
    emit("\n".join(out), color)
    for _, message in failed:
        print(message, file=sys.stderr)
    if failed and not names:
        n = len(failed)
        note(
            f"{n} of {len(fns)} function{'s' if len(fns) != 1 else ''} could not be shown; name "
            f"one for the whole error and a hint: cpsad show {path} NAME"
        )
    return max((status for status, _ in failed), default=0)


def _one_line(e: Exception, fn) -> str:
    """``FILE:LINE:COL: error: why (in `fn`)``: one line for a function a whole file's listing
    could not show."""
    if isinstance(e, TransformError):
        where = f"{_shown(e.filename or '<unknown>')}:{e.lineno or '?'}:{(e.col or 0) + 1}"
        why = e.message
    else:
        code = fn.__code__
        where = f"{_shown(code.co_filename)}:{code.co_firstlineno}"
        why = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
    why = " ".join(why.split())
    return f"{where}: error: {why} (in `{fn.__name__}`)"


def _shown(path: str) -> str:
    """A file's path as the user would write it: relative to the working directory if inside."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel


def _arguments(expr: str, fn) -> tuple:
    """The arguments ``--at EXPR`` names: EXPR evaluated in ``fn``'s module, numpy as ``np``;
    a tuple is the arguments, anything else the one argument."""
    import numpy

    try:
        value = eval(expr, {"np": numpy, "numpy": numpy, **fn.__globals__})  # noqa: S307
    except Exception as exc:
        raise ValueError(f"--at {expr!r}: {type(exc).__name__}: {exc}") from None
    return value if isinstance(value, tuple) else (value,)


def render(fn, argnums, args, shown: set, written: Written | None = None) -> list[str]:
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
    jit, at = getattr(args, "jit", False), getattr(args, "at", None)
    if at and not jit:
        if args.order > 1:
            raise ValueError("--at shows the first-order backpropagator: no --order")
        t = api.transform(staging.shaped(target), argnums).at(*_arguments(at, fn))
    if jit:
        if args.order > 1 or args.stages or args.stage:
            raise ValueError(
                "--jit shows the first-order backpropagator (or, with --forward, the tangent "
                "function): no --order, --stage"
            )
        mode = compiler.STAGED_FORWARD if args.forward else compiler.STAGED
        kinds = ()
        if at:  # (what cpsad.jit compiles for a call with these arguments: their kinds)
            values = list(_arguments(at, fn))
            kinds = staging.staged_kinds(
                t.fn, compiler.kinds_of(t.fn.__code__, values, {}), values, mode
            )
        return [api.format_source(staging.staged_source(t.fn, t.active, kinds, mode=mode))]
    if args.stages or args.stage:
        _, stages = compiler.run_pipeline(t.fn, t.active, record=True, kinds=t.kinds, mode=t.mode)
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
    if written is not None:  # each module it calls too, so that each file runs
        written.write(spec)
    blocks = []
    for s in compiler.call_graph(spec) if not args.no_callees else [spec]:
        if id(s) in shown:
            continue
        shown.add(id(s))
        blocks.append(api.format_source(s.text))
    return blocks


class Written:
    """``--out DIR``: each emitted module as ``DIR/<f_bp>.py``, a module of its own -- it imports
    the backpropagators it calls from their files beside it and can find the user's modules the
    emitted code imports from -- so ``python DIR/f_bp.py`` runs and ``import f_bp`` works.

    What the compiled code gets from cpsad when it runs and no import can name (a closure's cells,
    an object made at run time) makes a file for reading only; its header says so."""

    def __init__(self, folder: str, offered: tuple[str, ...]):
        self.folder = folder
        # the folders ``load`` put on the path for the user's file: its own, the working directory
        self.offered = [os.path.abspath(f) for f in reversed(offered)]
        self.modules: dict[int, str] = {}  # id(spec) -> the module name of its file
        self.specs: list = []  # (holding each spec while its id is a key above)
        self.written: set[int] = set()

    def module(self, spec) -> str:
        name = self.modules.get(id(spec))
        if name is None:
            taken = set(self.modules.values())
            name = spec.bp_name
            if name in taken:  # another variant of the same function: say what it differentiates
                name = base = f"{spec.bp_name}_wrt_{'_'.join(spec.active) or 'nothing'}"
                i = 2
                while name in taken:
                    name, i = f"{base}_{i}", i + 1
            self.modules[id(spec)] = name
            self.specs.append(spec)
        return name

    def write(self, spec) -> None:
        os.makedirs(self.folder, exist_ok=True)
        for s in compiler.call_graph(spec):
            if id(s) in self.written:
                continue
            self.written.add(id(s))
            name = self.module(s)
            with open(os.path.join(self.folder, f"{name}.py"), "w") as fh:
                fh.write(self.text(s))

    def text(self, spec) -> str:
        """The emitted module as ``cpsad show`` prints it, made to run on its own: the folders of
        the user's modules it imports put on ``sys.path`` after its header, and the imports of
        the backpropagators it calls at its end (after its def, so that recursive ones, which
        import each other, can)."""
        body = api.format_source(spec.text)
        lines = body.splitlines()
        n = 0  # (the header: the comment down to its "Do not edit.")
        while n < len(lines) and lines[n].startswith("#"):
            n += 1
            if lines[n - 1].endswith("Do not edit."):
                break
        header, rest = lines[:n], lines[n:]
        callees = []
        for name, callee in sorted(spec.callee_specs.items()):
            if callee is spec and name == spec.bp_name:
                continue  # (recursion: its own def)
            module = self.module(callee)
            alias = "" if name == callee.bp_name else f" as {name}"
            callees.append(f"from {module} import {callee.bp_name}{alias}  # noqa: E402")
        folders = self._folders(body, bool(callees))
        prelude = []
        if folders:
            prelude = [
                "import os as _os",
                "import sys as _sys",
                "",
                "# where its imports are: this folder, the user's files",
                "_here = _os.path.dirname(_os.path.abspath(__file__))",
                "_sys.path[:0] = [",
                *(f"    _os.path.normpath(_os.path.join(_here, {f!r}))," for f in folders),
                "]",
                "del _os, _sys, _here",
                "",
            ]
        trailer = ["", "", *callees] if callees else []
        missing = _unbound("\n".join([*prelude, *rest, *trailer]))
        if missing:
            role = (
                f"# For reading only: it needs {', '.join(missing)}, which cpsad hands the code "
                "when it runs it and no import can name."
            )
        else:
            module = self.module(spec)
            role = (
                f"# Written by `cpsad show --out`: a module that runs on its own (python "
                f"{module}.py; import {module} to call {spec.bp_name})."
            )
        out = [*header, role, *prelude, *rest, *trailer]
        return "\n".join(out) + "\n"

    def _folders(self, text: str, callees: bool) -> list[str]:
        """The folders (relative to DIR) the file's imports need on ``sys.path``: DIR itself
        when it imports backpropagators from files beside it, and the folder of each module
        it imports that a fresh interpreter would not find (the user's file and its
        neighbours, which ``load`` made importable)."""
        out = ["."] if callees else []
        needed: list[str] = []
        fresh = [p for p in sys.path if p and os.path.abspath(p) not in self.offered]
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                root = _root(top, fresh)
                if root is not None and root not in needed:
                    needed.append(root)
        if needed:  # and what ``load`` offered the user's file's own imports
            needed += [f for f in self.offered if f not in needed]
        here = os.path.abspath(self.folder)
        out += [_relative(f, here) for f in needed]
        return out


def _root(top: str, fresh: list[str]) -> str | None:
    """The folder to put on ``sys.path`` for the loaded module ``top``, if a fresh interpreter
    (whose path lacks the folders ``load`` added) would not find it; else None."""
    mod = sys.modules.get(top)
    file = getattr(mod, "__file__", None)
    if mod is None or not file:
        return None
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            found = (
                find(top, fresh) if finder is importlib.machinery.PathFinder else find(top, None)
            )
        except Exception:  # pragma: no cover - a third party finder's trouble: keep looking
            continue
        if found is not None:
            return None
    folder = os.path.dirname(os.path.abspath(file))
    return os.path.dirname(folder) if hasattr(mod, "__path__") else folder


def _relative(path: str, start: str) -> str:
    try:
        return os.path.relpath(path, start)
    except ValueError:  # another drive
        return path


def _unbound(text: str) -> list[str]:
    """The global names the module ``text`` reads and neither binds nor has as builtins."""
    import builtins
    import symtable

    top = symtable.symtable(text, "<out>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    bound |= {s.get_name() for s in top.get_symbols() if s.is_namespace()}
    read: set[str] = set()
    stack = [top]
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for s in table.get_symbols():
            if s.is_referenced() and (table is top or s.is_global()):
                read.add(s.get_name())
    module = {"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__"}
    return sorted(n for n in read - bound - module if not hasattr(builtins, n))


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
