"""The docs say what the code does."""

import os
import re

from cpsad.rules import core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_reference_lists_every_rule():
    path = os.path.join(ROOT, "docs", "reference.md")
    with open(path) as fh:
        text = fh.read()
    block = re.search(r"<!-- rules:begin -->\n(.*)<!-- rules:end -->", text, re.S)
    assert block, "docs/reference.md lost its rules markers"
    if os.environ.get("CPSAD_UPDATE_SNAPSHOTS") == "1":
        text = text[: block.start(1)] + core.table() + text[block.end(1) :]
        with open(path, "w") as fh:
            fh.write(text)
        return
    assert block.group(1) == core.table(), "run `make snapshots` to regenerate docs/reference.md"


def test_error_hints_point_at_docs_that_exist():
    for name in ("reference.md", "rules.md", "architecture.md"):
        assert os.path.exists(os.path.join(ROOT, "docs", name))
