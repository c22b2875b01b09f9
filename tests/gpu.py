"""Whether CuPy and a GPU are here (tests/test_cupy.py runs only where they are)."""


def gpu_reason() -> str | None:
    """Why the CuPy tests cannot run here (None: they can)."""
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no GPU (CuPy sees no CUDA device)"
    except Exception as exc:  # no driver, no runtime
        return f"no GPU ({type(exc).__name__}: {exc})"
    return None
