"""``python -m cpsad`` is the ``cpsad`` command."""

import sys

from cpsad.cli import main

sys.exit(main())
