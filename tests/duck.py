"""A strict duck array: another array library, as numpy's dispatch protocols see one.

``Duck`` wraps an ndarray and implements ``__array_function__`` and ``__array_ufunc__`` (NEP 18
and NEP 13) by running numpy on the unwrapped data and wrapping what comes back -- as CuPy runs
``np.tanh(x)`` on the GPU, or Dask builds a graph of it. It is strict where those libraries are
strict or costly:

* **no implicit conversion**: ``np.asarray(duck)``, ``np.array(duck)``, storing a duck into a
  numpy array (``out[i] = duck``), a ufunc with an ``out=`` numpy array -- everything that calls
  ``__array__`` -- raises ``Coerced`` (CuPy raises too: the data is on the GPU);
* **no in-place writes**: ``duck[i] = v``, ``duck += v``, ``np.add.at(duck, ...)``, ``out=duck``
  raise ``Coerced`` (Dask arrays are immutable in effect; an adjoint cpsad does not own must not
  be written into);
* **no reading a value back**: ``bool(duck)``, ``float(duck)``, ``duck.item()`` raise
  ``Coerced`` -- on Dask each is a computation of the whole graph so far, on a GPU a
  synchronization -- unless the test allows them (``allow_reads``), for programs whose own
  control flow depends on values.

A numpy constant is moved onto a duck's "device" as NEP 35 does it, ``np.asarray(c, like=duck)``.
Reductions return 0-d ducks (as CuPy's do), never numpy scalars.
"""

from __future__ import annotations

import contextlib

import numpy as np


class Coerced(TypeError):
    """A duck array was converted to numpy, written into, or read back as a Python value."""


_READS = [0]  # > 0 while value reads (bool, float, item) are allowed


@contextlib.contextmanager
def allow_reads():
    """Allow ``bool``/``float``/``int``/``item`` of a duck (a program's own control flow)."""
    _READS[0] += 1
    try:
        yield
    finally:
        _READS[0] -= 1


def unwrap(x):
    """``x`` with every duck inside (containers followed) replaced by its ndarray."""
    t = type(x)
    if t is Duck:
        return x._a
    if t is tuple or t is list:
        return t(unwrap(v) for v in x)
    if t is dict:
        return {k: unwrap(v) for k, v in x.items()}
    return x


def wrap(x):
    """What numpy returned, as the duck library returns it: arrays and numpy scalars as ducks."""
    if isinstance(x, np.ndarray):
        if type(x) is not np.ndarray:  # (a subclass numpy returned: a memmap view, say)
            x = x.view(np.ndarray)
        return Duck(x)
    if isinstance(x, np.generic) and not isinstance(x, (np.str_, np.bytes_, np.void)):
        return Duck(np.asarray(x))
    if type(x) is tuple or type(x) is list:
        return type(x)(wrap(v) for v in x)
    return x


_WRITES = {np.copyto, np.put, np.place, np.putmask, np.put_along_axis, np.fill_diagonal}
_VALUES = {np.array_equal, np.array_equiv, np.allclose}  # (numpy's answer: a Python bool)


def _refuse(what: str):
    raise Coerced(f"strict duck array: {what}")


def _method(name: str):
    def method(self, *args, **kwargs):
        return wrap(getattr(self._a, name)(*unwrap(args), **unwrap(kwargs)))

    method.__name__ = name
    return method


def _binary(ufunc, reflected=False):
    """An operator as numpy's (and Dask's and CuPy's): to an operand that opts out of ufuncs
    (``__array_ufunc__ = None``, as cpsad's ``Sparse`` does), ``NotImplemented``, so that Python
    asks the operand's own reflected operator."""

    def op(self, other):
        if getattr(type(other), "__array_ufunc__", False) is None:
            return NotImplemented
        return ufunc(other, self) if reflected else ufunc(self, other)

    return op


def _in_place(self, other):
    _refuse("an in-place operator (`x += y`) writes into the array")


class Duck:
    """An array of another library, to numpy: see the module's docstring."""

    __slots__ = ("_a",)
    __hash__ = None

    def __init__(self, a):
        if type(a) is not np.ndarray:
            raise TypeError(f"Duck wraps an ndarray, not {type(a).__name__}")
        self._a = a

    # ------------------------------------------------------------------ what it is

    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    T = property(lambda self: Duck(self._a.T))
    mT = property(lambda self: Duck(np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: Duck(np.asarray(self._a.real)))
    imag = property(lambda self: Duck(np.asarray(self._a.imag)))

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (wrap(row) for row in self._a)

    def __repr__(self):
        return f"Duck({self._a!r})"

    # ------------------------------------------------------------------ what it refuses

    def __array__(self, dtype=None, copy=None):
        _refuse("converted to a numpy array (np.asarray, np.array, a store into numpy)")

    def __setitem__(self, key, value):
        _refuse("`x[i] = v` writes into the array")

    def _read(self, kind):
        if not _READS[0]:
            _refuse(f"{kind}() reads a value back (a Dask computation, a GPU synchronization)")
        return getattr(self._a, "__" + kind + "__")() if kind != "item" else self._a.item()

    def __bool__(self):
        return self._read("bool")

    def __float__(self):
        return self._read("float")

    def __int__(self):
        return self._read("int")

    def __index__(self):
        return self._read("index")

    def __complex__(self):
        return self._read("complex")

    def item(self, *args):
        if not _READS[0]:
            _refuse("item() reads a value back (a Dask computation, a GPU synchronization)")
        return self._a.item(*args)

    def tolist(self):
        if not _READS[0]:
            _refuse("tolist() reads values back")
        return self._a.tolist()

    # ------------------------------------------------------------------ the protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out") is not None:
            _refuse(f"np.{ufunc.__name__}(..., out=) writes into an array")
        if method == "at":
            _refuse(f"np.{ufunc.__name__}.at writes into the array")
        if any(isinstance(x, np.ndarray) and x.dtype == object for x in inputs):
            return NotImplemented
        return wrap(getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        if not all(issubclass(t, (Duck, np.ndarray)) for t in types):
            return NotImplemented
        if kwargs.get("out") is not None:
            _refuse(f"np.{func.__name__}(..., out=) writes into an array")
        if func in _WRITES:
            _refuse(f"np.{func.__name__} writes into an array")
        out = func(*unwrap(args), **unwrap(kwargs))
        if func in _VALUES:  # a comparison of values: a 0-d array of the library, as CuPy's
            return Duck(np.asarray(out))
        return wrap(out)

    # ------------------------------------------------------------------ indexing

    def __getitem__(self, key):
        return wrap(self._a[unwrap(key)])

    # ------------------------------------------------------------------ operators: numpy's ufuncs

    __add__, __radd__ = _binary(np.add), _binary(np.add, True)
    __sub__, __rsub__ = _binary(np.subtract), _binary(np.subtract, True)
    __mul__, __rmul__ = _binary(np.multiply), _binary(np.multiply, True)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _binary(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.remainder), _binary(np.remainder, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    __matmul__, __rmatmul__ = _binary(np.matmul), _binary(np.matmul, True)
    __and__, __rand__ = _binary(np.bitwise_and), _binary(np.bitwise_and, True)
    __or__, __ror__ = _binary(np.bitwise_or), _binary(np.bitwise_or, True)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _binary(np.bitwise_xor, True)
    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)

    __iadd__ = __isub__ = __imul__ = __itruediv__ = __ifloordiv__ = __imod__ = _in_place
    __ipow__ = __imatmul__ = __iand__ = __ior__ = __ixor__ = _in_place

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)

    def __invert__(self):
        return np.invert(self)

    # ------------------------------------------------------------------ methods (none in place)

    for _name in (
        "all any argmax argmin astype clip conj conjugate copy cumprod cumsum diagonal dot "
        "flatten max mean min nonzero prod ravel repeat reshape round squeeze std sum swapaxes "
        "take trace transpose var view"
    ).split():
        locals()[_name] = _method(_name)
    del _name


def duck(x):
    """``x`` with its float and complex arrays (0-d ones too) as ducks, containers followed;
    everything else -- numbers, integer and bool arrays (indices, masks), shapes -- as it is."""
    t = type(x)
    if t is np.ndarray:
        return Duck(x) if x.dtype.kind in "fc" else x
    if t is tuple or t is list:
        return t(duck(v) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*(duck(v) for v in x))
    if t is dict:
        return {k: duck(v) for k, v in x.items()}
    return x


def unduck(x):
    """``x`` with its ducks as the ndarrays they wrap, containers followed (a test's view)."""
    t = type(x)
    if t is Duck:
        return x._a
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*(unduck(v) for v in x))
    if t is tuple or t is list:
        return t(unduck(v) for v in x)
    if isinstance(x, dict):
        return type(x)({k: unduck(v) for k, v in x.items()})
    return x


def ducks_in(x) -> list:
    """The leaves of ``x`` that are ducks or arrays, for checking which library each is."""
    if isinstance(x, dict):
        return [v for e in x.values() for v in ducks_in(e)]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in ducks_in(e)]
    return [x]
