"""Returned gradients and tangents are arrays the caller alone holds: none is returned twice,
none is (or is a view of) an argument, a cotangent or a tangent the caller passed in -- a user
who scales one gradient in place scales nothing else. Copies are made only where needed."""

import numpy as np

import cpsad


def add(x, y):
    return np.sum(x + y)


def identity(x):
    return x


def first(x, y):
    return x


def add_arrays(x, y):
    return x + y


def reshaped(x):
    return x.reshape(3)


def both(x):
    return {"p": x, "q": x}


def entries_added(p):
    return np.sum(p["a"] + p["b"])


def items_added(xs):
    return np.sum(xs[0] + xs[1])


def separate(x, y):
    return np.sum(np.sin(x)) + np.sum(y * y)


def alone(*arrays):
    """Every array of ``arrays`` shares memory with none of the others."""
    return all(not np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1 :])


def test_the_operands_of_a_sum_get_their_own_gradients():
    x, y = np.ones(3), np.ones(3)
    gx, gy = cpsad.grad(add, (0, 1))(x, y)
    assert alone(gx, gy, x, y)
    gx *= 2.0
    assert np.all(gy == 1.0)
    _, (gx, gy) = cpsad.value_and_grad(add, (0, 1))(x, y)
    assert alone(gx, gy, x, y)


def test_the_vjp_of_the_identity_is_not_the_cotangent():
    x, c = np.ones(3), np.arange(3.0)
    _, pullback = cpsad.vjp(identity, x)
    (g,) = pullback(c)
    assert np.array_equal(g, c) and alone(g, c, x)
    g *= 10.0
    assert np.array_equal(c, np.arange(3.0))


def test_vjp_of_a_function_returning_an_argument_or_a_view_of_one():
    x, y, c = np.ones(3), np.ones(3), np.arange(3.0)
    gx, gy = cpsad.vjp(first, x, y)[1](c)
    assert alone(gx, gy, c, x, y) and np.array_equal(gx, c) and np.all(gy == 0)
    gx, gy = cpsad.vjp(add_arrays, x, y)[1](c)
    assert alone(gx, gy, c, x, y)
    (g,) = cpsad.vjp(reshaped, np.ones((3, 1)))[1](c)
    assert g.shape == (3, 1) and alone(g, c)


def test_pytree_entries_that_share_an_adjoint():
    p = {"a": np.ones(2), "b": np.ones(2)}
    g = cpsad.grad(entries_added)(p)
    assert alone(g["a"], g["b"], p["a"], p["b"])
    w = np.ones(2)  # one array in two entries of the argument
    g = cpsad.grad(entries_added)({"a": w, "b": w})
    assert alone(g["a"], g["b"], w)
    xs = [np.ones(2), np.ones(2)]
    g = cpsad.grad(items_added)(xs)
    assert alone(g[0], g[1], *xs)
    _, pullback = cpsad.vjp(identity, {"a": w})
    c = {"a": np.arange(2.0)}
    assert alone(pullback(c)[0]["a"], c["a"], w)


def test_jvp_tangents_are_not_the_tangents_given():
    x, t = np.ones(3), np.arange(3.0)
    value, tangent = cpsad.jvp(identity, (x,), (t,))
    assert value is x  # the value is what f returns, as when it is called
    assert np.array_equal(tangent, t) and alone(tangent, t, x)
    _, tangent = cpsad.jvp(reshaped, (np.ones((3, 1)),), (t.reshape(3, 1),))
    assert alone(tangent, t)
    _, tangent = cpsad.jvp(both, (x,), (t,))
    assert alone(tangent["p"], tangent["q"], t, x)
    _, tangent = cpsad.jvp(add_arrays, (x, np.ones(3)), (t, None))
    assert alone(tangent, t)
    value, tangent = cpsad.jvp(identity, (x,), (x,))  # the primal as its own tangent
    assert value is x and alone(tangent, x)


def test_fresh_gradients_are_not_copied():
    """Copies only where an array would be shared: fresh gradients come back as computed."""
    from cpsad.pytree import owned

    a, b = np.ones(2), np.zeros(2)
    grads = [a, {"k": b}]
    assert owned(grads, (np.ones(2), [3.0])) is grads
    x, y = np.ones(3), np.ones(3)
    gx, gy = cpsad.grad(separate, (0, 1))(x, y)
    assert alone(gx, gy, x, y)
    out = owned([a, a], ())
    assert out[0] is a and out[1] is not a and np.array_equal(out[1], a)
    view = a[:1]
    out = owned([view], ([a],))
    assert out[0] is not view and not np.shares_memory(out[0], a)
