"""Metamorphic rewrites: the same function written another way, source to source.

``variant(source, kind, rng)`` returns the module's source with ``f`` rewritten, or None where
``kind`` does not apply. Each rewrite keeps what Python computes (``compare`` checks that first:
a variant whose plain value differs is not a variant), so cpsad must give the same value and the
same gradient, to rounding:

* ``rename`` -- every name ``f`` binds renamed;
* ``extract`` -- one ``name = expr`` of ``f`` becomes a call of a new module-level helper of the
  expression's free variables;
* ``lambda`` -- ``name = expr`` becomes ``name = (lambda: expr)()``;
* ``apply`` -- ``name = expr`` becomes ``name = apply(lambda _: expr, 0.0)``;
* ``unroll`` -- ``for i in range(K)`` (no ``break``/``continue``/``return`` in it) unrolled;
* ``split_tuple`` -- ``a, b = e1, e2`` becomes temporaries and single assignments;
* ``aug`` -- ``y += v`` becomes ``y = y + v``, and ``y = y + v`` becomes ``y += v``;
* ``module`` -- each call in ``f`` of a module-level function ``h(...)`` becomes
  ``lib.h(...)``, ``lib`` the module itself (``sys.modules[__name__]``): a helper reached
  through a module's attribute, as ``import helpers; helpers.h(x)`` reaches it.
"""

from __future__ import annotations

import ast
import builtins
import copy

KINDS = ("rename", "extract", "lambda", "apply", "unroll", "split_tuple", "aug", "module")


def _entry(tree):
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")


def _bound_in(fn) -> set:
    """Names bound anywhere inside ``fn`` (its parameters, nested scopes' too)."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn:
            out.add(node.name)
    return out


def _module_names(tree) -> set:
    out = set(dir(builtins))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def rename(tree, rng):
    fn = _entry(tree)
    names = _bound_in(fn)
    new = {n: f"r_{n}" for n in names}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in new:
            node.id = new[node.id]
        elif isinstance(node, ast.arg) and node.arg in new:
            node.arg = new[node.arg]
        elif isinstance(node, ast.FunctionDef) and node is not fn and node.name in new:
            node.name = new[node.name]
        elif isinstance(node, ast.Nonlocal):
            node.names = [new.get(n, n) for n in node.names]
    return bool(names)


def _top_assigns(fn):
    """``name = expr`` statements at the top level of ``f``'s body (not inside branches), whose
    expression binds no name (a walrus's would move into the helper or lambda it is put in)."""
    return [
        (i, s)
        for i, s in enumerate(fn.body)
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and not isinstance(s.value, (ast.Lambda, ast.Name, ast.Constant))
        and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(s.value))
    ]


def _free_locals(expr, fn) -> list:
    bound_inside = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.arg):
            bound_inside.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound_inside.add(node.id)
    locals_ = _bound_in(fn)
    seen = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in locals_ and node.id not in bound_inside and node.id not in seen:
                seen.append(node.id)
    return seen


def extract(tree, rng):
    fn = _entry(tree)
    sites = _top_assigns(fn)
    if not sites:
        return False
    _, stmt = rng.choice(sites)
    params = _free_locals(stmt.value, fn)
    name = "extracted_helper"
    helper = ast.parse(f"def {name}({', '.join(params)}):\n    return 0\n").body[0]
    helper.body[0].value = stmt.value
    stmt.value = ast.parse(f"{name}({', '.join(params)})", mode="eval").body
    tree.body.insert(tree.body.index(fn), helper)
    return True


def wrap_lambda(tree, rng):
    fn = _entry(tree)
    sites = _top_assigns(fn)
    if not sites:
        return False
    _, stmt = rng.choice(sites)
    call = ast.parse("(lambda: 0)()", mode="eval").body
    call.func.body = stmt.value
    stmt.value = call
    return True


APPLY = "def apply(fn, v):\n    return fn(v)\n"


def through_apply(tree, rng):
    fn = _entry(tree)
    sites = _top_assigns(fn)
    if not sites:
        return False
    _, stmt = rng.choice(sites)
    if "apply" not in _module_names(tree):
        tree.body.insert(tree.body.index(fn), ast.parse(APPLY).body[0])
    call = ast.parse("apply(lambda unused: 0, 0.0)", mode="eval").body
    call.args[0].body = stmt.value
    stmt.value = call
    return True


def _jumps(stmts) -> bool:
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
                return True
    return False


def unroll(tree, rng):
    fn = _entry(tree)
    sites = []
    for owner in ast.walk(fn):
        for fld in ("body", "orelse"):
            lst = getattr(owner, fld, None)
            if not isinstance(lst, list):
                continue
            for i, s in enumerate(lst):
                if (
                    isinstance(s, ast.For)
                    and not s.orelse
                    and isinstance(s.target, ast.Name)
                    and isinstance(s.iter, ast.Call)
                    and isinstance(s.iter.func, ast.Name)
                    and s.iter.func.id == "range"
                    and len(s.iter.args) == 1
                    and isinstance(s.iter.args[0], ast.Constant)
                    and isinstance(s.iter.args[0].value, int)
                    and 0 < s.iter.args[0].value <= 4
                    and not _jumps(s.body)
                ):
                    sites.append((lst, i, s))
    if not sites:
        return False
    lst, i, loop = rng.choice(sites)
    out = []
    for k in range(loop.iter.args[0].value):
        out.append(ast.Assign([ast.Name(loop.target.id, ast.Store())], ast.Constant(k)))
        out.extend(copy.deepcopy(loop.body))
    lst[i : i + 1] = out
    return True


def split_tuple(tree, rng):
    fn = _entry(tree)
    sites = []
    for owner in ast.walk(fn):
        for fld in ("body", "orelse"):
            lst = getattr(owner, fld, None)
            if not isinstance(lst, list):
                continue
            for i, s in enumerate(lst):
                if (
                    isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Tuple)
                    and isinstance(s.value, ast.Tuple)
                    and len(s.targets[0].elts) == len(s.value.elts)
                    and all(isinstance(t, ast.Name) for t in s.targets[0].elts)
                ):
                    sites.append((lst, i, s))
    if not sites:
        return False
    lst, i, s = rng.choice(sites)
    temps = [f"tmp_split_{k}" for k in range(len(s.value.elts))]
    out = [ast.Assign([ast.Name(t, ast.Store())], v) for t, v in zip(temps, s.value.elts)]
    out += [
        ast.Assign([ast.Name(tg.id, ast.Store())], ast.Name(t, ast.Load()))
        for tg, t in zip(s.targets[0].elts, temps)
    ]
    lst[i : i + 1] = out
    return True


def aug(tree, rng):
    fn = _entry(tree)
    sites = []
    for owner in ast.walk(fn):
        for fld in ("body", "orelse"):
            lst = getattr(owner, fld, None)
            if not isinstance(lst, list):
                continue
            for i, s in enumerate(lst):
                if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                    sites.append((lst, i, s))
                elif (
                    isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name)
                    and isinstance(s.value, ast.BinOp)
                    and isinstance(s.value.left, ast.Name)
                    and s.value.left.id == s.targets[0].id
                ):
                    sites.append((lst, i, s))
    if not sites:
        return False
    lst, i, s = rng.choice(sites)
    if isinstance(s, ast.AugAssign):
        new = ast.Assign(
            [ast.Name(s.target.id, ast.Store())],
            ast.BinOp(ast.Name(s.target.id, ast.Load()), s.op, s.value),
        )
    else:
        new = ast.AugAssign(ast.Name(s.targets[0].id, ast.Store()), s.value.op, s.value.right)
    lst[i] = new
    return True


def through_module(tree, rng):
    fn = _entry(tree)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} - {"f"}
    sites = [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in defined
        and node.func.id not in _bound_in(fn)
    ]
    if not sites or "lib" in _module_names(tree) or "lib" in _bound_in(fn):
        return False
    for call in sites:
        call.func = ast.Attribute(ast.Name("lib", ast.Load()), call.func.id, ast.Load())
    head = ast.parse("import sys\nlib = sys.modules[__name__]\n").body
    at = max(
        (i + 1 for i, n in enumerate(tree.body) if isinstance(n, ast.Import | ast.ImportFrom)),
        default=0,
    )
    tree.body[at:at] = head
    return True


REWRITES = {
    "rename": rename,
    "extract": extract,
    "lambda": wrap_lambda,
    "apply": through_apply,
    "unroll": unroll,
    "split_tuple": split_tuple,
    "aug": aug,
    "module": through_module,
}


def variant(source: str, kind: str, rng) -> str | None:
    tree = ast.parse(source)
    if not REWRITES[kind](tree, rng):
        return None
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


def rewritten(program, kind: str, rng=None):
    """``program`` (a ``Program``) rewritten by ``kind``, with the same arguments -- itself where
    the rewrite does not apply. ``rng`` by default is seeded by the program's seed and ``kind``."""
    import random

    from tests.fuzz.gen import Program

    rng = random.Random(f"{program.seed}:{kind}") if rng is None else rng
    src = variant(program.source, kind, rng)
    if src is None:
        return program
    p = program
    return Program(p.seed, src, p.params, p.features, p.attempt, p.args())


_RESULTS: dict = {}


def run(prog):
    """(Python's value, cpsad's (value, gradients) or the exception it raised), or None where the
    program does not run in plain Python; kept by source (a base is run once for all variants)."""
    import numpy as np

    import cpsad
    from tests.fuzz.oracle import load, plain_value, unload

    if prog.source in _RESULTS:
        return _RESULTS[prog.source]
    mod, _ = load(prog.source, f"meta{prog.seed}")
    try:
        want = plain_value(mod.f, prog)
        if want is None:
            out = None
        else:
            try:
                with np.errstate(all="ignore"):
                    vg = cpsad.value_and_grad(mod.f, argnums=prog.float_argnums)
                    out = (want, vg(*prog.args()))
            except Exception as exc:
                out = (want, exc)
    finally:
        unload(mod)
    if len(_RESULTS) < 512:
        _RESULTS[prog.source] = out
    return out


def compare(base, kind: str, rng, rtol: float = 1e-9):
    """(status, detail) of cpsad on ``base`` (a ``Program``) and its ``kind`` variant:
    "same", "n/a" (the rewrite does not apply, or changes what Python computes), or "differs"."""
    import numpy as np

    other = rewritten(base, kind, rng)
    if other is base:
        return "n/a", "no site for the rewrite"
    src = other.source
    ra, rb = run(base), run(other)
    if ra is None:
        return "n/a", "the base does not run in plain Python"
    if rb is None:
        return "n/a", "the variant does not run in plain Python"
    (want_a, a), (want_b, b) = ra, rb
    if want_a != want_b and not np.isclose(want_a, want_b, rtol=1e-12, atol=0):
        return "n/a", f"the rewrite changes what Python computes: {want_a!r} vs {want_b!r}"
    if isinstance(a, Exception):
        return "n/a", f"cpsad fails on the base: {type(a).__name__}: {a}"
    if isinstance(b, Exception):
        first = str(b).splitlines()[0] if str(b) else ""
        return "differs", f"the variant fails: {type(b).__name__}: {first}\n{src}"
    (va, ga), (vb, gb) = a, b
    if not np.isclose(va, vb, rtol=rtol, atol=1e-12):
        return "differs", f"values {va!r} vs {vb!r}\n{src}"
    for i, (x, y) in enumerate(zip(ga, gb)):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.shape != y.shape or not np.allclose(x, y, rtol=rtol, atol=1e-10):
            return "differs", f"gradient {i}: {x!r} vs {y!r}\n{src}"
    return "same", ""
