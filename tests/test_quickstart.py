"""The README's quick start as a newcomer runs it: every shell block of README.md and docs/*.md is
run here as it is written, or named below with why not.

A page marks what a block must print, and the files its commands read, in comments a Markdown
viewer does not show::

    <!-- test-file: mine.py -->        before a ```python block: written to mine.py first
    <!-- test-run: def loss_bp( -->    before a ```sh block: run with `sh -e`; its output has this

A block runs in a folder of its own that sees the checkout's files by their names (README's paths
are relative to the checkout), with this environment as `.venv`: `make show` and
`. .venv/bin/activate` find the interpreter that runs these tests.
"""

import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = [os.path.join(ROOT, "README.md"), *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]

RUN = re.compile(r"<!-- test-run: (.*?) -->\n```sh\n(.*?)```", re.S)
FILE = re.compile(r"<!-- test-file: (\S+) -->\n```python\n(.*?)```", re.S)
SHELL = re.compile(r"```(?:sh|bash|shell)\n(.*?)```", re.S)

# the shell lines of the pages that no test here runs, and why not
NOT_RUN = {
    "make demo": "trains the MLP for a while and writes out/: tests/test_examples.py runs the "
    "examples, and the demo's backpropagator is examples/mlp.py's, in tests/snapshots/",
    "make test": "the tests themselves",
    "pip install /path/to/cpsad": "installs into the reader's own environment, and builds in an "
    "isolated one from the package index (network); checked by hand, 8 s",
    "make dist": ".ci/wheel_check builds the sdist, then the wheel from it, as make dist does",
    "pip install dist/cpsad-*.whl": "installs the dependencies from the package index (network): "
    ".ci/wheel_check, in CI, installs the wheel into a fresh environment and differentiates with it",
}


def shell_lines(block: str) -> list[str]:
    return [s for s in (line.split("#")[0].strip() for line in block.splitlines()) if s]


def marked_blocks() -> list:
    found = []
    for page in PAGES:
        text = open(page).read()
        files = dict(FILE.findall(text))
        for expected, script in RUN.findall(text):
            found.append(pytest.param(script, expected, files, id=os.path.relpath(page, ROOT)))
    return found


def test_every_shell_line_of_the_docs_is_run_or_says_why_not():
    unknown = []
    for page in PAGES:
        text = open(page).read()
        run = {script for _, script in RUN.findall(text)}
        for block in SHELL.findall(text):
            if block not in run:
                unknown += [(page, line) for line in shell_lines(block) if line not in NOT_RUN]
    assert not unknown, "mark the block <!-- test-run: ... --> or say in NOT_RUN why not"


def test_the_quick_start_is_marked_to_run():
    scripts = [p.values[0] for p in marked_blocks()]
    assert "make show FILE=examples/readme.py FUNC=loss WRT=w\n" in scripts
    assert any(s.startswith(". .venv/bin/activate\ncpsad show ") for s in scripts)
    assert any("make show FILE=mine.py" in s for s in scripts)


@pytest.fixture
def checkout(tmp_path):
    """A folder that sees the checkout's files by their names, and this environment as .venv."""
    venv = sys.prefix
    for needed in ("bin/activate", "bin/cpsad"):
        if not os.path.exists(os.path.join(venv, needed)):
            pytest.skip(f"the tests run outside a virtual environment with cpsad ({needed})")
    for name in os.listdir(ROOT):
        if name not in (".venv", ".git"):
            os.symlink(os.path.join(ROOT, name), tmp_path / name)
    os.symlink(venv, tmp_path / ".venv")
    return tmp_path


@pytest.mark.parametrize("script, expected, files", marked_blocks())
def test_a_shell_block_runs_as_written(script, expected, files, checkout):
    for name, text in files.items():
        (checkout / name).write_text(text)
    # `make` with the stamp of the installation counted as current: a test does not reinstall the
    # environment it runs in (pyproject.toml edited since the last `make` would)
    prelude = 'make() { command make -o .venv/.installed "$@"; }\n'
    r = subprocess.run(
        ["sh", "-ec", prelude + script],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert expected in r.stdout, r.stdout + r.stderr


def test_make_show_says_how_to_use_it():
    r = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "show"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode != 0 and "usage: make show FILE=" in r.stderr
