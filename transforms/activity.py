"""After Activity, every statement knows whether it computes an active value (one that needs an adjoint).

A value is *active* when it depends on a differentiated parameter (forward) and can reach the
function's result (backward): only active values get adjoint code, so ``n = len(x)`` or a loop
counter costs nothing in the backward pass. The analysis is by name and flow-insensitive, which is
conservative: a name is active if any of its assignments is. Statements that assign an active name
get ``anno.ACTIVE``; ``unit.active_names`` is the set.

Derivatives flow through an operation's *operands* as its rule says: not through comparisons,
``//``, ``len``, ``x.shape`` or other non-differentiable functions; through every argument of a
user function (which is analysed on its own when transformed).
"""

from __future__ import annotations

from transforms import anno
from transforms import astlib as A
from transforms.context import Default
from transforms.unit import Unit

NONDIFF_BINOPS = (A.FloorDiv, A.BitAnd, A.BitOr, A.BitXor, A.LShift, A.RShift)
NONDIFF_UNARY = (A.Not, A.Invert)


def flow_operands(ctx, value) -> list[str]:
    """Names whose derivative can flow into ``value`` (an A-normal-form right-hand side)."""
    if isinstance(value, A.Name):
        return [value.id]
    if isinstance(value, A.BinOp):
        if isinstance(value.op, NONDIFF_BINOPS):
            return []
        return _names([value.left, value.right])
    if isinstance(value, A.UnaryOp):
        return [] if isinstance(value.op, NONDIFF_UNARY) else _names([value.operand])
    if isinstance(value, A.Compare):
        return []
    if isinstance(value, A.Attribute):
        return [] if ctx.is_nondiff_attribute(value.attr) else _names([value.value])
    if isinstance(value, A.Subscript):
        return _names([value.value])
    if isinstance(value, (A.Tuple, A.List, A.Set)):
        return _names([e.value if isinstance(e, A.Starred) else e for e in value.elts])
    if isinstance(value, A.Dict):
        return _names(value.values)
    if isinstance(value, A.Call):
        kind = anno.getanno(value.func, anno.CALLEE_KIND)
        args = [a.value if isinstance(a, A.Starred) else a for a in value.args]
        kwvals = [k.value for k in value.keywords]
        if kind == "nondiff":
            return []
        if kind == "primitive":
            rule = ctx.rule(anno.getanno(value.func, anno.CALLEE))
            ops = _rule_operands(rule, value.args, value.keywords)
            return ops if ops is not None else _names(args + kwvals)
        if kind == "method":
            if ctx.is_nondiff_attribute(value.func.attr):
                return []
            receiver = value.func.value
            rule = ctx.method_rule(value.func.attr)
            ops = _rule_operands(rule, [receiver, *value.args], value.keywords)
            return ops if ops is not None else _names([receiver, *args, *kwvals])
        out = _names(args + kwvals)
        if kind == "dynamic" and isinstance(value.func, A.Name):
            out.append(value.func.id)
        return out
    return []  # constants, f-strings, other opaque expressions


def _rule_operands(rule, args, keywords):
    if rule is None or any(isinstance(a, A.Starred) for a in args):
        return None
    try:
        bound = rule.bind(args, {k.arg: k.value for k in keywords})
    except TypeError:
        return None
    return [
        v.id
        for p, v in bound.items()
        if not isinstance(v, Default) and isinstance(v, A.Name) and rule.adjoints.get(p) is not None
    ]


def _names(nodes) -> list[str]:
    return [n.id for n in nodes if isinstance(n, A.Name)]


def assigned_names(stmt) -> list[str]:
    """Names a normalized statement binds."""
    if isinstance(stmt, A.Assign):
        t = stmt.targets[0]
        if isinstance(t, A.Name):
            return [t.id]
        if isinstance(t, (A.Tuple, A.List)):
            return [e.id for e in t.elts if isinstance(e, A.Name)]
    return []


def statements(block):
    """Every statement of a normalized block, depth first (branches included)."""
    for s in block:
        yield s
        if isinstance(s, A.If):
            yield from statements(s.body)
            yield from statements(s.orelse)


class Activity:
    name = "activity"
    invariant = "statements that compute active values are marked; only they get adjoints"

    def run(self, unit: Unit) -> None:
        ctx = unit.ctx
        body = unit.tree.body
        stmts = list(statements(body))
        edges: list[tuple[list[str], list[str]]] = []  # (targets, operands carrying derivatives)
        for s in stmts:
            if isinstance(s, A.Assign):
                t = s.targets[0]
                if isinstance(t, (A.Name, A.Tuple, A.List)):
                    edges.append((assigned_names(s), flow_operands(ctx, s.value)))
                elif isinstance(t, (A.Subscript, A.Attribute)) and isinstance(t.value, A.Name):
                    # x[i] = v: x now depends on v (and still on its old self)
                    edges.append(([t.value.id], _names([s.value, t.value])))

        forward = set(unit.active)
        changed = True
        while changed:
            changed = False
            for targets, ops in edges:
                if any(o in forward for o in ops):
                    for t in targets:
                        if t not in forward:
                            forward.add(t)
                            changed = True

        useful = set()
        for s in stmts:
            if isinstance(s, A.Return) and isinstance(s.value, A.Name):
                useful.add(s.value.id)
        changed = True
        while changed:
            changed = False
            for targets, ops in edges:
                if any(t in useful for t in targets):
                    for o in ops:
                        if o not in useful:
                            useful.add(o)
                            changed = True

        active = forward & useful
        unit.active_names = active
        for s in stmts:
            if isinstance(s, A.Assign) and any(n in active for n in assigned_names(s)):
                anno.setanno(s, anno.ACTIVE, True)
            elif isinstance(s, A.Assign) and isinstance(s.targets[0], (A.Subscript, A.Attribute)):
                base = s.targets[0].value
                if isinstance(base, A.Name) and base.id in active:
                    anno.setanno(s, anno.ACTIVE, True)
        params = A.arg_names(unit.tree.args)
        order = {n: i for i, n in enumerate(params)}
        shown = sorted(active, key=lambda n: (order.get(n, len(order)), n))
        unit.notes[self.name] = [
            "active (depend on "
            + ", ".join(unit.active)
            + " and reach the result): "
            + (", ".join(shown) or "nothing")
        ]

    @staticmethod
    def check(unit: Unit) -> None:
        assert set(unit.active_names) <= set(A.names_in(unit.tree))
