"""The pipeline's passes, one per file, run from one declared list (``pipeline.py``).

This folder sits at the top of the repository -- the passes are the project's layout -- and is
installed inside cpsad's namespace as ``cpsad.transforms`` (pyproject.toml's ``package-dir``), so
no other distribution's top-level ``transforms`` can collide with it. The passes import each other
relatively and never import the rest of ``cpsad``: rules and runtime names reach them through a
context object (``context.Context``).
"""
