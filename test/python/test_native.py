"""The native hot paths (``pyflame_mlir/_native.c``: ``record``'s memo hit and
the evaluation walk) against the pure-Python ones they replace: the same
nodes, subgraphs, cache keys and values, in one process (both functions side
by side) and across processes (``PYFLAME_NO_NATIVE=1``); no reference leaks;
cycles through tensors still collected; the cases the C code hands back."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
import weakref

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import core

needs_native = pytest.mark.skipif(not core.native_enabled(),
                                  reason="the C extension is off (PYFLAME_NO_NATIVE=1)")


@pytest.fixture(autouse=True)
def lazy_mode(monkeypatch):
    """The tests look at recorded nodes: lazy mode also under PYFLAME_EAGER=1."""
    monkeypatch.setattr(core.CONFIG, "eager", False)


def test_the_extension_is_built_and_used():
    """``pip install -e .`` (``make test``) builds it: every CI machine has a C
    compiler. Off only when asked."""
    if os.environ.get("PYFLAME_NO_NATIVE", "") not in ("", "0"):
        assert not core.native_enabled() and core.record is core.python_record
    else:
        assert core.native_enabled(), "pyflame_mlir/_native.c is not built: pip install -e ."
        assert core.record is not core.python_record


def test_the_kernel_loops_are_built_and_used():
    """``dialects/_kernels.c`` likewise: without it the kernel tests would only skip."""
    from pyflame_mlir.dialects import native_kernels
    if os.environ.get("PYFLAME_NO_NATIVE", "") not in ("", "0"):
        assert native_kernels.KERNELS is None
    else:
        assert native_kernels.KERNELS is not None, "dialects/_kernels.c is not built"


_FIELDS = ("op", "attrs", "specs", "nograd", "rg", "freed", "keep", "_sig_id", "_sig")


def _node_fields(n: core.OpNode) -> tuple:
    return tuple(getattr(n, f) for f in _FIELDS) + (
        n.cells, type(n._c0), n._c1 is None, n.seq < 0, getattr(n, "trace", None))


def _tensor_fields(t: pf.Tensor) -> tuple:
    return (type(t), t.shape, t.dtype, t._index, t._value, t._ag, t._hist, t._mut, t._view,
            t._cell)


def _both(fn):
    """fn(record) with the native record and with the Python one: their results."""
    return fn(core.record), fn(core.python_record)


@needs_native
@pytest.mark.parametrize("inputs", ["one", "two", "same", "three", "none"])
def test_native_record_makes_the_nodes_python_record_makes(inputs):
    from pyflame_mlir.dialects import OPS

    a, b = pf.randn(3, 4), pf.randn(3, 4)
    op, ins, attrs = {
        "one": (OPS["tanh"], (a,), core.NO_ATTRS),
        "two": (OPS["mul"], (a, b), core.NO_ATTRS),
        "same": (OPS["mul"], (a, a), core.NO_ATTRS),
        "three": (OPS["concat"], (a, b, a), {"dim": 0}),
        "none": (OPS["constant"], (), {"value": core.splat_value(2.0, (3,), pf.float32)}),
    }[inputs]
    core.python_record(op, ins, attrs)  # fills the memo: both hit
    cells = [t._cell for t in ins]
    x, y = _both(lambda rec: rec(op, ins, attrs))
    assert [t._cell for t in ins] == cells  # (made once, by the first read)
    assert _tensor_fields(x)[:4] == _tensor_fields(y)[:4]
    assert _tensor_fields(x)[4:] == _tensor_fields(y)[4:] == (None,) * 6
    assert x._node.inputs is y._node.inputs is ins
    assert _node_fields(x._node) == _node_fields(y._node)
    if ins:
        assert y._node.seq == x._node.seq + 1  # one creation order, shared
    np.testing.assert_array_equal(x.numpy(), y.numpy())


@needs_native
def test_native_record_of_several_results_is_python_record():
    x = pf.randn(6, 2)
    n = pf.split(x, 2)[0]._node  # (fills the memo)
    p, q = _both(lambda rec: rec(n.op, n.inputs, n.attrs))
    assert type(p) is type(q) is list and len(p) == len(q) == 3
    assert [_tensor_fields(t) for t in p] == [_tensor_fields(t) for t in q]
    assert [t._index for t in p] == [0, 1, 2]
    assert all(t._node is p[0]._node for t in p) and all(t._node is q[0]._node for t in q)
    assert _node_fields(p[0]._node) == _node_fields(q[0]._node)
    for s, t in zip(p, q):
        np.testing.assert_array_equal(s.numpy(), t.numpy())


@needs_native
def test_native_record_counts_and_grad_flags_as_python():
    w = pf.tensor([1.0, -2.0], requires_grad=True)
    x = pf.tensor([0.5, 3.0])
    det = w.detach()
    det.requires_grad_()  # a detached alias made a leaf
    from pyflame_mlir.dialects import OPS

    mul = OPS["mul"]
    core.python_record(mul, (w, x), core.NO_ATTRS)
    for ins in [(w, x), (x, x), (det, x), (w * x, x)]:
        before = (pf.COUNTERS.ops_recorded, core.GRAPH.ops_recorded)
        p, q = _both(lambda rec, ins=ins: rec(mul, ins, core.NO_ATTRS))
        assert (pf.COUNTERS.ops_recorded, core.GRAPH.ops_recorded) == (before[0] + 2,
                                                                       before[1] + 2)
        assert (p._node.rg, p._node.nograd) == (q._node.rg, q._node.nograd)
        with pf.no_grad():
            p, q = _both(lambda rec, ins=ins: rec(mul, ins, core.NO_ATTRS))
        assert p._node.nograd and q._node.nograd and not p._node.rg and not q._node.rg
    with pf.graph_scope("g") as g:
        _both(lambda rec: rec(mul, (x, x), core.NO_ATTRS))
    assert g.ops_recorded == 2


class _Shaped(pf.Tensor):
    """A subclass overriding a slot the C code reads: it must not read it."""

    __slots__ = ()

    @property
    def shape(self):  # noqa: D401 (the base slot's value)
        return pf.Tensor.shape.__get__(self)


@needs_native
def test_what_the_native_record_hands_back_to_python(monkeypatch):
    """Views, several results, anomaly mode, eager mode, unhashable attributes,
    a subclass overriding a slot: the Python path's results."""
    base = pf.randn(4, 4)
    v = base[0]  # a view: frozen by the Python path
    y = v * 2.0
    assert y._node.inputs[0] is not v and type(y._node.inputs[0]._view) is core.Frozen
    np.testing.assert_allclose(y.numpy(), base.numpy()[0] * 2)
    parts, parts2 = pf.split(pf.randn(6, 2), 2), None
    parts2 = pf.split(pf.randn(6, 2), 2)  # a memo hit with several results
    assert len(parts) == len(parts2) == 3
    with pf.autograd.detect_anomaly():
        w = pf.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(2):
            assert (w * w)._node.trace  # the stack OpNode.__init__ takes
    monkeypatch.setattr(core.CONFIG, "eager", True)
    assert (base + base)._node is None  # realized on record
    monkeypatch.setattr(core.CONFIG, "eager", False)
    s = object.__new__(_Shaped)
    for slot in ("shape", "dtype", "_node", "_index", "_value", "_ag", "_hist", "_mut",
                 "_view", "_cell"):
        pf.Tensor.__dict__[slot].__set__(s, getattr(base, slot))
    out = s * base
    np.testing.assert_allclose(out.numpy(), base.numpy() ** 2)
    assert core.python_record is not core.record


class _Late(pf.Tensor):
    """A subclass that overrides a slot only after it was first recorded."""

    __slots__ = ()


@needs_native
def test_a_subclass_changed_after_its_first_recording_is_checked_again():
    base = pf.randn(3)
    s = object.__new__(_Late)
    for slot in ("shape", "dtype", "_node", "_index", "_value", "_ag", "_hist", "_mut",
                 "_view", "_cell"):
        pf.Tensor.__dict__[slot].__set__(s, getattr(base, slot))
    (s * base).numpy()  # read natively (the slots are Tensor's)
    reads = []

    def shape(self):
        reads.append(1)
        return pf.Tensor.shape.__get__(self)

    _Late.shape = property(shape)
    try:
        np.testing.assert_allclose((s * base).numpy(), base.numpy() ** 2)
        assert reads  # the Python path read the property
    finally:
        del _Late.shape


_OPERANDS = {
    "f32": lambda: pf.tensor([[1.5, -2.0], [0.25, 3.0]]),
    "f64": lambda: pf.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=pf.float64),
    "f16": lambda: pf.tensor([0.5, 2.0], dtype=pf.float16),
    "i64": lambda: pf.tensor([[3, -2], [1, 4]]),
    "i32": lambda: pf.tensor([3, 7], dtype=pf.int32),
    "bool": lambda: pf.tensor([True, False]),
    "int": lambda: 3, "float": lambda: 0.5, "array": lambda: np.array([1.0, 2.0], np.float32),
}


def _outcome(call) -> tuple:
    """What a call gives: its result's nodes and values, or its error."""
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 (compared below)
        return ("raises", type(e), str(e))
    n = out._node
    try:
        value = out.numpy().tobytes()  # (NaN compares equal as bytes)
    except Exception as e:  # noqa: BLE001 (an integer division by zero...)
        value = ("raises", type(e), str(e))
    return (out.shape, out.dtype, n.op.name, n.attrs, n.specs, n.nograd, n.rg,
            [(t.shape, t.dtype, t._node.op.name if t._node is not None else None)
             for t in n.inputs], value)


@needs_native
def test_native_tensor_methods_are_their_python_wrappers():
    """Every Tensor method or operator made native gives what the wrapper it
    stands for gives, for operands of every kind (the shortcut's case, dtype
    promotion, bool, scalars, arrays, a Tensor subclass), errors included."""
    methods = {name: m for name, m in vars(pf.Tensor).items()
               if type(m).__name__ == "Method"}
    assert {"__mul__", "__add__", "__sub__", "tanh", "relu", "__eq__"} <= set(methods)
    kinds = ["f32", "f64", "f16", "i64", "i32", "bool", "int", "float", "array"]
    for name, m in sorted(methods.items()):
        fn = m.__wrapped__
        arity = 1 if fn.__code__.co_argcount == 1 else 2
        for a in ("f32", "f16", "i64", "bool"):
            for b in kinds if arity == 2 else [None]:
                x = _OPERANDS[a]()
                args = (x,) if b is None else (x, _OPERANDS[b]())
                if b in ("f32", "i64") and a == b and name in ("__mul__", "sub"):
                    args = (x, x)  # one operand twice
                got = _outcome(lambda m=m, args=args: m(*args))
                want = _outcome(lambda fn=fn, args=args: fn(*args))
                assert got == want, (name, a, b)
                bound = _outcome(lambda name=name, args=args: getattr(args[0], name)(*args[1:]))
                assert bound == want, (name, a, b)
    p = pf.nn.Parameter(pf.randn(2, 2))  # a subclass: the wrapper's own path
    assert _outcome(lambda: p * p) == _outcome(lambda: pf.mul(p, p))
    assert _outcome(lambda: pf.Tensor.__sub__(p, p, alpha=2)) == _outcome(
        lambda: pf.sub(p, p, alpha=2))


def _same_subgraph(a: core.Subgraph, b: core.Subgraph) -> None:
    assert [id(n) for n in a.nodes] == [id(n) for n in b.nodes]
    assert [id(t) for t in a.leaves] == [id(t) for t in b.leaves]
    assert a.outputs == b.outputs and a.wiring == b.wiring
    assert [id(t) for t in a.pending] == [id(t) for t in b.pending]
    assert [(at, id(n)) for at, n in a.kept] == [(at, id(n)) for at, n in b.kept]
    assert a.key(("c",)) == b.key(("c",))


def _graphs():
    """Lazy tensors over the cases the walk branches on."""
    r = np.random.default_rng(0)
    x, y = pf.tensor(r.standard_normal((3, 3)).astype(np.float32)), pf.randn(3, 3)
    h = x
    for _ in range(30):
        h = (h * y + x).relu() - 1.5  # scalar constants: nodes of seq -1, a stable order
    yield "chain", [h, h.tanh(), x, h]  # a leaf and a duplicate requested too
    shared = (x * x).sum(dim=1, keepdim=True)
    yield "shared", [shared + x, shared * y, pf.cat([shared, shared], dim=1)]
    p = pf.tensor(r.standard_normal((3, 3)).astype(np.float32))
    z = p * 2.0
    p.add_(z)  # z read p before the update: an older state
    yield "in-place", [(z * p).relu(), p]
    w = pf.tensor(r.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
    loss = ((x @ w).relu() * y).sum()
    loss.backward()  # w.grad: a kept node
    with pf.no_grad():
        w -= 0.1 * w.grad  # an in-place update of a parameter, lazy
    yield "training step", [((x @ w) * y).sum(), w.grad]
    base = pf.randn(4, 4)
    row = base[1]
    q = row * 3.0
    base.mul_(2.0)  # the view read before the update: a frozen state
    yield "views", [q + row, base]


@needs_native
def test_native_collect_is_the_python_walk():
    for name, ts in _graphs():
        lazy = [t for t in ts if t._node is not None]
        native = core._NATIVE.collect(lazy)
        assert native is not None, name
        _same_subgraph(native, core._collect_numbered(lazy))
        _same_subgraph(native, core.collect(lazy))
        want = [t.numpy().copy() for t in ts]  # evaluates (then the graph is freed)
        for t, v in zip(ts, want):
            np.testing.assert_array_equal(t.numpy(), v)


def _boundary(calls: list[int], stop: set[int]):
    def boundary(t: pf.Tensor) -> bool:
        calls.append(id(t))
        return id(t) in stop
    return boundary


@needs_native
def test_native_traced_walk_is_the_python_walk(monkeypatch):
    """collect(trace=True) (autodiff's, pf.compile's): through histories, with
    arguments and a boundary (called on the same tensors, in the same order)."""
    for name, ts in _graphs():
        r = np.random.default_rng(2)
        w = pf.tensor(r.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
        loss = (ts[0].sum() * w).tanh().sum() if ts[0].shape else ts[0] * w.sum()
        realized = loss * 2.0
        realized.numpy()  # a value that kept its history (it requires grad)
        outs = [realized + 1.0, loss, ts[0]]
        stop = {id(ts[0])}
        for args, use_boundary in [((), False), ((w,), False), ((w,), True)]:
            calls: list[list[int]] = [[], []]
            native = core.collect(outs, args=args, trace=True,
                                  boundary=_boundary(calls[0], stop) if use_boundary else None)
            assert native is not None
            with monkeypatch.context() as m:
                m.setattr(core, "_NATIVE", None)
                python = core.collect(
                    outs, args=args, trace=True,
                    boundary=_boundary(calls[1], stop) if use_boundary else None)
            _same_subgraph(native, python)
            assert calls[0] == calls[1], name
        for t in ts:
            t.numpy()


@needs_native
def test_native_walks_on_random_graphs(monkeypatch):
    """Random DAGs (shared nodes, constants, leaves read twice, in-place updates):
    both walks give the Python walks' subgraphs."""
    rng = np.random.default_rng(3)
    for _ in range(60):
        xs = [pf.tensor(rng.standard_normal(3).astype(np.float32)) for _ in range(3)]
        pool = list(xs)
        for _ in range(int(rng.integers(1, 40))):
            a, b = pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]
            r = rng.random()
            pool.append(a * b if r < 0.3 else a + 1.5 if r < 0.5 else a.tanh() if r < 0.7
                        else a - b)
            if rng.random() < 0.05:
                xs[0].add_(pool[-1])  # an in-place update: older states, pending
        outs = [pool[i] for i in rng.choice(len(pool), min(3, len(pool)), replace=False)]
        lazy = [t for t in outs if t._node is not None]
        _same_subgraph(core._NATIVE.collect(lazy), core._collect_numbered(lazy))
        native = core.collect(outs, args=xs[1:2], trace=True)
        with monkeypatch.context() as m:
            m.setattr(core, "_NATIVE", None)
            _same_subgraph(native, core.collect(outs, args=xs[1:2], trace=True))


@needs_native
def test_native_collect_hands_back_what_python_must_raise_on():
    assert core._NATIVE.collect([pf.randn(2), "not a tensor"]) is None
    assert core._NATIVE.collect_traced([pf.randn(2), "not a tensor"], (), None) is None
    with pytest.raises(AttributeError):
        core.collect(["not a tensor"])


_SCRIPT = r"""
import hashlib, numpy as np, pyflame_mlir as pf
from pyflame_mlir import core, compiler
core.CONFIG.eager = False
out = [str(core.native_enabled())]
r = np.random.default_rng(0)
x, y = pf.tensor(r.standard_normal((4, 4)).astype(np.float32)), pf.tensor(
    r.standard_normal((4, 4)).astype(np.float32))
w = pf.tensor(r.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
for step in range(3):
    h = x
    for _ in range(10):
        h = (h * y + x).relu() - 0.5
    loss = ((h @ w).tanh() * y).sum()
    loss.backward()
    with pf.no_grad():
        w -= 0.1 * w.grad
        w.grad = None
    n = loss._node
    out.append(repr((n.op.name, n.sig, n.seq > 0, n.rg, len(n.inputs))))
    sub = core.collect([loss])
    out.append(sub.stable_hash(compiler.config_key()))
    out.append(repr((sub.outputs, len(sub.nodes), len(sub.leaves), len(sub.pending))))
    out.append(hashlib.sha1(np.float32(loss.item()).tobytes()).hexdigest())
out.append(hashlib.sha1(w.numpy().tobytes()).hexdigest())
print("\n".join(out))
"""


def _run(no_native: bool) -> list[str]:
    env = dict(os.environ)
    env.pop("PYFLAME_EAGER", None)
    if no_native:
        env["PYFLAME_NO_NATIVE"] = "1"
    else:
        env.pop("PYFLAME_NO_NATIVE", None)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@needs_native
def test_same_graphs_keys_and_values_with_and_without_the_extension():
    native, python = _run(False), _run(True)
    assert (native[0], python[0]) == ("True", "False")
    assert native[1:] == python[1:]


def test_no_native_env_var_turns_it_off():
    assert _run(True)[0] == "False"


@needs_native
def test_no_reference_leaks():
    a, b = pf.randn(4, 4), pf.randn(4, 4)
    from pyflame_mlir.dialects import OPS

    mul, attrs = OPS["mul"], core.NO_ATTRS
    ins = (a, b)
    def chain() -> None:
        h = a
        for _ in range(200):
            h = h * b
        h.numpy()

    for _ in range(3):
        (a * b).numpy()  # warm: memo, cells, the compiled-graph cache (its keys hold shapes)
        chain()
    gc.collect()
    own, shared = (a, b, ins, a.shape, a._cell), (mul, attrs, a.dtype)
    counts = [sys.getrefcount(o) for o in own]
    shared_counts = [sys.getrefcount(o) for o in shared]
    for _ in range(1000):
        core.record(mul, ins, attrs)
    chain()
    gc.collect()
    assert [sys.getrefcount(o) for o in own] == counts
    # (other tests' tensors, nodes and caches hold these too, and may change a few;
    # a reference leaked per recording would add a thousand)
    now = [sys.getrefcount(o) for o in shared]
    assert all(n <= c + 50 for n, c in zip(now, shared_counts)), (now, shared_counts)

    def record_many(n: int) -> None:
        for _ in range(n):
            h = a
            for _ in range(10):
                h = h * b + a
            core.collect([h])

    record_many(2000)
    gc.collect()
    tracemalloc.start()
    try:
        record_many(1000)
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        record_many(5000)  # 100k recordings
        gc.collect()
        last = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert last - first < 64 * 1024, (first, last)


def _cycle() -> list[weakref.ref]:
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.retain_grad()
    box = []

    def hook(g):  # a closure holding the tensor it is registered on: a cycle
        box.append(y)
        return g

    y.register_hook(hook)
    z = (y * y).sum()
    z.backward()
    w = x * y  # lazy: its node holds y, y's hook holds y
    return [weakref.ref(t) for t in (x, y, z, w)]


def test_cycles_through_tensors_are_collected():
    refs = _cycle()
    gc.collect()
    assert [r() for r in refs] == [None] * 4


# ---- pf.compile's replay: the results handed over in C (jit._hand_over) ----

def _replay_state(native: bool, monkeypatch, hold: str):
    """Four replays of an SGD step with the native hand-over or the Python loop
    (``hold``: what the caller keeps between steps): every field a later reader
    can see -- values, versions, the Mutation chain's shape, .grad, the counters."""
    from pyflame_mlir import jit

    if not native:
        monkeypatch.setattr(jit, "_NATIVE_HAND_OVER", None)
    rng = np.random.default_rng(7)
    w = pf.tensor(rng.standard_normal((64, 48)), requires_grad=True)
    b = pf.tensor(rng.standard_normal(48), requires_grad=True)
    x = pf.tensor(rng.standard_normal((5, 64)))

    def step(x):
        w.grad = b.grad = None
        loss = pf.tanh(x @ w + b).sum()
        loss.backward()
        with pf.no_grad():
            w.sub_(w.grad * 0.1)
            b.mul_(0.5)
            b.add_(b.grad, alpha=-0.1)
        return loss, loss.detach() * 2

    cf = pf.compile(step)
    seen, kept = [], []
    for i in range(5):
        if hold == "numpy":
            kept.append(w.numpy())
        elif hold == "lazy":
            kept.append(b * 3)
        before = core.MUTATIONS[0]
        loss, twice = cf(x)
        m = w._mut
        seen.append((loss.item(), twice.item(), loss.shape, type(loss.shape), loss.dtype,
                     w.numpy().copy(), b.numpy().copy(), w._version, b._version,
                     w.grad.numpy().copy(), b.grad.numpy().copy(), w.grad.shape, w.grad._version,
                     core.MUTATIONS[0] - before, type(m), m.version, m.prev is not None,
                     m.ref() is m.prev, m.prev._mut is not None and m.prev._mut.prev is None,
                     m.start < m.seq, m.prev._ag is w._ag, m.prev._value is None,
                     b._mut.prev._value is None, w._cell, b._cell, i))
    assert cf.stats()["hits"] == 4
    kept_values = [np.array(k.numpy() if isinstance(k, pf.Tensor) else k) for k in kept]
    return seen, kept_values


@needs_native
@pytest.mark.parametrize("hold", ["nothing", "numpy", "lazy"])
def test_native_hand_over_is_the_python_loop(monkeypatch, hold):
    native = _replay_state(True, monkeypatch, hold)
    monkeypatch.undo()
    python = _replay_state(False, monkeypatch, hold)
    for a, b in zip(native[0], python[0]):
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
            else:
                assert x == y, (a[-1], x, y)
    assert len(native[1]) == len(python[1])
    for x, y in zip(native[1], python[1]):
        np.testing.assert_array_equal(x, y)


@needs_native
def test_native_hand_over_hands_back_what_it_does_not_take():
    """A result of another dtype object (the Python loop raises on it), a
    tensor with a view, or without autograd meta for its gradient: False, and
    nothing changed."""
    from pyflame_mlir import jit

    hand_over = jit._NATIVE_HAND_OVER
    w = pf.tensor(np.ones(3))
    version, value = w._version, w._value
    ref = weakref.ref(w)
    outs = ((1, ref, 1, w.dtype, w.dtype.np, w.shape),)
    assert hand_over(outs, [np.zeros(3, np.float32)], [], ()) is False  # another dtype
    assert hand_over(outs, [np.zeros(4)], [], ()) is False  # another shape
    grad_outs = ((2, ref, 0, w.dtype, w.dtype.np, w.shape),)
    assert w._ag is None
    assert hand_over(grad_outs, [np.zeros(3)], [], ()) is False  # no autograd meta
    assert w._version == version and w._value is value
    assert hand_over(outs, [np.zeros(3)], [], ()) is True
    assert w._version == version + 1 and not w._value.any()
    v = w[1:]  # a view taken of it: the Python loop's (core.rebind's) business
    del v
    value = w._value
    assert hand_over(outs, [np.ones(3)], [], ()) is False
    assert w._version == version + 1 and w._value is value


def test_replays_leak_no_references_or_memory():
    w = pf.tensor(np.ones((8, 6)), requires_grad=True)
    b = pf.tensor(np.ones(6), requires_grad=True)
    x = pf.tensor(np.ones((3, 8)))

    def step(x):
        w.grad = b.grad = None
        loss = pf.tanh(x @ w + b).sum()
        loss.backward()
        with pf.no_grad():
            w.sub_(w.grad * 0.1)
            b.sub_(b.grad * 0.1)
        return loss

    cf = pf.compile(step)
    for _ in range(50):
        cf(x)
    gc.collect()
    shared = (w.dtype, w.shape, w.dtype.np, b.shape)
    counts = [sys.getrefcount(o) for o in shared]
    tracemalloc.start()
    try:
        for _ in range(300):
            cf(x)
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(3000):
            cf(x)
        gc.collect()
        last = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert [sys.getrefcount(o) for o in shared] == counts
    assert last - first < 16 * 1024, (first, last)
    assert cf.stats()["hits"] == 3349
