"""Read-only facts about Python scoping in generated code: what a function binds, borrows and reads.

Used by Simplify to inline closures without capturing names, and to know which calls can change
an adjoint through ``nonlocal``. Nothing here rewrites a tree.

>>> from transforms import astlib as A
>>> f = A.parse("def f(a):\\n    b = a\\n    def g():\\n        nonlocal b\\n        b = 2\\n").body[0]
>>> sorted(local_names(f)), sorted(writes_through(f.body[1]))
(['a', 'b', 'g'], ['b'])
"""

from __future__ import annotations

from transforms import astlib as A


def own_nodes(fdef):
    """Nodes of ``fdef``'s body that belong to its own scope (not to nested functions)."""
    for stmt in fdef.body:
        yield from walk_own(stmt)


def walk_own(node):
    """``node`` and what is below it in the same scope: function bodies are not entered."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (A.FunctionDef, A.Lambda)):
            continue  # its name belongs to the enclosing scope; its body does not
        stack.extend(reversed(list(A.iter_child_nodes(n))))


def nested_functions(fdef) -> list:
    """Function definitions directly inside ``fdef``'s scope (in branches too)."""
    return [n for n in own_nodes(fdef) if isinstance(n, A.FunctionDef)]


def declared_nonlocal(fdef) -> set[str]:
    out: set[str] = set()
    for n in own_nodes(fdef):
        if isinstance(n, A.Nonlocal):
            out.update(n.names)
    return out


def local_names(fdef) -> set[str]:
    """Names local to ``fdef``: parameters, assignment targets, nested def names; not nonlocals."""
    out = set(A.arg_names(fdef.args))
    for n in own_nodes(fdef):
        if isinstance(n, A.Name) and isinstance(n.ctx, (A.Store, A.Param)):
            out.add(n.id)
        elif isinstance(n, A.FunctionDef):
            out.add(n.name)
    return out - declared_nonlocal(fdef)


def free_names(fdef) -> set[str]:
    """Names ``fdef`` (or anything nested in it) reads or writes but does not bind."""
    local = local_names(fdef)
    out: set[str] = set()
    for n in own_nodes(fdef):
        if isinstance(n, A.Name) and n.id not in local:
            out.add(n.id)
    out |= declared_nonlocal(fdef)
    for g in nested_functions(fdef):
        out |= free_names(g) - local
    return out


def writes_through(fdef) -> set[str]:
    """Names of enclosing scopes that calling ``fdef`` may assign (via ``nonlocal``, transitively)."""
    own = declared_nonlocal(fdef)
    local = local_names(fdef)
    out = set(own)
    for g in nested_functions(fdef):
        out |= writes_through(g) - local
    return out


def assignment_counts(fdef) -> dict[str, int]:
    """How many times each name is assigned in ``fdef``'s own scope (nonlocal writes included)."""
    counts: dict[str, int] = {}
    for n in own_nodes(fdef):
        if isinstance(n, A.Name) and isinstance(n.ctx, A.Store):
            counts[n.id] = counts.get(n.id, 0) + 1
    for g in nested_functions(fdef):
        for w in writes_through(g):
            counts[w] = counts.get(w, 0) + 1
    return counts


def load_counts(fdef) -> dict[str, int]:
    """How many times each name is read in ``fdef``'s scope, counting reads by nested functions."""
    counts: dict[str, int] = {}
    for n in own_nodes(fdef):
        if isinstance(n, A.Name) and isinstance(n.ctx, A.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    for g in nested_functions(fdef):
        for f in free_names(g):
            counts[f] = counts.get(f, 0) + 1
    return counts


def references(fdef, name: str) -> int:
    """Occurrences of ``name`` in ``fdef``'s scope and in nested functions that do not rebind it."""
    count = 0
    for n in own_nodes(fdef):
        if isinstance(n, A.Name) and n.id == name:
            count += 1
    for g in nested_functions(fdef):
        if name in free_names(g):
            count += references(g, name)
    return count


def rename_free(node, mapping: dict[str, str]) -> None:
    """Rename names in ``node`` (a statement list or a node) that refer to an outer binding.

    Nested functions that bind a name themselves keep it: renaming follows Python's scoping.
    """
    if not mapping:
        return
    nodes = node if isinstance(node, list) else [node]
    for top in nodes:
        _rename(top, mapping)


def _rename(node, mapping):
    if isinstance(node, A.FunctionDef):
        if node.name in mapping:
            node.name = mapping[node.name]
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            _rename(d, mapping)
        shadow = local_names(node)
        inner = {k: v for k, v in mapping.items() if k not in shadow}
        for stmt in node.body:
            if isinstance(stmt, A.Nonlocal):
                stmt.names = [inner.get(n, n) for n in stmt.names]
            if inner:
                _rename(stmt, inner)
        return
    if isinstance(node, A.Name) and node.id in mapping:
        node.id = mapping[node.id]
        return
    if isinstance(node, A.Nonlocal):
        node.names = [mapping.get(n, n) for n in node.names]
        return
    for child in A.iter_child_nodes(node):
        _rename(child, mapping)
