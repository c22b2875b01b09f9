"""The doctests of the passes, run under the name they are installed as (``cpsad.transforms``).

pytest's ``--doctest-modules`` would import ``transforms/*.py`` by their path in the checkout, as a
second, top-level ``transforms`` package beside ``cpsad.transforms`` -- two copies of every pass,
whose classes are not each other's. So the folder is not among pytest's testpaths; each module's
doctests run here, from the one copy the rest of cpsad uses.
"""

import doctest
import importlib
import pkgutil

import pytest

import cpsad.transforms

# (the packages' modules too: a pass split into modules, ``simplify.copies``, keeps its doctests)
MODULES = sorted(
    m.name.removeprefix("cpsad.transforms.")
    for m in pkgutil.walk_packages(cpsad.transforms.__path__, "cpsad.transforms.")
)


def test_every_pass_is_found():
    assert {"parse", "cps", "shift_reset", "emit", "pipeline", "aliasing.decide"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    from cpsad.compiler import CONTEXT

    module = importlib.import_module(f"cpsad.transforms.{name}")
    # (the passes' doctests that need rules and runtime names take cpsad's context as ``ctx``,
    # as the top-level conftest.py gives it to the doctests of cpsad/)
    extraglobs = {"ctx": CONTEXT}
    result = doctest.testmod(
        module, extraglobs=extraglobs, optionflags=doctest.ELLIPSIS, verbose=False, report=True
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests of {name} failed"
