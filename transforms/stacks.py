"""After Stacks, a staged loop whose number of iterations is known when it starts saves its floats
in buffers made for that many, not in lists that grow.

Defunctionalize gives each value a staged loop saves a list of its own (``frames_x = []``,
``frames_x.append(x)`` in the forward loop, ``x = frames_x.pop()`` in the backward one). A list
checks its capacity at each append and its length at each pop. Where the forward loop is
``while i < stop`` -- ``i`` stepping by one, once an iteration, ``stop`` unchanged by it, as a
``for _ in range(n)`` becomes, with or without a ``break`` or ``continue`` (``_counted``'s three
forms) -- it runs at most ``trip_count(i, stop)`` times, counted before it starts, as Lantern's
generator knew a loop's trip count when it emitted C++. Each float it saves then goes into a
buffer of that size, and one count says how far they are filled::

    frames_x = []                          frames_count = trip_count(i, n)
    while i < n:                           frames_x = float_frames(frames_count)
        ...                                frames_top = 0
        frames_x.append(x)         ->      while i < n:
        i = i + 1                              ...
    while len(frames_x):                       push_float(frames_x, frames_top, x)
        x = frames_x.pop()                     frames_top = frames_top + 1
        ...                                    i = i + 1
                                           while frames_top > 0:
                                               frames_top = frames_top - 1
                                               x = frames_x[frames_top]

Measured on the scalar loop (1,000 steps, three floats saved a step): 40.7 us a call with lists,
33.4 us with buffers; the hand-written pass compiled by ``numba.njit``, 36 us.

Which values are floats is decided here, by the syntax: ``math`` functions, true division, an
operation with a float constant or a float name, a name every assignment of which is a number
and one a float (Numba unifies an integer and a float to a float). Numba checks it: its version
of ``push_float`` takes a float64 only, so a value that is not one makes the function fail to
type, and ``cpsad.staging`` compiles it again without this pass. A buffer too small -- were the
count wrong -- raises IndexError (staged code checks bounds), and the Python backpropagator runs.

Only a loop at the function's top level, whose stacks appear nowhere but in their ``[]``, one
append at the top of its body and one pop at the top of one backward loop's: an inner loop's
stacks are made once before the outer loop and marked (``frames_x_mark = len(frames_x)``), and
stay lists.

Invariant: every stack of floats that a top-level counted loop pushes is a buffer of its trip
count, filled up to one count the loop's backward part walks down.
"""

from __future__ import annotations

import numpy

from . import astlib as A
from .joins import statement_lists
from .naming import Namer
from .unit import FLOATS, NUMBER, Unit

# functions of ``math`` whose result is a float (not floor, ceil, trunc, factorial: integers)
FLOAT_MATH = frozenset(
    """acos acosh asin asinh atan atan2 atanh cos cosh copysign degrees erf erfc exp exp2 expm1
    fabs fmod gamma hypot lgamma log log10 log1p log2 pow radians sin sinh sqrt tan tanh""".split()
)
_ARITH = (A.Add, A.Sub, A.Mult, A.Div, A.FloorDiv, A.Mod, A.Pow)


def floats_key(names, values) -> tuple:
    """The ``(FLOATS, names)`` item of a staged kinds key: the parameters a call passes a float
    (Numba's float64: a Python float, a numpy float64), or () if none. A kinds key says
    "number" of an int and of a float alike; Numba compiles one function for each."""
    floats = tuple([n for n, v in zip(names, values) if type(v) is float or type(v) is _F64])
    return ((FLOATS, floats),) if floats else ()


_F64 = numpy.float64


class Stacks:
    name = "stacks"
    invariant = "a top-level counted loop's stacks of floats are buffers of its trip count"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        f = unit.tree
        self.namer = Namer({n.id for n in A.walk(f) if isinstance(n, A.Name)})
        self.checked = {id(v) for v in unit.ctx.runtime("CHECKED_MATH").values()}
        self.floats = _floats(f, self.unit, self._float_call)
        mentions: dict[str, int] = {}
        for n in A.walk(f):
            if isinstance(n, A.Name):
                mentions[n.id] = mentions.get(n.id, 0) + 1
        inits = {
            s.targets[0].id: s
            for s in f.body
            if isinstance(s, A.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], A.Name)
            and isinstance(s.value, A.List)
            and not s.value.elts
        }
        made = []
        for s in list(f.body):
            if isinstance(s, A.While):
                made += self.loop(f, s, inits, mentions)
        unit.notes[self.name] = [
            "buffers of floats: " + (", ".join(made) or "none (no counted loop saves a float)")
        ]

    def _float_call(self, node) -> bool:
        """A call of a ``math`` function with a float result (``math.tanh``, or the staged
        spelling ``math_sin`` of the runtime's ``CHECKED_MATH``)."""
        if isinstance(node.func, A.Name):
            return id(self.unit.injected.get(node.func.id)) in self.checked
        path = A.dotted(node.func)
        return path is not None and path.startswith("math.") and path[5:] in FLOAT_MATH

    def loop(self, f, forward, inits: dict, mentions: dict) -> list[str]:
        """Rewrite the stacks of ``forward`` (a top-level ``while``) that hold floats, if it is
        counted; the names of the buffers made."""
        counted = _counted(forward)
        if counted is None:
            return []
        i, stop, first = counted
        pushes = {}  # stack -> (its append statement, the name pushed)
        for s in forward.body[first:]:
            call = s.value if isinstance(s, A.Expr) else None
            if _method_call(call, "append", 1) and isinstance(call.args[0], A.Name):
                pushes[call.func.value.id] = (s, call.args[0].id)
        backward = None
        at = f.body.index(forward)
        for s in f.body[at + 1 :]:
            if isinstance(s, A.While) and _length_of(s.test) in pushes:
                backward = s
                break
        if backward is None:
            return []
        pops = {}  # stack -> its pop statement
        for s in backward.body:
            if (
                isinstance(s, A.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], A.Name)
                and _method_call(s.value, "pop", 0)
            ):
                pops[s.value.func.value.id] = s
        tested = _length_of(backward.test)
        buffers = [
            stack
            for stack, (_, value) in pushes.items()
            if stack in inits
            and inits[stack] in f.body[:at]
            and stack in pops
            and value in self.floats
            and mentions.get(stack) == 3 + (stack == tested)
        ]
        if not buffers:
            return []
        count = self.namer.fresh("frames_count")
        top = self.namer.fresh("frames_top")
        rt = self.unit.ctx.runtime
        trip = self.unit.inject(rt("trip_count"), "trip_count")
        make = self.unit.inject(rt("float_frames"), "float_frames")
        push = self.unit.inject(rt("push_float"), "push_float")
        before = [A.assign(A.store(count), A.call(A.name(trip), [A.name(i), A.deepcopy(stop)]))]
        for stack in buffers:
            f.body.remove(inits[stack])
            before.append(A.assign(A.store(stack), A.call(A.name(make), [A.name(count)])))
        before.append(A.assign(A.store(top), A.const(0)))
        at = f.body.index(forward)
        f.body[at:at] = [A.copy_location(s, forward) for s in before]
        last = 0
        for stack in buffers:
            s, value = pushes[stack]
            k = forward.body.index(s)
            new = A.call(A.name(push), [A.name(stack), A.name(top), A.name(value)])
            forward.body[k] = A.copy_location(A.expr_stmt(new), s)
            last = max(last, k)
        step = A.assign(A.store(top), A.binop(A.name(top), A.Add(), A.const(1)))
        forward.body.insert(last + 1, A.copy_location(step, forward.body[last]))
        for stack in buffers:
            s = pops[stack]
            item = A.Subscript(value=A.name(stack), slice=A.name(top), ctx=A.Load())
            s.value = A.copy_location(item, s.value)
        down = A.assign(A.store(top), A.binop(A.name(top), A.Sub(), A.const(1)))
        backward.body.insert(0, A.copy_location(down, backward.body[0]))
        if tested in buffers:
            test = A.Compare(left=A.name(top), ops=[A.Gt()], comparators=[A.const(0)])
            backward.test = A.copy_location(test, backward.test)
        return buffers


def _method_call(node, method: str, nargs: int) -> bool:
    """``stack.method(...)`` with ``nargs`` positional arguments, ``stack`` a name."""
    return (
        isinstance(node, A.Call)
        and isinstance(node.func, A.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, A.Name)
        and len(node.args) == nargs
        and not node.keywords
        and not any(isinstance(a, A.Starred) for a in node.args)
    )


def _length_of(test) -> str | None:
    """The stack ``s`` of a backward loop's test ``len(s)``."""
    if (
        isinstance(test, A.Call)
        and A.is_name(test.func, "len")
        and len(test.args) == 1
        and isinstance(test.args[0], A.Name)
    ):
        return test.args[0].id
    return None


def _counted(loop) -> tuple[str, A.AST, int] | None:
    """``(i, stop, first)`` for a loop whose iterations past its test -- its statements from
    ``first`` on -- run at most ``trip_count(i, stop)`` times from where it starts, or None.

    Three forms, as Defunctionalize writes them: ``while i < stop:``; ``while True:`` whose
    body tests ``if not i < stop: break`` at its top level, after statements of its own; and a
    loop that leaves by ``break`` (or goes on by ``continue``), ``while True:`` whose body tests
    ``if not joining: break``, where ``joining`` is set False at its top, and True only inside
    ``if b:`` of ``b = i < stop``, each time beside an assignment of what ``i`` steps to. In
    each: ``i`` is assigned once in the loop, at the top level of its body -- ``i + 1``, or a
    name all of whose assignments are ``i + 1`` (or names assigned ``i + 1``) and that every
    iteration past the test assigns; ``stop`` is a constant or a name the loop does not assign;
    no ``continue`` of its own skips the step. A ``break`` only ends it sooner."""
    if loop.orelse:
        return None
    t, after, joining = loop.test, 0, None
    if isinstance(t, A.Constant) and t.value is True:
        for k, s in enumerate(loop.body):
            if (
                isinstance(s, A.If)
                and not s.orelse
                and len(s.body) == 1
                and isinstance(s.body[0], A.Break)
                and isinstance(s.test, A.UnaryOp)
                and isinstance(s.test.op, A.Not)
            ):
                t, after = s.test.operand, k + 1
                break
        if isinstance(t, A.Name):  # ``if not joining: break``: the test is ``b = i < stop``
            joining = t.id
            t = _joined_test(loop, loop.body[: after - 1], joining)
    if not (
        isinstance(t, A.Compare)
        and len(t.ops) == 1
        and isinstance(t.ops[0], A.Lt)
        and isinstance(t.left, A.Name)
    ):
        return None
    i, stop = t.left.id, t.comparators[0]
    bound = [n for n in A.walk(loop) if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load)]
    if isinstance(stop, A.Name):
        if stop.id == i or any(n.id == stop.id for n in bound):
            return None
    elif not (isinstance(stop, A.Constant) and type(stop.value) in (int, float)):
        return None
    if _continues(loop.body) or [n.id for n in bound].count(i) != 1:
        return None  # (``i`` bound once: by the step, not also by a for, a with, a del)
    step = None  # what the step assigns ``i``, at the top level of the body
    for s in loop.body:
        if isinstance(s, A.Assign) and len(s.targets) == 1:
            for target, value in _pairs(s.targets[0], s.value) or ():
                if A.is_name(target, i):
                    step = value
    if step is None or _plus_one(step, i):
        return (i, stop, after) if step is not None else None
    if not isinstance(step, A.Name) or not _only_plus_one(loop, step.id, i):
        return None
    # every iteration past the test assigns it: at the top level before the step, or -- joined
    # -- beside each ``joining = True``
    if joining is None:
        return (i, stop, after) if _assigns(loop.body, step.id) else None
    blocks = [b for b in statement_lists(loop) if _assigns(b, joining, True)]
    return (i, stop, after) if all(_assigns(b, step.id) for b in blocks) else None


def _joined_test(loop, before: list, joining: str):
    """The test ``i < stop`` of a loop left by ``if not joining: break`` (``before``: the
    statements before it at the top level of its body), or None: ``joining = False`` among
    them, then ``b = i < stop`` and ``if b:`` -- the only statement that sets ``joining`` True
    (anywhere inside it), ``b`` assigned nowhere else."""
    flags = [s for s in before if _assigns([s], joining)]
    if not flags or not _assigns([flags[0]], joining, False):
        return None
    tests = {}
    for s in before:
        if (
            isinstance(s, A.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], A.Name)
            and isinstance(s.value, A.Compare)
        ):
            tests[s.targets[0].id] = s.value
    setting = [s for s in before if any(_assigns([x], joining, True) for x in A.walk(s))]
    if len(setting) != 1 or not isinstance(setting[0], A.If):
        return None
    branch = setting[0]
    if not isinstance(branch.test, A.Name) or branch.test.id not in tests:
        return None
    if any(_assigns([x], joining, True) for s in branch.orelse for x in A.walk(s)):
        return None
    b = branch.test.id
    stores = [n for n in A.walk(loop) if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load)]
    if [n.id for n in stores].count(b) != 1:
        return None  # (assigned once in the loop: nothing else rebinds it)
    return tests[b]


def _assigns(stmts, name: str, value=None) -> bool:
    """Does one of ``stmts`` (their top level) assign ``name`` (``value`` given: that constant)?"""
    for s in stmts:
        if not isinstance(s, A.Assign):
            continue
        for target, v in _pairs(s.targets[0], s.value) or () if len(s.targets) == 1 else ():
            if A.is_name(target, name) and (
                value is None or (isinstance(v, A.Constant) and v.value is value)
            ):
                return True
    return False


def _only_plus_one(loop, j: str, i: str) -> bool:
    """Is every assignment of ``j`` in ``loop`` ``i + 1``, or a name every assignment of which
    is ``i + 1``?"""
    values = _assigned(loop)

    def plus_one(name, depth):
        vs = values.get(name)
        return bool(vs) and all(
            v is not None
            and (
                _plus_one(v, i)
                or (depth and isinstance(v, A.Name) and v.id != name and plus_one(v.id, 0))
            )
            for v in vs
        )

    return plus_one(j, 1)


def _continues(body) -> bool:
    """A ``continue`` of this loop (not of a loop inside it)."""
    todo = list(body)
    while todo:
        s = todo.pop()
        if isinstance(s, A.Continue):
            return True
        if isinstance(s, (A.While, A.For)):
            todo.extend(s.orelse)  # (an else runs in this loop's iteration)
            continue
        if isinstance(s, A.If):
            todo.extend(s.body + s.orelse)
    return False


def _plus_one(value, i: str) -> bool:
    """``i + 1``."""
    return (
        isinstance(value, A.BinOp)
        and isinstance(value.op, A.Add)
        and A.is_name(value.left, i)
        and isinstance(value.right, A.Constant)
        and type(value.right.value) is int
        and value.right.value == 1
    )


def _pairs(target, value):
    """``[(name target, its value)]`` of an assignment of names or tuples of them to values of
    the same shape; None where a target is something else (an unpacked call's result)."""
    if isinstance(target, A.Name):
        return [(target, value)]
    if isinstance(target, A.Tuple) and isinstance(value, A.Tuple):
        if len(target.elts) != len(value.elts):
            return None
        out = []
        for t, v in zip(target.elts, value.elts):
            inner = _pairs(t, v)
            if inner is None:
                return None
            out += inner
        return out
    return None


def _assigned(node) -> dict[str, list]:
    """Each name ``node`` assigns -> the values its assignments give it (``x += e``: ``x + e``;
    None where it is bound otherwise: a ``for``'s target, an unpacked call's result)."""
    values: dict[str, list] = {}
    for s in A.walk(node):
        if isinstance(s, A.Assign):
            for target in s.targets:
                pairs = _pairs(target, s.value)
                for n in A.walk(target) if pairs is None else ():
                    if isinstance(n, A.Name):
                        values.setdefault(n.id, []).append(None)
                for t, v in pairs or ():
                    values.setdefault(t.id, []).append(v)
        elif isinstance(s, A.AugAssign) and isinstance(s.target, A.Name):
            values.setdefault(s.target.id, []).append(A.binop(A.name(s.target.id), s.op, s.value))
        elif isinstance(s, (A.For, A.AnnAssign, A.AugAssign)):
            for n in A.walk(s.target):
                if isinstance(n, A.Name):
                    values.setdefault(n.id, []).append(None)
    return values


# ---------------------------------------------------------------------- which names are floats


def _floats(f, unit, float_call) -> set[str]:
    """The names of ``f`` that hold a Python or numpy float64 wherever they are assigned, as Numba
    types them: the numbers (a greatest fixed point: each assignment a number), then the floats
    among them (a least one: each assignment a number and one a float)."""
    values = _assigned(f)
    # a pop gives back what the stack's one append pushed (``x = frames_x.pop()``)
    pushed: dict[str, list] = {}
    for n in A.walk(f):
        if _method_call(n, "append", 1):
            pushed.setdefault(n.func.value.id, []).append(n.args[0])
    for vs in values.values():
        for k, v in enumerate(vs):
            if _method_call(v, "pop", 0) and len(pushed.get(v.func.value.id, ())) == 1:
                vs[k] = pushed[v.func.value.id][0]
    given = unit.arg_kinds or {}
    params = set(A.arg_names(f.args))
    numeric = {p for p in params if frozenset(given.get(p, ())) == {NUMBER}}
    numeric |= params & set(given.get(FLOATS, ()))
    numbers = {n for n in values if n not in params} | numeric
    changed = True
    while changed:
        changed = False
        for n in list(numbers - numeric):
            if not all(_number(v, numbers, float_call) for v in values[n]):
                numbers.discard(n)
                changed = True
    floats: set[str] = params & set(given.get(FLOATS, ()))
    changed = True
    while changed:
        changed = False
        for n in numbers - numeric - floats:
            if any(_float(v, numbers, floats, float_call) for v in values[n]):
                floats.add(n)
                changed = True
    return floats


def _number(v, numbers: set, float_call) -> bool:
    """Is the expression ``v`` a number (int, float or bool), given that ``numbers`` are?"""
    if v is None:
        return False
    if isinstance(v, A.Constant):
        return type(v.value) in (int, float, bool)
    if isinstance(v, A.Name):
        return v.id in numbers
    if isinstance(v, A.BinOp):
        return isinstance(v.op, _ARITH) and all(
            _number(x, numbers, float_call) for x in (v.left, v.right)
        )
    if isinstance(v, A.UnaryOp):
        return _number(v.operand, numbers, float_call)
    if isinstance(v, A.Compare):
        return all(_number(x, numbers, float_call) for x in (v.left, *v.comparators))
    if isinstance(v, A.IfExp):
        return all(_number(x, numbers, float_call) for x in (v.body, v.orelse))
    if isinstance(v, A.Call):
        return (
            float_call(v)
            and not v.keywords
            and all(_number(a, numbers, float_call) for a in v.args)
        )
    return False


def _float(v, numbers: set, floats: set, float_call) -> bool:
    """Is the number ``v`` (``_number``) a float, given that ``floats`` are?"""
    if not _number(v, numbers, float_call):
        return False
    if isinstance(v, A.Constant):
        return type(v.value) is float
    if isinstance(v, A.Name):
        return v.id in floats
    if isinstance(v, A.BinOp):
        if isinstance(v.op, A.Div):
            return True
        if isinstance(v.op, A.Pow):
            return False  # (python_pow: an integer to a negative power is a float, or not)
        return any(_float(x, numbers, floats, float_call) for x in (v.left, v.right))
    if isinstance(v, A.UnaryOp):
        return not isinstance(v.op, A.Not) and _float(v.operand, numbers, floats, float_call)
    if isinstance(v, A.IfExp):
        return all(_float(x, numbers, floats, float_call) for x in (v.body, v.orelse))
    if isinstance(v, A.Call):
        return True  # (a float_call)
    return False
