"""After Defunctionalize, a loop's chain of continuations is a stack of saved frames, not recursion.

Desugar turns a loop into a recursive local function, and CPS makes its backpropagator call
itself once per iteration, handing the same continuation ``k`` down: each level runs one
iteration forward, calls the next level, and on the way back runs that iteration's adjoints. The
continuation of iteration ``i`` is "the rest of the loop, then ``k``, then iteration ``i``'s
backward part" -- a chain of closures that Python keeps as a chain of frames, one per iteration.

This pass represents that chain as data (Reynolds's defunctionalization): what one level's
backward part reads from its frame is pushed on a list, and the two halves become two ``while``
loops -- forward, pushing frames; the end of the loop (the call of ``k``); backward, popping them::

    def loop_L3_bp(k, i, x):              def loop_L3_bp(k, i, x):
        if i < n:                             frames = []
            x_2 = x * w + ...                 while i < n:
            x_bar = loop_L3_bp(k, i + 1, x_2)     x_2 = x * w + ...
            ...backward, reads x...               frames.append(x)
        else:                     ->             i, x = i + 1, x_2
            x_bar = k(x)                      x_bar = k(x)
        return x_bar                          while frames:
                                                  x = frames.pop()
                                                  ...backward, reads x...
                                              return x_bar

The program computes exactly what it did -- each level's backward part sees the values its frame
held -- without a Python call per iteration or a stack as deep as the loop is long.

Only the shape above is rewritten: a local function whose one self-call is at the top level of the
branch that continues, with no nested functions (a closure made in an iteration would capture that
iteration's variables) and every value the backward part reads definitely assigned before the
self-call. Anything else -- a loop whose body calls a user function, an ``if`` whose join is a
continuation -- keeps its recursion, which is correct, only slower. A self-call in tail position
(``return loop(...)``: nothing to do on the way back, as in forward mode) needs no frames at all:
the loop rebinds its parameters and goes round again (staged: also where it runs an inner loop).

Staged code (``cpsad.jit``; Joins ran before, inlining the joins of the loop body's ifs)
goes further, since Numba compiles no recursion:

* each saved value has its own stack (``frames_x``), typed by Numba from its values;
* a value assigned in one branch of an ``if`` whose condition Joins saved (``branch = c``) is
  pushed at the end of that branch and popped at the start of the same branch of the backward
  part's ``if branch:``;
* a loop that calls itself from several branches (``continue``) or leaves from several
  (``break``) is first made to call itself once (``joins.one_self_call``); what follows the
  ``if`` runs after either branch -- for the last level on the way out (``joins.leaving``),
  and in the backward loop for the levels that went on (``joins.reaching``);
* a ``break`` in one branch of an ``if`` whose other branch goes on: the levels that went on
  took the other branch, and their backward part is that branch alone -- as is the leaving
  level's the branch it left by (``_known_conditions``: the saved conditions every path that
  reaches the self-call, or leaves, tested one way);
* what the backward part needs saved is what it may read before assigning it (``_exposed``);
* a loop whose body runs a loop: the inner one, rewritten first, is inlined with the
  continuation it was given -- the rest of the outer body, which calls the outer loop again
  (``inline_inner_loops``) -- and the outer loop is rewritten in turn. The inner loop's stacks
  are made once, before the outer loop; each outer iteration saves where its inner frames
  start (``frames_x_mark = len(frames_x)``), and the inner backward loop pops down to there
  (``hoist_stacks``). An inner loop that leaves by ``break`` keeps the outer one recursive:
  the values of its last iteration, which the outer backward part reads, exist only on the
  paths that made them.
"""

from __future__ import annotations

from . import astlib as A
from . import templates
from .flatten import Flatten
from .joins import (
    leaving,
    one_self_call,
    reaching,
    remove,
    statement_lists,
    unmarked,
    walk_own_statements,
)
from .scoping import local_names
from .unit import Unit


class Defunctionalize:
    name = "defunctionalize"
    invariant = "a loop's chain of continuations is a stack of saved frames, walked by two loops"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        rewritten = []
        functions = A.function_defs(unit.tree)
        if unit.staged:  # (inner loops first: a loop rewritten is inlined into the one around it)
            functions.reverse()
        for f in functions:
            if f is unit.tree:
                continue
            if unit.staged:
                self.inline_inner_loops(f)
            if self.rewrite(f) or unit.staged and _tail_loop(f, unit.namer):
                rewritten.append(f.name)
        unit.notes[self.name] = [", ".join(rewritten) or "nothing to rewrite"]

    def inline_inner_loops(self, f) -> None:
        """Staged: a loop ``f`` whose body runs a loop -- the inner loop's function, rewritten,
        called once with a continuation that runs the rest of ``f``'s body and calls ``f`` again
        -- gets them inlined (Flatten's inlining: each called once), so that its own self-call
        stands in its body and ``f`` is rewritten in turn. The inner loop's stacks then belong
        to each iteration of ``f``: ``hoist_stacks`` makes them one stack for all of them."""
        nested = [s for s in walk_own_statements(f.body) if isinstance(s, A.FunctionDef)]
        if not nested or _mentions(f.body, f.name) == 0:
            return
        if any(_mentions(d.body, d.name) for d in nested):
            return  # (a loop in it kept its recursion)
        inliner = Flatten.inliner(self.unit)
        while nested:
            for d in nested:
                own = local_names(f)  # (before: what the inlined code binds is not yet here)
                declares = [s for s in walk_own_statements(d.body) if isinstance(s, A.Nonlocal)]
                if inliner.inline(f, d):
                    _settle_nonlocals(f, declares, own)
                    break
            else:
                break
            nested = [s for s in walk_own_statements(f.body) if isinstance(s, A.FunctionDef)]

    # ------------------------------------------------------------------ matching

    def rewrite(self, f) -> bool:
        staged = self.unit.staged
        if staged and f.body and not _has_return(f.body) and _mentions(f.body, f.name):
            # (a loop that carries nothing back -- a ``return`` inside it hands its value to
            # ``k`` -- ends without a ``return``: the same as ``return None``, the form matched)
            f.body.append(A.copy_location(A.Return(value=None), f.body[-1]))
        if staged:  # (a loop with ``continue`` or ``break``: one self-call, after its branches)
            params = A.arg_names(f.args)
            calls = [s for s in walk_own_statements(f.body) if _self_call(s, f.name, len(params))]
            direct = [
                c
                for s in f.body
                if isinstance(s, A.If)
                for c in calls
                if any(c is x for x in s.body + s.orelse)
            ]
            if calls and len(direct) < len(calls) or len(calls) > 1:
                if _mentions(f.body, f.name) == len(calls):
                    one_self_call(f, calls, self.unit.namer.fresh)
        shape = _shape(f, post=staged)
        if shape is None:
            return False
        decls, pre, branch, tail = shape
        # (staged: what follows the if before the return -- a `break`'s loop: the backward part
        # of the statements before the test -- runs after either branch: on the way out, and
        # after each iteration's backward part)
        post, tail = tail[:-1], tail[-1:]
        params = A.arg_names(f.args)
        if staged and not any(_self_call(s, f.name, len(params)) for s in branch.body):
            # the loop goes on in the else branch (``if done: ... else: loop(...)``)
            test = A.UnaryOp(op=A.Not(), operand=branch.test)
            branch = A.copy_location(
                A.If(test=test, body=branch.orelse, orelse=branch.body), branch
            )
        body, orelse = branch.body, branch.orelse
        calls = [i for i, s in enumerate(body) if _self_call(s, f.name, len(params))]
        if len(calls) != 1 or _mentions(f.body, f.name) != 1:
            return False
        at = calls[0]
        call_stmt = body[at]
        forward, backward = body[:at], body[at + 1 :]
        if _has_return([*pre, *forward, *backward, *post]):
            return False
        if post and isinstance(call_stmt, A.Return):  # (a tail call: post is the exit's alone)
            if _has_return(orelse):
                return False
            orelse, post = [*orelse, *post], []
        if post:
            if _has_return(orelse):
                return False
            # (the levels that went on took the paths to the self-call: ``reaching``, which also
            # knows the saved conditions every such path tested one way: ``_known_conditions``)
            reach, leave = _known_conditions(f, pre, branch) if staged else ({}, {})
            orelse = [*orelse, *leaving(post, leave)]
            backward = [*backward, *reaching(post, reach)]
        # parameters every level passes on unchanged (the continuation k): never saved
        assigned = _stores(f.body)
        invariant = {
            p for p, a in zip(params, call_stmt.value.args) if A.is_name(a, p) and p not in assigned
        }
        tail_call = isinstance(call_stmt, A.Return)
        if tail_call:
            if _has_return(orelse[:-1]):
                return False
            result = None
        else:
            if _has_return(orelse) or not (len(tail) == 1 and isinstance(tail[0], A.Return)):
                return False
            result = tail[0].value if tail[0].value is not None else A.const(None)
        declared = {n for d in decls for n in d.names}
        definite = set(params) | _top_level_stores(pre) | _top_level_stores(forward)
        if staged:  # (and what every path to the self-call assigns: ``_reached_stores``)
            definite |= _reached_stores(pre) | _reached_stores(forward)
        maybe = _stores([*pre, *forward])
        if staged:  # (what the backward part reads before it assigns it, on some path)
            needed = _exposed(
                [*backward, A.Expr(value=result)] if result is not None else backward
            )[0]
        else:
            needed = _loads([*backward, result] if result is not None else backward)
        # (staged: an inner loop's stacks, made in each iteration, become one for all of them)
        inner = _inner_stacks(forward, backward) if staged else {}
        saved = sorted((needed & (maybe | set(params))) - declared - invariant - set(inner))
        branches = []
        if self.unit.staged:  # (a join inlined by Joins: values of one branch, saved there)
            wanted = {v for v in saved if v not in definite}
            branches = _branch_saves(_reached_view([*pre, *forward]), backward, wanted)
            saved = [v for v in saved if not any(v in names for _, _, names in branches)]
        defaults = []
        if any(v not in definite for v in saved):
            maybe_unset = [v for v in saved if v not in definite]
            if not staged or not _read_where_set([*pre, *forward], backward, maybe_unset):
                return False  # a value the backward part reads may not exist at the self-call
            # (conditions an inner loop's last turn set, read where it set them: typed before)
            defaults = [_at(A.assign(A.store(v), A.const(False)), branch) for v in maybe_unset]
        hoisted, marks = self.hoist_stacks(inner, forward)
        saved = sorted(saved + marks)
        f.body = [
            *decls,
            *defaults,
            *hoisted,  # (the inner loops' stacks, made once, before this loop's)
            *self.loops(
                f, branch, pre, forward, call_stmt, backward, orelse, tail, saved, result, branches
            ),
        ]
        if staged:  # (its joins' marks are done with: the loop around, inlining it, has its own)
            _unmark(f.body)
        return True

    def hoist_stacks(self, inner: dict, forward: list) -> tuple[list, list]:
        """Staged: the stacks of the loops run in an iteration (``inner``, from
        ``_inner_stacks``) are made once, before the loop -- ``(their inits, the marks)``. Each
        iteration notes where its inner loop's frames start (``mark = len(frames_x)``, saved
        with the iteration's frame), and the inner backward loop pops down to that mark: the
        iterations meet in reverse on the way back, each popping what it pushed. (A list of
        lists, one per iteration, measured 9 times slower in Numba than one list and a mark.)"""
        hoisted, marks = [], []
        for name, (init, tests) in inner.items():
            at = next(i for i, s in enumerate(forward) if s is init)
            hoisted.append(init)
            if not tests:  # (a branch's own stack: its pops follow the saved conditions)
                del forward[at]
                continue
            mark = self.unit.namer.fresh(f"{name}_mark")
            length = A.call(A.name("len"), [A.name(name)])
            forward[at] = A.copy_location(A.assign(A.store(mark), length), init)
            for w in tests:
                w.test = A.Compare(left=w.test, ops=[A.Gt()], comparators=[A.name(mark)])
            marks.append(mark)
        return hoisted, marks

    # ------------------------------------------------------------------ rewriting

    def loops(
        self, f, branch, pre, forward, call_stmt, backward, orelse, tail, saved, result, branches
    ):
        at = branch
        call = call_stmt.value
        params = A.arg_names(f.args)
        moves = [(p, a) for p, a in zip(params, call.args) if not A.is_name(a, p)]
        step = []
        if moves:
            targets = [A.store(p) for p, _ in moves]
            values = [a for _, a in moves]
            step = [
                (
                    A.assign(targets[0], values[0])
                    if len(moves) == 1
                    else A.assign(A.tuple_(targets, "store"), A.tuple_(values))
                )
            ]
        if pre:  # statements before the test run once more when the loop ends
            head = A.const(True)
            test = branch.test
            if isinstance(test, A.UnaryOp) and isinstance(test.op, A.Not):
                stop = A.if_(test.operand, [A.Break()])  # (not a ``not not``)
            else:
                stop = A.if_(A.UnaryOp(op=A.Not(), operand=test), [A.Break()])
            loop_body = [*pre, stop, *forward]
        else:
            head, loop_body = branch.test, list(forward)
        if isinstance(call_stmt, A.Return):  # a tail call: nothing to do on the way back
            loop = A.While(test=head, body=loop_body + step, orelse=[])
            return [_at(loop, at), *orelse, *tail]
        frames = self.unit.namer.fresh("frames")
        branch_stacks: dict = {}  # a branch's own stacks (``_branch_saves``)
        stand_ins = self.shape_only(
            backward, saved + [n for _, _, names in branches for n in names], result
        )
        like = self.unit.inject(self.unit.ctx.runtime("like"), "like") if stand_ins else None
        if self.unit.staged:
            stacks = _slot_stacks(self.unit.namer, frames, saved)
            push, restore = _push_and_pop_slots(stacks, saved, stand_ins, like)
            for forward_block, backward_block, names in branches:
                own = _slot_stacks(self.unit.namer, frames, sorted(names))
                pushed, popped = _push_and_pop_slots(own, sorted(names), stand_ins, like)
                forward_block.extend(pushed)
                backward_block[:0] = popped
                branch_stacks.update(own)
        else:
            stacks = {frames: None}
            push, restore = _push_and_pop(frames, saved, stand_ins, like)
        forward_loop = A.While(test=head, body=loop_body + push + step, orelse=[])
        target = call_stmt.targets[0] if isinstance(call_stmt, A.Assign) else None
        back = []
        if target is not None:
            if A.names_in(result) & set(saved):  # the result must be read before the frame
                value = self.unit.namer.fresh("returned")
                back = [A.assign(A.store(value), result), *restore]
                back.append(A.assign(target, A.name(value)))
            else:
                pairs = _pairs(target, result)
                back = list(restore)
                if pairs is None:  # not names: the whole value, as it was
                    back.append(A.assign(target, A.deepcopy(result)))
                else:
                    kept = [(t, r) for t, r in pairs if not _rename_if_safe(backward, t, r)]
                    targets = [A.store(t) for t, _ in kept]
                    values = [A.name(r) for _, r in kept]
                    if len(kept) == 1:
                        back.append(A.assign(targets[0], values[0]))
                    elif kept:
                        back.append(A.assign(A.tuple_(targets, "store"), A.tuple_(values)))
        else:
            back = restore
        body = back + backward
        before, after = self.local_accumulators(f, body, set(stacks) | set(branch_stacks))
        first = next(iter(stacks))
        counted = self.unit.staged and not saved
        # (Numba: ``while frames`` converts the list to a bool at every turn -- a fifth of the
        # scalar loop's time; ``len`` is a field)
        test = A.call(A.name("len"), [A.name(first)]) if self.unit.staged else A.name(first)
        test = (
            A.Compare(left=A.name(first), ops=[A.Gt()], comparators=[A.const(0)])
            if counted
            else test
        )
        backward_loop = A.While(test=test, body=body, orelse=[])
        empty = A.const(0) if counted else A.List(elts=[], ctx=A.Load())
        inits = [A.assign(A.store(s), A.deepcopy(empty)) for s in stacks]
        inits += [A.assign(A.store(s), A.List(elts=[], ctx=A.Load())) for s in branch_stacks]
        if self.unit.staged:
            for init in inits if not counted else inits[len(stacks) :]:
                init.stack = True  # (a stack the loop around this one may hoist: _inner_stacks)
        return [
            *[_at(init, at) for init in inits],
            _at(forward_loop, at),
            *orelse,
            *[_at(s, at) for s in before],
            _at(backward_loop, at),
            *[_at(s, at) for s in after],
            *tail,
        ]

    def shape_only(self, backward, saved, result) -> set:
        """The saved values the backward part reads only where a helper reads their shape and type
        (``unbroadcast(g, add)``): a frame holds a stand-in for them (``like(add)``), not the
        array, so that the loop does not keep every iteration's intermediate arrays alive -- an
        RNN step's sums and products, kept only for their shapes, made its steps 1.4 ms slower
        (out of 11) by holding 50 x 110 kB of memory the allocator could not reuse."""
        marked = set()  # the Name nodes at shape-only argument positions
        loaded = []  # every Name read
        for node in (n for s in backward for n in A.walk(s)):
            if isinstance(node, A.Name) and isinstance(node.ctx, A.Load):
                loaded.append(node)
            if not (isinstance(node, A.Call) and isinstance(node.func, A.Name)):
                continue
            fn = self.unit.injected.get(node.func.id)
            params = self.unit.ctx.shape_only(fn) if fn is not None else ()
            if not params:
                continue
            names = []
            for p in templates.parameters(fn).values():
                if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    break
                names.append(p.name)
            args = [a for i, a in enumerate(node.args) if i < len(names) and names[i] in params]
            args += [k.value for k in node.keywords if k.arg in params]
            marked.update(id(a) for a in args if isinstance(a, A.Name))
        elsewhere = {n.id for n in loaded if id(n) not in marked}
        if result is not None:
            elsewhere |= A.names_in(result)
        return {n for n in saved if n not in elsewhere}

    def local_accumulators(self, f, body, frames: set):
        """Adjoints of enclosing functions the backward loop adds to (``nonlocal w_bar``) live in
        locals while it runs -- a cell costs more on every access -- when nothing called in it
        can see them (it calls only helpers and module functions)."""
        declared = {n for s in f.body if isinstance(s, A.Nonlocal) for n in s.names}
        written = _stores(body) & declared
        helpers = (set(self.unit.injected) - set(self.unit.callees)) | frames
        for n in (x for s in body for x in A.walk(s)):
            if isinstance(n, A.Call):
                func = n.func
                if not (A.dotted(func) and A.dotted(func).split(".")[0] in helpers):
                    if not (isinstance(func, A.Attribute) and isinstance(func.value, A.Name)):
                        return [], []
                    if func.value.id not in helpers and func.value.id not in _stores(body):
                        return [], []
        renames = {n: self.unit.namer.fresh(f"{n}_local") for n in sorted(written)}
        if not renames:
            return [], []
        for s in body:
            for n in A.walk(s):
                if isinstance(n, A.Name) and n.id in renames:
                    n.id = renames[n.id]
        numbers = self._numbers()
        self.accumulate_in_place(body, [new for old, new in renames.items() if old not in numbers])
        before = [A.assign(A.store(new), A.name(old)) for old, new in renames.items()]
        after = [A.assign(A.store(old), A.name(new)) for old, new in renames.items()]
        return before, after

    def accumulate_in_place(self, body, names) -> None:
        """``x = x + e`` (or ``acc(x, e)``) of the loop's own accumulators ``names`` becomes
        ``x = acc_into(x, e)``: the statement rebinds ``x``, so the runtime may add into the value
        when ``x`` alone holds it -- the RNN's parameter adjoints, a dict of arrays summed over
        its 50 steps, were a new dict and new arrays at every step."""
        if not names:
            return
        acc = self.unit.injected.get("acc")
        into = None
        for s in (n for stmt in body for n in A.walk(stmt)):
            if not (isinstance(s, A.Assign) and len(s.targets) == 1):
                continue
            target, v = s.targets[0], s.value
            if not (isinstance(target, A.Name) and target.id in names):
                continue
            if isinstance(v, A.BinOp) and isinstance(v.op, A.Add) and A.is_name(v.left, target.id):
                args = [v.left, v.right]
            elif (
                isinstance(v, A.Call)
                and isinstance(v.func, A.Name)
                and acc is not None
                and self.unit.injected.get(v.func.id) is acc
                and len(v.args) == 2
                and A.is_name(v.args[0], target.id)
            ):
                args = list(v.args)
            else:
                continue
            if into is None:
                into = self.unit.inject(self.unit.ctx.runtime("acc_into"), "acc_into")
            s.value = A.copy_location(A.call(A.name(into), args), v)
        for name, obj in list(self.unit.injected.items()):  # acc, if no call of it is left
            if obj is acc and not any(A.is_name(n, name) for n in A.walk(self.unit.tree)):
                del self.unit.injected[name]

    def _numbers(self) -> set:
        """The adjoints that start at ``0.0`` (numbers', which ``+`` adds best)."""
        return {
            t.id
            for n in A.walk(self.unit.tree)
            if isinstance(n, A.Assign)
            and isinstance(n.value, A.Constant)
            and type(n.value.value) is float
            for t in n.targets
            if isinstance(t, A.Name)
        }


# ---------------------------------------------------------------------- helpers


def _tail_loop(f, namer) -> bool:
    """Staged code: a function whose every call of itself is a tail call (``return f(...)``,
    forward mode's loops, from several branches: ``continue``, ``break``) becomes a ``while
    True`` loop -- each such ``return`` assigns the parameters and goes round again. Its body
    may run loops (inner loops, rewritten and inlined) where no ``return`` is inside one."""
    params = A.arg_names(f.args)
    a = f.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults or not params:
        return False
    tails = [
        s
        for s in walk_own_statements(f.body)
        if isinstance(s, A.Return) and _self_call(s, f.name, len(params))
    ]
    if not tails or _mentions(f.body, f.name) != len(tails):
        return False
    if any(
        isinstance(n, (A.FunctionDef, A.Lambda, A.Try, A.Yield, A.YieldFrom))
        for s in f.body
        for n in A.walk(s)
    ):
        return False
    # (an inner loop, rewritten and inlined, stays: the ``continue`` and ``break`` written
    # for the ``return``s would be its own inside it)
    if any(
        isinstance(n, A.Return)
        for s in f.body
        for loop in A.walk(s)
        if isinstance(loop, (A.While, A.For))
        for n in A.walk(loop)
    ):
        return False
    decls = [s for s in f.body if isinstance(s, (A.Nonlocal, A.Global))]
    body = [s for s in f.body if not isinstance(s, (A.Nonlocal, A.Global))]
    for s in tails:
        targets = A.tuple_([A.store(p) for p in params], "store")
        step = A.copy_location(A.assign(targets, A.tuple_(list(s.value.args))), s)
        remove_and_insert(body, s, [step, A.copy_location(A.Continue(), s)])
    # the other returns leave the loop with the result, returned after it (one return, at
    # the end: what Flatten inlines)
    result = namer.fresh("result")
    for s in [x for x in walk_own_statements(body) if isinstance(x, A.Return)]:
        value = s.value if s.value is not None else A.const(None)
        leave = [
            A.copy_location(A.assign(A.store(result), value), s),
            A.copy_location(A.Break(), s),
        ]
        remove_and_insert(body, s, leave)
    loop = A.copy_location(A.While(test=A.const(True), body=body, orelse=[]), f)
    f.body = decls + [loop, A.copy_location(A.return_(A.name(result)), f)]
    return True


def remove_and_insert(body: list, old, new: list) -> None:
    """``old`` (a statement somewhere in ``body``'s blocks) replaced by ``new``."""
    for s in [None, *walk_own_statements(body)]:
        blocks = (
            [body] if s is None else [getattr(s, b) for b in ("body", "orelse") if hasattr(s, b)]
        )
        for block in blocks:
            for i, x in enumerate(block):
                if x is old:
                    block[i : i + 1] = new
                    return
    raise AssertionError("statement not found")


def _shape(f, post=False):
    """``(declarations, statements before the test, the if, what follows it)`` or None. What
    follows is a ``return``, or with ``post`` (staged) statements before it; staged, the body
    may hold ``while`` loops (inner loops, rewritten and inlined)."""
    a = f.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults or not a.args:
        return None
    kept_out = (A.FunctionDef, A.Lambda, A.For, A.Try, A.Yield, A.YieldFrom)
    if not post:
        kept_out += (A.While,)
    if f.decorator_list or any(isinstance(n, kept_out) for n in A.walk(f) if n is not f):
        return None
    body = list(f.body)
    decls = []
    while body and isinstance(body[0], (A.Nonlocal, A.Global)):
        decls.append(body.pop(0))
    ifs = [i for i, s in enumerate(body) if isinstance(s, A.If)]
    if post:  # (the one holding the self-call: One_self_call puts branches before it)
        ifs = [i for i in ifs if _mentions([body[i]], f.name)] or ifs
    if not ifs:
        return None
    i = ifs[0]
    pre, branch, tail = body[:i], body[i], body[i + 1 :]
    if tail and not isinstance(tail[-1], A.Return):
        return None
    if len(tail) > 1 and not (post and not _has_return(tail[:-1])):
        return None
    return decls, pre, branch, tail


def _pairs(target, result):
    """``[(t, r), ...]`` for ``T = R`` of names or tuples of names of the same length, else None."""
    if isinstance(target, A.Name) and isinstance(result, A.Name):
        return [(target.id, result.id)]
    if (
        isinstance(target, A.Tuple)
        and isinstance(result, A.Tuple)
        and len(target.elts) == len(result.elts)
        and all(isinstance(e, A.Name) for e in target.elts + result.elts)
    ):
        return [(t.id, r.id) for t, r in zip(target.elts, result.elts)]
    return None


def _rename_if_safe(stmts, t: str, r: str) -> bool:
    """Read ``r`` where ``stmts`` read ``t`` (the copy ``t = r`` before them then goes), if
    ``t`` is never written in them and every read of it comes before ``r`` is written."""
    if t == r or t in _stores(stmts):
        return False

    def restores(s):  # r = t: a no-op once t is r
        return isinstance(s, A.Assign) and A.is_name(s.targets[0], r) and A.is_name(s.value, t)

    reads = [i for i, s in enumerate(stmts) if t in _loads([s]) and not restores(s)]
    writes = [i for i, s in enumerate(stmts) if r in _stores([s]) and not restores(s)]
    if reads and writes:
        last, first = max(reads), min(writes)
        same_ok = last == first and isinstance(stmts[last], A.Assign)  # read, then stored
        if last > first or (last == first and not same_ok):
            return False
    stmts[:] = [s for s in stmts if not restores(s)]
    for s in stmts:
        for n in A.walk(s):
            if isinstance(n, A.Name) and n.id == t:
                n.id = r
    return True


def _self_call(s, fname, nparams) -> bool:
    """``t = f(...)``, ``f(...)`` or ``return f(...)``: the next level, all parameters passed."""
    if isinstance(s, A.Assign) and len(s.targets) == 1:
        value = s.value
    elif isinstance(s, (A.Expr, A.Return)):
        value = s.value
    else:
        return False
    return (
        isinstance(value, A.Call)
        and A.is_name(value.func, fname)
        and not value.keywords
        and len(value.args) == nparams
        and not any(isinstance(x, A.Starred) for x in value.args)
    )


def _mentions(stmts, name) -> int:
    return sum(1 for s in stmts for n in A.walk(s) if A.is_name(n, name))


def _has_return(stmts) -> bool:
    return any(isinstance(n, A.Return) for s in stmts for n in A.walk(s))


def _branch_saves(forward: list, backward: list, wanted: set) -> list:
    """Where the values ``wanted`` -- read by the backward part, assigned only in a branch of the
    forward part -- can be saved: ``(forward block, backward block, names)`` for each branch of
    an ``if`` of the forward part whose condition, saved in a name, an ``if`` of the backward part
    tests again (Joins makes them: ``branch = c``), where the names are assigned on every run
    of the forward block and read only in the backward block. Pushed at the end of the one,
    popped at the start of the other: the backward loop meets the iterations in reverse, each
    taking the branch it took forward, so each branch's stack is popped in the order pushed."""
    ifs = {s.test.id: s for s in forward if isinstance(s, A.If) and isinstance(s.test, A.Name)}
    out = []
    for b in backward:
        if not (isinstance(b, A.If) and isinstance(b.test, A.Name) and b.test.id in ifs):
            continue
        if b.test.id in _stores(forward[forward.index(ifs[b.test.id]) + 1 :]) | _stores(backward):
            continue  # (the condition changed after the forward if)
        fwd = ifs[b.test.id]
        for fb, bb in ((fwd.body, b.body), (fwd.orelse, b.orelse)):
            here = wanted & _loads(bb)
            elsewhere = _loads([x for x in backward if x is not b])
            elsewhere |= _loads(b.orelse if bb is b.body else b.body)
            names = {v for v in here & _reached_stores(fb) if v not in elsewhere}
            at = _push_point(fb, names) if names else None
            if at is not None:
                out.append((at, bb, names))
                wanted = wanted - names
            out += _branch_saves(_reached_view(fb), bb, wanted & here)
            wanted = wanted - {v for _, _, ns in out for v in ns}
    return out


def _push_point(block: list, names: set) -> list | None:
    """The statement list at whose end to push ``names``, assigned in ``block``: its end -- or,
    where it ends in an ``if`` one branch of which leaves the loop (``skips_join``), the end of
    the other branch, so that only the levels that go on push. None where a path that leaves
    does so elsewhere in it, or a name is not assigned by then."""
    skipping = [
        s
        for s in _outside_inner_loops(block)
        if isinstance(s, A.If) and getattr(s, "skips_join", None)
    ]
    if not skipping:  # (every path through it assigns them: in a branch or an inner loop too)
        return block if names <= _reached_stores(block) else None
    last = block[-1]
    if not (isinstance(last, A.If) and getattr(last, "skips_join", None)):
        return None
    if any(
        isinstance(s, A.If) and getattr(s, "skips_join", None)
        for s in _outside_inner_loops(block[:-1])
    ):
        return None
    arm = last.orelse if last.skips_join == "body" else last.body
    return _push_point(arm, names - _reached_stores(block[:-1]))


def _unmark(body: list) -> None:
    """``body`` and every block in it without the marks of paths that skip a join
    (``joins.unmarked``)."""
    body[:] = unmarked(body)
    for s in walk_own_statements(body):
        for field in ("body", "orelse"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and not isinstance(s, A.FunctionDef):
                kept = unmarked(block)
                block[:] = kept or ([A.Pass()] if field == "body" else [])


def _outside_inner_loops(block: list):
    """The statements of ``block`` and of its branches, not those of inner loops (rewritten:
    their own joins' ``if``s are theirs)."""
    stack = list(reversed(block))
    while stack:
        s = stack.pop()
        if isinstance(s, (A.While, A.FunctionDef)):
            continue
        yield s
        if isinstance(s, A.If):
            stack.extend(reversed(s.orelse))
            stack.extend(reversed(s.body))


def _reached_view(stmts: list) -> list:
    """The statements of ``stmts`` on the paths that reach the join: an ``if`` one of whose
    branches skips it is the other branch's statements (the same objects)."""
    out = []
    for s in stmts:
        skips = getattr(s, "skips_join", None) if isinstance(s, A.If) else None
        if skips == "body":
            out += _reached_view(s.orelse)
        elif skips == "orelse":
            out += _reached_view(s.body)
        else:
            out.append(s)
    return out


def _reached_stores(stmts: list) -> set:
    """Names every path through ``stmts`` that reaches the join assigns: an ``if`` one of whose
    branches skips it (marked ``skips_join`` by ``joins._split``) counts the other branch."""
    out = set()
    for s in stmts:
        if isinstance(s, A.If):
            skips = getattr(s, "skips_join", None)
            yes, no = _reached_stores(s.body), _reached_stores(s.orelse)
            out |= no if skips == "body" else yes if skips == "orelse" else yes & no
        elif isinstance(s, A.While):  # (an inner loop: every turn runs its body to the stop)
            # (whatever join it reaches or skips: its ``if``s' marks are its own join's)
            out |= _assigned_under(_last_turns([s]), {})
        else:
            out |= _top_level_stores([s])
    return out


def _read_where_set(forward: list, backward: list, names: list) -> bool:
    """Staged: are ``names`` -- saved at the self-call but not assigned on every path to it --
    conditions (``branch = a < b``) that an inner loop's last turn assigned, which the backward
    part reads only under the tests of the ``if``s that assigned them? An inner loop, flattened,
    leaves by its last turn's path, and the backward part retraces that path from its saved
    conditions: where it reads a name, the forward part assigned it. Such a name may then be
    given a value before the loop (a default never read) and saved like the others. (A read
    under no test, or a name assigned other than by a comparison: no.)"""
    view = _last_turns(_reached_view(forward))  # (the paths that reach the self-call)
    changed = _stores(backward)

    def condition(v) -> bool:  # (assigned once, a comparison; the backward part keeps it)
        stores = [n for s in forward for n in A.walk(s) if _stored(n, v)]
        assigned = [e for s in walk_own_statements(forward) for t, e in _assignments(s) if t == v]
        return (
            len(stores) == 1
            and len(assigned) == 1
            and isinstance(assigned[0], (A.Compare, A.BoolOp))
            and v not in changed
        )

    for v in names:
        if not condition(v):
            return False
        for guards in _guarded_reads(backward, v, {}):
            if not all(condition(g) for g in guards) or v not in _assigned_under(view, guards):
                return False
    return True


def _known_conditions(f, pre: list, branch) -> tuple[dict, dict]:
    """Staged: ``({condition: value}, {condition: value})`` -- the saved conditions (``branch
    = c`` by Joins, then ``if branch:``) that every path of one level reaching the self-call,
    and every path leaving the loop, tested the same way. ``if branch: x_bar = k(x)`` (a
    ``break``) in one branch of an ``if`` whose other branch goes on: the levels that went on
    had ``branch`` false, the one that left by it true. ``pre`` is the level's forward part,
    ``branch`` the ``if flag:`` around the self-call.

    Read where the backward part tests such a condition, it is the value said: a level reads it
    only where its forward part assigned it (the Python backpropagator, the same code, raises
    no UnboundLocalError), and it is assigned once, right before the one ``if`` testing it --
    which each path through ``pre`` records. Found by walking ``pre``'s paths (at most
    ``_PATHS``; nothing where it holds a loop), following the names assigned constants (the
    flags Joins sets, ``joining = True``) and copies of them (``branch_2 = joining``): a path
    whose flag is not known counts as both."""
    if not isinstance(branch.test, A.Name):
        return {}, {}
    flag = branch.test.id
    stores: dict = {}
    for n in A.walk(f):
        if isinstance(n, A.Name) and isinstance(n.ctx, (A.Store, A.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    tested: dict = {}  # condition -> ifs testing it right after its one assignment
    for block in statement_lists(pre):
        for a, b in zip(block, block[1:]):
            (t, _), *_ = _assignments(a) or [(None, None)]
            if t is not None and isinstance(b, A.If) and A.is_name(b.test, t) and stores[t] == 1:
                tested[t] = tested.get(t, 0) + 1
    paths = _paths(pre, [((), {})])
    if paths is None:
        return {}, {}
    seen: tuple = ({}, {})  # (reaching, leaving): condition -> the branches taken
    for decisions, env in paths:
        for side, skip in zip(seen, (False, True)):
            if env.get(flag) is not skip:
                for c, took in decisions:
                    side.setdefault(c, set()).add(took)
    return tuple(
        {c: ways.pop() for c, ways in side.items() if len(ways) == 1 and tested.get(c) == 1}
        for side in seen
    )


_PATHS = 256  # the most paths ``_known_conditions`` walks through one level's forward part


def _paths(stmts: list, paths: list) -> list | None:
    """Each of ``paths`` -- ``(decisions, constants)``: the ``if``s on a name and the branch
    taken, in order, and the names known to hold ``True`` or ``False`` -- continued through
    ``stmts``, an ``if`` on a known name taking its one branch; None past ``_PATHS`` paths, or
    where ``stmts`` hold a loop."""
    for s in stmts:
        if isinstance(s, A.If):
            c = s.test.id if isinstance(s.test, A.Name) else None
            out = []
            for block, took in ((s.body, True), (s.orelse, False)):
                step = [
                    (d + ((c, took),) if c is not None else d, env)
                    for d, env in paths
                    if c is None or env.get(c, took) is took
                ]
                more = _paths(block, step) if step else []
                if more is None:
                    return None
                out += more
            if len(out) > _PATHS:
                return None
            paths = out
        elif isinstance(s, (A.While, A.For)):
            return None
        elif isinstance(s, (A.Return, A.Raise)):
            return []  # (a path that leaves here reaches nothing after it)
        else:
            written = _stores([s])
            if not written:
                continue
            (t, value), *_ = _assignments(s) or [(None, None)]
            out = []
            for d, env in paths:
                env = {k: v for k, v in env.items() if k not in written}
                if isinstance(value, A.Constant) and type(value.value) is bool:
                    env[t] = value.value
                elif isinstance(value, A.Name) and value.id in env and value.id != t:
                    env[t] = env[value.id]
                out.append((d, env))
            paths = out
    return paths


def _stored(n, v: str) -> bool:
    return isinstance(n, A.Name) and n.id == v and isinstance(n.ctx, (A.Store, A.Del))


def _assignments(s) -> list:
    """``[(name, value)]`` of a statement ``name = value`` (else nothing)."""
    if isinstance(s, A.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], A.Name):
        return [(s.targets[0].id, s.value)]
    return []


def _last_turns(stmts: list) -> list:
    """``stmts`` with each inner loop (``while True``, rewritten) as its last turn: the part of
    its body before its ``if not joining: break`` -- what the turn that leaves runs."""
    out = []
    for s in stmts:
        if isinstance(s, A.While) and isinstance(s.test, A.Constant) and s.test.value is True:
            stop = next((i for i, b in enumerate(s.body) if _is_stop(b)), None)
            if stop is not None:
                out += _last_turns(s.body[:stop])
            continue
        if isinstance(s, A.If):
            s = A.If(test=s.test, body=_last_turns(s.body), orelse=_last_turns(s.orelse))
        out.append(s)
    return out


def _is_stop(s) -> bool:
    """``if not joining: break``"""
    return (
        isinstance(s, A.If)
        and isinstance(s.test, A.UnaryOp)
        and isinstance(s.test.op, A.Not)
        and isinstance(s.test.operand, A.Name)
        and len(s.body) == 1
        and isinstance(s.body[0], A.Break)
        and not s.orelse
    )


def _guarded_reads(stmts: list, v: str, guards: dict):
    """For each read of ``v`` in ``stmts``: the tests (name -> the branch taken) of the ``if``s
    around it, as a dict; a read in a test counts under the tests around that ``if``."""
    for s in stmts:
        if isinstance(s, A.If) and isinstance(s.test, A.Name):
            if s.test.id == v:
                yield dict(guards)
            for branch, taken in ((s.body, True), (s.orelse, False)):
                yield from _guarded_reads(branch, v, {**guards, s.test.id: taken})
        elif v in _loads([s]):
            yield dict(guards)


def _assigned_under(stmts: list, guards: dict) -> set:
    """Names every path through ``stmts`` assigns on which the tests ``guards`` names take the
    branches it says (no guards: every path), marks of joins aside."""
    out = set()
    for s in stmts:
        if isinstance(s, A.If):
            t = s.test.id if isinstance(s.test, A.Name) else None
            if t in guards:
                out |= _assigned_under(s.body if guards[t] else s.orelse, guards)
            else:
                out |= _assigned_under(s.body, guards) & _assigned_under(s.orelse, guards)
        elif not isinstance(s, A.While):
            out |= _top_level_stores([s])
    return out


def _settle_nonlocals(f, declares: list, own: set) -> None:
    """After a local function was inlined into ``f``: its ``nonlocal`` declarations ``declares``,
    now statements of ``f``, go -- a name ``f`` bound before (``own``) is ``f``'s variable (a
    continuation's ``nonlocal u_bar`` of the function it was inlined with); any other is of a
    function around ``f``, which ``f`` then declares at its top."""
    moved = [s for s in walk_own_statements(f.body) if any(s is d for d in declares)]
    if not moved:
        return  # (the call was an alias, ``k_1 = after_L3``: nothing moved yet)
    remove(f, lambda s: any(s is m for m in moved))
    top = [s for s in f.body if isinstance(s, A.Nonlocal)]
    declared = {n for s in top for n in s.names}
    outer = sorted({n for s in moved for n in s.names} - own - declared)
    if not outer:
        return
    if top:
        top[0].names.extend(outer)
    else:
        f.body.insert(0, A.copy_location(A.nonlocal_(outer), f.body[0]))


def _inner_stacks(forward: list, backward: list) -> dict:
    """The stacks of the loops inlined in an iteration (staged): ``{name: (its init in
    forward, the backward loops that test its length)}`` for each ``frames_x = []`` of
    ``forward`` a rewrite made (marked ``stack``), at its top level."""
    out = {}
    for s in forward:
        if getattr(s, "stack", False):
            out[s.targets[0].id] = (s, [])
    for w in walk_own_statements(backward):
        if (
            isinstance(w, A.While)
            and isinstance(w.test, A.Call)
            and A.is_name(w.test.func, "len")
            and len(w.test.args) == 1
            and isinstance(w.test.args[0], A.Name)
            and w.test.args[0].id in out
        ):
            out[w.test.args[0].id][1].append(w)
    return out


def _exposed(stmts: list, assigned=frozenset()) -> tuple[set, set]:
    """(names ``stmts`` may read before assigning them, names every path assigns);
    ``assigned``: what is assigned before them. A ``while`` (an inner loop, staged) may run
    no time: it assigns nothing for sure, and exposes what one turn of it may read first (a
    later turn reads what an earlier one assigned, or what the first would have read)."""
    exposed, assigned = set(), set(assigned)
    for s in stmts:
        if isinstance(s, A.If):
            exposed |= _loads([A.Expr(value=s.test)]) - assigned
            e1, a1 = _exposed(s.body, assigned)
            e2, a2 = _exposed(s.orelse, assigned)
            exposed |= e1 | e2
            assigned |= a1 & a2
        elif isinstance(s, A.While) and not s.orelse:
            exposed |= _loads([A.Expr(value=s.test)]) - assigned
            exposed |= _exposed(s.body, assigned)[0]
        else:
            exposed |= _loads([s]) - assigned
            assigned |= _stores([s])
    return exposed, assigned


def _stores(stmts) -> set[str]:
    return {
        n.id
        for s in stmts
        for n in A.walk(s)
        if isinstance(n, A.Name) and isinstance(n.ctx, (A.Store, A.Del))
    }


def _loads(stmts) -> set[str]:
    out = set()
    for s in stmts:
        for n in A.walk(s):
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load):
                out.add(n.id)
            elif isinstance(n, A.AugAssign) and isinstance(n.target, A.Name):
                out.add(n.target.id)  # ``x += e`` reads x
    return out


def _top_level_stores(stmts) -> set[str]:
    """Names every run of ``stmts`` assigns (assignments not inside a branch)."""
    out = set()
    for s in stmts:
        if isinstance(s, (A.Assign, A.AugAssign, A.AnnAssign)):
            targets = s.targets if isinstance(s, A.Assign) else [s.target]
            for t in targets:
                out |= {n.id for n in A.walk(t) if isinstance(n, A.Name)}
    return out


FLAT = 4  # frames of up to this many values are pushed one value at a time, not as a tuple


def _push_and_pop(frames: str, saved: list, stand_ins=(), like=None) -> tuple[list, list]:
    """The statements that push an iteration's saved values and pop them back.

    A few values (a scalar loop's) are pushed one by one and popped in reverse: a tuple per
    iteration is a container the garbage collector tracks, and a thousand of them made the scalar
    loop's first call in a row 10% slower than the next (A/B in benchmarks' round robin, 365 ->
    345 us). Many values (an RNN step's arrays) go as one tuple: one line each way, and the
    tuple is nothing next to the step's numpy work."""

    def method(name, args):
        return A.call(A.attr(A.name(frames), name), args)

    def value(n):
        return A.call(A.name(like), [A.name(n)]) if n in stand_ins else A.name(n)

    if not saved:  # the number of iterations is all the backward loop needs
        return [A.expr_stmt(method("append", [_pack(saved)]))], [A.expr_stmt(method("pop", []))]
    if len(saved) > FLAT:
        push = [A.expr_stmt(method("append", [A.tuple_([value(n) for n in saved])]))]
        return push, [A.assign(_pack(saved, "store"), method("pop", []))]
    push = [A.expr_stmt(method("append", [value(n)])) for n in saved]
    pop = [A.assign(A.store(n), method("pop", [])) for n in reversed(saved)]
    return push, pop


def _slot_stacks(namer, frames: str, saved: list) -> dict:
    """Staged code's stacks: one list per saved value (``frames_1_x``), each of one type for
    Numba -- an iteration's floats and arrays in one list cannot be typed, and a list of floats
    is a typed buffer -- or, where nothing is saved, a count of the iterations (``frames_1``).
    Name -> the value it holds (None: the count)."""
    if not saved:
        return {frames: None}
    return {namer.fresh(f"{frames}_{n}"): n for n in saved}


def _push_and_pop_slots(stacks: dict, saved: list, stand_ins=(), like=None) -> tuple[list, list]:
    """Staged code's push and pop: each saved value on its own stack (the count, where none)."""
    if not saved:
        (count,) = stacks
        step = A.BinOp(left=A.name(count), op=A.Add(), right=A.const(1))
        back = A.BinOp(left=A.name(count), op=A.Sub(), right=A.const(1))
        return [A.assign(A.store(count), step)], [A.assign(A.store(count), back)]

    def value(n):
        return A.call(A.name(like), [A.name(n)]) if n in stand_ins else A.name(n)

    push = [A.expr_stmt(A.call(A.attr(A.name(s), "append"), [value(n)])) for s, n in stacks.items()]
    pop = [A.assign(A.store(n), A.call(A.attr(A.name(s), "pop"), [])) for s, n in stacks.items()]
    return push, pop


def _pack(names, ctx="load"):
    if len(names) == 1:
        return A.name(names[0], ctx)
    return A.tuple_([A.name(n, ctx) for n in names], ctx)


def _at(node, where):
    return A.copy_location(node, where)
