"""A griffe extension for the API pages (mkdocs.yml): after it, ``cpsad.transforms`` is a member of
the package griffe reads, so ``cpsad.TransformError`` (``cpsad.transforms.errors.TransformError``)
resolves.

The passes live in transforms/ at the top of the repository and are installed as cpsad.transforms
(pyproject.toml's ``package-dir``). Griffe finds a package's subpackages by their folders, so it
does not see that one under cpsad/: this loads transforms/ by its path and puts it there.
"""

from __future__ import annotations

import os

import griffe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TransformsInCpsad(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        if pkg.name != "cpsad" or "transforms" in pkg.members:
            return
        transforms = loader.load(os.path.join(ROOT, "transforms"))
        pkg.set_member("transforms", transforms)
