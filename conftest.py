"""Doctests of cpsad/ get the rule context as ``ctx`` (those of transforms/: tests/test_doctests.py)."""

import pytest


@pytest.fixture(autouse=True)
def _doctest_context(doctest_namespace):
    from cpsad.compiler import CONTEXT

    doctest_namespace["ctx"] = CONTEXT
