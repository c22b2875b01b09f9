"""After Resolve, every call's callee is annotated with the object it refers to and its kind.

Names are looked up as Python would at call time -- the function's closure, its module's globals,
builtins -- unless the function binds them itself. Each call's ``func`` node gets ``CALLEE`` (the
object) and ``CALLEE_KIND``:

* ``primitive`` -- has a derivative rule (``np.sin``, ``math.exp``, ``abs``);
* ``nondiff``   -- has no derivative and needs none (``len``, ``np.zeros_like``, ``np.argmax``);
* ``user``      -- a Python function with source: transformed too, called in CPS;
* ``unknown``   -- neither: fine on inactive values, an error on active ones;
* ``method``    -- ``value.name(...)`` on a local value, resolved by the rule table by name;
* ``dynamic``   -- known only at run time (a function passed in as an argument).

The root names the resolution depended on are recorded in ``unit.deps`` so a cached
transformation can check, cheaply, that they still refer to the same objects.
"""

from __future__ import annotations

from transforms import anno
from transforms import astlib as A
from transforms.unit import Unit


def local_names(fdef) -> set[str]:
    """Names the function binds itself: parameters and assignment targets (not in nested defs)."""
    out = set(A.arg_names(fdef.args))
    for node in A.walk(fdef):
        if isinstance(node, A.Name) and isinstance(node.ctx, (A.Store, A.Param)):
            out.add(node.id)
    return out


class Resolve:
    name = "resolve"
    invariant = (
        "every called name is bound to a real object (or marked as a method or dynamic call)"
    )

    def run(self, unit: Unit) -> None:
        fdef = unit.tree
        local = local_names(fdef)
        deps: dict[str, object] = {}
        notes: list[str] = []
        for node in A.walk(fdef):
            if not isinstance(node, A.Call):
                continue
            func = node.func
            path = A.dotted(func)
            root = path.split(".")[0] if path else None
            if path is not None and root not in local:
                found, obj = unit.lookup(root)
                if not found:
                    anno.setanno(func, anno.CALLEE_KIND, "unknown")
                    continue
                deps[root] = obj
                ok = True
                for part in path.split(".")[1:]:
                    try:
                        obj = getattr(obj, part)
                    except AttributeError:
                        ok = False
                        break
                if not ok:
                    anno.setanno(func, anno.CALLEE_KIND, "unknown")
                    continue
                kind = unit.ctx.classify(obj)
                anno.setanno(func, anno.CALLEE, obj)
                anno.setanno(func, anno.CALLEE_KIND, kind)
                note = f"{path} -> {_describe(obj)} ({kind})"
                if note not in notes:
                    notes.append(note)
            elif isinstance(func, A.Attribute):
                anno.setanno(func, anno.CALLEE_KIND, "method")
            else:
                anno.setanno(func, anno.CALLEE_KIND, "dynamic")
        unit.deps = deps
        unit.notes[self.name] = notes

    @staticmethod
    def check(unit: Unit) -> None:
        for node in A.walk(unit.tree):
            if isinstance(node, A.Call):
                assert anno.hasanno(node.func, anno.CALLEE_KIND), A.expr_source(node)


def _describe(obj) -> str:
    mod = getattr(obj, "__module__", None) or type(obj).__module__
    qn = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return f"{mod}.{qn}" if mod else qn
