"""Arguments and gradients as pytrees: nested dicts, lists and tuples of floats and arrays.

``promote`` prepares a differentiated argument (ints become floats); ``densify`` turns the adjoint
emitted code returns -- possibly a ``Sparse`` container or missing entries -- into a gradient of
exactly the argument's structure, shapes and float dtypes, zeros where nothing flowed back.
"""

from __future__ import annotations

import numpy as np

from cpsad.deferred import Deferred
from cpsad.runtime import Sparse, foreign, rows_of, struct_parts, unbroadcast, zeros_like


def promote(x):
    """A differentiated argument: ints and int arrays become floats, containers recursively;
    an array of a subclass of ``np.ndarray`` that cpsad cannot follow is a ``TypeError``."""
    t = type(x)
    if t is float or (t is np.ndarray and x.dtype.kind in "fc"):
        return x  # the common cases first: this runs on every call
    if isinstance(x, bool):
        return x
    if isinstance(x, np.ndarray) and t is not np.ndarray:
        x = plain_array(x)
    if isinstance(x, int):
        return float(x)
    if isinstance(x, np.ndarray) and not np.issubdtype(x.dtype, np.inexact):
        return x.astype(np.float64)
    if isinstance(x, np.integer):
        return float(x)
    if type(x) is tuple:
        return tuple(promote(v) for v in x)
    if type(x) is list:
        return [promote(v) for v in x]
    if type(x) is dict:
        return {k: promote(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
        return type(x)(*(promote(v) for v in x))
    parts = struct_parts(x)
    if parts is not None:  # a dataclass, a registered pytree
        _, children, rebuild = parts
        return rebuild([promote(v) for v in children])
    return x


def plain_array(x):
    """``x``, an instance of a subclass of ``np.ndarray``, as cpsad can follow it: a memory-mapped
    array as the plain array it is; anything else -- ``np.matrix``, whose ``*`` is a matrix
    product, a masked array, whose masks no rule reads, a record array, a class of yours -- a
    ``TypeError``: cpsad's rules are plain numpy's."""
    if isinstance(x, np.memmap):
        return np.asarray(x)
    name = f"{type(x).__module__}.{type(x).__qualname__}"
    hint = {
        "numpy.matrix": "; write `@` for matrix products",
        "numpy.ma.MaskedArray": "; fill the masked entries (x.filled(v)), pass the mask as data",
    }.get(name, "")
    raise TypeError(
        f"cpsad differentiates plain numpy arrays, not {name}: its operators and functions mean "
        f"something else than the derivative rules assume. Pass np.asarray(x){hint}"
    )


def check_plain(args, kwargs) -> None:
    """Refuse an argument of a subclass of ``np.ndarray`` (``plain_array``) that is not
    differentiated: such a value used with differentiated ones would get plain numpy's rules."""
    for a in args:
        if type(a) is not np.ndarray and isinstance(a, np.ndarray) and not isinstance(a, np.memmap):
            plain_array(a)
    for a in kwargs.values():
        if type(a) is not np.ndarray and isinstance(a, np.ndarray) and not isinstance(a, np.memmap):
            plain_array(a)


def _entry(adj, key):
    if adj is None:
        return None
    if isinstance(adj, Sparse):
        return adj.get(key)
    try:
        return adj[key]
    except (KeyError, IndexError, TypeError):
        return None


def densify(adj, x):
    """The gradient with respect to ``x`` from its adjoint ``adj`` (None meaning zero)."""
    if type(adj) is float and type(x) is float:
        return adj  # the common case of a number, first
    if type(adj) is Deferred:  # a weight's adjoint summed over its uses: the sum, now
        adj = adj.array()
    if type(x) is np.ndarray and type(adj) is np.ndarray and adj.dtype == x.dtype:
        if adj.shape == x.shape and adj.flags.writeable and not np.may_share_memory(adj, x):
            return adj  # the common case: a fresh array of the argument's shape and dtype
    if foreign(x) or (foreign(adj) and isinstance(x, (np.ndarray, np.generic, float, int))):
        # a Dask or CuPy array: the gradient stays one
        return _densify_foreign(adj, x)
    if isinstance(x, np.ndarray):
        dtype = x.dtype if x.dtype.kind in "fc" else np.float64
        if adj is None:
            return np.zeros(x.shape, dtype)
        if x.dtype.kind != "c" and np.iscomplexobj(adj):
            adj = np.real(adj)  # a real argument's gradient is the real part (docs/reference.md)
        out = np.asarray(adj, dtype=dtype)
        if out.shape != x.shape:
            out = np.broadcast_to(out, x.shape)
        if not out.flags.writeable or np.shares_memory(out, x):
            out = out.copy()
        return out
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0 if adj is None else float(np.real(adj)) if np.ndim(adj) == 0 else adj
    if type(x) is complex:
        return 0j if adj is None else complex(adj) if np.ndim(adj) == 0 else adj
    if isinstance(x, np.generic):
        if adj is None:
            return x.dtype.type(0) if np.issubdtype(x.dtype, np.inexact) else 0.0
        if not np.issubdtype(x.dtype, np.complexfloating):
            adj = np.real(adj)
        return x.dtype.type(adj) if np.issubdtype(x.dtype, np.inexact) else float(adj)
    if isinstance(x, tuple):
        items = tuple(densify(_entry(adj, i), v) for i, v in enumerate(x))
        return type(x)(*items) if hasattr(x, "_fields") else items
    if isinstance(x, list):
        return [densify(_entry(adj, i), v) for i, v in enumerate(x)]
    if isinstance(x, dict):
        return {k: densify(_entry(adj, k), v) for k, v in x.items()}
    parts = struct_parts(x)
    if parts is not None:  # a dataclass, a registered pytree: its fields' gradients
        keys, children, rebuild = parts
        return rebuild([densify(_entry(adj, k), v) for k, v in zip(keys, children)])
    return adj  # not a differentiable value (None, str, an object used as data)


def _densify_foreign(adj, x):
    """``densify`` where the argument ``x`` or its adjoint is an array of another library (Dask,
    CuPy): the gradient is of that library, as numpy's own rules would make it (a numpy ``w``'s
    gradient of a loss over Dask data is a lazy Dask array), with ``x``'s shape and float type,
    and nothing computed or copied to the host."""
    if not foreign(x):  # a number or a numpy array of a loss over another library's data
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "fc":
            dtype = x.dtype
        else:
            dtype = np.dtype(np.float64)
        if dtype.kind != "c" and adj.dtype.kind == "c":
            adj = np.real(adj)
        shape = np.shape(x)
        if adj.shape != shape:
            adj = np.broadcast_to(adj, shape)
        return adj if adj.dtype == dtype else adj.astype(dtype)
    if adj is None:
        return zeros_like(x)
    if type(adj) is Deferred:
        adj = adj.array()
    if isinstance(adj, Sparse):  # the adjoints of some of its rows
        adj = rows_of(adj, x)
    if not foreign(adj):  # zeros made by numpy, a number: onto x's library
        adj = np.asarray(adj, like=x)
    dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    if dtype.kind != "c" and adj.dtype.kind == "c":
        adj = np.real(adj)
    if adj.shape != x.shape:
        adj = np.broadcast_to(adj, x.shape)
    return adj if adj.dtype == dtype else adj.astype(dtype)


def owned(trees: list, given) -> list:
    """``trees`` (the gradients a call returns), each array in them one the caller alone holds:
    an array a second time -- ``x + y`` gives both operands the same adjoint -- or one that
    shares memory with an object of ``given`` (the call's arguments, a cotangent, tangents:
    the identity's vjp is the cotangent itself) is copied; nothing else is. Shared memory is
    judged by each array's base: views of one array are one, as numpy's ``base`` says."""
    for t in trees:  # numbers only: the common case of a float program, first
        if type(t) is not float:
            break
    else:
        return trees
    arrays: list = []
    _arrays(trees, arrays)
    if not arrays:
        return trees
    theirs = _held(given)
    taken = set(theirs)
    for a in arrays:
        b = _base_id(a)
        if b in taken:
            break
        taken.add(b)
    else:
        return trees  # every array fresh and returned once
    taken = set(theirs)
    return [_own(t, taken) for t in trees]


def _base_id(a) -> int:
    """The id of the object whose memory the array ``a`` uses: the end of its chain of bases."""
    b = a.base
    while b is not None:
        a = b
        b = getattr(a, "base", None)
    return id(a)


def _held(given) -> list:
    """The ``_base_id`` of every array in ``given``: containers followed without recursion (data
    such as a tree of tuples may be deep) and each once (a list may hold itself)."""
    out, seen, stack = [], set(), [given]
    while stack:
        t = stack.pop()
        if type(t) is np.ndarray:
            out.append(_base_id(t))
        elif isinstance(t, (list, tuple, dict)) and id(t) not in seen:
            seen.add(id(t))
            stack.extend(t.values() if isinstance(t, dict) else t)
    return out


def _arrays(tree, out: list) -> None:
    """The arrays of a pytree, in ``_own``'s order."""
    t = type(tree)
    if t is np.ndarray:
        out.append(tree)
    elif t is float:
        return
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            _arrays(v, out)
    elif isinstance(tree, dict):
        for v in tree.values():
            _arrays(v, out)
    else:
        parts = struct_parts(tree)
        for v in parts[1] if parts is not None else ():
            _arrays(v, out)


def _own(tree, taken: set):
    t = type(tree)
    if t is np.ndarray:
        b = _base_id(tree)
        if b in taken:
            return tree.copy()
        taken.add(b)
        return tree
    if isinstance(tree, tuple):
        items = [_own(v, taken) for v in tree]
        return t(*items) if hasattr(tree, "_fields") else t(items)
    if isinstance(tree, list):
        return [_own(v, taken) for v in tree]
    if isinstance(tree, dict):
        return {k: _own(v, taken) for k, v in tree.items()}
    parts = struct_parts(tree)
    if parts is not None:
        return parts[2]([_own(v, taken) for v in parts[1]])
    return tree


def leaves(tree):
    """The float / array leaves of a pytree, in a fixed order, with a way to rebuild it."""
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [leaves(tree[k]) for k in keys]

        def build(vals, parts=parts, keys=keys):
            out, i = {}, 0
            for k, (ls, b) in zip(keys, parts):
                out[k] = b(vals[i : i + len(ls)])
                i += len(ls)
            return out

        return [x for ls, _ in parts for x in ls], build
    if isinstance(tree, (list, tuple)):
        parts = [leaves(v) for v in tree]
        kind = type(tree)
        named = hasattr(tree, "_fields")

        def build(vals, parts=parts, kind=kind):
            out, i = [], 0
            for ls, b in parts:
                out.append(b(vals[i : i + len(ls)]))
                i += len(ls)
            return kind(*out) if named else kind(out)

        return [x for ls, _ in parts for x in ls], build
    struct = struct_parts(tree)
    if struct is not None:  # a dataclass, a registered pytree: its children's leaves
        _, children, rebuild = struct
        parts = [leaves(v) for v in children]

        def build_struct(vals, parts=parts, rebuild=rebuild):
            out, i = [], 0
            for ls, b in parts:
                out.append(b(vals[i : i + len(ls)]))
                i += len(ls)
            return rebuild(out)

        return [x for ls, _ in parts for x in ls], build_struct
    if type(tree) is Deferred:
        return [tree.array()], lambda vals: vals[0]
    if isinstance(tree, (float, int, complex, np.ndarray, np.generic)) and not isinstance(
        tree, bool
    ):
        return [tree], lambda vals: vals[0]
    return [], lambda vals, t=tree: t


# --------------------------------------------------------------------------- a gradient, inside


def gradient_of(adj, like):
    """What ``cpsad.grad`` returns, from the adjoint a backpropagator returned: ``densify``.

    Emitted code calls it where a derivative is taken inside a differentiated function, so the
    inner ``cpsad.grad(h)(y)`` returns what the same call returns outside (a list for a list, a
    1-tuple for ``argnums=(0,)``, a float for a float); it has derivative rules of its own (in
    ``cpsad.higher``): it is linear in ``adj``, and ``like`` only gives the structure."""
    return densify(adj, like)


def gradient_adjoint(c, adj, like):
    """The transpose of ``gradient_of`` in ``adj``: the part of ``c`` -- a cotangent of the
    gradient, of ``like``'s structure -- that belongs to each entry of the adjoint ``adj``, in
    the form emitted code uses (a ``Sparse`` for a container; None where ``adj`` is None)."""
    if adj is None or c is None:
        return None
    if type(adj) is Deferred:
        adj = adj.array()
    if isinstance(like, (tuple, list, dict)):
        keys = like.keys() if isinstance(like, dict) else range(len(like))
        if isinstance(adj, np.ndarray) or foreign(adj):  # a dense adjoint of a list (np.sum)
            rows = []
            for i in keys:
                row = gradient_adjoint(_entry(c, i), adj[i], like[i])
                rows.append(np.zeros_like(adj[i]) if row is None else row)
            return np.stack(rows) if rows else np.zeros_like(adj)
        out = Sparse()
        for k in keys:
            a = _entry(adj, k)
            if a is not None:
                part = gradient_adjoint(_entry(c, k), a, like[k])
                if part is not None:
                    out[k] = part
        return out
    parts = struct_parts(like)
    if parts is not None:  # a dataclass, a registered pytree: its fields', by their keys
        keys, children, _ = parts
        if type(c) is type(like):  # (a cotangent given as the gradient is: its fields)
            c = dict(zip(keys, struct_parts(c)[1]))
        out = Sparse()
        for k, child in zip(keys, children):
            a = _entry(adj, k)
            if a is not None:
                part = gradient_adjoint(_entry(c, k), a, child)
                if part is not None:
                    out[k] = part
        return out
    numeric = isinstance(like, (float, int, np.ndarray, np.generic)) and not isinstance(like, bool)
    if numeric or foreign(like):  # (a Dask or CuPy array's gradient: differentiable as numpy's)
        if np.shape(c) != np.shape(adj):  # broadcast up to like's shape: summed back down
            c = unbroadcast(c, adj)
        return c
    return None  # not a differentiable value
