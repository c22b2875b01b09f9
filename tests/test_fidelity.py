"""Regression tests of programs cpsad once got wrong: value, gradient, forward mode, autograd."""

import pytest

from tests import fidelity_programs as P
from tests.faithful import assert_faithful


@pytest.mark.parametrize("f, args", P.CASES, ids=[f"{f.__name__}-{args[0]}" for f, args in P.CASES])
def test_faithful(f, args):
    assert_faithful(f, *args)
