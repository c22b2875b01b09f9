"""The one error a user sees from a transformation: a compiler-style diagnostic in their own file.

``TransformError`` is a ``SyntaxError`` so that Python's own traceback display shows the file, the
line and a caret; ``str(error)`` is the compiler form::

    examples/bad.py:7:5: error: `while` loops are not supported yet
        while x > 0:
        ^^^^^^^^^^^^
    hint: write the loop as a recursive helper function

Defined once, here; ``cpsad.TransformError`` is this class.
"""

from __future__ import annotations

import linecache


class TransformError(SyntaxError):
    """Unsupported or non-differentiable code, located in the user's file."""

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        lineno: int | None = None,
        col: int | None = None,
        end_col: int | None = None,
        hint: str | None = None,
        source_line: str | None = None,
    ):
        self.message = message
        self.hint = hint
        if source_line is None and filename and lineno:
            source_line = linecache.getline(filename, lineno).rstrip("\n") or None
        # SyntaxError's fields: offsets are 1-based columns.
        offset = None if col is None else col + 1
        end_offset = None if end_col is None else end_col + 1
        text = None if source_line is None else source_line + "\n"
        full = message if not hint else f"{message}\nhint: {hint}"
        super().__init__(full, (filename, lineno, offset, text, lineno, end_offset))

    @property
    def col(self) -> int | None:
        return None if self.offset is None else self.offset - 1

    def __str__(self) -> str:
        where = f"{self.filename or '<unknown>'}:{self.lineno or '?'}:{(self.col or 0) + 1}"
        lines = [f"{where}: error: {self.message}"]
        if self.text:
            line = self.text.rstrip("\n")
            lines.append("    " + line)
            if self.col is not None:
                width = 1
                if self.end_offset and self.end_offset > self.offset:
                    width = self.end_offset - self.offset
                lines.append("    " + " " * self.col + "^" * width)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


def call_mismatch(callee: str, sig, exc: Exception) -> str:
    """The message of a call whose arguments do not bind to the parameters ``sig`` of the
    function ``callee`` says, in the user's words (``the lambda at line 7``, ```helper```)."""
    params = ", ".join(
        ("*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else "") + p.name
        for p in sig.parameters.values()
    )
    return f"this call does not match the parameters ({params}) of {callee}: {exc}"


class InternalError(RuntimeError):
    """A bug in cpsad: a pass failed on input the fence accepted. Names the pass and the location."""
