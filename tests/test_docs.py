"""The docs say what the code does: their generated parts are current, their links resolve."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_generated_parts_are_current():
    update = os.environ.get("CPSAD_UPDATE_SNAPSHOTS") == "1"
    args = [sys.executable, os.path.join(ROOT, "docs", "build.py")] + (
        [] if update else ["--check"]
    )
    r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_links_between_docs_resolve():
    docs = os.path.join(ROOT, "docs")
    for name in os.listdir(docs):
        if name.endswith(".md"):
            with open(os.path.join(docs, name)) as fh:
                for target in re.findall(r"\]\(([a-z_\-]+\.md)\)", fh.read()):
                    assert os.path.exists(os.path.join(docs, target)), f"{name} links to {target}"


def test_error_hints_point_at_docs_that_exist():
    for name in ("reference.md", "rules.md", "architecture.md"):
        assert os.path.exists(os.path.join(ROOT, "docs", name))


def test_every_list_of_stages_is_the_pipelines():
    """README.md and docs/api.md generate theirs from transforms/pipeline.py (gen:stages,
    gen:stage-names, kept current above); the architecture's table, which says more of each
    stage, names the same stages in the same order."""
    from cpsad.transforms import pipeline

    for page, kind in (("README.md", "gen:stages"), ("docs/api.md", "gen:stage-names")):
        with open(os.path.join(ROOT, page)) as fh:
            assert f"<!-- {kind} -->" in fh.read(), page
    with open(os.path.join(ROOT, "docs", "architecture.md")) as fh:
        text = fh.read()
    # (a file, or a package of rewrites: `simplify/` and the modules it lists)
    row = re.compile(r"^\| ([a-z/]+)[^|]*\| `([a-z_]+)(?:\.py|/)`[^|]*\|", re.M)
    tables = [row.findall(t) for t in re.split(r"\n(?!\|)", text) if row.search(t)]
    regular, staged = ([name for name, _ in rows] for rows in tables)
    assert [n for n in regular if n != "tangent"] == pipeline.STAGES
    assert set(pipeline.FORWARD_STAGES) <= set(regular)  # forward mode's own stage too
    # cpsad.jit's: its own stages, and the one with staged forms, in its order
    assert staged == [
        c.name
        for c, _ in pipeline.STAGED
        if c.name not in pipeline.STAGES or c.name == "defunctionalize"
    ]


def test_the_api_page_has_every_public_name():
    """docs/python-api.md: what mkdocstrings renders from the docstrings (make docs)."""
    import cpsad

    with open(os.path.join(ROOT, "docs", "python-api.md")) as fh:
        documented = re.findall(r"^::: cpsad\.(\w+)$", fh.read(), re.M)
    assert sorted(documented) == sorted(cpsad.__all__)


def test_the_site_has_every_page():
    """mkdocs.yml's nav names every page of docs/ (make docs, strict, fails on one left out)."""
    with open(os.path.join(ROOT, "mkdocs.yml")) as fh:
        nav = re.findall(r"^  - [^:\n]+: ([\w\-]+\.md)$", fh.read(), re.M)
    pages = sorted(n for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
    assert sorted(nav) == pages
