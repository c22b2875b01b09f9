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


def pytest_terminal_summary(terminalreporter):
    """Say why the CuPy tests did not run, where they did not (a skip's reason is not shown
    by ``-q``): the GPU path is then covered by the strict duck array only."""
    from tests.gpu import gpu_reason

    reason = gpu_reason()
    if reason is not None:
        terminalreporter.write_line(
            f"tests/test_cupy.py skipped: {reason} -- the CuPy path is covered by the strict "
            "duck array (tests/test_duck.py)"
        )
