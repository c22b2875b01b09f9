import os
import tempfile

import pytest

# Emitted modules of the test run go to a fresh folder, not the user's cache.
os.environ.setdefault("CPSAD_CACHE_DIR", tempfile.mkdtemp(prefix="cpsad-test-cache-"))


@pytest.fixture(autouse=True)
def _seeded():
    import numpy as np

    np.random.seed(0)


# Hypothesis draws the same examples on every run (CI must not find a different program each
# time it runs: a failure must be reproducible, and shrinking a rare one took 11 GB and minutes
# on one CI run); exploring further is `HYPOTHESIS_PROFILE=explore pytest ...`.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    _hypothesis_settings.register_profile("explore", derandomize=False)
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass
