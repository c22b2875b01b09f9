"""Doctests in transforms/ get the rule context as ``ctx`` (transforms itself never imports cpsad)."""

import pytest


@pytest.fixture(autouse=True)
def _doctest_context(doctest_namespace):
    from cpsad.compiler import CONTEXT

    doctest_namespace["ctx"] = CONTEXT
