"""``python -m cpsad.rules``: the rule table as Markdown (docs/reference.md includes it)."""

from cpsad.rules import core

print(core.table(), end="")
