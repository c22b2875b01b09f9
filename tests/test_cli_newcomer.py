"""``cpsad show`` as a newcomer meets it: a whole file shown though some of its functions cannot be,
``--wrt`` over a whole file, every example of ``--help`` and of the docs run as written, ``--out``
files that run on their own, and ``cpsad.show`` displayed highlighted in a notebook."""

import glob
import os
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

import cpsad
from cpsad.cli import main, parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MIXED = textwrap.dedent("""\
    import numpy as np


    def f(x, w):
        return np.tanh(w * x)


    def refused(x):
        try:
            return x * x
        except ValueError:
            return x


    def g(x):
        return f(x, 2.0) * x


    def train(steps):
        for _ in range(steps):
            try:
                pass
            finally:
                pass
        return steps
    """)


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))  # (``load`` puts folders on it)


def test_a_whole_file_shows_every_function_it_can(tmp_path, capsys):
    src = tmp_path / "mixed.py"
    src.write_text(MIXED)
    assert main(["show", str(src), "--color", "never"]) == 1
    out, err = capsys.readouterr()
    # the functions after the refused ones are shown all the same
    assert "def f_bp(" in out and "def g_bp(" in out
    lines = err.splitlines()
    assert len(lines) == 3, err  # one line a refusal, then what to do
    assert re.match(rf"{re.escape(str(src))}:9:\d+: error: `try` .*\(in `refused`\)$", lines[0])
    assert lines[1].startswith(f"{src}:") and lines[1].endswith("(in `train`)")
    assert "2 of 4 functions could not be shown" in lines[2]
    assert f"cpsad show {src} NAME" in lines[2]


def test_a_named_function_still_gets_the_whole_error(tmp_path, capsys):
    src = tmp_path / "mixed.py"
    src.write_text(MIXED)
    assert main(["show", str(src), "refused", "g"]) == 1
    out, err = capsys.readouterr()
    assert "def g_bp(" in out  # (the other named function still shown)
    assert "^" in err and "hint:" in err and "could not be shown" not in err


def test_a_whole_file_of_examples(capsys):
    assert main(["show", "examples/mlp.py", "--color", "never"]) == 1
    out, err = capsys.readouterr()
    assert "def loss_bp(" in out and "def accuracy_bp(" in out
    assert "examples/mlp.py:26:" in err and "(in `init_params`)" in err


def test_wrt_applies_to_the_functions_with_those_parameters(tmp_path, capsys):
    src = tmp_path / "params.py"
    src.write_text(
        "def f(x, w):\n    return w * x\n\n\ndef g(x):\n    return x * x\n\n\n"
        "def h(w, b, x):\n    return w * x + b\n"
    )
    assert main(["show", str(src), "--wrt", "w,x"]) == 0
    out, err = capsys.readouterr()
    assert "def f_bp(" in out and "def h_bp(" in out and "def g_bp(" not in out
    assert "then returns the adjoints of (w, x)" in out
    assert len(err.splitlines()) == 1, err
    assert "skipped 1 of 3 functions" in err and "g (no w: it has x)" in err
    # none has them: a usage error, saying why for each
    assert main(["show", str(src), "--wrt", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no function of" in err and "g (no nope: it has x)" in err


def help_examples() -> list[str]:
    text = parser()._subparsers._group_actions[0].choices["show"].format_help()
    section = text.split("\nexamples", 1)[1].split("\n\n", 1)[0]
    found = [line.split("  ", 2)[1] for line in section.splitlines() if line.startswith("  cpsad ")]
    assert len(found) >= 5, section
    return found


def docs_examples() -> list[str]:
    """``cpsad show ...`` in the docs and README (in code spans and code blocks) that name a file
    of the repository and no placeholder (FILE, NAME, ...)."""
    found = []
    for md in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [
        os.path.join(ROOT, "README.md")
    ]:
        text = open(md).read()
        # (a generated part is a session docs/build.py ran, exit status and all: --check reruns it)
        text = re.sub(r"<!-- gen:.*?<!-- end -->", "", text, flags=re.S)
        spans = re.findall(r"`(cpsad show [^`\n]+)`", text)
        for block in re.findall(r"```[^\n]*\n(.*?)```", text, re.S):
            spans += [m.split("#")[0] for m in re.findall(r"cpsad show [^\n]+", block)]
        for cmd in spans:
            # the command, without the shell's redirections, pipes and what follows
            cmd = re.split(r"\s(?:\d?>|\||;|&&)", cmd)[0]
            words = shlex.split(cmd)
            files = [w.split("::")[0] for w in words if w.split("::")[0].endswith(".py")]
            if any(re.fullmatch(r"[A-Z][A-Z.]*", w) for w in words):
                continue  # a placeholder
            if files and all(os.path.exists(os.path.join(ROOT, f)) for f in files):
                found.append(cmd.strip())
    return sorted(set(found))


def run_as_written(cmd: str, where, monkeypatch) -> int:
    """Run ``cmd`` in-process, in a folder of its own that sees the repository's files by their
    paths (so ``--out generated/`` writes there)."""
    words = shlex.split(cmd)
    assert words[:2] == ["cpsad", "show"], cmd
    for w in words[2:]:
        top = w.split("::")[0].split("/")[0]
        if not w.startswith("-") and os.path.exists(os.path.join(ROOT, top)):
            if not os.path.exists(where / top):
                os.symlink(os.path.join(ROOT, top), where / top)
    monkeypatch.chdir(where)
    return main(words[1:] + ["--color", "never"])


@pytest.mark.parametrize("cmd", help_examples())
def test_every_help_example_runs(cmd, tmp_path, monkeypatch, capsys):
    assert run_as_written(cmd, tmp_path, monkeypatch) == 0, capsys.readouterr().err
    assert "def " in capsys.readouterr().out


def test_the_docs_have_examples_to_run():
    cmds = docs_examples()
    assert "cpsad show examples/readme.py loss --wrt w" in cmds, cmds
    assert len(cmds) >= 3, cmds


@pytest.mark.parametrize("cmd", docs_examples())
def test_every_docs_example_runs(cmd, tmp_path, monkeypatch, capsys):
    assert run_as_written(cmd, tmp_path, monkeypatch) == 0, capsys.readouterr().err


def run_fresh(args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_out_files_run_on_their_own(tmp_path, capsys):
    out = tmp_path / "generated"
    assert main(["show", "examples/mlp.py", "loss", "--wrt", "params", "--out", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["loss_bp.py", "predict_bp.py"]
    text = (out / "loss_bp.py").read_text()
    assert "a module that runs on its own" in text and "reading only" not in text
    assert text.rstrip().endswith("from predict_bp import predict_bp  # noqa: E402")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in os.listdir(out):
        r = run_fresh([str(out / name)], elsewhere)
        assert r.returncode == 0, r.stderr
    # imported by a fresh interpreter, it computes what cpsad.grad does
    check = textwrap.dedent(f"""\
        import sys
        import numpy as np
        sys.path[:0] = [{str(out)!r}, {os.path.join(ROOT, "examples")!r}]
        import loss_bp
        import mlp
        import cpsad
        rng = np.random.default_rng(0)
        params = mlp.init_params(rng, n_in=5, n_hidden=4, n_out=3)
        X, Y = rng.standard_normal((7, 5)), np.eye(3)[rng.integers(0, 3, 7)]
        got = loss_bp.loss_bp(lambda y: 1.0, params, X, Y)
        want = cpsad.grad(mlp.loss)(params, X, Y)
        assert sorted(got) == sorted(want)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-12)
        print("same")
        """)
    r = run_fresh(["-c", check], elsewhere)
    assert r.returncode == 0 and "same" in r.stdout, r.stderr


def test_out_files_of_mutually_recursive_functions(tmp_path, capsys):
    out = tmp_path / "generated"
    core = os.path.join("tests", "corpus_core.py")
    assert main(["show", core, "is_even", "--wrt", "x", "--out", str(out), "--no-callees"]) == 0
    assert "def is_odd_bp(" not in capsys.readouterr().out  # (printed: not; written: yes)
    assert sorted(os.listdir(out)) == ["is_even_bp.py", "is_odd_bp.py"]
    for name in os.listdir(out):
        r = run_fresh([str(out / name)], tmp_path)
        assert r.returncode == 0, r.stderr
    check = (
        f"import sys; sys.path.insert(0, {str(out)!r}); import is_even_bp; "
        "print(is_even_bp.is_even_bp(lambda y: 1.0, 0.3, 3))"
    )
    r = run_fresh(["-c", check], tmp_path)
    assert r.returncode == 0, r.stderr
    want = cpsad.grad(lambda x: _is_even(x, 3))(0.3)
    assert float(r.stdout) == pytest.approx(want)


def _is_even(x, n):
    return x if n == 0 else _is_odd(x * 1.1, n - 1)


def _is_odd(x, n):
    return x * x if n == 0 else _is_even(x + 0.5, n - 1)


def test_variants_of_one_function_get_files_of_their_own(tmp_path, capsys):
    src = tmp_path / "variants.py"
    src.write_text(textwrap.dedent("""\
            import numpy as np


            def f(x, w):
                h = np.tanh(w * x)
                if h > 0:
                    y = h * h
                else:
                    y = -h
                return y * x + np.sin(w)


            def g(x, w):
                return f(x, w)


            def h(x, w):
                return f(x, 2.0) + w
            """))  # (f, too big to be inlined, called with respect to x, w and to x alone)
    out = tmp_path / "generated"
    assert main(["show", str(src), "--out", str(out)]) == 0
    files = sorted(os.listdir(out))
    assert files == ["f_bp.py", "f_bp_wrt_x.py", "g_bp.py", "h_bp.py"], files
    assert "from f_bp_wrt_x import f_bp  # noqa: E402" in (out / "h_bp.py").read_text()
    for name in files:
        assert run_fresh([str(out / name)], tmp_path).returncode == 0


def test_show_is_a_string_a_notebook_highlights(capsys):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import tutorial

    shown = cpsad.show(tutorial.f)
    assert isinstance(shown, str)
    assert shown == cpsad.show(tutorial.f, format=True)
    print(shown)
    assert capsys.readouterr().out == str(shown) + "\n"
    html = shown._repr_html_()
    assert html.lstrip().startswith("<div") and "<span" in html
    assert "f_bp" in html and "def" in html
    assert repr(shown) == repr(str(shown))  # (repr as a str's; IPython shows it as code)
    printed = []
    shown._repr_pretty_(type("Printer", (), {"text": lambda self, t: printed.append(t)})(), False)
    assert printed == [str(shown)]
    stage = cpsad.show(tutorial.f, stage="normalize")
    assert "f" in stage._repr_html_()
