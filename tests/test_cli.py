"""``cpsad show``: output, stages, files, and errors with exit codes."""

import os
import subprocess
import sys

import pytest

from cpsad.cli import main
from cpsad.transforms.pipeline import STAGES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = os.path.join("tests", "corpus_core.py")


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_show_named_function(capsys):
    assert main(["show", CORE, "branch", "--wrt", "x,y", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "def branch_bp(k, x, y):" in out
    assert "# if z > 1.0:" in out  # the user's lines as comments
    assert "after_if_L" in out


def test_show_file_colon_function_and_callees(capsys):
    assert main(["show", f"{CORE}::is_even", "--wrt", "x"]) == 0
    out = capsys.readouterr().out
    assert "def is_even_bp(" in out and "def is_odd_bp(" in out  # the functions it calls, too
    assert "\x1b[" not in out  # plain text when not a terminal


def test_show_all_functions_of_a_file(tmp_path, capsys):
    src = tmp_path / "two.py"
    src.write_text("def f(x):\n    return x * x\n\n\ndef g(x, y):\n    return f(x) + y\n")
    assert main(["show", str(src)]) == 0
    out = capsys.readouterr().out
    assert out.index("def f_bp(") < out.index("def g_bp(")


def test_stage_and_stages(capsys):
    assert main(["show", CORE, "square", "--stage", "shift/reset"]) == 0
    out = capsys.readouterr().out
    assert 'with shift("x") as k:' not in out and "with shift(" in out and "@reset" in out
    assert main(["show", CORE, "square", "--stages"]) == 0
    out = capsys.readouterr().out
    for name in STAGES:
        assert f"after {name} --" in out


def test_out_writes_modules(tmp_path, capsys):
    assert main(["show", CORE, "is_even", "--wrt", "x", "--out", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["is_even_bp.py", "is_odd_bp.py"]
    compile((tmp_path / "is_even_bp.py").read_text(), "is_even_bp.py", "exec")


def test_missing_file(capsys):
    assert main(["show", "no/such/file.py"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_missing_function(capsys):
    assert main(["show", CORE, "nope"]) == 2
    err = capsys.readouterr().err
    assert "has no function `nope`" in err and "square" in err


def test_file_that_fails_to_import(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("import not_a_module_anywhere\n")
    assert main(["show", str(bad)]) == 2
    assert "failed" in capsys.readouterr().err


def test_unsupported_code_is_a_compiler_error(capsys):
    assert main(["show", os.path.join("tests", "corpus_errors.py"), "uses_try"]) == 1
    err = capsys.readouterr().err
    assert "corpus_errors.py:" in err and "error: `try` is not supported" in err
    assert "^" in err and "hint:" in err


@pytest.mark.parametrize("stages", [[], ["--stages"]], ids=["code", "stages"])
def test_a_second_derivative_refused_is_at_the_users_line(tmp_path, capsys, stages):
    """--order 2 of a call through a value with a keyword argument is refused while the first
    derivative's code is transformed: the error is at the user's line, with a caret (with
    --stages it pointed into the cache file once, at a `call_bp(k, ...)` of emitted code)."""
    src = tmp_path / "through_a_value.py"
    src.write_text(
        "import numpy as np\n\n\ndef scaled(t, scale=1.0):\n    return np.sin(t) * scale\n"
        "\n\ndef f(x):\n    fns = [scaled, np.cos]\n    return fns[0](x, scale=2.0) * x\n"
    )
    assert main(["show", str(src), "f", "--order", "2", *stages]) == 1
    head, line, caret, *_ = capsys.readouterr().err.splitlines()
    assert head.startswith(f"{src}:10:5: error: ") and "(in the derivative of `f`" in head
    assert line.strip() == "return fns[0](x, scale=2.0) * x"
    assert caret.strip() == "^" * len(line.strip())


def test_a_third_derivative_of_a_loop(tmp_path, capsys):
    """--order 3 of a loop: the third derivative's code (it was refused at the loop)."""
    src = tmp_path / "loop.py"
    src.write_text(
        "def f(x):\n    s = x\n    for _ in range(3):\n        s = s * x\n    return s\n"
    )
    assert main(["show", str(src), "f", "--order", "3"]) == 0
    out = capsys.readouterr().out
    assert "def f_bp_bp_bp(" in out and "bp_of" in out


def test_bad_wrt(capsys):
    assert main(["show", CORE, "square", "--wrt", "nope"]) == 2
    assert "no parameter" in capsys.readouterr().err


def test_python_dash_m():
    r = subprocess.run(
        [sys.executable, "-m", "cpsad", "show", CORE, "square"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "def square_bp(k, x):" in r.stdout
