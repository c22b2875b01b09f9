import os
import tempfile

import pytest

# Emitted modules of the test run go to a fresh folder, not the user's cache.
os.environ.setdefault("CPSAD_CACHE_DIR", tempfile.mkdtemp(prefix="cpsad-test-cache-"))


@pytest.fixture(autouse=True)
def _seeded():
    import numpy as np

    np.random.seed(0)
