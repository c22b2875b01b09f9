"""What a user of the installed package meets before any differentiation: ``import cpsad`` is
light, the public functions are typed, the distribution marks itself typed (PEP 561)."""

import inspect
import json
import os
import subprocess
import sys
import textwrap

import cpsad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ["black", "pygments", "gast", "scipy"]


def run_python(tmp_path, code: str) -> dict:
    """Run ``code`` as a file of its own in a fresh interpreter (transformations need source); the
    JSON it prints last."""
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(code))
    env = dict(os.environ, CPSAD_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, cwd=ROOT, env=env, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_loads_neither_formatting_nor_the_pipeline(tmp_path):
    """``import cpsad`` loads no black or pygments (display only), no gast (the pipeline) and no
    scipy (its rules): those load when a name of the API is first used."""
    out = run_python(
        tmp_path,
        f"""
        import json, sys
        import cpsad
        print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))
        """,
    )
    assert out == {m: False for m in HEAVY}


def test_differentiating_loads_no_formatting(tmp_path):
    """A gradient computed loads the pipeline, but not black or pygments: only showing code does."""
    out = run_python(
        tmp_path,
        """
        import json, sys
        import cpsad

        def f(x):
            return x * x * 3.0

        g = cpsad.grad(f)(2.0)
        shown = {m: m in sys.modules for m in ("black", "pygments", "gast")}
        cpsad.show(f)
        print(json.dumps({"g": g, "shown": shown, "black": "black" in sys.modules}))
        """,
    )
    assert out == {
        "g": 12.0,
        "shown": {"black": False, "pygments": False, "gast": True},
        "black": True,
    }


def test_a_rule_registered_before_the_first_transformation_takes_effect(tmp_path):
    """``cpsad.defvjp`` on a primitive the library has a rule for, before anything was
    transformed: yours wins (the library is loaded before your rule is registered)."""
    out = run_python(
        tmp_path,
        """
        import json
        import numpy as np
        import cpsad

        cpsad.defvjp(np.tanh, lambda g, ans, x: 42.0 * g)

        def f(x):
            return np.tanh(x)

        print(json.dumps(cpsad.grad(f)(0.5)))
        """,
    )
    assert out == 42.0


def test_a_submodule_imported_alone_differentiates(tmp_path):
    """``from cpsad.api import grad`` without ``import cpsad``'s names: the rest of the package
    (the dispatch, the API's own rules) loads at the first transformation."""
    out = run_python(
        tmp_path,
        """
        import json
        from cpsad.api import grad
        from cpsad.higher import hessian

        def f(x):
            return x ** 3

        def h(x):
            return grad(f)(x) * x

        print(json.dumps([grad(f)(2.0), grad(h)(2.0), hessian(f)(2.0)]))
        """,
    )
    assert out == [12.0, 36.0, 12.0]


def test_every_public_function_is_annotated():
    """Each function of ``cpsad.__all__`` annotates every parameter and its return."""
    missing = []
    for name in cpsad.__all__:
        obj = inspect.unwrap(getattr(cpsad, name))
        if not inspect.isfunction(obj):
            continue
        annotations = obj.__annotations__
        params = inspect.signature(obj).parameters
        missing += [f"{name}({p})" for p in params if p not in annotations]
        if "return" not in annotations:
            missing.append(f"{name} -> ?")
    assert not missing, missing


def test_the_package_is_marked_typed():
    """PEP 561: ``cpsad/py.typed`` exists and ships as package data."""
    assert os.path.exists(os.path.join(ROOT, "cpsad", "py.typed"))
    with open(os.path.join(ROOT, "pyproject.toml")) as fh:
        assert '"py.typed"' in fh.read()
