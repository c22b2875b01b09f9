"""The generator: a seeded grammar of whole Python modules written the way people write numpy.

``generate(seed)`` returns a ``Program``: the source of a module with an entry function ``f`` of
float scalars, vectors of 3 and 3x3 matrices (and sometimes an integer count ``n``), its
module-level helpers, the arguments to call it with, and the features it uses (tags, for
per-feature counts). Everything is drawn from ``random.Random`` seeded by the seed, so a seed is
a program: the same seed writes the same source on every machine.

The grammar covers what cpsad's documentation says it differentiates (README "What it
differentiates", docs/reference.md, docs/control-flow.md): arithmetic and numpy calls over
scalars, vectors and matrices, indexing and slicing, branches, loops with ``break`` /
``continue`` / ``return``, tuple unpacking and swaps, augmented assignment on numbers and arrays,
local functions, lambdas and closures (captures, captures of variables assigned later or
reassigned, passed to helpers, stored in containers, returned), late binding, recursion, lists,
dicts and comprehensions, ``nonlocal``, defaults and decorators.

A program is kept only if it runs in plain Python and returns a finite float (``valid``); the
generator does not need to be exact about Python's semantics -- Python is the judge. Values stay
moderate and smooth: logs and square roots of ``1 + e * e``, divisions by ``1.5 + sin(e)``, loops
of at most four iterations, recursion a few levels deep.

Changing what a seed writes changes every CI seed's program: regenerate the ``KNOWN`` table of
tests/test_fuzz.py afterwards (``python -m tests.fuzz --ci-known``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

S, V, M, I = "S", "V", "M", "I"  # noqa: E741  (scalar, vector of 3, 3x3 matrix, Python int)
VALUE_KINDS = (S, V, M)
SHAPES = {S: (), V: (3,), M: (3, 3)}

# Module-level helpers the grammar may call by name: their source, written once, included in a
# module only when used. Each is something a person writes; the feature tags say what it exercises.
LIBRARY = {
    "apply": ("def apply(fn, v):\n    return fn(v)\n", ("apply_1line",)),
    "apply_twice": (
        "def apply_twice(fn, v):\n    once = fn(v)\n    twice = fn(once)\n    return twice\n",
        ("apply_multi",),
    ),
    "apply_all": (
        "def apply_all(fns, v):\n"
        "    total = 0.0\n"
        "    for fn in fns:\n"
        "        total = total + np.sum(fn(v))\n"
        "    return total\n",
        ("apply_multi", "fn_in_list"),
    ),
    "compose": (
        "def compose(f1, f2):\n    return lambda t: f1(f2(t))\n",
        ("fn_returned", "compose"),
    ),
    "twice": (
        "def twice(fn):\n    def both(t):\n        return fn(fn(t))\n\n    return both\n",
        ("fn_returned",),
    ),
    "make_scale": (
        "def make_scale(c):\n    def scaled(t):\n        return t * c\n\n    return scaled\n",
        ("fn_returned", "closure_helper"),
    ),
    "make_affine": (
        "def make_affine(a, b):\n    return lambda t: np.tanh(t * a + b)\n",
        ("fn_returned", "closure_helper"),
    ),
    "rec_lin": (
        "def rec_lin(t, n):\n"
        "    if n <= 0:\n"
        "        return t\n"
        "    return rec_lin(np.sin(t) * 0.9 + 0.1, n - 1)\n",
        ("recursion_linear",),
    ),
    "rec_tree": (
        "def rec_tree(t, d):\n"
        "    if d <= 0:\n"
        "        return np.tanh(t)\n"
        "    return rec_tree(t * 0.7, d - 1) + rec_tree(np.cos(t), d - 1) * 0.5\n",
        ("recursion_tree",),
    ),
    "rec_fn": (
        "def rec_fn(fn, t, n):\n"
        "    if n == 0:\n"
        "        return t\n"
        "    return fn(rec_fn(fn, t, n - 1))\n",
        ("recursion_linear", "fn_arg_recursion"),
    ),
    "double": (
        "def double(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(*args, **kwargs):\n"
        "        return 2.0 * fn(*args, **kwargs)\n\n"
        "    return wrapper\n",
        ("decorator",),
    ),
    "with_default": (
        "def with_default(t, c=0.5, d=1.5):\n    return t * c + np.sin(t) * d\n",
        ("default_arg",),
    ),
    "memory": (
        "MEMORY = []\n\n\n"
        "def remember(v):\n    MEMORY.append(v)\n    return 0.5\n\n\n"
        "def recall():\n    return MEMORY[-1]\n",
        ("global_state", "helper_call"),
    ),
    "tree": (
        "class Node:\n"
        "    def __init__(self, w, kids=()):\n"
        "        self.w = w\n"
        "        self.kids = kids\n\n\n"
        "TREE = Node(0.5, (Node(1.5), Node(-0.7, (Node(0.9),))))\n\n\n"
        "def walk(node, t):\n"
        "    s = np.tanh(t * node.w)\n"
        "    for kid in node.kids:\n"
        "        s = s + walk(kid, t) * 0.5\n"
        "    return s\n",
        ("objects", "recursion_tree"),
    ),
    "layer": (
        "class Layer:\n"
        "    def __init__(self, c):\n"
        "        self.c = c\n\n"
        "    def apply(self, t):\n"
        "        return np.tanh(t * self.c) + t\n\n"
        "    def __call__(self, t):\n"
        "        return self.apply(t) * 0.5\n\n\n"
        "LAYER = Layer(0.7)\n",
        ("methods",),
    ),
    "struct": (
        "import collections\n"
        "import dataclasses\n\n"
        "Pair = collections.namedtuple('Pair', 'a b', defaults=(0.5,))\n\n\n"
        "@dataclasses.dataclass\n"
        "class Box:\n"
        "    w: object\n"
        "    s: float = 1.5\n",
        ("struct",),
    ),
    # structs whose fields are named as an array's attributes (a gamma distribution's shape, a
    # temperature T): read as fields, never as the array's .shape or .T
    "gamma": (
        "import collections\n"
        "import dataclasses\n\n"
        "Gamma = collections.namedtuple('Gamma', 'shape T')\n\n\n"
        "@dataclasses.dataclass\n"
        "class Dist:\n"
        "    size: object\n"
        "    real: object = 0.5\n\n\n"
        "def gamma_mean(d):\n"
        "    return d.shape / (1.0 + d.T * d.T)\n\n\n"
        "def make_gamma(a, b):\n"
        "    if b > 0.0:  # (a branch: a call, not inlined)\n"
        "        return Gamma(a, b)\n"
        "    return Gamma(a * 0.5, b - 1.0)\n",
        ("struct", "attribute_fields"),
    ),
    # structs with methods, made of differentiable values and called (PyTorch's modules' style,
    # Equinox's): ``__call__`` calling another method, methods making a new struct
    # (``dataclasses.replace``, ``type(self)(...)``, ``_replace``), a NamedTuple's method, a
    # struct holding others and calling them as ``self.first(t)``
    "module": (
        "import dataclasses\n"
        "import typing\n\n\n"
        "@dataclasses.dataclass\n"
        "class Scale:\n"
        "    w: object\n"
        "    b: object = 0.25\n\n"
        "    def __call__(self, t):\n"
        "        return np.tanh(t * self.w + self.b) + self.shift(t)\n\n"
        "    def shift(self, t):\n"
        "        return t * 0.5\n\n"
        "    def scaled(self, c):\n"
        "        return dataclasses.replace(self, w=self.w * c).shifted(0.1)\n\n"
        "    def shifted(self, d):\n"
        "        return type(self)(self.w, self.b + d)\n\n\n"
        "class Gate(typing.NamedTuple):\n"
        "    a: object\n"
        "    c: object\n\n"
        "    def apply(self, t):\n"
        "        return self.a * t + np.sin(self.c * t)\n\n"
        "    def flipped(self):\n"
        "        return self._replace(a=-self.a)\n\n\n"
        "@dataclasses.dataclass\n"
        "class Stack:\n"
        "    first: object\n"
        "    second: object\n\n"
        "    def __call__(self, t):\n"
        "        return self.second.flipped().apply(self.first(t))\n\n\n"
        "def run_module(m, t):\n"
        "    return m(t) * 0.5\n",
        ("struct", "struct_method"),
    ),
    "pair_swap": (
        "def pair_swap(a, b):\n    a, b = b, a\n    return a * 0.5 + b, b\n",
        ("swap", "helper_multi"),
    ),
    # a module passed as a value (the array-API style): ``xp.sum`` is no array's method
    "xp_norm": (
        "def xp_norm(v, xp=np):\n    return xp.sqrt(xp.sum(v * v) + 1.0)\n",
        ("module_value", "default_arg"),
    ),
    "xp_mix": (
        "def xp_mix(xp, v, w):\n    return xp.tanh(v) * xp.mean(w)\n",
        ("module_value",),
    ),
    # an object of yours whose methods are named as an array's
    "acc": (
        "class Acc:\n"
        "    def __init__(self, k):\n"
        "        self.k = k\n\n"
        "    def sum(self, v):\n"
        "        return self.k * np.sum(v * v)\n\n"
        "    def dot(self, v, w):\n"
        "        return np.dot(v, w) * self.k\n\n\n"
        "ACC = Acc(0.8)\n",
        ("array_named_methods", "methods"),
    ),
}


@dataclass
class Program:
    """A generated module: ``source`` defines ``f``; ``params`` are its parameters' (name, kind)."""

    seed: int
    source: str
    params: list
    features: set = field(default_factory=set)
    attempt: int = 0
    values: tuple | None = None  # the arguments, where not drawn from the seed (reduced programs)

    def args(self, seed_offset: int = 0) -> tuple:
        """Fresh arguments for ``f`` (new arrays on every call: ``f`` may change them in place)."""
        if self.values is not None:
            return tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in self.values)
        rng = np.random.default_rng([self.seed, self.attempt, seed_offset])
        out = []
        for _, kind in self.params:
            if kind == S:
                out.append(float(rng.uniform(-1.2, 1.2)))
            elif kind == I:
                out.append(int(rng.integers(2, 4)))
            else:
                out.append(rng.uniform(-1.2, 1.2, SHAPES[kind]))
        return tuple(out)

    @property
    def float_argnums(self) -> tuple:
        return tuple(i for i, (_, k) in enumerate(self.params) if k != I)


class Scope:
    """What a block may use: names and their kinds; ``ro`` names are read-only here (captured)."""

    def __init__(self, vars=None, ro=(), fn_depth=0, loop=None, ret=None):
        self.vars = dict(vars or {})
        self.ro = set(ro)
        self.fn_depth = fn_depth
        self.loop = loop  # None, "for" or "while"
        self.ret = ret  # the kind a `return` here returns, None where no return may be written

    def child(self, **kw):
        sc = Scope(self.vars, self.ro, self.fn_depth, self.loop, self.ret)
        for k, v in kw.items():
            setattr(sc, k, v)
        return sc

    def of(self, kind):
        return [n for n, k in self.vars.items() if k == kind]

    def writable(self, kind):
        return [n for n, k in self.vars.items() if k == kind and n not in self.ro]

    def fns(self):
        return [(n, k) for n, k in self.vars.items() if isinstance(k, tuple) and k[0] == "F"]


def indent(lines, n=1):
    pad = "    " * n
    return [pad + ln if ln else ln for ln in lines]


class Gen:
    """One program's generator: ``Gen(random.Random(...)).module()``."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.features: set = set()
        self.used_lib: list = []
        self.helpers: list = []  # generated module-level helpers: lines
        self.shared: set = set()  # variables a nested function changes (``nonlocal``)
        self.helper_sigs: dict = {}  # name -> ("F", (kinds...), kind)
        self.counter = 0
        self.inputs: dict = {}
        self.budget = 0  # statements left to write
        self.helper_params: dict = {}

    # ---------------------------------------------------------------- small utilities

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def tag(self, *names):
        self.features.update(names)

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(list(seq))

    def wpick(self, options):
        total = sum(w for w, _ in options)
        x = self.r.random() * total
        for w, v in options:
            x -= w
            if x <= 0:
                return v
        return options[-1][1]

    def lib(self, name):
        if name not in self.used_lib:
            self.used_lib.append(name)
        self.tag(*LIBRARY[name][1])
        if name == "double":
            self.tag("functools")
        return name

    def const(self, lo=0.2, hi=1.6, negative=0.3):
        c = round(self.r.uniform(lo, hi), self.r.choice([1, 2]))
        if self.chance(negative):
            return f"(-{c})"
        return repr(c)

    # ---------------------------------------------------------------- expressions

    def var(self, kind, sc):
        names = sc.of(kind)
        if not names:
            return None
        name = self.pick(names)
        if name in sc.ro:
            self.tag("capture")
        return name

    def leaf(self, kind, sc):
        name = self.var(kind, sc) if self.chance(0.85) else None
        if name is not None:
            return name
        if kind == S:
            ints = sc.of(I)
            if ints and self.chance(0.3):
                self.tag("int_in_expr")
                return f"({self.pick(ints)} * {self.const()})"
            vs = sc.of(V)
            if vs and self.chance(0.5):
                self.tag("index")
                return f"{self.pick(vs)}[{self.r.randrange(3)}]"
            return self.const()
        if kind == V:
            if sc.of(M) and self.chance(0.4):
                self.tag("index")
                return f"{self.pick(sc.of(M))}[{self.r.randrange(3)}]"
            return self.pick(
                [
                    f"np.array([{self.const()}, {self.const()}, {self.const()}])",
                    f"(np.ones(3) * {self.const()})",
                    f"np.linspace({self.const()}, {self.const()}, 3)",
                ]
            )
        if kind == M:
            if sc.of(V) and self.chance(0.5):
                a, b = self.pick(sc.of(V)), self.pick(sc.of(V))
                self.tag("outer")
                return f"np.outer({a}, {b})"
            return self.pick(
                [
                    f"(np.eye(3) * {self.const()})",
                    f"(np.ones((3, 3)) * {self.const()})",
                    f"(np.arange(9.0).reshape(3, 3) * {self.const(0.05, 0.3)})",
                ]
            )
        raise ValueError(kind)

    def E(self, kind, sc, d=2):
        """An expression of ``kind`` over the names of ``sc``, at most ``d`` operations deep."""
        if d <= 0 or self.chance(0.2):
            return self.leaf(kind, sc)
        form = self.wpick(self.forms(kind, sc))
        return form(sc, d - 1)

    def forms(self, kind, sc):
        callables = self.callables(kind, sc)
        call_w = 3.0 if callables else 0.0
        if kind == S:
            return [
                (4, self.s_binop),
                (3, self.s_unary),
                (3, self.s_reduce),
                (1, self.s_div),
                (0.6, self.s_ternary),
                (0.4, self.s_negpow),
                (0.5, self.s_math),
                (0.5, self.s_max),
                (0.3, self.s_operator),
                (call_w, lambda sc, d: self.call(kind, sc, d)),
            ]
        if kind == V:
            return [
                (4, self.v_binop),
                (3, self.v_unary),
                (2, self.v_matvec),
                (2, self.v_shape),
                (1, self.v_select),
                (1, self.v_build),
                (1, self.v_reduce_m),
                (call_w, lambda sc, d: self.call(kind, sc, d)),
            ]
        return [
            (3, self.m_binop),
            (2, self.m_unary),
            (2, self.m_matmul),
            (2, self.m_shape),
            (1, self.m_build),
            (1, self.m_select),
            (call_w * 0.7, lambda sc, d: self.call(kind, sc, d)),
        ]

    def s_binop(self, sc, d):
        self.tag("arith")
        op = self.pick("+-*")
        return f"({self.E(S, sc, d)} {op} {self.E(S, sc, d)})"

    def s_unary(self, sc, d):
        self.tag("np_elementwise")
        a = self.E(S, sc, d)
        return self.pick(
            [
                f"np.sin({a})",
                f"np.cos({a})",
                f"np.tanh({a})",
                f"np.exp(np.tanh({a}))",
                f"np.log(1.0 + {a} * {a})",
                f"np.sqrt(1.0 + {self.pow2(a)})",
                f"({self.pow2(a)})",
                f"(-{a})",
                f"np.arctan({a})",
            ]
        )

    def pow2(self, a):
        if a.startswith("(-"):
            self.tag("neg_const_pow")
        return f"{a} ** 2"

    def s_div(self, sc, d):
        self.tag("arith", "div")
        return f"({self.E(S, sc, d)} / (1.5 + np.sin({self.E(S, sc, d)})))"

    def s_reduce(self, sc, d):
        self.tag("reduce")
        if self.chance(0.65):
            a = self.E(V, sc, d)
            picked = self.wpick(
                [
                    (3, f"np.sum({a})"),
                    (2, f"np.mean({a})"),
                    (2, f"np.dot({a}, {self.E(V, sc, d - 1)})"),
                    (1, f"({a} @ {self.E(V, sc, d - 1)})"),
                    (2, f"{a}[{self.r.randrange(-3, 3)}]"),
                    (1, f"np.max({a})"),
                    (1, f"{a}.sum()"),
                    (1, f"np.linalg.norm({a})"),
                    (1, f"np.prod({a})"),
                    (1, f"np.sum({a}[{self.r.randrange(2)}:])"),
                    (1, None),  # (a composite, made only if picked)
                ]
            )
            return self.composite_reduce(a, sc, d) if picked is None else picked
        a = self.E(M, sc, d)
        self.tag("matrix")
        return self.wpick(
            [
                (3, f"np.sum({a})"),
                (1, f"np.mean({a})"),
                (2, f"np.trace({a})"),
                (2, f"{a}[{self.r.randrange(3)}, {self.r.randrange(3)}]"),
                (1, f"np.sum({a}[:2, 1:])"),
                (1, f"{a}.mean()"),
            ]
        )

    def composite_reduce(self, a, sc, d):
        """A reduction numpy computes in Python, which cpsad differentiates as its composite."""
        self.tag("composite")
        form = self.r.randrange(4)
        if form == 0:
            return f"np.median({a})"
        if form == 1:
            return f"np.percentile({a}, {self.r.choice([10, 35, 50, 80])})"
        if form == 2:
            return f"np.average({a}, weights=np.abs({self.E(V, sc, d - 1)}) + 0.5)"
        return f"np.sum(np.diff({a}) ** 2)"

    def s_ternary(self, sc, d):
        self.tag("ternary")
        return f"({self.E(S, sc, d)} if {self.cond(sc)} else {self.E(S, sc, d)})"

    def s_negpow(self, sc, d):
        self.tag("neg_const_pow")
        return f"({self.E(S, sc, d)} * (-{self.const(1.0, 2.5, 0)}) ** 2)"

    def s_math(self, sc, d):
        self.tag("math")
        a = self.E(S, sc, d)
        return self.pick(
            [f"math.sin({a})", f"math.exp(math.tanh({a}))", f"math.sqrt(1.0 + {self.pow2(a)})"]
        )

    def s_max(self, sc, d):
        self.tag("maximum")
        a, b = self.E(S, sc, d), self.E(S, sc, d)
        return self.pick([f"np.maximum({a}, {b})", f"max({a}, {b})", f"np.minimum({a}, {b})"])

    def v_binop(self, sc, d):
        self.tag("arith", "vector")
        op = self.pick("+-*")
        r = self.r.random()
        if r < 0.5:
            return f"({self.E(V, sc, d)} {op} {self.E(V, sc, d)})"
        if r < 0.8:
            return f"({self.E(S, sc, d)} {op} {self.E(V, sc, d)})"
        return f"({self.E(V, sc, d)} {op} {self.E(S, sc, d)})"

    def v_unary(self, sc, d):
        self.tag("np_elementwise", "vector")
        a = self.E(V, sc, d)
        return self.pick(
            [
                f"np.sin({a})",
                f"np.tanh({a})",
                f"np.cos({a})",
                f"np.exp(np.tanh({a}))",
                f"np.log(1.0 + {a} * {a})",
                f"np.sqrt(1.0 + {a} ** 2)",
                f"np.square({a})",
                f"({a} ** 2)",
            ]
        )

    def v_matvec(self, sc, d):
        self.tag("matmul", "matrix")
        m, v = self.E(M, sc, d), self.E(V, sc, d)
        return self.pick([f"({m} @ {v})", f"({v} @ {m})", f"np.dot({m}, {v})", f"{m}.dot({v})"])

    def v_shape(self, sc, d):
        a = self.E(V, sc, d)
        form = self.pick(
            ["slice", "flip", "roll", "cumsum", "concat", "reshape", "reshape_m", "composite"]
        )
        self.tag({"concat": "concatenate", "reshape_m": "reshape"}.get(form, form), "vector")
        if form == "composite":  # numpy computing in Python: cpsad's composites
            b = self.E(V, sc, d)
            self.tag("composite")
            return self.pick(
                [
                    f"np.diff({a}, prepend=0.5)",
                    f"np.cross({a}, {b})",
                    f"np.interp({a}, [-1.0, 0.0, 1.0], {b})",
                    f"np.gradient({a})",
                    f"np.append({a}[:1], {b}[1:])",
                    f"np.sinc({a})",
                    f"np.kron({a}[:1], {b})",
                ]
            )
        if form == "slice":
            return f"{a}[::-1]"
        if form == "flip":
            return f"np.flip({a})"
        if form == "roll":
            return f"np.roll({a}, {self.r.choice([1, -1, 2])})"
        if form == "cumsum":
            return f"np.cumsum({a})"
        if form == "concat":
            b = self.E(V, sc, d)
            return f"np.concatenate([{a}[:1], {b}[1:]])"
        if form == "reshape":
            return f"np.reshape({a}, (3, 1))[:, 0]"
        m = self.E(M, sc, d)
        k = self.r.choice([0, 3, 6])
        return self.pick(
            [
                f"np.reshape({m}, 9)[{k}:{k + 3}]",
                f"{m}.reshape(9)[::3]",
                f"{m}.ravel()[{k}:{k + 3}]",
            ]
        )

    def v_select(self, sc, d):
        a, b = self.E(V, sc, d), self.E(V, sc, d)
        if self.chance(0.5):
            self.tag("maximum", "vector")
            return self.pick([f"np.maximum({a}, {b})", f"np.minimum({a}, {self.const()})"])
        self.tag("where", "vector")
        return self.pick(
            [f"np.where({a} > {b}, {a}, {b})", f"np.where({a} > {self.const()}, {a}, 0.3 * {a})"]
        )

    def v_build(self, sc, d):
        self.tag("stack", "vector")
        parts = ", ".join(self.E(S, sc, d) for _ in range(3))
        return self.pick([f"np.stack([{parts}])", f"np.array([{parts}])"])

    def v_reduce_m(self, sc, d):
        self.tag("reduce", "matrix")
        m = self.E(M, sc, d)
        ax = self.r.randrange(2)
        return self.pick(
            [
                f"np.sum({m}, axis={ax})",
                f"np.mean({m}, axis={ax})",
                f"{m}.sum(axis={ax})",
                f"{m}[:, {self.r.randrange(3)}]",
                f"np.diagonal({m})",
            ]
        )

    def m_binop(self, sc, d):
        self.tag("arith", "matrix")
        op = self.pick("+-*")
        if self.chance(0.6):
            return f"({self.E(M, sc, d)} {op} {self.E(M, sc, d)})"
        if self.chance(0.5):
            return f"({self.E(S, sc, d)} * {self.E(M, sc, d)})"
        return f"({self.E(M, sc, d)} {op} {self.E(V, sc, d)})"  # broadcasting a row

    def m_unary(self, sc, d):
        self.tag("np_elementwise", "matrix")
        a = self.E(M, sc, d)
        return self.pick([f"np.tanh({a})", f"np.sin({a})", f"np.exp(np.tanh({a}))", f"({a} ** 2)"])

    def m_matmul(self, sc, d):
        self.tag("matmul", "matrix")
        a, b = self.E(M, sc, d), self.E(M, sc, d)
        return self.pick([f"({a} @ {b})", f"np.dot({a}, {b})", f"np.matmul({a}, {b})"])

    def m_shape(self, sc, d):
        self.tag("matrix", "transpose")
        a = self.E(M, sc, d)
        return self.pick(
            [
                f"{a}.T",
                f"np.transpose({a})",
                f"np.reshape(np.reshape({a}, 9), (3, 3))",
                f"(({a} + {a}.T) * 0.5)",
                f"np.tril({a})",
                f"np.rot90({a})",
                f"np.linalg.matrix_power(0.5 * {a}, 2)",
            ]
        )

    def m_build(self, sc, d):
        self.tag("stack", "matrix")
        a, b, c = (self.E(V, sc, d) for _ in range(3))
        return self.pick(
            [
                f"np.stack([{a}, {b}, {c}])",
                f"np.stack([{a}, {b}, {c}], axis=1)",
                f"np.outer({a}, {b})",
                f"np.diag({a})",
                f"np.vstack([{a}, {b}, {c}])",
            ]
        )

    def m_select(self, sc, d):
        self.tag("matrix", "where")
        a = self.E(M, sc, d)
        return self.pick(
            [f"np.where({a} > 0.0, {a}, 0.2 * {a})", f"np.maximum({a}, {self.const()})"]
        )

    def cond(self, sc):
        a = self.E(S, sc, 1)
        op = self.pick(["<", ">", "<=", ">="])
        c = f"{a} {op} {self.const(0.0, 0.8)}"
        if self.chance(0.15):
            c = f"{c} and {self.E(S, sc, 1)} < {self.const(0.5, 2.0, 0)}"
        return c

    # ---------------------------------------------------------------- calls of function values

    def callables(self, kind, sc):
        """(name, signature) of every function value in scope, and every helper, returning ``kind``."""
        out = [(n, k) for n, k in sc.fns() if k[2] == kind]
        out += [(n, k) for n, k in self.helper_sigs.items() if k[2] == kind]
        return out

    def call(self, kind, sc, d):
        name, (_, tins, tout) = self.pick(self.callables(kind, sc))
        args = [self.E(t, sc, d) for t in tins]
        if name in self.helper_sigs:
            self.tag("helper_call")
            return f"{name}({', '.join(args)})"
        self.tag("call_fn_value")
        if len(tins) != 1:
            return f"{name}({', '.join(args)})"
        (a,) = args
        route = self.wpick(
            [
                (4, "direct"),
                (2, "apply"),
                (1, "apply_twice"),
                (1, "twice"),
                (1, "compose"),
                (1, "rec_fn"),
            ]
        )
        if route in ("apply_twice", "twice", "compose", "rec_fn") and tins[0] != tout:
            route = "apply"
        if route == "direct":
            return f"{name}({a})"
        if route == "apply":
            return f"{self.lib('apply')}({name}, {a})"
        if route == "apply_twice":
            return f"{self.lib('apply_twice')}({name}, {a})"
        if route == "twice":
            return f"{self.lib('twice')}({name})({a})"
        if route == "rec_fn":
            return f"{self.lib('rec_fn')}({name}, {a}, 2)"
        others = [
            n for n, k in self.callables(kind, sc) if k[1] == (kind,) and n not in self.helper_sigs
        ]
        return f"{self.lib('compose')}({name}, {self.pick(others)})({a})"

    # ---------------------------------------------------------------- statements

    def block(self, sc, n):
        """``n`` statements (at least one line) in scope ``sc``; returns lines."""
        lines = []
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            lines += self.stmt(sc)
        return lines or ["pass"]

    def stmt(self, sc):
        nested = sc.fn_depth > 0 or sc.loop is not None
        deep = sc.fn_depth + (sc.loop is not None)
        options = [
            (5, self.st_assign),
            (4, self.st_reassign),
            (2.5, self.st_aug),
            (1.2, self.st_tuple),
            (1.8 if deep < 2 else 0, self.st_if),
            (1.8 if deep < 2 else 0, self.st_for),
            (0.8 if deep < 2 else 0, self.st_for_seq),
            (0.9 if deep < 2 else 0, self.st_while),
            (2.0 if sc.fn_depth < 2 else 0, self.st_local_def),
            (1.5 if sc.fn_depth < 2 else 0, self.st_lambda),
            (0.8 if not nested else 0, self.st_acc_loop),
            (0.7 if deep < 2 else 0, self.st_store),
            (0.7 if not nested else 0, self.st_capture_later),
            (0.7 if not nested else 0, self.st_capture_reassigned),
            (0.8 if not nested else 0, self.st_fn_container),
            (0.8 if sc.fn_depth < 2 else 0, self.st_fn_returned),
            (0.7 if not nested else 0, self.st_late_binding),
            (0.4 if not nested else 0, self.st_loop_redefined),
            (1.0, self.st_recursion),
            (1.2 if deep < 2 else 0, self.st_list),
            (0.8, self.st_dict),
            (1.3 if not nested else 0.3, self.st_helper),
            (0.7 if sc.fn_depth < 2 else 0, self.st_nonlocal),
            (0.6 if sc.fn_depth < 2 else 0, self.st_shadow),
            (0.7 if sc.fn_depth < 2 else 0, self.st_defaults),
            (0.35, self.st_decorator),
            (0.5, self.st_alias),
            (0.4 if sc.fn_depth < 2 else 0, self.st_redefined),
            (0.3, self.st_memory),
            (0.4, self.st_tree),
            (0.4, self.st_method),
            (0.4, self.st_struct),
            (0.4, self.st_struct_method),
            (0.4, self.st_receiver),
            (0.5, self.st_iterator),
            (0.4 if not nested else 0, self.st_tuple_capture),
            (0.5 if sc.ret else 0, self.st_early_return),
            (2.0 if sc.loop else 0, self.st_break_continue),
        ]
        return self.wpick(options)(sc)

    def new_name(self, kind):
        return self.fresh({S: "s", V: "vec", M: "mat"}[kind])

    def any_kind(self):
        return self.wpick([(5, S), (3, V), (2, M)])

    def st_assign(self, sc):
        kind = self.any_kind()
        name = self.new_name(kind)
        if self.chance(0.08):  # the walrus: bound inside the expression, read after it
            self.tag("walrus")
            w = self.new_name(kind)
            e = self.E(kind, sc, 2)
            sc.vars[w] = kind
            line = self.pick(
                [
                    f"{name} = ({w} := {e}) * {self.const()} + {w}",
                    f"{name} = {w} * 0.5 if np.sum({w} := {e}) > {self.const()} else {w}",
                ]
            )
        else:
            line = f"{name} = {self.E(kind, sc, 3)}"
        sc.vars[name] = kind
        self.tag("assign")
        return [line]

    def st_reassign(self, sc):
        kind = self.any_kind()
        names = sc.writable(kind)
        if not names:
            return self.st_assign(sc)
        name = self.pick(names)
        self.tag("reassign")
        inner = sc.child()
        return [f"{name} = {self.E(kind, inner, 2)}"]

    def st_aug(self, sc):
        kind = self.any_kind()
        names = sc.writable(kind)
        if not names:
            return self.st_assign(sc)
        name = self.pick(names)
        op = self.wpick([(4, "+="), (2, "-="), (2, "*=")])
        self.tag("aug_num" if kind == S else "aug_array")
        if kind != S and name in self.inputs:
            self.tag("aug_input")
        rhs = self.E(kind if self.chance(0.7) else S, sc, 2)
        if op == "*=":
            rhs = f"np.tanh({rhs})" if kind == S or self.chance(0.5) else f"np.cos({rhs})"
        return [f"{name} {op} {rhs}"]

    def st_tuple(self, sc):
        form = self.pick(["swap", "unpack", "pack_unpack", "nested", "starred"])
        if form == "swap":
            kind = self.any_kind()
            names = sc.writable(kind)
            if len(names) >= 2:
                a, b = self.r.sample(names, 2)
                self.tag("swap")
                return [f"{a}, {b} = {b}, {a}"]
            form = "unpack"
        k1, k2 = self.any_kind(), self.any_kind()
        a, b = self.new_name(k1), self.new_name(k2)
        e1, e2 = self.E(k1, sc, 2), self.E(k2, sc, 2)
        if form == "starred":  # ``a, *rest = ...``: rest a list of the other entries
            self.tag("unpack", "starred_unpack")
            rest, e3 = self.fresh("rest"), self.E(k2, sc, 1)
            sc.vars[a], sc.vars[b] = k1, k2
            if self.chance(0.5):
                return [f"{a}, *{rest} = {e1}, {e2}, {e3}", f"{b} = {rest}[0] * 0.5 + {rest}[-1]"]
            return [f"*{rest}, {a} = {e2}, {e3}, {e1}", f"{b} = {rest}[0] - {rest}[1] * 0.5"]
        if form != "nested":
            sc.vars[a], sc.vars[b] = k1, k2
        if form == "unpack":
            self.tag("unpack")
            return [f"{a}, {b} = {e1}, {e2}"]
        if form == "pack_unpack":
            self.tag("unpack", "tuple")
            p = self.fresh("pair")
            return [f"{p} = ({e1}, {e2})", f"{a}, {b} = {p}"]
        self.tag("unpack", "nested_unpack")
        k3 = self.any_kind()
        c = self.new_name(k3)
        e3 = self.E(k3, sc, 1)
        sc.vars[a], sc.vars[b], sc.vars[c] = k1, k2, k3
        return [f"{a}, ({b}, {c}) = {e1}, ({e2}, {e3})"]

    def body_scope(self, sc, loop=None):
        return sc.child(vars=dict(sc.vars), loop=loop if loop else sc.loop)

    def st_if(self, sc):
        self.tag("if")
        lines = [f"if {self.cond(sc)}:"]
        lines += indent(self.block(self.body_scope(sc), self.r.randint(1, 3)))
        for _ in range(self.r.choice([0, 0, 1, 1, 2])):
            self.tag("elif")
            lines.append(f"elif {self.cond(sc)}:")
            lines += indent(self.block(self.body_scope(sc), self.r.randint(1, 2)))
        if self.chance(0.6):
            self.tag("else")
            lines.append("else:")
            lines += indent(self.block(self.body_scope(sc), self.r.randint(1, 2)))
        else:
            self.tag("no_else")
        return lines

    def loop_bound(self, sc):
        if "n" in self.inputs and self.chance(0.4):
            self.tag("int_arg")
            return "n"
        return str(self.r.randint(1, 4))

    def st_for(self, sc):
        self.tag("for_range")
        i = self.fresh("i")
        bound = self.loop_bound(sc)
        if self.chance(0.2):
            head = (
                f"for {i} in range(1, {bound} + 1):"
                if bound == "n"
                else f"for {i} in range({bound}, 0, -1):"
            )
        else:
            head = f"for {i} in range({bound}):"
        body = self.body_scope(sc, "for")
        body.vars[i] = I
        body.ro.add(i)
        lines = [head] + indent(self.block(body, self.r.randint(1, 3)))
        if self.chance(0.12):
            self.tag("for_else")
            lines += ["else:"] + indent(self.block(self.body_scope(sc), 1))
        return lines

    def st_for_seq(self, sc):
        form = self.pick(["elements", "rows", "enumerate", "zip", "reversed"])
        body = self.body_scope(sc, "for")
        e = self.fresh("e")
        if form == "rows" and sc.of(M):
            self.tag("for_seq", "rows")
            head = f"for {e} in {self.E(M, sc, 1)}:"
            body.vars[e] = V
        elif form == "enumerate":
            self.tag("for_seq", "enumerate")
            i = self.fresh("i")
            head = f"for {i}, {e} in enumerate({self.E(V, sc, 1)}):"
            body.vars[i] = I
            body.vars[e] = S
            body.ro.add(i)
        elif form == "zip":
            self.tag("for_seq", "zip")
            e2 = self.fresh("e")
            head = f"for {e}, {e2} in zip({self.E(V, sc, 1)}, {self.E(V, sc, 1)}):"
            body.vars[e] = S
            body.vars[e2] = S
        elif form == "reversed":
            self.tag("for_seq", "reversed")
            head = f"for {e} in reversed({self.E(V, sc, 1)}):"
            body.vars[e] = S
        else:
            self.tag("for_seq")
            head = f"for {e} in {self.E(V, sc, 1)}:"
            body.vars[e] = S
        return [head] + indent(self.block(body, self.r.randint(1, 3)))

    def st_while(self, sc):
        self.tag("while")
        k = self.fresh("k")
        bound = self.loop_bound(sc)
        body = self.body_scope(sc, "while")
        body.vars[k] = I
        body.ro.add(k)
        step = self.pick([f"{k} = {k} + 1", f"{k} += 1"])
        if self.chance(0.3):
            self.tag("while_data")
            s = self.pick(sc.writable(S)) if sc.writable(S) else None
            cond = f"{k} < {bound} and {s} < {self.const(1.0, 3.0, 0)}" if s else f"{k} < {bound}"
        else:
            cond = f"{k} < {bound}"
        lines = [f"{k} = 0", f"while {cond}:", "    " + step]
        lines += indent(self.block(body, self.r.randint(1, 3)))
        return lines

    def st_break_continue(self, sc):
        which = self.pick(["break", "continue"])
        self.tag(which)
        return [f"if {self.cond(sc)}:", f"    {which}"]

    def st_early_return(self, sc):
        self.tag("early_return")
        return [f"if {self.cond(sc)}:", f"    return {self.E(sc.ret, sc, 2)}"]

    # ---------------------------------------------------------------- function values

    def func_body(self, sc, params, tout, multi=None):
        """Lines of a function body with ``params`` (name -> kind) reading ``sc``'s names."""
        inner = Scope(
            {**sc.vars, **params},
            ro=set(sc.vars) | set(sc.ro) - set(params),
            fn_depth=sc.fn_depth + 1,
            loop=None,
            ret=tout,
        )
        inner.ro -= set(params)
        if multi is None:
            multi = self.chance(0.35)
        if not multi:
            return [f"return {self.E(tout, inner, 2)}"]
        self.tag("multi_stmt_fn")
        lines = self.block(inner, self.r.randint(1, 3))
        return [ln for ln in lines if ln != "pass"] + [f"return {self.E(tout, inner, 2)}"]

    def fn_sig(self):
        tin = self.any_kind()
        tout = tin if self.chance(0.6) else S
        return tin, tout

    def define_fn(self, sc, style=None, name=None):
        """Define a local function value (def or lambda; of the name ``name``, or a fresh one);
        returns (lines, name, signature)."""
        tin, tout = self.fn_sig()
        name = name or self.fresh("g")
        p = self.fresh("u")
        style = style or self.pick(["def", "lambda"])
        if style == "lambda":
            self.tag("lambda")
            inner = Scope({**sc.vars, p: tin}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
            lines = [f"{name} = lambda {p}: {self.E(tout, inner, 2)}"]
        else:
            self.tag("local_def")
            lines = [f"def {name}({p}):"] + indent(self.func_body(sc, {p: tin}, tout))
        sig = ("F", (tin,), tout)
        return lines, name, sig

    def use_fn(self, sc, name, sig):
        """A statement calling the function value ``name`` so that it is exercised."""
        _, tins, tout = sig
        sc.vars[name] = sig
        res = self.new_name(tout)
        args = ", ".join(self.E(t, sc, 1) for t in tins)
        route = self.wpick([(3, "direct"), (2, "apply"), (1, "apply_twice"), (1, "apply_all")])
        if route == "apply_twice" and tins[0] != tout:
            route = "apply"
        if route == "direct" and self.chance(0.2):  # its arguments spread from a tuple, a dict
            self.tag("star_call")
            n = len(tins)
            call = self.pick([f"{name}(*({args},))", f"{name}(*[{args}][:{n}])"])
        elif route == "direct":
            call = f"{name}({args})"
        elif route == "apply_all":
            call = f"{self.lib('apply_all')}([{name}, {name}], {args})"
            tout = S
            res = self.new_name(S)
        else:
            call = f"{self.lib(route)}({name}, {args})"
        sc.vars[res] = tout
        return [f"{res} = {call}"]

    def st_redefined(self, sc):
        """A function value used, then its name bound to another function (a def or lambda of
        the same name), used too -- while another name, a list or what it was handed to still
        holds the first: a read of the name may be either, and each reads the variables it
        captures when it runs."""
        lines, name, sig = self.define_fn(sc)
        self.tag("redefined_fn")
        held = self.wpick([(2, "call"), (2, "alias"), (1, "list")])
        keeper = None
        if held == "alias":
            keeper = self.fresh("k")
            lines.append(f"{keeper} = {name}")
            sc.vars[keeper] = sig
        elif held == "list":
            fs = self.fresh("fs")
            lines.append(f"{fs} = [{name}]")
        lines += self.use_fn(sc, name, sig)
        again, _, sig2 = self.define_fn(sc, name=name)
        lines += again + self.use_fn(sc, name, sig2)
        if keeper is not None:
            lines += self.use_fn(sc, keeper, sig)
        elif held == "list":
            res = self.new_name(sig[2])
            args = ", ".join(self.E(t, sc, 1) for t in sig[1])
            lines.append(f"{res} = {fs}[0]({args})")
            sc.vars[res] = sig[2]
        return lines

    def st_local_def(self, sc):
        lines, name, sig = self.define_fn(sc, "def")
        return lines + self.use_fn(sc, name, sig)

    def st_shadow(self, sc):
        """A local function whose own variable has the name of one of the enclosing function's
        -- often one a nested function changes (``nonlocal``): the two are different variables
        (every other statement here makes fresh names, so nothing else writes this)."""
        outer = [n for n, k in sc.vars.items() if k in (S, V, M) and n in self.shared]
        if not outer or self.chance(0.3):
            outer = [n for n, k in sc.vars.items() if k in (S, V, M)]
        if not outer:
            return self.st_local_def(sc)
        self.tag("shadow", "local_def")
        v = self.pick(outer)
        kind = sc.vars[v]
        tin, tout = self.fn_sig()
        name, p = self.fresh("g"), self.fresh("u")
        # (before the local is assigned its name is no variable of the function: not read)
        before = Scope(
            {n: k for n, k in sc.vars.items() if n != v} | {p: tin},
            ro=set(sc.vars),
            fn_depth=sc.fn_depth + 1,
        )
        inner = Scope({**sc.vars, p: tin}, ro=set(sc.vars) - {v}, fn_depth=sc.fn_depth + 1)
        body = [f"{v} = {self.E(kind, before, 2)}"]
        if self.chance(0.5):
            self.tag("if")
            body += [f"if {self.cond(inner)}:", f"    {v} = {self.E(kind, inner, 1)}"]
            if self.chance(0.6):
                body += ["else:", f"    {v} = {v} * {self.const(0.3, 0.9, 0)}"]
        body.append(f"return {self.E(tout, inner, 2)} + {self.const(0.3, 0.9, 0)} * np.sum({v})")
        lines = [f"def {name}({p}):"] + indent(body)
        return lines + self.use_fn(sc, name, ("F", (tin,), tout))

    def st_lambda(self, sc):
        lines, name, sig = self.define_fn(sc, "lambda")
        if self.chance(0.3):  # a lambda written where it is used
            self.tag("lambda_inline")
            tin, tout = sig[1][0], sig[2]
            p = self.fresh("u")
            inner = Scope({**sc.vars, p: tin}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
            res = self.new_name(tout)
            lam = f"lambda {p}: {self.E(tout, inner, 2)}"
            line = f"{res} = {self.lib('apply')}({lam}, {self.E(tin, sc, 1)})"
            sc.vars[res] = tout
            return [line]
        return lines + self.use_fn(sc, name, sig)

    def st_capture_later(self, sc):
        """A closure defined before the variable it reads is assigned."""
        self.tag("capture_before_assign", "capture")
        kind = self.any_kind()
        z = self.new_name(kind)
        name, p = self.fresh("g"), self.fresh("u")
        tin = self.any_kind()
        inner = Scope({**sc.vars, p: tin, z: kind}, ro=set(sc.vars) | {z}, fn_depth=1)
        if self.chance(0.5):
            body, tout = f"np.sum({p}) * {z}", kind
        else:
            body, tout = f"{p} * np.sum({z})", tin
        if self.chance(0.5):
            self.tag("local_def")
            lines = [f"def {name}({p}):", f"    return {body} + {self.E(tout, inner, 1)}"]
        else:
            self.tag("lambda")
            lines = [f"{name} = lambda {p}: {body} + {self.E(tout, inner, 1)}"]
        lines.append(f"{z} = {self.E(kind, sc, 2)}")
        sc.vars[z] = kind
        return lines + self.use_fn(sc, name, ("F", (tin,), tout))

    def st_capture_reassigned(self, sc):
        """A closure reads a variable the function assigns again afterwards (Python reads the last)."""
        self.tag("capture_reassigned", "capture")
        kind = self.any_kind()
        names = sc.writable(kind)
        if not names:
            return self.st_assign(sc)
        y = self.pick(names)
        name = self.fresh("g")
        if self.chance(0.5):
            self.tag("lambda", "lambda_noarg")
            lines = [f"{name} = lambda: {y}"]
            sig = ("F", (), kind)
        else:
            p = self.fresh("u")
            self.tag("local_def")
            lines = [f"def {name}({p}):", f"    return {p} * {y}"]
            sig = ("F", (kind,), kind)
        lines.append(f"{y} = {self.E(kind, sc, 2)}")
        lines.append(f"{y} = {y} * {self.E(S, sc, 1)}")
        return (
            lines + self.use_fn(sc, name, sig)
            if sig[1]
            else lines + self._call_noarg(sc, name, kind)
        )

    def _call_noarg(self, sc, name, kind):
        res = self.new_name(kind)
        sc.vars[res] = kind
        return [f"{res} = {name}()"]

    def st_fn_container(self, sc):
        kind = self.any_kind()
        fns = []
        lines = []
        for _ in range(self.r.randint(2, 3)):
            name = self.fresh("g")
            p = self.fresh("u")
            inner = Scope({**sc.vars, p: kind}, ro=set(sc.vars), fn_depth=1)
            if self.chance(0.5):
                self.tag("lambda")
                lines.append(f"{name} = lambda {p}: {self.E(kind, inner, 2)}")
            else:
                self.tag("local_def")
                lines += [f"def {name}({p}):", f"    return {self.E(kind, inner, 2)}"]
            fns.append(name)
        c = self.fresh("fs")
        form = self.pick(["list", "tuple", "dict", "inline_list"])
        res = self.new_name(kind)
        arg = self.E(kind, sc, 1)
        if form == "inline_list":  # lambdas written inside the list itself
            self.tag("fn_in_list", "lambda")
            p = self.fresh("u")
            inner = Scope({**sc.vars, p: kind}, ro=set(sc.vars), fn_depth=1)
            lam = f"lambda {p}: {self.E(kind, inner, 1)}"
            lines.append(f"{c} = [{', '.join(fns)}, {lam}]")
            lines.append(f"{res} = {arg}")
            lines += [f"for fn in {c}:", f"    {res} = {res} + fn({res}) * 0.5"]
        elif form == "dict":
            self.tag("fn_in_dict")
            keys = [f"k{j}" for j in range(len(fns))]
            lines.append(f"{c} = {{" + ", ".join(f"'{k}': {n}" for k, n in zip(keys, fns)) + "}")
            lines.append(f"{res} = {c}['{keys[-1]}']({c}['{keys[0]}']({arg}))")
        else:
            self.tag("fn_in_list" if form == "list" else "fn_in_tuple")
            seq = f"[{', '.join(fns)}]" if form == "list" else f"({', '.join(fns)},)"
            lines.append(f"{c} = {seq}")
            if self.chance(0.5):
                lines.append(f"{res} = {c}[0]({arg}) + {c}[-1]({arg})")
            else:
                lines.append(f"{res} = {arg}")
                lines += [f"for fn in {c}:", f"    {res} = fn({res})"]
        sc.vars[res] = kind
        for n in fns:
            sc.vars[n] = ("F", (kind,), kind)
        return lines

    def st_fn_returned(self, sc):
        kind = self.any_kind()
        name = self.fresh("h")
        form = self.pick(["local_make", "make_scale", "make_affine", "compose", "twice"])
        lines = []
        if form == "local_make":
            self.tag("fn_returned", "local_def")
            mk, c, p = self.fresh("make"), self.fresh("c"), self.fresh("u")
            inner = Scope(
                {**sc.vars, c: S, p: kind}, ro=set(sc.vars) | {c}, fn_depth=sc.fn_depth + 2
            )
            inner_fn = self.fresh("inner")
            lines += [
                f"def {mk}({c}):",
                f"    def {inner_fn}({p}):",
                f"        return {p} * {c} + {self.E(kind, inner, 1)}",
                "",
                f"    return {inner_fn}",
                f"{name} = {mk}({self.E(S, sc, 1)})",
            ]
        elif form in ("make_scale", "make_affine"):
            args = ", ".join(self.E(S, sc, 1) for _ in range(1 if form == "make_scale" else 2))
            lines.append(f"{name} = {self.lib(form)}({args})")
        else:
            lines2, g, sig = self.define_fn(sc)
            if sig[1] != (kind,) or sig[2] != kind:
                sig = None
            if sig is None:
                lines2, g = self._simple_fn(sc, kind)
            lines += lines2
            sc.vars[g] = ("F", (kind,), kind)
            other = self.pick([n for n, k in sc.fns() if k == ("F", (kind,), kind)])
            if form == "compose":
                lines.append(f"{name} = {self.lib('compose')}({g}, {other})")
            else:
                lines.append(f"{name} = {self.lib('twice')}({g})")
        return lines + self.use_fn(sc, name, ("F", (kind,), kind))

    def _simple_fn(self, sc, kind):
        g, p = self.fresh("g"), self.fresh("u")
        inner = Scope({**sc.vars, p: kind}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
        self.tag("lambda")
        return [f"{g} = lambda {p}: {self.E(kind, inner, 1)}"], g

    def st_late_binding(self, sc):
        """Lambdas made in a loop read the loop variable when called: its last value."""
        kind = self.any_kind()
        c, i, p = self.fresh("fs"), self.fresh("i"), self.fresh("u")
        inner = Scope({**sc.vars, p: kind, i: I}, ro=set(sc.vars) | {i}, fn_depth=1)
        body = f"{p} * ({i} + 1) * {self.const(0.2, 0.6, 0)} + {self.E(kind, inner, 1)}"
        form = self.pick(["append", "comprehension", "default", "comp_default"])
        if form == "append":
            self.tag("late_binding", "append", "lambda")
            lines = [f"{c} = []", f"for {i} in range(3):", f"    {c}.append(lambda {p}: {body})"]
        elif form == "comprehension":
            self.tag("late_binding", "listcomp", "lambda")
            lines = [f"{c} = [lambda {p}: {body} for {i} in range(3)]"]
        elif form == "default":
            self.tag("default_binding", "append", "lambda", "default_arg")
            lines = [
                f"{c} = []",
                f"for {i} in range(3):",
                f"    {c}.append(lambda {p}, {i}={i}: {body})",
            ]
        else:
            self.tag("default_binding", "listcomp", "lambda", "default_arg")
            lines = [f"{c} = [lambda {p}, {i}={i}: {body} for {i} in range(3)]"]
        res = self.new_name(kind)
        arg = self.E(kind, sc, 1)
        if self.chance(0.5):
            lines.append(f"{res} = {c}[0]({arg}) + {c}[1]({arg}) + {c}[2]({arg})")
        else:
            lines += [f"{res} = {arg}", f"for fn in {c}:", f"    {res} = {res} + fn({arg})"]
        sc.vars[res] = kind
        return lines

    def st_loop_redefined(self, sc):
        """A function the loop makes anew in each iteration, with its own default: called within
        the iteration, or kept by a closure that binds it by a default -- or, refused, by one
        that calls it by name (Python calls the last one)."""
        kind = self.any_kind()
        fs, acc, i = self.fresh("fs"), self.new_name(kind), self.fresh("i")
        g, p, c = self.fresh("g"), self.fresh("u"), self.fresh("c")
        inner = Scope({**sc.vars, p: kind, c: S}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
        body = f"{p} * {c} + {self.E(kind, inner, 1)}"
        lines = [f"{fs} = []", f"{acc} = {self.E(kind, sc, 1)}", f"for {i} in range(1, 4):"]
        if self.chance(0.3):
            self.tag("loop_redefined", "lambda", "default_arg")
            lines.append(f"    {g} = lambda {p}, {c}={i} * {self.const(0.2, 0.6, 0)}: {body}")
        else:
            self.tag("loop_redefined", "local_def", "default_arg")
            lines += [
                f"    def {g}({p}, {c}={i} * {self.const(0.2, 0.6, 0)}):",
                f"        return {body}",
            ]
        form = self.wpick([(2, "now"), (2, "default"), (1, "name")])
        arg = self.E(kind, sc, 1)
        if form == "now":
            lines.append(f"    {acc} = {acc} + {g}({arg})")
        else:
            bind = f", {g}={g}" if form == "default" else ""
            lines.append(f"    {fs}.append(lambda {p}{bind}: {g}({p}) * {self.const()})")
            lines.append(f"{acc} = {acc} + {fs}[0]({arg}) + {fs}[-1]({arg})")
        sc.vars[acc] = kind
        return lines

    def st_recursion(self, sc):
        kind = self.any_kind()
        res = self.new_name(kind)
        arg = self.E(kind, sc, 1)
        depth = "n" if "n" in self.inputs and self.chance(0.4) else str(self.r.randint(1, 3))
        form = self.pick(["lin", "tree", "local"])
        if form == "local" and sc.fn_depth < 2:
            self.tag("recursion_local", "recursion_linear", "local_def")
            r, p, m = self.fresh("rec"), self.fresh("u"), self.fresh("m")
            inner = Scope({**sc.vars, p: kind}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
            step = self.E(kind, inner, 1)
            lines = [
                f"def {r}({p}, {m}):",
                f"    if {m} == 0:",
                f"        return {p}",
                f"    return {r}(np.tanh({p}) * 0.8 + {step} * 0.1, {m} - 1)",
                f"{res} = {r}({arg}, {depth})",
            ]
        elif form == "tree":
            lines = [f"{res} = {self.lib('rec_tree')}({arg}, {depth})"]
        else:
            lines = [f"{res} = {self.lib('rec_lin')}({arg}, {depth})"]
        sc.vars[res] = kind
        return lines

    def st_list(self, sc):
        form = self.pick(
            ["append_stack", "append_sum", "comp", "comp_filter", "concat", "map", "extend"]
        )
        if form in ("append_stack", "append_sum", "extend"):
            xs, i = self.fresh("xs"), self.fresh("i")
            body = sc.child(vars={**sc.vars, i: I}, ro=sc.ro | {i})
            kind = V if form == "append_stack" else self.any_kind()
            lines = [f"{xs} = []", f"for {i} in range(3):"]
            if form == "extend":
                self.tag("list", "extend")
                kind = S
                lines.append(f"    {xs}.extend([{self.E(S, body, 1)}, {self.E(S, body, 1)}])")
            else:
                self.tag("list", "append")
                lines.append(f"    {xs}.append({self.E(kind, body, 2)})")
            res = self.new_name(M if form == "append_stack" else kind)
            if form == "append_stack":
                self.tag("stack")
                lines.append(f"{res} = np.stack({xs})")
            elif form == "extend":
                lines.append(f"{res} = sum({xs}) * {self.const()}")
            else:
                lines.append(f"{res} = {xs}[0] + {xs}[-1] * 0.5 + sum({xs})")
            sc.vars[res] = M if form == "append_stack" else kind
            return lines
        if form in ("comp", "comp_filter"):
            self.tag("listcomp")
            e = self.fresh("e")
            body = sc.child(vars={**sc.vars, e: S}, ro=sc.ro | {e})
            src = self.E(V, sc, 1)
            filt = f" if {e} > {self.const(0.0, 0.5)}" if form == "comp_filter" else ""
            ys = self.fresh("ys")
            res = self.new_name(S)
            lines = [f"{ys} = [{self.E(S, body, 2)} for {e} in {src}{filt}]"]
            if filt:
                self.tag("comp_filter")
                lines.append(f"{res} = sum({ys}) + 0.0")
            else:
                lines.append(
                    f"{res} = np.sum(np.stack({ys}))" if self.chance(0.5) else f"{res} = sum({ys})"
                )
            sc.vars[res] = S
            return lines
        if form == "map":
            self.tag("map", "lambda")
            p = self.fresh("u")
            inner = Scope({**sc.vars, p: S}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
            res = self.new_name(V)
            src = self.E(V, sc, 1)
            line = f"{res} = np.array(list(map(lambda {p}: {self.E(S, inner, 1)}, {src})))"
            sc.vars[res] = V
            return [line]
        self.tag("list_concat", "list")
        kind = self.any_kind()
        ys = self.fresh("ys")
        res = self.new_name(kind)
        a, b, c = (self.E(kind, sc, 1) for _ in range(3))
        lines = [f"{ys} = [{a}] + [{b}, {c}]"]
        lines.append(
            f"{res} = {ys}[0] * {ys}[2] + {ys}[1]" if self.chance(0.5) else f"{res} = sum({ys})"
        )
        sc.vars[res] = kind
        return lines

    def st_iterator(self, sc):
        """An iterator of differentiable values (``map``, ``filter``, ``reversed``, ``zip``,
        ``enumerate``, itertools'), consumed where it is made, kept in a name and read once --
        or twice, the second read empty (cpsad refuses that); or numpy writing into an array
        in place (``out=``, ``np.add.at``: refused where differentiable values are involved)."""
        self.tag("iterator")
        a, b, c = (self.E(S, sc, 1) for _ in range(3))
        items = f"[{a}, {b}, {c}]"
        res = self.new_name(S)
        form = self.pick(
            [
                "map_kept",
                "filter_kept",
                "read_twice",
                "combinations",
                "product",
                "accumulate",
                "zip_reversed",
                "enumerate",
                "dict_zip",
                "out",
            ]
        )
        it = self.fresh("it")
        p = self.fresh("u")
        inner = Scope({**sc.vars, p: S}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
        if form in ("map_kept", "read_twice"):
            lines = [f"{it} = map(lambda {p}: {self.E(S, inner, 1)}, {items})"]
            if form == "read_twice":
                self.tag("read_twice")
                lines.append(f"{res} = sum({it}) + sum({it}) * {self.const()}")
            else:
                lines.append(f"{res} = sum({it}) * {self.const()}")
        elif form == "filter_kept":
            lines = [f"{it} = filter(lambda {p}: {p} > {self.const(0.0, 0.5)}, {items})"]
            lines.append(f"{res} = sum({it}) + 0.0")
        elif form == "combinations":
            lines = [f"{res} = sum(x * y for x, y in itertools.combinations({items}, 2))"]
        elif form == "product":
            lines = [f"{res} = sum(x - y * y for x, y in itertools.product({items}, [{a}, 1.0]))"]
        elif form == "accumulate":
            fn = self.pick(["", ", operator.mul", ", max"])
            lines = [f"{res} = sum(itertools.accumulate({items}{fn})) * 0.5"]
        elif form == "zip_reversed":
            lines = [f"{it} = list(zip({items}, reversed({items})))"]
            lines.append(f"{res} = {it}[0][0] * {it}[0][1] + {it}[2][1]")
        elif form == "enumerate":
            lines = [f"{res} = sum(i * x for i, x in list(enumerate(reversed({items}), 1)))"]
        elif form == "dict_zip":
            lines = [f"{it} = dict(zip(['p', 'q', 'r'], {items}))"]
            lines.append(f"{res} = {it}['p'] * {it}['r'] - {it}['q']")
        else:
            self.tag("out")
            v, buf = self.fresh("vec"), self.fresh("buf")
            lines = [f"{v} = {self.E(V, sc, 1)}", f"{buf} = np.zeros_like({v})"]
            lines.append(f"np.exp({v}, out={buf})")
            lines.append(f"{res} = np.sum({buf}) * {a}")
        sc.vars[res] = S
        return lines

    def st_dict(self, sc):
        self.tag("dict")
        d = self.fresh("d")
        kind = self.any_kind()
        lines = [f"{d} = {{'a': {self.E(kind, sc, 1)}, 'b': {self.E(kind, sc, 1)}}}"]
        if self.chance(0.6):
            self.tag("dict_store")
            lines.append(f"{d}['c'] = {d}['a'] * {self.E(S, sc, 1)}")
        res = self.new_name(kind)
        if self.chance(0.4):
            self.tag("dict_items", "for_seq")
            key, val = self.fresh("key"), self.fresh("val")
            lines += [
                f"{res} = {d}['a'] * 0.0",
                f"for {key}, {val} in {d}.items():",
                f"    {res} = {res} + {val}",
            ]
        elif self.chance(0.25):
            self.tag("dict_view")
            view = self.fresh("vals")
            lines.append(f"{view} = {d}.{self.pick(['values', 'items'])}()")
            if lines[-1].endswith(".values()"):
                use = self.pick([f"sum({view})", f"max({view}, key=np.sum)", f"list({view})[0]"])
            else:
                use = f"sum(val for key, val in {view} if key != 'b')"
            lines.append(f"{res} = {use}")
        elif self.chance(0.3):
            self.tag("dictcomp")
            lines.append(f"{d} = {{key: val * 2.0 for key, val in {d}.items()}}")
            lines.append(f"{res} = {d}['a'] - {d}['b']")
        else:
            lines.append(f"{res} = {d}['a'] + {d}['b'] * {self.E(S, sc, 1)}")
        sc.vars[res] = kind
        return lines

    def st_helper(self, sc):
        """Call a module-level helper of random size (made on first use)."""
        if len(self.helpers) < 3 and (not self.helper_sigs or self.chance(0.6)):
            self.make_helper()
        name = self.pick(self.helper_sigs)
        _, tins, tout = self.helper_sigs[name]
        res = self.new_name(tout)
        self.tag("helper_call")
        if self.chance(0.15) and len(tins) >= 1:
            self.tag("keyword_arg")
            params = self.helper_params[name]
            args = ", ".join(f"{p}={self.E(t, sc, 1)}" for p, t in zip(params, tins))
        else:
            args = ", ".join(self.E(t, sc, 1) for t in tins)
        sc.vars[res] = tout
        return [f"{res} = {name}({args})"]

    def make_helper(self):
        name = self.fresh("helper")
        nparams = self.r.randint(1, 3)
        params = {self.fresh("a"): self.any_kind() for _ in range(nparams)}
        tout = self.wpick([(3, S), (2, V), (1, M)])
        outer = Scope({}, fn_depth=0)
        save = self.budget
        self.budget = self.r.randint(1, 4)
        multi = self.chance(0.5)
        self.tag("helper_multi" if multi else "helper_1line")
        body = self.func_body(outer, params, tout, multi=multi)
        self.budget = save
        deco = []
        if self.chance(0.12):
            deco = [f"@{self.lib('double')}"]
        lines = deco + [f"def {name}({', '.join(params)}):"] + indent(body)
        self.helpers.append(lines)
        self.helper_sigs[name] = ("F", tuple(params.values()), tout)
        self.helper_params[name] = list(params)

    def st_nonlocal(self, sc):
        self.tag("nonlocal", "local_def")
        total = self.fresh("total")
        self.shared.add(total)
        bump, p = self.fresh("bump"), self.fresh("u")
        kind = self.any_kind()
        inner = Scope({**sc.vars, p: kind, total: kind}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
        lines = [
            f"{total} = {self.E(kind, sc, 1)}",
            f"def {bump}({p}):",
            f"    nonlocal {total}",
            f"    {total} = {total} * {self.const(0.3, 0.9, 0)} + {self.E(kind, inner, 1)}",
        ]
        returns = self.chance(0.4)
        if returns:
            lines.append(f"    return {total}")
        # how it is called: by name, or through a value -- an alias, a list, a helper, a result
        # left unused (the argument flows into `total` all the same)
        form = self.wpick(
            [
                (4, "name"),
                (1.5, "alias"),
                (1.5, "list"),
                (1, "helper"),
                (1 if returns else 0, "unused"),
            ]
        )
        callee = bump
        if form == "alias":
            self.tag("nonlocal_through_value", "alias_fn")
            callee = self.fresh("k")
            lines.append(f"{callee} = {bump}")
        elif form == "list":
            self.tag("nonlocal_through_value", "fn_in_list")
            fs = self.fresh("fs")
            lines.append(f"{fs} = [{bump}]")
            callee = f"{fs}[0]"
        for _ in range(self.r.randint(1, 3)):
            arg = self.E(kind, sc, 1)
            if form == "helper":
                self.tag("nonlocal_through_value")
                lines.append(f"{self.lib('apply')}({bump}, {arg})")
            elif form == "unused":
                self.tag("nonlocal_through_value")
                lines.append(f"{self.fresh('unused')} = {callee}({arg})")
            else:
                lines.append(f"{callee}({arg})")
        sc.vars[total] = kind
        return lines

    def st_defaults(self, sc):
        kind = self.any_kind()
        g, p, c = self.fresh("g"), self.fresh("u"), self.fresh("c")
        ins = [n for n, k in self.inputs.items() if k == S and n in sc.vars]
        if ins and self.chance(0.6):
            self.tag("default_capture", "default_arg")
            default = self.pick(ins)
        else:
            self.tag("default_arg")
            default = self.const()
        inner = Scope({**sc.vars, p: kind, c: S}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
        if self.chance(0.3):
            self.tag("lambda")
            lines = [f"{g} = lambda {p}, {c}={default}: {p} * {c} + {self.E(kind, inner, 1)}"]
        else:
            self.tag("local_def")
            lines = [
                f"def {g}({p}, {c}={default}):",
                f"    return {p} * {c} + {self.E(kind, inner, 1)}",
            ]
        if (
            default in self.inputs
            and sc.vars.get(default) == S
            and default not in sc.ro
            and self.chance(0.5)
        ):
            self.tag("default_then_reassigned")
            lines.append(f"{default} = {default} * {self.const()}")
        res = self.new_name(kind)
        if self.chance(0.4):
            lines.append(f"{res} = {g}({self.E(kind, sc, 1)}, {self.E(S, sc, 1)})")
        elif self.chance(0.3):
            lines.append(f"{res} = {self.lib('with_default')}({self.E(kind, sc, 1)})")
        else:
            lines.append(f"{res} = {g}({self.E(kind, sc, 1)})")
        sc.vars[res] = kind
        return lines

    def st_decorator(self, sc):
        kind = self.any_kind()
        g, p = self.fresh("g"), self.fresh("u")
        inner = Scope({**sc.vars, p: kind}, ro=set(sc.vars), fn_depth=sc.fn_depth + 1)
        dec = self.lib("double")
        res = self.new_name(kind)
        if self.chance(0.7):
            lines = [f"@{dec}", f"def {g}({p}):", f"    return {self.E(kind, inner, 2)}"]
        else:
            self.tag("decorator_call")
            lam = f"lambda {p}: {self.E(kind, inner, 2)}"
            lines = [f"{g} = {dec}({lam})"]
        lines.append(f"{res} = {g}({self.E(kind, sc, 1)})")
        sc.vars[g] = ("F", (kind,), kind)
        sc.vars[res] = kind
        return lines

    def st_alias(self, sc):
        fns = [(n, k) for n, k in sc.fns() if len(k[1]) == 1]
        if not fns:
            lines, name, sig = self.define_fn(sc)
            sc.vars[name] = sig
            fns = [(name, sig)]
        else:
            lines = []
        name, sig = self.pick(fns)
        self.tag("alias_fn")
        k = self.fresh("k")
        sc.vars[k] = sig
        return lines + [f"{k} = {name}"] + self.use_fn(sc, k, sig)

    def st_memory(self, sc):
        """A helper that keeps an array in a module-level list, another that hands it back: the
        array may be changed in place in between (``vec += ...``), and what is handed back is
        the very array (a holder cpsad cannot see)."""
        self.lib("memory")
        vec, s = self.fresh("vec"), self.fresh("s")
        # (what depends on the inputs is refused where it is stored; a constant is kept, and
        # changing it in place after -- `vec += x` -- must be seen, or refused, at `recall`)
        kept = self.E(V, sc, 1) if self.chance(0.3) else f"(np.ones(3) * {self.const()})"
        lines = [f"{vec} = {kept} * 1.0", f"remember({vec})"]
        if self.chance(0.6):
            self.tag("aug_array")
            lines.append(f"{vec} {self.pick(['+=', '-=', '*='])} {self.E(V, sc, 1)}")
        lines.append(f"{s} = np.sum(recall() * {self.E(V, sc, 1)})")
        sc.vars[vec], sc.vars[s] = V, S
        return lines

    def st_tree(self, sc):
        """A recursive walk over a tree of objects of the user's class (data, not differentiated)."""
        self.lib("tree")
        s = self.fresh("s")
        sc.vars[s] = S
        return [f"{s} = walk(TREE, {self.E(S, sc, 1)})"]

    def st_method(self, sc):
        """A method of an object of the user's class (``self`` is data): a module-level one,
        one made here with a constant, or the object called."""
        self.lib("layer")
        kind = self.any_kind()
        res = self.new_name(kind)
        sc.vars[res] = kind
        arg = self.E(kind, sc, 1)
        form = self.r.randrange(3)
        if form == 0:
            return [f"{res} = LAYER.apply({arg})"]
        if form == 1:
            obj = self.fresh("layer")
            return [f"{obj} = Layer({self.const()})", f"{res} = {obj}.apply({arg})"]
        return [f"{res} = LAYER({arg})"]

    def st_receiver(self, sc):
        """A method call whose receiver is no array: a module passed as a value (to a helper,
        or bound to a name here) or an object of the user's class whose methods are named as
        an array's (``acc.sum(v)``, ``acc.dot(v, w)``)."""
        form = self.r.randrange(4)
        kind = self.any_kind()
        if form == 0:
            res, out = self.new_name(S), S
            line = f"{res} = {self.lib('xp_norm')}({self.E(kind, sc, 1)})"
        elif form == 1:
            res, out = self.new_name(kind), kind
            other = self.E(self.any_kind(), sc, 1)
            line = f"{res} = {self.lib('xp_mix')}(np, {self.E(kind, sc, 1)}, {other})"
        elif form == 2:
            self.tag("module_value")
            xp = self.fresh("xp")
            fn = self.pick(["sum", "mean", "max", "tanh", "cos"])
            out = S if fn in ("sum", "mean", "max") else kind
            res = self.new_name(out)
            line = f"{xp} = np\n{res} = {xp}.{fn}({self.E(kind, sc, 1)})"
        else:
            self.lib("acc")
            obj = "ACC"
            lines = []
            if self.chance(0.5):
                obj = self.fresh("acc")
                lines.append(f"{obj} = Acc({self.const()})")
            res, out = self.new_name(S), S
            if self.chance(0.5):
                call = f"{obj}.sum({self.E(kind, sc, 1)})"
            else:
                call = f"{obj}.dot({self.E(V, sc, 1)}, {self.E(V, sc, 1)})"
            sc.vars[res] = out
            return lines + [f"{res} = {call}"]
        sc.vars[res] = out
        return line.split("\n")

    def st_struct(self, sc):
        """A namedtuple or a dataclass made here (a default left out, fields by keyword) and
        its fields read."""
        self.lib("struct")
        ka, kb = self.any_kind(), self.any_kind()
        res = self.new_name(ka)
        obj = self.fresh("p")
        form = self.r.randrange(3)
        if form == 2:  # fields named as an array's attributes
            self.lib("gamma")
            a, b = self.E(ka, sc, 2), self.E(S, sc, 2)
            reached = self.r.randrange(5)
            if reached >= 3:  # reached through a helper's result, a list, a dict
                self.tag("struct_reached")
            if reached == 3:
                made = self.pick([f"make_gamma({a}, {b})", f"[Gamma({a}, {b})][0]"])
                use = self.pick([f"gamma_mean({obj})", f"{obj}.shape * {obj}.T"])
            elif reached == 4:
                c = self.E(ka, sc, 1)
                item = self.fresh("g")
                made = self.pick(
                    [
                        f"[Gamma({a}, {b}), make_gamma({c}, {b} * 0.5)]",
                        f"{{'u': Dist({a}, real={b}), 'v': Dist({c})}}.values()",
                    ]
                )
                use = self.pick(
                    [f"{item}.shape * {item}.T", f"gamma_mean({item})"]
                    if made.startswith("[")
                    else [f"{item}.size * {item}.real"]
                )
                use = f"sum({use} for {item} in {obj})"
            elif self.chance(0.5):
                made = self.pick([f"Gamma({a}, {b})", f"Gamma(T={b}, shape={a})"])
                use = self.pick([f"gamma_mean({obj})", f"{obj}.shape * {obj}.T"])
            else:
                made = self.pick([f"Dist({a})", f"Dist({a}, real={b})"])
                use = f"{obj}.size * {obj}.real"
            lines = [f"{obj} = {made}", f"{res} = {use}"]
        elif form == 0:
            a, b = self.E(ka, sc, 2), self.E(kb, sc, 2)
            made = self.pick([f"Pair({a}, {b})", f"Pair(b={b}, a={a})", f"Pair({a})"])
            if made.endswith(f"({a})"):
                kb = S
            lines = [f"{obj} = {made}", f"{res} = {obj}.a * {self.const()} + np.sum({obj}.b)"]
        else:
            w = self.E(ka, sc, 2)
            made = self.pick([f"Box({w})", f"Box({w}, s={self.E(S, sc, 1)})"])
            lines = [f"{obj} = {made}", f"{res} = {obj}.w * {obj}.s"]
        sc.vars[res] = ka
        return lines

    def st_struct_method(self, sc):
        """A struct with methods made of differentiable values and called: ``m(t)``,
        ``m.apply(t)``, ``m.scaled(c)(t)``, a struct of structs, a list of them in a loop, one
        handed to a helper."""
        self.lib("module")
        kt = self.any_kind()
        w = self.E(self.pick([S, kt]) if kt == V else S, sc, 2)
        obj, res = self.fresh("m"), self.new_name(kt)
        t = self.E(kt, sc, 2)
        form = self.r.randrange(6)
        if form == 0:
            made = self.pick([f"Scale({w})", f"Scale({w}, b={self.E(S, sc, 1)})"])
            lines = [f"{obj} = {made}", f"{res} = {obj}({t})"]
        elif form == 1:
            lines = [f"{obj} = Gate({w}, {self.E(S, sc, 1)})", f"{res} = {obj}.apply({t})"]
        elif form == 2:
            c = self.E(S, sc, 1)
            lines = [f"{obj} = Scale({w})", f"{res} = {obj}.scaled({c})({t})"]
        elif form == 3:
            made = f"Stack(Scale({w}), Gate({self.E(S, sc, 1)}, {self.const()}))"
            lines = [f"{obj} = {made}", f"{res} = {obj}({t})"]
        elif form == 4:
            item = self.fresh("layer")
            layers = f"[Scale({w}), Scale({self.E(S, sc, 1)}, b={self.const()})]"
            lines = [f"{res} = {t}", f"for {item} in {layers}:", f"    {res} = {item}({res})"]
        else:
            made = self.pick([f"Scale({w})", f"Stack(Scale({w}), Gate({self.const()}, {w}))"])
            lines = [f"{obj} = {made}", f"{res} = run_module({obj}, {t})"]
        sc.vars[res] = kt
        return lines

    def st_tuple_capture(self, sc):
        self.tag("tuple_capture_unpack", "capture", "local_def")
        pair = self.fresh("pair")
        g, p = self.fresh("g"), self.fresh("u")
        a, b = self.fresh("pa"), self.fresh("pb")
        lines = [
            f"{pair} = ({self.E(S, sc, 1)}, {self.E(S, sc, 1)})",
            f"def {g}({p}):",
            f"    {a}, {b} = {pair}",
            f"    return {p} * {a} + {b}",
        ]
        return lines + self.use_fn(sc, g, ("F", (S,), S))

    def st_store(self, sc):
        """An array made here, then stored into: by index in a loop, a slice, a fancy index
        (repeated), a mask -- what cpsad runs with rebinding semantics (``stored``)."""
        self.tag("array_store")
        buf, i = self.fresh("buf"), self.fresh("i")
        kind = self.pick([V, V, M])
        inner = sc.child()
        if kind == V:
            init = self.pick(
                ["np.zeros(3)", "np.ones(3)", f"np.copy({self.E(V, inner, 1)})", "np.full(3, 0.5)"]
            )
            body = sc.child(vars={**sc.vars, i: I}, ro=sc.ro | {i}, loop="for")
            form = self.r.randrange(5)
            if form == 0:
                self.tag("for_range")
                store = [f"for {i} in range(3):", f"    {buf}[{i}] = {self.E(S, body, 2)}"]
            elif form == 1:
                store = [f"{buf}[1:] = {self.E(V, inner, 2)}[:2]"]
            elif form == 2:
                store = [f"{buf}[[0, 2, 2]] = {self.E(V, inner, 2)}"]
            elif form == 3:
                store = [f"{buf}[{buf} > 0.2] = {self.E(S, inner, 2)}"]
            else:
                store = [f"{buf}[{self.r.randrange(-3, 3)}] = {self.E(S, inner, 2)}"]
        else:
            init = self.pick(["np.zeros((3, 3))", "np.eye(3)", f"np.copy({self.E(M, inner, 1)})"])
            form = self.r.randrange(3)
            if form == 0:
                store = [f"{buf}[{self.r.randrange(3)}] = {self.E(V, inner, 2)}"]
            elif form == 1:
                store = [f"{buf}[:, {self.r.randrange(3)}] = {self.E(V, inner, 2)}"]
            else:
                store = [f"{buf}[0, 1:] = {self.E(S, inner, 2)}"]
        sc.vars[buf] = kind
        if self.chance(0.15):
            # another name for the array before the stores: Python's change in place shows
            # there, a rebinding would not -- both modes must refuse it where it is read after
            self.tag("store_alias")
            alias = self.fresh("keep")
            sc.vars[alias] = kind
            return [f"{buf} = {init}", f"{alias} = {buf}", *store]
        if self.chance(0.35):
            # a closure that reads the array, defined before the stores and called after: it
            # reads the variable's cell when it runs, so it must see the stored entries
            self.tag("store_read_by_closure", "capture")
            g, p = self.fresh("g"), self.fresh("u")
            reader = [f"def {g}({p}):", f"    return {p} * np.sum(np.tanh({buf}))"]
            return [f"{buf} = {init}", *reader, *store, *self.use_fn(sc, g, ("F", (S,), S))]
        return [f"{buf} = {init}", *store]

    def s_operator(self, sc, d):
        """Python's operator module as values (cpsad's composites): reduce, map, a call."""
        self.tag("operator")
        a, b = self.E(S, sc, d), self.E(S, sc, d)
        op = self.pick(["add", "mul", "sub"])
        return self.pick(
            [
                f"operator.{op}({a}, {b})",
                f"functools.reduce(operator.{op}, [{a}, {b}, {self.E(S, sc, d)}])",
                f"sum(map(operator.mul, [{a}, {b}], [{b}, 0.5]))",
            ]
        )

    def st_acc_loop(self, sc):
        """``acc = np.zeros(3)`` and ``acc += term`` in a loop: an array nobody else holds."""
        self.tag("acc_zeros", "aug_array", "for_range")
        acc, i = self.fresh("acc"), self.fresh("i")
        kind = self.pick([V, V, M, S])
        init = {V: "np.zeros(3)", M: "np.zeros((3, 3))", S: "0.0"}[kind]
        body = sc.child(vars={**sc.vars, i: I}, ro=sc.ro | {i}, loop="for")
        op = self.pick(["+=", "+=", "-="])
        lines = [
            f"{acc} = {init}",
            f"for {i} in range({self.loop_bound(sc)}):",
            f"    {acc} {op} {self.E(kind, body, 2)}",
        ]
        sc.vars[acc] = kind
        return lines

    # ---------------------------------------------------------------- the module

    def scalarize(self, name, kind):
        if kind == S:
            return name
        if kind == V:
            return self.pick(
                [f"np.sum({name})", f"np.mean({name})", f"{name}[0]", f"np.dot({name}, {name})"]
            )
        return self.pick([f"np.sum({name})", f"np.trace({name})", f"{name}[1, 2]"])

    def final(self, sc):
        names = [n for n, k in sc.vars.items() if k in VALUE_KINDS]
        chosen = self.r.sample(names, min(len(names), self.r.randint(2, 4)))
        # the most recent values first: what the body computed reaches the result
        recent = [n for n in list(sc.vars)[-3:] if sc.vars[n] in VALUE_KINDS]
        for n in recent:
            if n not in chosen:
                chosen.append(n)
        terms = [f"{self.const(0.3, 1.2, 0.2)} * {self.scalarize(n, sc.vars[n])}" for n in chosen]
        return "return " + " + ".join(terms)

    def module(self):
        nargs = self.r.randint(1, 4)
        names = {S: ["x", "y", "z"], V: ["v", "w", "q"], M: ["A", "B"]}
        params = []
        for _ in range(nargs):
            kind = self.wpick([(4, S), (3.5, V), (2.5, M)])
            avail = [n for n in names[kind] if n not in self.inputs]
            if not avail:
                continue
            nm = avail[0]
            self.inputs[nm] = kind
            params.append((nm, kind))
        if self.chance(0.25):
            self.inputs["n"] = I
            params.insert(self.r.randint(0, len(params)), ("n", I))
            self.tag("int_arg")
        sc = Scope({n: k for n, k in params}, ret=S)
        self.budget = self.r.randint(4, 12)
        body = [ln for ln in self.block(sc, self.budget) if ln != "pass"]
        body.append(self.final(sc))
        if self.chance(0.1):  # the modules imported again where they are used: f's own names
            self.tag("local_import")
            imports = self.pick(["import numpy as np", "import math", "import numpy as np, math"])
            body = [imports] + body
        head = ["import functools", "import itertools", "import math", "import operator", ""]
        head += ["import numpy as np"]
        head += ["", ""]
        mod = list(head)
        for name in self.used_lib:
            mod += LIBRARY[name][0].rstrip("\n").split("\n") + ["", ""]
        for h in self.helpers:
            mod += h + ["", ""]
        mod += [f"def f({', '.join(n for n, _ in params)}):"] + indent(body)
        if any(k == M for _, k in params) or "matrix" in self.features:
            self.tag("matrix")
        return "\n".join(mod) + "\n", params


def generate_source(seed: int, attempt: int = 0) -> Program:
    """The program of ``(seed, attempt)``, not yet checked to run."""
    rng = random.Random(f"cpsad-fuzz:{seed}:{attempt}")
    g = Gen(rng)
    source, params = g.module()
    return Program(seed, source, params, set(g.features), attempt)
