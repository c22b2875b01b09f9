"""Every framework's value and gradient against the hand-written ones, before anything is timed."""

from __future__ import annotations

import numpy as np


class Mismatch(AssertionError):
    """A framework's value or gradient differs from the hand-written one."""


def leaves(tree, path=""):
    """``(path, value)`` of every number or array in a nested dict / tuple / list, in order."""
    if isinstance(tree, dict):
        for k in sorted(tree):
            yield from leaves(tree[k], f"{path}[{k!r}]")
    elif isinstance(tree, (tuple, list)):
        for i, v in enumerate(tree):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, tree


def agree(framework: str, workload: str, got: tuple, want: tuple, rtol: float) -> None:
    """Raise ``Mismatch`` unless ``got`` = (value, gradient) matches ``want`` entry by entry."""
    (value, grads), (ref_value, ref_grads) = got, want
    if not np.isclose(value, ref_value, rtol=rtol, atol=0.0):
        raise Mismatch(f"{workload}: {framework} computes the value {value!r}, not {ref_value!r}")
    a, b = list(leaves(grads)), list(leaves(ref_grads))
    if [p for p, _ in a] != [p for p, _ in b]:
        raise Mismatch(
            f"{workload}: {framework}'s gradient has the entries {[p for p, _ in a]}, "
            f"the hand-written one {[p for p, _ in b]}"
        )
    for (path, g), (_, r) in zip(a, b):
        g, r = np.asarray(g, dtype=float), np.asarray(r, dtype=float)
        scale = float(np.max(np.abs(r), initial=0.0))
        if g.shape != r.shape or not np.allclose(g, r, rtol=rtol, atol=rtol * scale):
            diff = np.max(np.abs(g - r)) if g.shape == r.shape else f"shape {g.shape}"
            raise Mismatch(
                f"{workload}: {framework}'s gradient{path} differs from the hand-written one "
                f"(largest difference {diff}, largest entry {scale:.3g}, rtol {rtol})"
            )
