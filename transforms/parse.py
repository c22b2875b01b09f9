"""After Parse, ``unit.tree`` is the function's gast ``FunctionDef``, located in the user's file.

Line numbers and columns are those of the user's file (an indented function is parsed in place,
under an ``if 1:`` line; a lambda's source is dedented, then shifted back), so every later
diagnostic and every comment in the emitted code points at the line the user wrote. The source
is that of the code object that runs: of a decorator's wrapper, not of the function
``functools.wraps`` says it wraps; the decorator lines above a ``def`` are dropped (the function
object they were given is the one transformed). A lambda becomes an equivalent ``def``.

>>> def square(x):
...     return x * x
>>> from cpsad.transforms.unit import Unit
>>> u = Unit(square, ("x",), ctx=None); Parse().run(u)
>>> u.tree.name, u.tree.lineno == square.__code__.co_firstlineno
('square', True)
"""

from __future__ import annotations
import __future__

import dis
import inspect
import io
import linecache
import re
import symtable
import textwrap
import tokenize
import types

from . import astlib as A
from .errors import TransformError
from .unit import SourceInfo, Unit


class Parse:
    name = "parse"
    invariant = "the function's syntax tree, with the user's file, lines and columns"

    def run(self, unit: Unit, quick: bool = True) -> None:
        fn = unit.fn
        # The source of the code object that runs: ``inspect.getsourcelines(fn)`` would follow
        # ``fn.__wrapped__`` to the function a ``functools.wraps`` decorator wrapped, and the
        # wrapper (``2 * f(*args)``, say) would be differentiated as the function it wraps.
        filename = inspect.getsourcefile(fn.__code__) or fn.__code__.co_filename
        quick = quick and _quick_source_lines(fn.__code__, filename)
        try:
            lines, first = quick or inspect.getsourcelines(fn.__code__)
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
        # An indented ``def`` (in a class, an ``if``, a function) is parsed where it stands,
        # under an ``if 1:`` line, not dedented: dedenting would change what a string of several
        # lines in it holds (a docstring, ``"""a\n    b"""``) -- another function than the one
        # that runs. Its columns are then the file's as they are.
        indented = col_shift > 0 and not is_lambda
        source = "if 1:\n" + text if indented else dedented
        lines_before = first - 2 if indented else first - 1
        if indented:
            col_shift = 0
        raw = text  # (a lambda's too: the lines of the statement it stands in)
        modules = _modules_read(fn)
        still = _still_the_source(fn.__code__, source, raw, modules)  # (compiles: asked once)
        if quick and not still:
            return self.run(unit, quick=False)  # (inspect's lines, which the check may accept)
        if not still:
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
                # parsed under as many empty lines as stand above it in the file: the lines
                # are the file's (for speed: not a walk over the tree to move every node)
                module = A.parse("\n" * lines_before + source)
            except SyntaxError as exc:  # pragma: no cover - the function compiled, so this is rare
                raise TransformError(
                    f"cannot parse the source of `{fn.__qualname__}`: {exc.msg}",
                    filename=filename,
                    lineno=exc.lineno or lines_before + 1,
                ) from None
            lines_before = 0
            body = module.body[0].body if indented else module.body
            defs = [n for n in body if isinstance(n, (A.FunctionDef, A.AsyncFunctionDef))]
            if not defs:
                raise TransformError(
                    f"`{fn.__qualname__}` has no `def` in its source",
                    filename=filename,
                    lineno=first,
                )
            tree = defs[0]
        for node in A.walk(tree) if lines_before or col_shift else ():
            if hasattr(node, "lineno"):
                node.lineno += lines_before
                if getattr(node, "end_lineno", None) is not None:
                    node.end_lineno += lines_before
                node.col_offset += col_shift
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += col_shift
        tree.decorator_list = []
        tree.returns = None
        owner = _class_around(fn.__code__)
        if owner is not None:
            _mangle(tree, owner)
        if "__class__" in fn.__code__.co_freevars:
            _explicit_super(tree)
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


def checked_source(fn) -> str | None:
    """The source of the function ``fn`` runs, dedented, for the passes that read a helper's body
    (Inline, the aliasing analysis): the lines its code object was compiled from, checked as
    Parse checks a transformed function's (``_still_the_source``). None where it cannot be read,
    or where the file no longer holds it (edited since it was imported): a helper's edited text
    must not stand in for the code that runs (it would be inlined, or trusted not to mutate its
    arguments); the caller then calls the helper, whose own Parse refuses with the reason."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    try:
        filename = inspect.getsourcefile(code) or code.co_filename
        quick = _quick_source_lines(code, filename)
        text = quick and _checked(fn, quick[0])
        return text or _checked(fn, inspect.getsourcelines(code)[0])  # (inspect's: slower)
    except (OSError, TypeError, ValueError):
        return None


def checked_tree(fn):
    """``checked_source(fn)`` parsed (a module's tree), or None."""
    source = checked_source(fn)
    try:
        return A.parse(source) if source is not None else None
    except SyntaxError:  # (a lambda's lines: the statement it stands in may be cut)
        return None


def _checked(fn, lines: list[str]) -> str | None:
    """``lines``, dedented, where they compile to ``fn``'s code (``checked_source``)."""
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    lambda_ = fn.__code__.co_name == "<lambda>"
    indented = bool(lines) and _indent(lines[0]) > _indent(dedented) and not lambda_
    source = "if 1:\n" + text if indented else dedented
    return dedented if _still_the_source(fn.__code__, source, text, _modules_read(fn)) else None


def _still_the_source(code, text: str, raw: str | None = None, modules=()) -> bool:
    """Does ``text`` (what the file holds now at ``code``'s lines) compile to ``code``?

    Where the context ``raw`` (the lines as the file holds them) stands in can be written
    around it -- a function binding its free variables, its class, the module's imports of
    ``modules`` -- exactly: the same instructions, names and constants (``_compiled_in_place``:
    ``x * x`` edited into ``x * x * x`` holds the same names and constants). Otherwise by what
    does not depend on where the function was compiled: its parameters, locals, the names and
    constants it uses, and those of the functions inside it (a free variable of the function
    compiles to a global on its own).
    Code pytest rewrote (its asserts) holds more than its source compiles to: there the source's
    must be among them. Source that cannot be compiled on its own (a fragment with a lambda in
    it) is taken as it is."""
    flags = code.co_flags & __future__.annotations.compiler_flag
    if raw is not None and not _rewritten(code):
        same = _compiled_in_place(code, raw, flags, modules)
        if same is not None:
            return same
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


def _compiled_in_place(code, raw: str, flags: int, modules=()) -> bool | None:
    """Does ``raw``, a function's lines as its file holds them, compile to ``code`` where it
    stands -- in a function that binds the names ``code`` takes from around it, in its class (the
    class's name mangles ``__private`` names; ``super()`` reads the class's cell), in a module
    that imports ``modules`` (a method of an imported name is called by other instructions)?
    The instructions are compared as ``_same_instructions`` says. None where that context cannot
    be written above its indentation."""
    first = raw.split("\n", 1)[0]
    indent = len(first) - len(first.lstrip())
    if "\t" in first[:indent]:
        return None
    free = [n for n in code.co_freevars if n != "__class__"]
    owner = _class_around(code)
    in_class = owner is not None and code.co_qualname.split(".")[-2] == owner  # (a method)
    if indent < bool(free) + in_class or ("__class__" in code.co_freevars and not in_class):
        return None
    head = []
    if free:  # the names as locals of a function around it, at the indentation of the lines
        head += ["def __cpsad_context__():"]
        head += [" " * (indent - in_class) + " = ".join(free) + " = None"]
    if in_class:
        head += [" " * (indent - 1 if free else 0) + f"class {owner}:"]
    if indent and not head:
        head = ["if 1:"]
    imports = "".join(f"import {m}\n" for m in modules)  # (compiled, never run)
    wrapped = imports + "".join(line + "\n" for line in head) + raw
    try:
        module = compile(wrapped, code.co_filename, "exec", flags=flags, dont_inherit=True)
    except SyntaxError:
        return None
    return any(_same_code(c, code) for c in _code_objects(module) if c.co_name == code.co_name)


def _modules_read(fn) -> list[str]:
    """The names ``fn`` (or a function in it) uses that its module likely binds by an import,
    as the compiler sees it: modules, and functions and classes of another module. (Python
    3.11 reads a method of such a name -- even of a local that shares it -- as an attribute.)"""
    g = fn.__globals__
    names = set()
    for c in (fn.__code__, *_code_objects(fn.__code__)):
        names |= {*c.co_names, *c.co_varnames, *c.co_cellvars, *c.co_freevars}
    imported = _imported_names(fn.__code__.co_filename)
    out = []
    for n in sorted(names):
        if imported is not None:  # (what the compiler itself asks: an import binds it)
            if n in imported:
                out.append(n)
            continue
        v = g.get(n)
        if isinstance(v, types.ModuleType) or (
            isinstance(v, (types.FunctionType, type))
            and getattr(v, "__module__", None) != fn.__module__
        ):
            out.append(n)
    return out


def _imported_names(filename: str) -> frozenset | None:
    """The names an ``import`` binds at the top level of the file (or notebook cell) as
    ``linecache`` holds it -- the compiler's own test, ``is_import_originated``: a module bound
    by an assignment (``lib = sys.modules[__name__]``) is called with other instructions than
    an imported one. None where the file cannot be read or parsed (the names' values decide)."""
    text = "".join(linecache.getlines(filename))
    if not text:
        return None
    found = _IMPORTED.get(filename)
    if found is not None and found[0] == text:
        return found[1]
    try:
        top = symtable.symtable(text, filename, "exec")
    except (SyntaxError, ValueError):
        return None
    names = frozenset(s.get_name() for s in top.get_symbols() if s.is_imported())
    if len(_IMPORTED) >= 256:  # (a session that writes many files: the fuzzer's)
        _IMPORTED.clear()
    _IMPORTED[filename] = (text, names)
    return names


_IMPORTED: dict = {}  # filename -> (its text, the names its imports bind)


def _class_around(code) -> str | None:
    """The name of the class ``code``'s function is written in (a method, or a function in
    one), from its qualified name: a class's part is not followed by ``<locals>``."""
    parts = code.co_qualname.split(".")[:-1]
    while parts:
        last = parts.pop()
        if last == "<locals>":
            if parts:
                parts.pop()  # a function's name: look further out
            continue
        return last if last.isidentifier() else None
    return None


def _mangle(tree, owner: str) -> None:
    """Python's private names in a class: ``self.__k`` in ``class A`` is ``self._A__k`` (names,
    attributes and definitions are; a call's keywords are not). The emitted code is compiled
    outside the class, so it says so itself."""
    prefix = "_" + owner.lstrip("_")
    if prefix == "_":
        return

    def private(name) -> bool:
        return isinstance(name, str) and name.startswith("__") and not name.endswith("__")

    for n in A.walk(tree):
        if isinstance(n, A.Name) and private(n.id):
            n.id = prefix + n.id
        elif isinstance(n, A.Attribute) and private(n.attr):
            n.attr = prefix + n.attr
        elif isinstance(n, A.FunctionDef) and n is not tree and private(n.name):
            n.name = prefix + n.name
        elif isinstance(n, (A.Global, A.Nonlocal)):
            n.names = [prefix + x if private(x) else x for x in n.names]


def _explicit_super(tree) -> None:
    """``super()`` in a method is ``super(__class__, self)``: the class's cell and the method's
    first parameter, which Python finds by where the call stands -- in the emitted code the
    first parameter is the continuation, so it is said."""
    params = A.arg_names(tree.args)
    if not params:
        return
    for n in A.walk(tree):
        if isinstance(n, A.Call) and A.is_name(n.func, "super") and not n.args and not n.keywords:
            n.args = [
                A.copy_location(A.name("__class__"), n.func),
                A.copy_location(A.name(params[0]), n.func),
            ]


def _same_code(a, b) -> bool:
    """The same instructions, names and constants (those of functions inside, the same too);
    whether it is nested in a function aside."""
    return (
        (a.co_code == b.co_code or _same_instructions(a, b))
        and a.co_names == b.co_names
        and a.co_varnames == b.co_varnames
        and a.co_freevars == b.co_freevars
        and a.co_cellvars == b.co_cellvars
        and (a.co_argcount, a.co_posonlyargcount, a.co_kwonlyargcount)
        == (b.co_argcount, b.co_posonlyargcount, b.co_kwonlyargcount)
        and (a.co_flags | inspect.CO_NESTED) == (b.co_flags | inspect.CO_NESTED)
        and len(a.co_consts) == len(b.co_consts)
        and all(_same_constant(x, y) for x, y in zip(a.co_consts, b.co_consts))
    )


def _same_instructions(a, b) -> bool:
    """The same instructions but for what Python chooses by how the module binds a name: a
    method of a name a module imports is read as an attribute (``LOAD_ATTR``), of another one
    with ``LOAD_METHOD`` -- which moves the jumps' offsets (and may need an ``EXTENDED_ARG`` for
    one); they are compared as the instruction they go to."""
    return _instructions(a) == _instructions(b)


def _instructions(code) -> list:
    # (a method read as an attribute is called after a PUSH_NULL: left out, as LOAD_METHOD is
    # read as LOAD_ATTR; so is an EXTENDED_ARG -- the one instruction more moves later jumps'
    # offsets past 255 in one form and not the other, and ``dis`` gives the instruction after
    # it the whole argument; a jump is to the first instruction kept at or after its target)
    found = [i for i in dis.get_instructions(code) if i.opname not in _LEFT_OUT]
    index = {i.offset: n for n, i in enumerate(found)}
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    out = []
    for i in found:
        op = "LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname
        if i.opcode in jumps:
            target = i.argval
            while target not in index and target <= found[-1].offset:
                target += 2  # (past a PUSH_NULL left out)
            arg = index.get(target)
        elif isinstance(i.argval, (types.CodeType, float, complex)):
            arg = None  # (the constants are compared as such)
        else:
            arg = i.argval
        out.append((op, arg))
    return out


_LEFT_OUT = frozenset({"PUSH_NULL", "EXTENDED_ARG"})


def _same_constant(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, types.CodeType):
        return _same_code(a, b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_constant(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, complex)):
        return repr(a) == repr(b)  # (-0.0 and 0.0 apart, a nan equal to itself)
    return a == b


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


_STARTS = re.compile(r"\s*(def\s|async\s+def\s|@)")


def _quick_source_lines(code, filename: str):
    """``inspect.getsourcelines(code)`` without tokenizing the function to find where it ends
    (for speed: that was a fifth of parsing a long function), or None to ask inspect: the lines
    from its first line (a ``def`` or a decorator) to the last one its code or the code of a
    function in it was compiled from. What a ``def`` may end with that compiles to nothing (a
    ``pass``) may be left out; ``_still_the_source`` then checks what was compiled, as always,
    and inspect is asked where it does not match."""
    linecache.checkcache(filename)  # (as inspect does: the file may have changed on disk)
    lines = linecache.getlines(filename)
    first = code.co_firstlineno
    if not lines or not 0 < first <= len(lines) or not _STARTS.match(lines[first - 1]):
        return None
    last = first
    for c in (code, *_code_objects(code)):
        for _, end, _, _ in c.co_positions():
            if end is not None and end > last:
                last = end
    if last > len(lines):
        return None
    return lines[first - 1 : last], first


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


def _lambda_keywords(source: str) -> list:
    """Where each ``lambda`` keyword of ``source`` starts (not in strings or comments)."""
    offsets = [0]
    for line in source.splitlines(True):
        offsets.append(offsets[-1] + len(line))
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME and tok.string == "lambda":
                found.append(offsets[tok.start[0] - 1] + tok.start[1])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # (a fragment: unclosed brackets at its end; the keywords before are found)
    return found


def _parse_lambda_at(text: str):
    """The lambda ``text`` starts with: the longest start of it that parses as one (what
    follows may close an enclosing bracket or go on with a comma: ``lambda x: x,`` parses as
    a tuple), or None."""
    text = text.rstrip()
    while text:
        try:
            body = A.parse(text).body
        except SyntaxError:
            body = None
        if body and isinstance(body[0], A.Expr) and isinstance(body[0].value, A.Lambda):
            return body[0].value
        text = text[:-1].rstrip()
    return None


def _arg_names(lam) -> list:
    return [a.id for a in lam.args.args + lam.args.kwonlyargs]


def _shift(node, lines: int, cols: int) -> None:
    """Locations of a tree parsed from a fragment, made the source's: ``lines`` down, and
    ``cols`` right on the fragment's first line."""
    for n in A.walk(node):
        if getattr(n, "lineno", None) is None:
            continue
        if n.lineno == 1:
            n.col_offset += cols
        if getattr(n, "end_lineno", None) == 1 and n.end_col_offset is not None:
            n.end_col_offset += cols
        n.lineno += lines
        if getattr(n, "end_lineno", None) is not None:
            n.end_lineno += lines


def _compiles_to(lam, code) -> bool:
    """Does the lambda ``lam`` compile to the code ``code`` (its constants, parameters and the
    names it reads the same; a free variable compiles to a global read on its own)?"""
    try:
        module = compile(A.to_source(lam).strip(), "<lambda>", "eval")
    except SyntaxError:  # pragma: no cover - it parsed
        return False
    (new,) = [c for c in module.co_consts if isinstance(c, types.CodeType)]

    def consts(c):
        return [repr(x) for x in c.co_consts if not isinstance(x, types.CodeType)]

    return (
        new.co_argcount == code.co_argcount
        and new.co_kwonlyargcount == code.co_kwonlyargcount
        and new.co_varnames == code.co_varnames
        and consts(new) == consts(code)
        and set(new.co_names) | set(new.co_freevars) == set(code.co_names) | set(code.co_freevars)
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_lambda_source(source: str, fn) -> A.FunctionDef:
    """Find the lambda that compiled to ``fn`` in the lines that hold it; return it as a ``def``.

    The lines may be a fragment of a larger expression (``"a": lambda x: 2 * x,`` in a dict
    display, a call's last argument): the lambdas are read from each ``lambda`` keyword on, and
    of several with ``fn``'s parameters the one that compiles to ``fn``'s code is taken."""
    code = fn.__code__
    arg_names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    lambdas = []
    for at in _lambda_keywords(source):
        lam = _parse_lambda_at(source[at:])
        if lam is not None and _arg_names(lam) == arg_names:
            _shift(lam, source[:at].count("\n"), at - (source.rfind("\n", 0, at) + 1))
            lambdas.append(lam)
    if len(lambdas) > 1:
        lambdas = [lam for lam in lambdas if _compiles_to(lam, code)]
        if len({A.to_source(lam) for lam in lambdas}) == 1:
            lambdas = lambdas[:1]  # the same lambda written twice: either is the function
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
