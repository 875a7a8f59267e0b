"""Graphs shared by the MAX tests: one graph exercising every op (and the
dtype branches of the MAX rules), the README demo MLP and one SGD training
step of a small MLP with hand-written gradients.

Everything is built with the frontend, from seeded data, so two processes
build the same graphs (same module text, same persistent-cache key).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from pyflame_mlir.dialects import OPS
from pyflame_mlir.dialects.data import DenseValue

import pyflame_mlir as pf
from pyflame_mlir.core import record

# ---- comparing a backend's results with the reference backend's ----

def assert_matches(got: np.ndarray, ref: np.ndarray, what: str, rtol: float = 1e-5) -> None:
    assert got.dtype == ref.dtype and got.shape == ref.shape, \
        f"{what}: {got.dtype}{got.shape} vs reference {ref.dtype}{ref.shape}"
    if ref.dtype.kind in "biu":
        np.testing.assert_array_equal(got, ref, err_msg=what)
        return
    if ref.dtype in (np.float16, ml_dtypes.bfloat16):
        rtol = max(rtol, 1e-2)
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=rtol,
                               atol=rtol, equal_nan=True, err_msg=what)


def reference(outs: list[pf.Tensor]) -> list[np.ndarray]:
    with pf.backend("reference"):
        pf.eval(*outs)
    return [t.numpy() for t in outs]


def _data(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((4, 6)).astype(np.float32)
    f[0, 0], f[0, 1] = 0.0, -0.0  # sign of zeros
    return {
        "f": f,
        "g": rng.standard_normal((6,)).astype(np.float32),
        "p": (rng.random((4, 6)) + 0.5).astype(np.float32),  # positive: log, sqrt, pow
        "d": rng.standard_normal((3, 4)).astype(np.float64),
        "h": rng.standard_normal((4, 6)).astype(np.float16),
        "bf": rng.standard_normal((4, 6)).astype(np.float32),
        "i": rng.integers(-5, 6, (4, 6)).astype(np.int32),
        "l": rng.integers(-5, 6, (4, 6)).astype(np.int64),
        "b": rng.random((4, 6)) > 0.5,
        "c": rng.random((4, 6)) > 0.3,
        "m": rng.standard_normal((2, 4, 6)).astype(np.float32),
        "n": rng.standard_normal((6, 5)).astype(np.float32),
    }


# backends without LAPACK: they refuse the matrix decompositions by name
# (dialects/decomp.py; test_linalg_decomp.py checks the refusals), so their
# every-op graphs leave those ops out
NO_DECOMPOSITIONS = ("max", "mlir")


def all_ops(seed: int = 0, *, decompositions: bool | None = None
            ) -> tuple[list[pf.Tensor], set[str]]:
    """Outputs that together use every op of ``OPS``; also returns the op names
    used. ``decompositions`` (default: unless the current backend is one of
    ``NO_DECOMPOSITIONS``) adds the matrix decompositions and solvers."""
    if decompositions is None:
        decompositions = pf.get_backend() not in NO_DECOMPOSITIONS
    a = {k: pf.from_numpy(v) for k, v in _data(seed).items()}
    f, g, p, d, h, i, l, b, c, m, n = (a[k] for k in "f g p d h i l b c m n".split())
    bf = pf.convert(a["bf"], pf.bfloat16)
    outs: list[pf.Tensor] = []
    # unary float math, chained through values that stay in range
    outs += [pf.neg(f), pf.abs(f), pf.sign(f), pf.square(f), pf.relu(f), pf.exp(f),
             pf.log(p), pf.sqrt(p), pf.rsqrt(p), pf.sin(f), pf.cos(f), pf.tanh(f),
             pf.log1p(p), pf.log1p(f * 0.1),
             pf.reciprocal(p), pf.sigmoid(f), pf.erf(f), pf.gelu(f),
             pf.gelu(f, approximate="tanh")]
    # integer and bool branches of the unary rules
    outs += [pf.relu(i), pf.sign(l), pf.abs(i), pf.neg(l), pf.square(i),
             pf.logical_not(b), pf.logical_not(f), pf.logical_not(i)]
    # binary with broadcasting, every dtype family
    outs += [f + g, f - g, f * g, f / p, pf.pow(p, f), pf.maximum(f, g), pf.minimum(f, g),
             i + i, l * l, i - i, pf.maximum(i, i), pf.pow(l, pf.abs(l)),
             b + c, b * c, pf.maximum(b, c), pf.minimum(b, c)]
    outs += [f == g, f != g, f < g, f <= g, f > g, f >= g, i < i, l >= l,
             b == c, b != c, b < c, b >= c]
    outs += [pf.logical_and(b, c), pf.logical_or(b, f), pf.where(b, f, g)]
    # conversions, including to and from bool and the half types
    outs += [pf.convert(f, pf.int32), pf.convert(i, pf.float64), pf.convert(f, pf.bool),
             pf.convert(b, pf.float32), pf.convert(f, pf.float16), pf.convert(h, pf.float32),
             bf + bf, pf.convert(bf, pf.float32)]
    # reductions: several dims, keepdim, integer widening, half accumulation
    outs += [f.sum(), f.sum(1), f.sum(0, keepdim=True), i.sum(0), b.sum(), m.sum((0, 2)),
             f.mean(), m.mean((0, 2), keepdim=True), h.sum(1), h.mean(0), bf.sum(1),
             pf.amax(f, 1), pf.amin(m, (0, 1)), pf.amax(i, 0), pf.amin(d),
             pf.argmax(f, 1), pf.argmin(f, 0, keepdim=True), pf.argmax(f), pf.argmin(i, 1)]
    # linalg: 2-D, batched with broadcast, vector cases, half, float64
    outs += [f @ n, m @ n, g @ n, f @ g, pf.matmul(h, pf.convert(n, pf.float16)),
             pf.matmul(d, pf.convert(f, pf.float64))]
    # shape ops
    outs += [f.reshape(3, 8), f.permute(1, 0), m.permute(2, 0, 1), pf.broadcast_to(g, (3, 4, 6)),
             f[1:3, ::2], m[:, 1:, 2:5], pf.cat([f, p], 0), pf.cat([i, i, i], 1),
             *pf.split(f, [2, 4], 1), *pf.split(m, 1, 0)]
    # nn
    outs += [pf.softmax(f, 1), pf.log_softmax(f, 0), pf.logsumexp(m, (0, 2)),
             pf.logsumexp(f, 1, keepdim=True), pf.softmax(h, 1), pf.log_softmax(bf, 1),
             pf.logsumexp(h, 0)]
    # data: splat and dense constants, iota (arange, eye)
    outs += [f + 1.5, i * 3, pf.where(b, 1.0, -1.0), f + pf.tensor([[1.0] * 6] * 4),
             pf.tensor([[1, 2, 3], [4, 5, 6]]) + 0,
             pf.logical_or(pf.tensor([True, False]), b[0, :2]),
             pf.arange(5), pf.arange(2.0, 8.0, 1.5), pf.eye(3), pf.arange(6) + i]
    # dense (non-splat) constants: the frontend makes them only in passes, so record directly
    for arr in (np.arange(6, dtype=np.float32).reshape(2, 3) / 4, np.array([1, -2, 3], np.int32),
                np.array([[True, False], [False, True]]), np.array([0.5, -1.25, 3.0], np.float16),
                np.array([1.5, -2.0, 0.25], ml_dtypes.bfloat16)):
        outs.append(record(OPS["constant"], (), {"value": DenseValue(arr, arr.shape)}))
    # pad (the transpose of slice: autodiff emits it), interior padding included
    for x, lo, hi, k in ((f, (1, 0), (0, 2), (1, 2)), (i, (0, 1), (2, 0), (0, 1)),
                         (b, (1, 1), (0, 0), (0, 0))):
        outs.append(record(OPS["pad"], (x,), {"low": lo, "high": hi, "interior": k}))
    # issue 14's math primitives (atan2 on the +0 axis only: MAX's compiler does
    # not keep the sign of f * 0, so atan2(-0.0, -0.0) = -pi is not compared;
    # bitwise on bool: recorded directly, the frontend
    # records the logical ops for bools; MAX refuses integer bitwise ops)
    outs += [pf.floor(f), pf.ceil(f), pf.round(f * 2.5), pf.trunc(f), pf.expm1(f),
             pf.expm1(f * 1e-4), pf.atan(f * 3), pf.asin(f * 0.4), pf.acos(f * 0.4),
             pf.atan2(f, g), pf.atan2(f, pf.zeros_like(f)), pf.fmod(i, pf.abs(i) + 1),
             pf.fmod(-i, pf.abs(i) + 1), pf.floor_divide(l, pf.abs(l) + 2),
             pf.floor_divide(-l, pf.abs(l) + 2), pf.floor(h), pf.expm1(d)]
    outs += [record(OPS[n], (b, c), {}) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")]
    outs.append(record(OPS["bitwise_not"], (b,), {}))
    # indexing (issue 14): gather and scatter_add, int32/int64 indices, bool, the
    # index smaller than the input, dims 0 and last; advanced indexing and one_hot
    gi = pf.from_numpy(np.array([[3, 0, 1, 0, 2, 3], [1, 1, 0, 2, 0, 3]], np.int64))
    si = pf.from_numpy(np.array([[5, 0], [0, 0], [2, 5]], np.int32))
    outs += [pf.gather(f, 0, gi), pf.gather(i, 1, si), pf.gather(b, 1, si),
             pf.scatter_add(f, 1, si, n[:3, :2]), pf.scatter_add(l, 0, gi, l[:2]),
             pf.scatter_add(b, 1, si, c[:3, :2]), m[:, [2, 0, 2], 1:], f[b],
             pf.one_hot(pf.convert(pf.abs(i[0]), pf.int64), 6)]
    # reductions, scans, sorting (prod; scan and sort primitives, their index moves)
    outs += [pf.prod(f, 1), pf.prod(i, 0, keepdim=True), pf.prod(h), pf.cumsum(f, 1),
             pf.cumsum(i, 0), pf.cumsum(b, 1), pf.cumprod(p, 0), pf.cumprod(l, 1),
             pf.logcumsumexp(m, 2), *pf.cummax(f, 1), *pf.cummin(i, 0), *pf.sort(f, 1),
             *pf.sort(i, 0, descending=True), pf.median(f, 1).values, pf.topk(m, 2, 1).values]
    for name, args, attrs in (
            ("cumsum", (f,), {"dim": 0, "reverse": True}),
            ("logcumsumexp", (f,), {"dim": 1, "reverse": True}),
            ("select_along", (f, pf.argsort(p, 1)[:, :2]), {"dim": 1}),
            ("scatter_add_along", (g.reshape(2, 3), pf.argsort(p[:2, :3], 1)),
             {"dim": 1, "size": 5})):
        outs.append(record(OPS[name], args, attrs))
    # max pooling (issue 14, s12-pool) with padding and ceil_mode, over ties
    # and an integer input; its transpose on the values and offsets
    window = {"kernel": (2, 3), "stride": (2, 2), "padding": (1, 1), "dilation": (1, 1),
              "ceil_mode": True}
    pv, po = record(OPS["max_pool"], (m,), window)
    outs += [pv, po, *record(OPS["max_pool"], (i,), {**window, "ceil_mode": False}),
             record(OPS["max_pool_grad"], (pv, po), {**window, "size": (4, 6)}),
             record(OPS["gelu_grad"], (f, pf.gelu(f), p), {})]  # gelu's VJP (f has zeros)
    # named fused ops (the fusion pass emits them; recorded directly here)
    fused = {"fused_add_relu": ((f, g), {}), "fused_mul_sigmoid": ((f, g), {}),
             "fused_fma": ((f, g, p), {}), "fused_matmul_relu": ((f, n), {}),
             "fused_matmul_gelu": ((f, n), {"approximate": "tanh"})}
    for name, (args, attrs) in fused.items():
        if name in OPS:
            outs.append(record(OPS[name], args, attrs))
    if decompositions:  # matrix decompositions and solvers (dialects/decomp.py)
        sq = pf.from_numpy(_data(seed)["d"][:, :3])  # float64 [3, 3]
        spd = sq @ sq.mT + pf.eye(3, dtype=pf.float64)
        outs += [pf.linalg.solve(spd, sq), pf.linalg.solve_triangular(spd, sq, upper=True),
                 pf.linalg.cholesky(spd), *pf.linalg.slogdet(spd), pf.linalg.det(m[:, :, :4]),
                 *pf.linalg.qr(f), *pf.linalg.eigh(spd), *pf.linalg.svd(m, full_matrices=False),
                 pf.linalg.pinv(f), pf.linalg.matrix_exp(spd * 0.1),
                 *pf.linalg.lu(sq)]  # issue 14 (s10-surface14): lu_factor
    used = _ops_used(outs)
    return outs, used


def _ops_used(outs: list[pf.Tensor]) -> set[str]:
    from pyflame_mlir.core import collect

    return {n.op.name for n in collect([t for t in outs if pf.is_lazy(t)]).nodes}


def missing_from_all_ops() -> set[str]:
    _, used = all_ops()
    return set(OPS) - used


# ---- the README demo MLP (examples/mlp.py) ----

def demo_mlp(seed: int = 0, batch: int = 1024) -> tuple[pf.Tensor, pf.Tensor]:
    """The demo's forward pass: returns (loss, logits). The parameters are
    realized on the reference backend (the demo calls ``.eval()`` on them),
    so only the forward graph is compiled by the backend under test. Every
    ``batch`` gives the same weights (they are drawn first)."""
    pf.manual_seed(seed)
    with pf.backend("reference"):
        w1 = (pf.randn([512, 256]) * 0.05).eval()
        w2 = (pf.randn([256, 10]) * 0.05).eval()
        b1 = pf.full([256], 0.01)
        x = pf.randn([batch, 512])
    h = pf.relu(x @ w1 + b1)
    logits = h @ w2
    probs = pf.softmax(logits, dim=1)
    return -pf.log(probs).sum(), logits


# ---- an MLP training step (autograd, SGD) ----

def init_mlp(sizes: list[int], seed: int = 0) -> list[pf.Tensor]:
    rng = np.random.default_rng(seed)
    params = []
    for k, n in zip(sizes[:-1], sizes[1:]):
        params.append(pf.tensor((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32),
                                requires_grad=True))
        # a leaf, like the updated biases of later steps (pf.zeros would be a
        # constant of the graph, and step 1 a different graph from step 2)
        params.append(pf.tensor(np.zeros(n, np.float32), requires_grad=True))
    return params


def batch(batch_size: int, n_in: int, n_out: int, seed: int = 1
          ) -> tuple[pf.Tensor, pf.Tensor]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch_size, n_in)).astype(np.float32)
    y = np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, batch_size)]
    return pf.from_numpy(x), pf.from_numpy(y)


def train_step(params: list[pf.Tensor], x: pf.Tensor, y: pf.Tensor, lr: float = 0.1
               ) -> tuple[pf.Tensor, pf.Tensor, list[pf.Tensor]]:
    """One SGD step of a ReLU MLP with softmax cross-entropy (mean over the
    batch), gradients by the project's autograd. Returns (loss, logits, new
    params), all lazy: one graph with the forward, the backward and the update."""
    h = x
    for j in range(0, len(params) - 2, 2):
        h = pf.relu(h @ params[j] + params[j + 1])
    logits = h @ params[-2] + params[-1]
    loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
    loss.backward()
    with pf.no_grad():
        new = [p - lr * p.grad for p in params]
    return loss, logits, new


def lazy_indexing(gather_index: list[int], embed_index: list[int], scatter_index: list[int]
                  ) -> list[pf.Tensor]:
    """Indexing ops whose indices are computed in the graph (``+ 0``), so no
    check at record time sees them: an out-of-range one must raise when the
    graph runs, on every backend (never a clamped or stray read). The index
    data are leaves: every call with the same lengths is one compiled graph."""
    x = pf.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    g = pf.tensor(np.asarray(gather_index, np.int64).reshape(-1, 1).repeat(3, 1)) + 0
    e = pf.tensor(np.asarray(embed_index, np.int64)) + 0
    s = pf.tensor(np.asarray(scatter_index, np.int64).reshape(-1, 1).repeat(3, 1)) + 0
    src = pf.ones(s.shape)
    return [pf.gather(x, 0, g), pf.nn.functional.embedding(e, x),
            pf.scatter_add(pf.zeros(4, 3), 0, s, src)]


def expected_lazy_indexing(gather_index: list[int], embed_index: list[int],
                           scatter_index: list[int]) -> list[np.ndarray]:
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    out = np.zeros((4, 3), np.float32)
    np.add.at(out, np.asarray(scatter_index), 1.0)
    return [x[np.asarray(gather_index)], x[np.asarray(embed_index)], out]
