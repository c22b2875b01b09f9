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
