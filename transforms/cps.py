"""After LowerCPS, shift and reset are gone: every continuation is a plain Python closure.

The rest of a block after a shift is its continuation, a function of the values the shift binds
that the shift's ``k(...)`` calls. A primitive's shift calls ``k`` exactly once, so its
continuation is written in place of that call -- the rest of the block, then the adjoint code
after it -- what defining ``def k_y(y)`` and inlining its one call would give, without making it
(most continuations are primitives'; the rest's new values are versioned as a nested function's
would be, so nothing the adjoint code after it reads is rebound). ``if`` statements with code
after them get one join continuation (``after_if_L12``), defined once and called at the end of
both branches. A call of a user function passes the continuation of the call (``after_g_L7``)
to the callee's backpropagator. ``return v`` calls the function's own continuation ``k``,
supplied by the caller (or by ``reset`` at the entry). The function becomes ``f_bp(k,
*params)``: it returns the adjoints of its active parameters, and so does every continuation,
of its own parameters::

    def f_bp(k, x):                         def f(x):
        x_bar = None                            y = x * x
        y = x * x                               return y
        y_bar = None          # the continuation of y = x * x, in place
        y_bar = acc(y_bar, k(y))
        y_bar = y_bar if y_bar is not None else zeros_like(y)
        x_bar = acc(x_bar, y_bar * x)
        x_bar = acc(x_bar, y_bar * x)
        return x_bar if x_bar is not None else zeros_like(x)

Adjoints are plain variables owned by the function that binds the value: a closure adds to an
enclosing one with ``nonlocal``. ``None`` is a zero adjoint inside a function; what a function or
continuation returns is never ``None``. Names a nested function would rebind are renamed
(``n`` -> ``n_1``) so that Python's scoping never turns a read into an ``UnboundLocalError``.
The output is deliberately naive -- Simplify makes it read like a hand-written backward pass.
"""

from __future__ import annotations

from . import anno
from . import astlib as A
from . import scoping as S
from .kinds import is_number
from .shift_reset import is_shift, shift_info
from .unit import UNKNOWN, Unit


def _bookkeeping(stmt):
    """Mark a statement that is plumbing, not the user's computation (no source comment)."""
    return anno.setanno(stmt, anno.BOOKKEEPING, True)


class _Bound(set):
    """A scope's bound names, each also recorded in the set ``known`` of every name bound."""

    def __init__(self, names, known: set):
        super().__init__(names)
        self.known = known
        known.update(self)

    def add(self, name) -> None:
        super().add(name)
        self.known.add(name)

    def update(self, *others) -> None:
        for o in others:
            o = list(o)
            super().update(o)
            self.known.update(o)

    def __ior__(self, other):
        self.update(other)
        return self


class Scope:
    """One Python function of the output: what it binds, and the adjoints it borrows."""

    def __init__(self, parent: Scope | None, params, cells=(), inline: bool = False, own=()):
        self.parent = parent
        self.params = frozenset(params)
        # ``own``: of a function of the input, the names local to it (``local_names``): one of
        # them never means an enclosing function's variable of that name, bound yet or not --
        # code transformed again names a continuation's local like a cell of the function around
        self.own = frozenset(own)
        # (``_Bound``: every name bound anywhere is also in ``known``, shared by all scopes --
        # a name in no scope's is found in none without a walk)
        self.known: set[str] = parent.known if parent is not None else set()
        self.bound = set(params) | set(cells)
        self.nonlocals: set[str] = set()
        self.cells: set[str] = set(cells)  # shared variables this function owns
        # ``inline``: a primitive's continuation, written in place (``LowerCPS.direct``): its
        # names are versioned as a nested function's would be, but they are locals of the
        # function it is in, which declares what they borrow.
        self._function = parent.function if inline else None  # (None: itself -- not a cycle)
        # what enclosing scopes bind, as looked up from here (``owner``): they bind no more
        # while this scope is in use -- it is lowered after theirs, and before any branch of
        # theirs is reset -- so the answer is found once
        self._outer: dict[str, Scope | None] = {}

    @property
    def function(self) -> Scope:
        return self if self._function is None else self._function

    def is_cell(self, name: str) -> bool:
        owner = self.owner(name)
        return owner is not None and name in owner.cells

    def write(self, name: str) -> None:
        """Assigning a cell variable from a function that does not own it: declare it nonlocal."""
        owner = self.owner(name)
        if owner is not None and owner.function is not self.function:
            self.function.nonlocals.add(name)

    @property
    def bound(self) -> set[str]:
        return self._bound

    @bound.setter
    def bound(self, names) -> None:
        self._bound = _Bound(names, self.known)

    def owner(self, name: str) -> Scope | None:
        """The scope that binds ``name`` as seen from here (None: none). A loop, not a
        recursion: a function of ten thousand statements is a chain of that many scopes."""
        if name in self._bound:
            return self
        if name not in self.known:
            return None
        path = []
        s = self
        found = None
        while s is not None:
            if s is not self and name in s._bound:
                found = s
                break
            if name in s.own:  # a local of this function, not bound yet: no outer variable
                break
            if name in s._outer:
                found = s._outer[name]
                break
            path.append(s)
            s = s.parent
        for p in path:
            p._outer[name] = found
        return found

    def bound_outside(self, name: str) -> bool:
        return self.parent is not None and self.parent.owner(name) is not None


def _own_names(fdef) -> set[str]:
    """The names local to ``fdef``: those it assigns, and those a shift in its own scope binds
    (``with shift('y') as k``: the assignment ``y = ...`` ShiftReset made into a shift). A name
    bound only by shifts is local too -- in code transformed again, a continuation's ``x_bar``
    assigned only by calls in both branches of an ``if`` was taken for the enclosing function's
    variable of that name (a cell there): the ``if``'s join read that one, None, not the
    branch's value."""
    own = set(S.local_names(fdef))
    for n in S.own_nodes(fdef):
        if is_shift(n):
            own.update(shift_info(n).binds)
    return own


_REST = A.Pass()  # where ``direct``'s continuation -- the rest of the block -- goes


def _guard_of(value):
    """``y_bar`` of the guard ``y_bar if y_bar is not None else zeros_like(y)``, else None."""
    if not (isinstance(value, A.IfExp) and anno.getanno(value, anno.GUARD)):
        return None
    t = value.test
    if (
        isinstance(t, A.Compare)
        and isinstance(t.left, A.Name)
        and isinstance(t.ops[0], A.IsNot)
        and A.is_name(value.body, t.left.id)
    ):
        return t.left.id
    return None


def _passes_on(stmt, bar: str) -> bool:
    """Is ``stmt`` ``x_bar = acc(x_bar, bar)`` (a copy's adjoint, absent where ``bar`` is)?"""
    v = stmt.value if isinstance(stmt, A.Assign) else None
    return isinstance(v, A.Call) and len(v.args) == 2 and A.is_name(v.args[1], bar)


def has_cps(stmt) -> bool:
    """Does the statement contain a shift or a return (so control must be continued)?"""
    for n in A.walk(stmt):
        if isinstance(n, A.Return) or is_shift(n):
            return True
    return False


def assigned_in(stmts) -> list[str]:
    """User names bound anywhere in ``stmts``, in order of first binding."""
    out: list[str] = []

    def add(n):
        if n not in out:
            out.append(n)

    # (a loop, not a local function calling itself: that is a reference cycle, which keeps
    # what it holds -- the tree -- alive until the garbage collector runs)
    todo = [iter(stmts)]  # the blocks being read, innermost last
    while todo:
        for s in todo[-1]:
            if is_shift(s):
                for b in shift_info(s).binds:
                    add(b)
            elif isinstance(s, A.Assign):
                for t in s.targets:
                    for n in A.walk(t):
                        if isinstance(n, A.Name) and isinstance(n.ctx, A.Store):
                            add(n.id)
            elif isinstance(s, A.If):
                todo += [iter(s.orelse), iter(s.body)]  # its body next, then its else
                break
        else:
            todo.pop()
    return out


def surely_assigned(stmts) -> set[str] | None:
    """Names ``stmts`` bind on every path through them that reaches their end (None: no path
    does -- each returns). ``assigned_in`` is what *may* be bound; an ``if`` without ``else``
    (or an ``elif`` chain without one) binds nothing surely."""
    out: set[str] = set()
    for s in stmts:
        if is_shift(s):
            out |= set(shift_info(s).binds)
        elif isinstance(s, A.Assign):
            out |= set(assigned_in([s]))
        elif isinstance(s, A.If):
            body, orelse = surely_assigned(s.body), surely_assigned(s.orelse)
            if body is None and orelse is None:
                return None
            out |= orelse if body is None else body if orelse is None else body & orelse
        elif isinstance(s, A.Return):
            return None
    return out


def read_in(stmts) -> set[str]:
    out: set[str] = set()
    for s in stmts:
        for n in A.walk(s):
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load):
                out.add(n.id)
    return out


def exposed_reads(stmts, assigned=frozenset()) -> set[str]:
    """Names ``stmts`` read before they assign them: what the code needs from before it."""
    out: set[str] = set()
    assigned = set(assigned)
    for s in stmts:
        if is_shift(s):
            info = shift_info(s)
            out |= read_in(s.body) - assigned - set(info.values)
            assigned |= set(info.binds)
        elif isinstance(s, A.If):
            out |= read_in([A.expr_stmt(s.test)]) - assigned
            out |= exposed_reads(s.body, assigned) | exposed_reads(s.orelse, assigned)
            assigned |= surely_assigned([s]) or set()
        elif isinstance(s, A.FunctionDef):
            assigned.add(s.name)
            out |= read_in(s.body) - assigned  # what the closure may read when it runs
        else:
            out |= read_in([s]) - assigned
            assigned |= set(assigned_in([s]))
    return out


def rename(node, mapping: dict[str, str], loads_only: bool = False, under: dict | None = None):
    """Rename Name nodes in place (all of them, or only reads), each once: a shift's statements
    may hold one Name node in two places (ShiftReset shares them within a shift). ``under``: the
    renaming of the names ``mapping`` does not map (a ``ChainMap`` of the two, without its cost
    per lookup)."""
    if not under and all(old == new for old, new in mapping.items()):
        return node  # (nothing renamed: most shifts' values keep their names)
    done = set()
    for n in S.name_nodes(node):
        new = mapping.get(n.id)
        if new is None and under is not None:
            new = under.get(n.id)
        if new is not None and id(n) not in done:
            if loads_only and not isinstance(n.ctx, A.Load):
                continue
            n.id = new
            done.add(id(n))
    return node


class Env(dict):
    """User name -> the name its value is bound to here, with the renaming that follows from it
    (``renaming``) kept up to date as names are rebound: rebuilt for every statement, it made a
    long function's lowering quadratic. Copy it with ``copy`` (a branch, a continuation)."""

    __slots__ = ("_renaming", "_pending")

    def __init__(self, entries=()):
        super().__init__()
        self._renaming: dict[str, str] = {}
        self._pending: dict[str, None] = {}  # names rebound since the renaming was brought up
        self.update(entries)

    def __setitem__(self, name, cur):
        super().__setitem__(name, cur)
        self._pending[name] = None

    def update(self, entries=(), **more):
        for name, cur in dict(entries, **more).items():
            self[name] = cur

    def setdefault(self, name, cur=None):
        if name not in self:
            self[name] = cur
        return self[name]

    def copy(self) -> Env:
        out = Env()
        dict.update(out, self)
        out._renaming = dict(self._renaming)
        out._pending = dict(self._pending)
        return out

    def renaming(self, bar) -> dict[str, str]:
        """Each user name bound to another name, and its adjoint (``bar(name)``) to that
        name's adjoint."""
        m = self._renaming
        for u in self._pending:
            cur = self[u]
            if u != cur:
                m[u] = cur
                m[bar(u)] = bar(cur)
            elif u in m:
                del m[u]
                m.pop(bar(u), None)
        self._pending.clear()
        return m


class LowerCPS:
    name = "cps"
    invariant = "shift/reset are plain closures: each continuation is a nested function"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.namer = unit.namer
        self.acc = unit.inject(unit.ctx.runtime("acc"), "acc")
        self.zeros = unit.inject(unit.ctx.runtime("zeros_like"), "zeros_like")
        fdef = unit.tree
        self.active = unit.active_by_scope[""]
        self.kinds = unit.kinds.get("", {})
        known = [p for p in unit.active if p in self.active]
        params = A.arg_names(fdef.args)
        self.maybe_none: set[str] = set()
        unit.tree = self.function(
            fdef, unit.bp_name, None, Env({p: p for p in params}), unit.active, known
        )
        # an adjoint's name is the same in every function that has a variable of that name: it
        # is never absent only if it starts at 0.0 in every one of them
        unit.never_none -= self.maybe_none

    def function(self, fdef, bp_name, parent, env, wrt, known):
        """``def bp_name(k, *params)``: the function's body in CPS, returning the adjoints of ``wrt``."""
        k = self.unit.cont_name  # the continuation of the whole function (ShiftReset named it)
        params = A.arg_names(fdef.args)
        cells = anno.getanno(fdef, anno.CELLS, set())
        # (the entry function's locals shadow nothing: it has no enclosing function here)
        own = _own_names(fdef) if parent is not None else ()
        if parent is None:
            # the names of enclosing scopes the entry function (or a function in it) assigns
            # by ``nonlocal`` -- emitted code transformed again: a backpropagator that adds to
            # its parent's adjoint -- are variables of a scope around it, shared: a
            # continuation that writes one declares it too
            declared = S.writes_through(fdef)
            outer = Scope(None, [], cells=declared) if declared else None
            scope = Scope(outer, [k, *params], cells, own=own)
        else:
            scope = Scope(parent, [k, *params], cells, own=own)
        body = []
        leading = set()  # `c = None` the function starts with already (Desugar's, for a loop)
        for st in fdef.body:
            if not (isinstance(st, A.Assign) and isinstance(st.targets[0], A.Name)):
                break
            if not (isinstance(st.value, A.Constant) and st.value.value is None):
                break
            leading.add(st.targets[0].id)
        for c in sorted(cells):  # bound here, so every closure below shares the one variable
            if c not in params and c not in leading:
                body.append(_bookkeeping(self.loc(A.assign(c, A.const(None)), fdef)))
        # every active parameter has an adjoint (a closure may add to it), not only those returned
        body += self.inits(
            [p for p in params if p in self.active] + sorted(cells & self.active), fdef
        )
        # A parameter that is a cell is never renamed (``plain``): where the function rebinds
        # it, the zero of its adjoint is shaped like the value it came in with, kept apart.
        entry = {}
        if cells.intersection(wrt):  # (for speed: the walk only where a parameter is a cell)
            rebound = set(assigned_in(fdef.body)) | {
                n.id for n in A.walk(fdef) if isinstance(n, A.Name) and isinstance(n.ctx, A.Store)
            }
            entry = {p: self.namer.version(p) for p in wrt if p in cells and p in rebound}
        for p, copy in entry.items():
            body.append(_bookkeeping(self.loc(A.assign(copy, A.name(p)), fdef)))
            scope.bound.add(copy)
        body += self.block(fdef.body, scope, env, tail=None)
        body += self.epilogue(list(wrt), fdef, known=known, entry=entry)
        if scope.nonlocals:
            body.insert(0, self.loc(A.nonlocal_(scope.nonlocals), fdef))
        args = A.deepcopy(fdef.args)
        args.args = [A.name(k, "param")] + args.args
        if args.posonlyargs:
            args.posonlyargs = [A.name(k, "param")] + args.posonlyargs
            args.args = args.args[1:]
        new = A.function(bp_name, args, body)
        return A.copy_location(new, fdef)

    def local_def(self, fdef, scope: Scope, env: Env) -> list:
        """A function defined inside: its backpropagator, defined where it was (a closure)."""
        key = anno.getanno(fdef, anno.DEF_KEY)
        info = self.unit.locals[key]
        d = A.deepcopy(fdef)
        for default in d.args.defaults + [x for x in d.args.kw_defaults if x is not None]:
            rename(default, self.env_map(env))
        # the name it binds (only where one is bound: a backpropagator called by name binds none)
        name = self.rebind(d.name, scope, env) if not info.transformed or info.escapes else None
        if not info.transformed:
            d.name = name
            S.rename_free(
                d.body, {u: c for u, c in self.env_map(env).items() if u not in A.arg_names(d.args)}
            )
            return [d]
        saved = self.active, self.kinds
        self.active, self.kinds = self.unit.active_by_scope[key], self.unit.kinds.get(key, {})
        inner_env = env.copy()
        inner_env.update({p: p for p in A.arg_names(d.args)})
        known = [p for p in info.active if p in self.active]  # an escaping function may have more
        bp = self.function(d, info.bp_name, scope, inner_env, info.active, known)
        self.active, self.kinds = saved
        scope.bound.add(info.bp_name)
        out = [bp]
        if info.escapes:  # used as a value: a callable that also carries its backpropagator
            closure = self.unit.inject(self.unit.ctx.runtime("Closure"), "Closure")
            out.append(self.loc(A.assign(name, A.call(closure, [A.name(info.bp_name)])), fdef))
        return out

    def rebind(self, n: str, scope: Scope, env: Env) -> str:
        """The name an assignment of the user's ``n`` here binds (``env`` then maps ``n`` to it):
        a shared variable's own, declared ``nonlocal`` where another function owns it; ``n``, or
        the version of ``n`` this scope already binds; else a new version -- where ``n`` is an
        enclosing function's (or a parameter, whose value is its adjoint's zero's shape), so that
        no closure made here before the assignment reads a local of this scope not bound yet."""
        if scope.is_cell(n):  # one shared variable: never renamed
            scope.write(n)
            return n
        cur = env.get(n)
        if cur is None:
            new = n
        elif scope.owner(cur) is scope and cur not in scope.function.params:
            new = cur
        else:
            new = self.namer.version(n)
        env[n] = new
        scope.bound.add(new)
        return new

    # ------------------------------------------------------------------ pieces

    def bar(self, name: str) -> str:
        return self.namer.adjoint(name)

    def inits(self, names, origin, renamed=None) -> list:
        """Adjoints start absent (``None``); a Python number's starts at ``0.0``, never absent.
        (``renamed``: the names the values of ``names`` are bound to, where not their own.)"""
        out = []
        for n in names:
            if n in self.active:
                bar = self.bar(renamed.get(n, n) if renamed else n)
                if is_number(self.kinds.get(n, UNKNOWN)):
                    self.unit.never_none.add(bar)
                    s = A.assign(bar, A.const(0.0))
                else:
                    self.maybe_none.add(bar)
                    s = A.assign(bar, A.const(None))
                out.append(_bookkeeping(self.loc(s, origin)))
        return out

    def epilogue(self, names, origin, known=None, renamed=None, entry=None) -> list:
        """``return`` the adjoints of ``names``: never None at a function's boundary. (``entry``:
        the names that hold a rebound parameter's value as it came in, its zero's shape.)"""
        known = [n for n in names if n in self.active] if known is None else known
        values = []
        for user in names:
            n = renamed.get(user, user) if renamed else user
            zero = A.call(self.zeros, [A.name(entry.get(user, n) if entry else n)])
            if user in known:
                bar = self.bar(n)
                test = A.Compare(left=A.name(bar), ops=[A.IsNot()], comparators=[A.const(None)])
                values.append(
                    anno.setanno(
                        A.IfExp(test=test, body=A.name(bar), orelse=zero), anno.GUARD, True
                    )
                )
            else:
                values.append(zero)
        if not values:
            return []
        value = values[0] if len(values) == 1 else A.tuple_(values)
        return [_bookkeeping(self.loc(A.return_(value), origin))]

    def accumulate(self, name: str, value, scope: Scope, origin):
        """``name_bar = acc(name_bar, value)``, borrowing the adjoint from its owner if need be."""
        bar = self.bar(name)
        owner = scope.owner(name)
        if owner is not None and owner.function is not scope.function:
            scope.function.nonlocals.add(bar)
        s = A.assign(bar, anno.setanno(A.call(self.acc, [A.name(bar), value]), anno.GUARD, True))
        return self.loc(s, origin)

    @staticmethod
    def loc(stmt, origin):
        return A.locate(stmt, origin)

    def env_map(self, env: Env) -> dict[str, str]:
        """Renaming of user names (and their adjoints) to the names currently bound (read it,
        do not change it: it is ``env``'s own)."""
        return env.renaming(self.bar)

    # ------------------------------------------------------------------ blocks

    def block(self, stmts, scope: Scope, env: Env, tail) -> list:
        """``stmts`` in continuation-passing style, then ``tail`` (what follows the block).

        A loop, not a recursion, over the primitives' shifts: each one's continuation is the
        rest of the block written in place (``direct``), so the output is the forward code of
        each in turn, then the adjoint code of each in reverse (``closing``) -- a function of
        ten thousand statements nests no Python frames here."""
        out: list = []
        closing: list = []  # the adjoint code of the shifts written in place, innermost last
        i, n = 0, len(stmts)
        ended = False  # control went on elsewhere (a continuation, a return): no tail here
        while i < n:
            s = stmts[i]
            i += 1
            if is_shift(s):
                body, info, values = self.open_shift(s, scope, env)
                opened = (
                    self.direct(s, body, info, values, scope, env)
                    if info.kind == "primitive"
                    else None
                )
                if opened is not None:
                    before, after, scope, env = opened
                    out += before
                    closing.append(after)
                    continue
                out += self.shift(s, body, info, values, stmts[i:], scope, env, tail)
                ended = True
                break
            if isinstance(s, A.If) and has_cps(s):
                out += self.if_(s, stmts[i:], scope, env, tail)
                ended = True
                break
            if isinstance(s, A.Return):
                out += self.return_(s, scope, env)
                ended = True
                break
            if isinstance(s, A.FunctionDef):
                out += self.local_def(s, scope, env)
                continue
            if isinstance(s, A.Nonlocal):
                continue  # declared where needed, for the functions the lowering creates
            out += self.plain(s, scope, env)
        if not ended and tail is not None:
            out += tail(scope, env)
        for after in reversed(closing):
            out += after
        return out

    def plain(self, s, scope: Scope, env: Env) -> list:
        """An inactive statement: reads renamed to current names; rebinding of outer names versioned."""
        s = A.deepcopy(s)
        out = []
        targets = assigned_in([s])
        if isinstance(s, A.If):
            # Its branches bind in this scope: copy outer values in first, so both agree on names.
            for n in targets:
                if scope.is_cell(n):
                    scope.write(n)
                    continue
                cur = env.get(n)
                if cur is not None and scope.owner(cur) is not scope:
                    new = self.namer.version(n)
                    out.append(self.loc(A.assign(new, A.name(cur)), s))
                    env[n] = new
                    scope.bound.add(new)
            rename(s, self.env_map(env))
            for n in targets:
                env.setdefault(n, n)
                scope.bound.add(env[n])
            return out + [s]
        rename(s, self.env_map(env), loads_only=True)
        for n in targets:
            new = self.rebind(n, scope, env)
            if new != n:
                for t in A.walk(s):
                    if isinstance(t, A.Name) and t.id == n and isinstance(t.ctx, A.Store):
                        t.id = new
        return out + [s]

    # ------------------------------------------------------------------ shifts

    def open_shift(self, s, scope: Scope, env: Env):
        """The shift's statements with the names it binds -- renamed if an enclosing function
        binds the name -- bound in ``scope``: ``(body, info, values)``."""
        info = shift_info(s)
        # The statements move, uncopied: LowerCPS lowers each once, into a new tree (Name nodes
        # ShiftReset shares are shared within one shift's statements only; ``rename`` renames
        # each once).
        body = s.body
        mapping: dict[str, str] = {}
        values = []
        for v in info.values:
            new = self.namer.version(v) if scope.owner(v) is not None else v
            values.append(new)
            mapping[v] = new
            mapping[self.bar(v)] = self.bar(new)
        rename(body, mapping, under=self.env_map(env))
        scope.bound.update(values)
        return body, info, values

    def shift(self, s, body, info, values, rest, scope: Scope, env: Env, tail) -> list:
        """A shift whose continuation is a function (a call's, or a primitive's whose ``k`` is
        not called once): ``def after_g_L7(y): <the rest>``, given to the callee."""
        kname = (
            self.namer.continuation(info.label)
            if info.kind == "primitive"
            else self.namer.call_continuation(info.label, s.lineno)
        )
        cont = Scope(scope, info.binds)
        cont_env = env.copy()
        cont_env.update({b: b for b in info.binds})
        cont_body = self.inits(info.binds, s)
        cont_body += self.block(rest, cont, cont_env, tail)
        if info.result_read:  # a callee's result active in it though unused here: its
            # adjoint is zero, never absent (the callee's rules read it)
            cont_body += self.epilogue(list(info.binds), s)
        else:
            cont_body += self.epilogue([b for b in info.binds if b in self.active], s)
        if cont.nonlocals:
            cont_body.insert(0, self.loc(A.nonlocal_(cont.nonlocals), s))
        if not cont_body:
            cont_body = [self.loc(A.Pass(), s)]
        cont_def = self.loc(A.function(kname, A.params(info.binds), cont_body), s)
        anno.setanno(cont_def, anno.CONT, info.kind)

        return self.around(s, body, info, scope, [cont_def], None)

    def direct(self, s, body, info, values, scope: Scope, env: Env):
        """A primitive's continuation is called once, where the shift's ``k(...)`` is: the rest
        of the block goes there in place -- what inlining the continuation would give, without
        making it first (most continuations are primitives'). The rest's names are versioned as
        in a nested function (``Scope(inline=True)``), so it rebinds nothing the statements
        after it read; the shift's values keep their names (no parameter to copy them into).

        ``(before, after, scope, env)``: the statements before the rest (the forward operation,
        the adjoints' starts), those after it (the adjoint rules), and the scope and names the
        rest is lowered in (``block`` lowers it). None where the call is not a plain ``bars =
        k(values)``."""
        calls = [
            stmt
            for stmt in body
            if isinstance(stmt, (A.Assign, A.Expr))
            and isinstance(stmt.value, A.Call)
            and A.is_name(stmt.value.func, info.k)
        ]
        if len(calls) != 1:  # pragma: no cover - primitive_shift and store write it once
            return None
        k_stmt = calls[0]
        if [a.id if isinstance(a, A.Name) else None for a in k_stmt.value.args] != values:
            return None  # pragma: no cover - `bars = k(values)`, in primitive_shift and store
        renamed = dict(zip(info.binds, values))
        cont = Scope(scope, [], inline=True)
        env.update(renamed)  # (in place: the block goes on in the rest, and only there)
        actives = [b for b in info.binds if b in self.active]
        # `bars = k(values)` for the active values, `k(values)` where none is
        assert bool(actives) == isinstance(k_stmt, A.Assign), "a primitive's k call and its binds"
        skip = None  # the adjoint whose absence skips the rules (see ``around``)
        closing = []  # after the rest: the adjoints it handed back
        if len(actives) == 1 and A.is_name(k_stmt.targets[0], self.bar(renamed[actives[0]])):
            # the rest hands back ``y_bar if y_bar is not None else zeros_like(y)``, the guard of
            # the target itself (for speed: that epilogue is not made, as for most shifts)
            skip = k_stmt.targets[0].id
        elif actives:
            result = self.epilogue(actives, s, renamed=renamed)
            target, value = k_stmt.targets[0], result[0].value
            if isinstance(target, A.Tuple) and isinstance(value, A.Tuple):
                # one by one: each reads only its own adjoint, and Simplify follows single copies
                for t, v in zip(target.elts, value.elts):
                    closing.append(self.loc(A.assign(A.store(t.id), v), s))
            elif isinstance(target, A.Name) and _guard_of(value) == target.id:
                skip = target.id
            else:
                closing.append(self.loc(A.assign(target, value), s))
        out = self.around(s, body, info, scope, [_REST], k_stmt, skip)
        at = out.index(_REST)
        before = out[:at] + self.inits(info.binds, s, renamed)
        return before, closing + out[at + 1 :], cont, env

    def around(self, s, body, info, scope: Scope, cont, k_stmt, skip=None) -> list:
        """The shift's own statements with its continuation -- ``cont``, a definition, or the
        rest of the block in place of ``k_stmt`` -- where ``k`` is first called.

        ``skip``: the adjoint of the value the rest of the block handed back, which may be
        absent. The adjoint code after the continuation then runs under ``if y_bar is not
        None:`` -- a zero adjoint contributes nothing, and the rules are not run on a zero that
        would have to be made first (where the forward value overflowed, ``0 * inf`` would
        make a NaN out of nothing). Simplify keeps the ``if`` only where it depends on the path.
        (The shift's statements are where ShiftReset located them, at its line: for speed, they
        are not located again.)"""
        out = []
        after = None  # the statements after the continuation, where they go under ``skip``
        placed = False
        for stmt in body:
            if (
                isinstance(stmt, A.Assign)
                and isinstance(stmt.targets[0], A.Name)
                and scope.is_cell(stmt.targets[0].id)
            ):  # the forward store of a cell write
                scope.write(stmt.targets[0].id)
            if isinstance(stmt, A.AugAssign):  # x_bar += e: accumulate into the owner's adjoint
                primal = self.namer.primal(stmt.target.id)
                out.append(self.accumulate(primal, stmt.value, scope, s))
                continue
            if (
                isinstance(stmt, A.Assign)
                and isinstance(stmt.targets[0], A.Name)
                and self.namer.primal(stmt.targets[0].id) is not None
                and placed
            ):  # x_bar = e after the continuation: a write of the owner's adjoint
                owner = scope.owner(self.namer.primal(stmt.targets[0].id))
                if owner is not None and owner.function is not scope.function:
                    scope.function.nonlocals.add(stmt.targets[0].id)
                out.append(stmt)
                continue
            if stmt is k_stmt:
                out += cont
                placed = True
                if skip is not None:
                    test = A.Compare(
                        left=A.name(skip), ops=[A.IsNot()], comparators=[A.const(None)]
                    )
                    guard = anno.setanno(self.loc(A.if_(test, []), s), anno.GUARD, True)
                    out.append(guard)
                    after, out = out, guard.body
                continue
            if k_stmt is not None:  # k is called there, and only there
                out.append(stmt)
                continue
            calls = [n for n in A.walk(stmt) if isinstance(n, A.Name) and n.id == info.k]
            if calls and not placed:
                for n in calls:
                    n.id = cont[0].name
                out += cont
                placed = True
            out.append(stmt)
        if after is not None:  # ``out`` is the body of the guard, the last of ``after``
            if all(_passes_on(stmt, skip) for stmt in out):
                after[-1:] = out  # no rule to skip: ``x_bar = acc(x_bar, y_bar)`` adds nothing
            return after
        return out

    # ------------------------------------------------------------------ if

    def if_(self, s, rest, scope: Scope, env: Env, tail) -> list:
        test = rename(A.deepcopy(s.test), self.env_map(env))
        if not rest:
            body, orelse = self.branches(s, scope, env, tail)
            return [self.loc(A.if_(test, body, orelse), s)]

        needed = exposed_reads(rest) | getattr(tail, "uses", set())
        joins = [n for n in assigned_in([s]) if n in needed and not scope.is_cell(n)]
        jname = self.namer.join_continuation(s.lineno)
        join = Scope(scope, joins)
        join_env = env.copy()
        join_env.update({j: j for j in joins})
        jbody = self.inits(joins, s)
        jbody += self.block(rest, join, join_env, tail)
        jbody += self.epilogue([j for j in joins if j in self.active], s)
        if join.nonlocals:
            jbody.insert(0, self.loc(A.nonlocal_(join.nonlocals), s))
        if not jbody:
            jbody = [self.loc(A.Pass(), s)]
        jdef = self.loc(A.function(jname, A.params(joins), jbody), s)
        anno.setanno(jdef, anno.CONT, "join")

        def join_tail(branch_scope: Scope, branch_env: Env) -> list:
            args = []
            for j in joins:
                cur = branch_env.get(j)
                args.append(A.name(cur) if cur is not None else A.const(None))
            call = A.call(jname, args)
            actives = [(j, branch_env.get(j)) for j in joins if j in self.active]
            if not actives:
                return [_bookkeeping(self.loc(A.expr_stmt(call), s))]
            got = [self.namer.fresh(f"{j}_bar_join") for j, _ in actives]
            if len(got) == 1:
                out = [self.loc(A.assign(got[0], call), s)]
            else:
                out = [self.loc(A.assign(A.tuple_([A.store(g) for g in got], "store"), call), s)]
            for (_, cur), g in zip(actives, got):
                if cur is not None:
                    out.append(self.accumulate(cur, A.name(g), branch_scope, s))
            return [_bookkeeping(x) for x in out]

        join_tail.uses = set(joins)
        body, orelse = self.branches(s, scope, env, join_tail)
        return [jdef, self.loc(A.if_(test, body, orelse), s)]

    def branches(self, s, scope: Scope, env: Env, tail):
        """Lower both branches; a name bound in one is not bound on the other's path."""
        before = set(scope.bound)
        body = self.block(s.body, scope, env.copy(), tail) or [A.Pass()]
        after_body, scope.bound = scope.bound, set(before)
        orelse = self.block(s.orelse, scope, env.copy(), tail)
        scope.bound |= after_body
        return body, orelse

    # ------------------------------------------------------------------ return

    def return_(self, s, scope: Scope, env: Env) -> list:
        functions = {info.name for info in self.unit.locals.values()}
        active = (
            isinstance(s.value, A.Name)
            and s.value.id in self.active
            and s.value.id not in functions
        )  # a function returned as a value has no adjoint: what it closes over gets them
        value = rename(A.deepcopy(s.value), self.env_map(env))
        call = A.call(self.unit.cont_name, [value])
        if active:
            owner = scope.owner(value.id)
            k_owner = scope.owner(self.unit.cont_name)
            if (
                owner is not None
                and owner.function is not scope.function
                and (k_owner is None or k_owner.function is not owner.function)
            ):
                # The adjoint belongs to an enclosing function, and the continuation -- the rest
                # of the program, from a caller inside that function -- may add to it too (a
                # second call of this function): call it first, then read the adjoint, not
                # `x_bar = acc(x_bar, k(x))`.
                got = self.namer.fresh(f"{self.bar(value.id)}_k")
                return [
                    self.loc(A.assign(got, call), s),
                    self.accumulate(value.id, A.name(got), scope, s),
                ]
            return [self.accumulate(value.id, call, scope, s)]
        return [self.loc(A.expr_stmt(call), s)]

    @staticmethod
    def check(unit: Unit) -> None:
        for n in A.walk(unit.tree):
            assert not is_shift(n), "a shift survived lowering"
