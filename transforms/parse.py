"""After Parse, ``unit.tree`` is the function's gast ``FunctionDef``, located in the user's file.

Line numbers and columns are those of the user's file (the source is dedented for parsing, then
shifted back), so every later diagnostic and every comment in the emitted code points at the line
the user wrote. The source is that of the code object that runs: of a decorator's wrapper, not of
the function ``functools.wraps`` says it wraps; the decorator lines above a ``def`` are dropped (the
function object they were given is the one transformed). A lambda becomes an equivalent ``def``.

>>> def square(x):
...     return x * x
>>> from transforms.unit import Unit
>>> u = Unit(square, ("x",), ctx=None); Parse().run(u)
>>> u.tree.name, u.tree.lineno == square.__code__.co_firstlineno
('square', True)
"""

from __future__ import annotations
import __future__

import inspect
import linecache
import textwrap
import types

from transforms import astlib as A
from transforms.errors import TransformError
from transforms.unit import SourceInfo, Unit


class Parse:
    name = "parse"
    invariant = "the function's syntax tree, with the user's file, lines and columns"

    def run(self, unit: Unit) -> None:
        fn = unit.fn
        # The source of the code object that runs: ``inspect.getsourcelines(fn)`` would follow
        # ``fn.__wrapped__`` to the function a ``functools.wraps`` decorator wrapped, and the
        # wrapper (``2 * f(*args)``, say) would be differentiated as the function it wraps.
        filename = inspect.getsourcefile(fn.__code__) or fn.__code__.co_filename
        try:
            lines, first = inspect.getsourcelines(fn.__code__)
        except (OSError, TypeError) as exc:
            raise TransformError(
                f"cannot read the source of `{fn.__qualname__}`: {exc}",
                filename=fn.__code__.co_filename,
                lineno=fn.__code__.co_firstlineno,
                hint="cpsad transforms source code: define the function in a .py file "
                "(not in an interactive prompt or with exec)",
            ) from None
        first = max(first, 1)
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        col_shift = _indent(lines[0]) - _indent(dedented.splitlines(True)[0])
        all_lines = linecache.getlines(filename) or lines

        is_lambda = fn.__code__.co_name == "<lambda>"
        if not _still_the_source(fn.__code__, dedented):
            raise TransformError(
                f"the source file of `{fn.__qualname__}` changed since it was imported: the "
                "lines where it was no longer hold the function that runs",
                filename=filename,
                lineno=first,
                hint="reload the module (importlib.reload, or %autoreload in IPython) or restart, "
                "then call again",
            )
        if is_lambda:
            tree = _parse_lambda_source(dedented, fn)
        else:
            try:
                module = A.parse(dedented)
            except SyntaxError as exc:  # pragma: no cover - the function compiled, so this is rare
                raise TransformError(
                    f"cannot parse the source of `{fn.__qualname__}`: {exc.msg}",
                    filename=filename,
                    lineno=first + (exc.lineno or 1) - 1,
                ) from None
            defs = [n for n in module.body if isinstance(n, (A.FunctionDef, A.AsyncFunctionDef))]
            if not defs:
                raise TransformError(
                    f"`{fn.__qualname__}` has no `def` in its source",
                    filename=filename,
                    lineno=first,
                )
            tree = defs[0]
        for node in A.walk(tree):
            if hasattr(node, "lineno"):
                node.lineno += first - 1
                if getattr(node, "end_lineno", None) is not None:
                    node.end_lineno += first - 1
                node.col_offset += col_shift
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += col_shift
        tree.decorator_list = []
        tree.returns = None
        unit.tree = tree
        code = fn.__code__
        unit.namer.reserve(*A.names_in(tree), *code.co_freevars, *code.co_varnames)
        if unit.mode == "forward":
            unit.bp_name = unit.namer.jvp(tree.name)
        else:
            unit.bp_name = unit.namer.backpropagator(tree.name)
        unit.source = SourceInfo(filename, first, col_shift, all_lines)

    @staticmethod
    def check(unit: Unit) -> None:
        assert isinstance(unit.tree, (A.FunctionDef, A.AsyncFunctionDef))


def _still_the_source(code, text: str) -> bool:
    """Does ``text`` (what the file holds now at ``code``'s lines) compile to ``code``? Compared
    by what does not depend on where the function was compiled: its parameters, locals, the
    names and constants it uses, and those of the functions inside it (a free variable of the
    function compiles to a global on its own). Code pytest rewrote (its asserts) holds more
    than its source compiles to: there the source's must be among them. Source that cannot be
    compiled on its own (a fragment with a lambda in it) is taken as it is."""
    flags = code.co_flags & __future__.annotations.compiler_flag
    try:
        module = compile(text, code.co_filename, "exec", flags=flags, dont_inherit=True)
    except SyntaxError:
        try:  # a lambda in a fragment with a ``return``
            wrapped = "def __cpsad_source__():\n" + textwrap.indent(text, "    ")
            module = compile(wrapped, code.co_filename, "exec", flags=flags, dont_inherit=True)
        except SyntaxError:
            return True
    outer = frozenset(code.co_freevars)
    want = _fingerprint(code, outer)
    rewritten = _rewritten(code)
    for c in _code_objects(module):
        if c.co_name != code.co_name:
            continue
        got = _fingerprint(c, outer)
        if got == want or (rewritten and _among(got, want) and _lines(c) == _lines(code)):
            return True
    return False


def _rewritten(code) -> bool:
    """Did pytest rewrite the function's asserts (its names start with ``@py``)?"""
    return any(n.startswith("@py") for n in (*code.co_names, *code.co_varnames)) or any(
        _rewritten(c) for c in code.co_consts if isinstance(c, types.CodeType)
    )


def _among(got, want) -> bool:
    """Is every part of the fingerprint ``got`` in ``want``'s (the parameters the same)?"""
    (a, p, k, varnames, names, consts), (a2, p2, k2, varnames2, names2, consts2) = got, want
    return (
        (a, p, k) == (a2, p2, k2)
        and varnames[: a + k] == varnames2[: a + k]
        and set(varnames) <= set(varnames2)
        and names <= names2
        and {c for c in consts if c[0] != "code"} <= {c for c in consts2 if c[0] != "code"}
    )


def _lines(code) -> int:
    """How many lines the function spans (where its code came from)."""
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return max(lines) - min(lines) if lines else 0


def _code_objects(code):
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield c
            yield from _code_objects(c)


def _fingerprint(code, outer: frozenset):
    consts = tuple(
        (
            ("code", c.co_name, _fingerprint(c, outer))
            if isinstance(c, types.CodeType)
            else (type(c).__name__, repr(c))
        )
        for c in code.co_consts
    )
    return (
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_varnames,
        frozenset(code.co_names) - outer,
        consts,
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_lambda_source(source: str, fn) -> A.FunctionDef:
    """Find the lambda that compiled to ``fn`` in the lines that hold it; return it as a ``def``."""
    code = fn.__code__
    src = source
    tree = None
    # The lines may be a fragment of a larger expression: trim until it parses.
    for _ in range(len(src)):
        try:
            tree = A.parse(src.strip())
            break
        except SyntaxError:
            src = src.rstrip()[:-1]
    if tree is None:  # pragma: no cover
        raise TransformError(
            "cannot parse the lambda's source",
            filename=code.co_filename,
            lineno=code.co_firstlineno,
        )
    arg_names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    lambdas = [
        n
        for n in A.walk(tree)
        if isinstance(n, A.Lambda) and [a.id for a in n.args.args + n.args.kwonlyargs] == arg_names
    ]
    if len(lambdas) != 1:
        raise TransformError(
            "cannot tell which lambda on this line to differentiate",
            filename=code.co_filename,
            lineno=code.co_firstlineno,
            hint="give the function a name with `def`",
        )
    lam = lambdas[0]
    ret = A.copy_location(A.return_(lam.body), lam.body)
    fdef = A.function("lambda_", lam.args, [ret])
    return A.copy_location(fdef, lam)
