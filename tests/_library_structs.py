"""A struct class the way an installed library would hand one over (tests/test_fidelity.py
makes this module count as a library): cpsad's analysis does not look into it."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class Hidden:
    shape: object
    rate: object


def make(a, b):
    if a > 0:  # (a branch: Inline leaves the helper a call)
        return Hidden(a, b)
    return Hidden(b, a)
