"""Functions of a module that names no struct class with a field ``shape`` itself: what it gets
from ``tests/_library_structs.py`` (a library, as tests/test_fidelity.py has it) no analysis
of cpsad's sees."""

from __future__ import annotations

from tests import _library_structs


def gamma_from_a_library(x):
    h = _library_structs.make(x[0], x[1])
    return h.shape * h.rate


def rate_from_a_library(x):
    h = _library_structs.make(x[0], x[1])
    return h.rate * 2.0 + x.shape[0]
