"""The examples differentiate correctly and run."""

import importlib.util
import os
import sys

import numpy as np
import pytest

from cpsad.testing import check_grads, check_vjp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
if EXAMPLES not in sys.path:  # the examples import their shared helpers as `common`
    sys.path.insert(0, EXAMPLES)


def load(name):
    spec = importlib.util.spec_from_file_location(
        f"ex_{name}", os.path.join(ROOT, "examples", f"{name}.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


piecewise = load("piecewise")
recursion = load("recursion")
mlp = load("mlp")


@pytest.mark.parametrize("r", [-2.5, -0.3, 0.4, 1.7])
def test_huber(r):
    check_grads(piecewise.huber, r)


@pytest.mark.parametrize("x", [-0.5, 0.3, 0.8, 1.5])
def test_smooth_step(x):
    check_grads(piecewise.smooth_step, x)


@pytest.mark.parametrize("x", [-0.7, 0.4])
def test_tilted(x):
    check_grads(piecewise.tilted, x, 0.3, argnums=(0, 1))


@pytest.mark.parametrize("scale", [0.1, 3.0])
def test_soft_clip(scale):
    check_grads(piecewise.soft_clip, np.linspace(-1, 1, 5) * scale)


def test_recursion():
    check_grads(recursion.power, 1.1, 7)
    check_grads(recursion.horner, np.array([1.0, -2.0, 0.5, 3.0]), 0.7, argnums=(0, 1))
    check_grads(recursion.continued_fraction, 0.6, 8)


def test_mlp_gradient_and_training():
    X, labels = mlp.load_digits()
    params = mlp.init_params(np.random.default_rng(0))
    Y = np.eye(10)[labels]
    check_grads(mlp.loss, params, X[:16], Y[:16], rtol=1e-4)
    _, history = mlp.train(epochs=3, verbose=False)
    assert history["test accuracy"][-1] > 0.85  # three epochs of SGD on the digits


def test_mlp_quick_mode_writes_its_curve(tmp_path, capsys):
    history = mlp.main(["--quick", "--no-progress", "--out", str(tmp_path)])
    assert history["train loss"][-1] < history["train loss"][0]
    assert (tmp_path / "mlp.png").stat().st_size > 10_000
    assert "test accuracy" in capsys.readouterr().out


rnn = load("rnn")
treelstm = load("treelstm")


def test_rnn_gradient_and_training(tmp_path):
    rng = np.random.default_rng(0)
    chars = sorted(set(rnn.load_sonnets()))
    params = {k: v * 3 for k, v in rnn.init_params(rng, len(chars), hidden=5).items()}
    params["bh"] = rng.normal(size=5)
    codes = np.array([[1, 2, 3], [4, 2, 2], [5, 6, 1], [2, 2, 2]])  # (steps, batch)
    inputs, targets = np.eye(len(chars))[codes], np.roll(codes, -1, axis=0)
    h = rng.normal(size=(3, 5))
    check_grads(rnn.loss, params, inputs, targets, h, argnums=(0, 3))
    history = rnn.main(["--steps", "40", "--no-progress", "--out", str(tmp_path)])
    assert history["test bits/char"][-1] < 4.5 < np.log2(len(chars))  # below a uniform guess
    assert (tmp_path / "rnn.png").exists()


lstm = load("lstm")


def test_lstm_gradient_and_training(tmp_path):
    rng = np.random.default_rng(0)
    vocab = 7
    params = lstm.init_params(rng, vocab, hidden=4, embed=3)
    params["b"] = params["b"] + rng.normal(size=16)
    codes = np.array([[1, 2, 2], [2, 2, 6], [5, 6, 1], [0, 2, 2], [3, 3, 3]])  # repeated characters
    check_grads(lstm.loss, params, codes[:-1], codes[1:])
    _, history = lstm.train(steps=40, hidden=48, verbose=False)
    assert history["test bits/char"][-1] < 5.0  # a uniform guess: 5.95
    assert history["train bits/char"][-1] < history["train bits/char"][0] - 1.0


def test_treelstm_gradient_and_training(tmp_path):
    rng = np.random.default_rng(1)
    params = treelstm.init_params(rng, hidden=4, embed=3)
    tree, label = treelstm.dataset(rng, 1, depth=3)[0]
    check_grads(treelstm.loss, params, tree, label)
    history = treelstm.main(["--quick", "--no-progress", "--out", str(tmp_path)])
    assert history["test accuracy"][-1] > 0.6  # chance: 0.5
    assert (tmp_path / "treelstm.png").exists()


cnn = load("cnn")


def test_cnn_conv2d_against_a_direct_loop():
    """im2col gives what the definition of a (cross-)correlation gives, pixel by pixel."""
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 3, 5, 6)), rng.normal(size=(4, 3, 3, 3)), rng.normal(size=4)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    direct = np.zeros((2, 4, 5, 6))
    for r in range(5):
        for s in range(6):
            direct[:, :, r, s] = np.einsum("ncij,fcij->nf", xp[:, :, r : r + 3, s : s + 3], w) + b
    assert np.allclose(cnn.conv2d(x, w, b), direct)


def test_cnn_gradients():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 2, 4, 4)), rng.normal(size=(3, 2, 3, 3)), rng.normal(size=3)
    check_vjp(cnn.conv2d, x, w, b)
    check_vjp(cnn.maxpool, rng.normal(size=(2, 3, 4, 4)))
    X, labels = mlp.load_digits()
    # random biases: with zero biases the blank corners of a digit put ReLUs exactly at their kink
    # and max-pooling windows at ties, where finite differences have no derivative to agree with
    params = {k: v + 0.1 * rng.normal(size=v.shape) for k, v in cnn.init_params(rng, 2, 3).items()}
    check_grads(cnn.loss, params, X[:6], labels[:6], rtol=1e-4)


def test_cnn_quick_mode_learns(tmp_path):
    history = cnn.main(["--quick", "--no-progress", "--out", str(tmp_path)])
    assert history["train loss"][-1] < 0.5 * history["train loss"][0]
    assert history["test accuracy"][-1] > 0.8  # chance is 0.1
    assert (tmp_path / "cnn.png").exists()


resnet = load("resnet")


def test_resnet_gradients():
    rng = np.random.default_rng(0)
    X, labels = mlp.load_digits()
    params = resnet.init_params(rng, channels=2, stages=2, blocks=2, residual_scale=1.0)
    # away from ReLU kinks and pooling ties (see test_cnn_gradients)
    params["stem_b"] = params["stem_b"] + 0.1 * rng.normal(size=2)
    for stage in params["stages"]:
        for block in stage:
            block["b1"] = block["b1"] + 0.1 * rng.normal(size=2)
            block["b2"] = block["b2"] + 0.1 * rng.normal(size=2)
    g = check_grads(resnet.loss, params, X[:4], labels[:4], rtol=1e-4)
    assert len(g["stages"]) == 2 and len(g["stages"][1]) == 2  # the gradient has their structure
    block = params["stages"][0][0]
    x = rng.normal(size=(2, 2, 4, 4))
    g_block, _ = check_vjp(resnet.residual_block, block, x)  # a dict of arrays, and an array
    assert sorted(g_block) == sorted(block)


def test_resnet_quick_mode_learns(tmp_path):
    history = resnet.main(["--quick", "--no-progress", "--out", str(tmp_path)])
    assert history["train loss"][-1] < 0.7 * history["train loss"][0]
    assert history["test accuracy"][-1] > 0.5  # chance is 0.1
    assert (tmp_path / "resnet.png").exists()


def test_dask_glm_quick_mode_trains_on_a_cluster(tmp_path, capsys):
    """The Dask example's quick mode: lazily generated data on a LocalCluster, the loss going
    down step by step, the same weights as numpy on an in-memory sample, and its curve."""
    pytest.importorskip("distributed")
    dask_glm = load("dask_glm")
    out = dask_glm.main(["--quick", "--no-progress", "--out", str(tmp_path)])
    losses = out["losses"]
    assert all(b < a for a, b in zip(losses, losses[1:]))
    assert np.max(np.abs(out["w"] - out["w_true"])) < 0.1
    assert out["gap"] < 1e-12
    assert (tmp_path / "dask_glm.png").stat().st_size > 10_000
    assert "Dask and numpy weights differ by" in capsys.readouterr().out


def test_progress_bar(capsys):
    """tqdm draws the bar on a terminal only, unless told not to; the lines an example prints reach
    stdout whole, with no trace of the bar in them."""
    import io

    import common

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for stream, show, drawn in (
        (Terminal(), True, True),
        (io.StringIO(), True, False),  # a log or a pipe: the printed lines alone
        (Terminal(), False, False),  # --no-progress
    ):
        bar = common.progress_bar(4, "run", show=show, file=stream)
        for _ in range(4):
            bar.set_postfix(loss=0.5, refresh=False)
            bar.update()
        bar.write("epoch 1  loss 0.5000")
        bar.close()
        text = stream.getvalue()
        assert bool(text) == drawn
        if drawn:
            assert "run: 100%" in text and "4/4" in text and text.rstrip().endswith("loss=0.5]")
        assert capsys.readouterr().out == "epoch 1  loss 0.5000\n"
