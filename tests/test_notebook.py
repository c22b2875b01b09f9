"""The tour, examples/tour.ipynb, runs top to bottom in a fresh kernel of this Python, offline.

The kernel is named by a kernelspec written here, in a temporary JUPYTER_PATH, that points at
sys.executable: no kernel installed for the user (another Python, another cpsad) is used, and
IPython's profile and Jupyter's runtime files stay in the temporary folder too.
"""

import json
import os
import sys

import nbformat
from nbclient import NotebookClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOUR = os.path.join(ROOT, "examples", "tour.ipynb")


def test_the_tour_is_committed_without_outputs():
    """Its outputs hold a temporary path and numbers of this machine: they are made by running it."""
    nb = nbformat.read(TOUR, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source


def test_the_tour_runs(tmp_path, monkeypatch):
    kernel = tmp_path / "jupyter" / "kernels" / "cpsad-tour"
    kernel.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "cpsad tour",
        "language": "python",
    }
    (kernel / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # no user startup files either

    nb = nbformat.read(TOUR, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="cpsad-tour",
        timeout=60,  # per cell
        startup_timeout=60,
        resources={"metadata": {"path": os.path.join(ROOT, "examples")}},
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, if a cell raises

    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    shown = [c for c in code if c.source.strip().splitlines()[-1].startswith("cpsad.show(")]
    assert shown, "the tour displays a backpropagator"
    for cell in shown:  # a notebook displays cpsad.show's result highlighted, as HTML
        [result] = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert "<span" in result.data["text/html"], cell.source
    [error] = [c for c in code if "except cpsad.TransformError" in c.source]
    printed = "".join(o.text for o in error.outputs if o.output_type == "stream")
    assert "is not supported" in printed and "^" in printed and "hint:" in printed
