"""The sweep of ``pf.numpy`` against ``jax.numpy`` (and ``jax.numpy.linalg``):
every name pf.numpy answers, called with representative arguments (axes,
keepdims, dtypes, int and float inputs, the defaults), compared with JAX's
values, shapes and dtypes (32-bit mode), and gradients with ``jax.grad``.
The names pf.numpy lets through to pf's top level (``SHARED_WITH_PF``) each
need a case here: that list is what this module has checked."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")
pn = pf.numpy

R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(np.float32)
P = (np.abs(X) + 0.5).astype(np.float32)
V = R.standard_normal(5).astype(np.float32)
W = R.standard_normal(5).astype(np.float32)
I = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [3, 2, 1, 0]])  # noqa: E741
J = np.array([3, 1, 4, 1, 5])
U = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.45, 2.675], np.float32)
S3 = R.standard_normal((3, 3)).astype(np.float32)
V3 = R.standard_normal((4, 3)).astype(np.float32)
W3 = R.standard_normal((4, 3)).astype(np.float32)
T3 = R.standard_normal((3, 4, 5)).astype(np.float32)
NX = X.copy()
NX[0, 1] = np.nan


def A(n, v):  # noqa: N802
    return n.asarray(v)


C: dict = {}


def c(name, f):
    assert name not in C, name
    C[name] = f


for u in (
        "arccos arccosh arcsin arcsinh arctan arctanh acos acosh asin asinh atan atanh "
        "ceil conj cos cosh deg2rad exp exp2 expm1 floor i0 imag isfinite isinf isnan "
        "isneginf isposinf isreal log log10 log1p log2 negative positive rad2deg real "
        "reciprocal sign signbit sin sinc sinh sqrt square tan tanh trunc round angle"
).split():
    c(u, lambda n, u=u: getattr(n, u)(A(n, X)))
    c(u + "_int", lambda n, u=u: getattr(n, u)(A(n, I)))
c("round_half", lambda n: n.round(A(n, U)))
c("round_dec", lambda n: n.round(A(n, U), 1))
for b in (
        "add arctan2 atan2 copysign divide equal float_power floor_divide fmax fmin fmod "
        "greater greater_equal heaviside hypot less less_equal logaddexp logaddexp2 "
        "logical_and logical_or logical_xor maximum minimum multiply nextafter not_equal "
        "pow remainder subtract true_divide"
).split():
    c(b, lambda n, b=b: getattr(n, b)(A(n, X), A(n, X[0] + 0.3)))
    if b == "nextafter":
        continue
    c(b + "_int", lambda n, b=b: getattr(n, b)(A(n, I), A(n, I[0] + 1)))
for b in (
        "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift gcd "
        "lcm"
).split():
    c(b, lambda n, b=b: getattr(n, b)(A(n, I), A(n, I[0] + 1)))
c("bitwise_not", lambda n: n.bitwise_not(A(n, I)))
c("logical_not", lambda n: n.logical_not(A(n, X > 0)))
c("all", lambda n: n.all(A(n, X > -1), axis=0))
c("all_none", lambda n: n.all(A(n, X > -1)))
c("any", lambda n: n.any(A(n, X > 1), axis=1, keepdims=True))
c("allclose", lambda n: n.asarray(n.allclose(A(n, X), A(n, X + 1e-6))))
c("argwhere", lambda n: n.argwhere(A(n, I > 1)))
c("atleast_1d", lambda n: n.atleast_1d(A(n, np.float32(3))))
c("atleast_2d", lambda n: n.atleast_2d(A(n, V)))
c("atleast_3d", lambda n: n.atleast_3d(A(n, V)))
c("atleast_3d_2", lambda n: n.atleast_3d(A(n, X)))
c("bincount", lambda n: n.bincount(A(n, J)))
c("bincount_w", lambda n: n.bincount(A(n, J), A(n, V)))
c("bincount_len", lambda n: n.bincount(A(n, J), length=8))
c("broadcast_shapes", lambda n: n.asarray(n.broadcast_shapes((3, 1), (1, 4))))
c("broadcast_to", lambda n: n.broadcast_to(A(n, V), (2, 5)))
c("column_stack", lambda n: n.column_stack([A(n, V), A(n, W)]))
c("concat", lambda n: n.concat([A(n, X), A(n, X)]))
c("concat_ax", lambda n: n.concat([A(n, X), A(n, X)], axis=1))
c("corrcoef", lambda n: n.corrcoef(A(n, X)))
c("count_nonzero", lambda n: n.count_nonzero(A(n, I)))
c("count_nonzero_ax", lambda n: n.count_nonzero(A(n, I), axis=0))
c("cov", lambda n: n.cov(A(n, X)))
c("cov_rv", lambda n: n.cov(A(n, X), rowvar=False))
c("cross", lambda n: n.cross(A(n, V3), A(n, W3)))
c("cross_2", lambda n: n.cross(A(n, V3.T), A(n, W3.T), axis=0))
c("diag", lambda n: n.diag(A(n, X)))
c("diag_v", lambda n: n.diag(A(n, V), 1))
c("diagflat", lambda n: n.diagflat(A(n, V)))
c("diagonal", lambda n: n.diagonal(A(n, X)))
c("diagonal_off", lambda n: n.diagonal(A(n, X), 1))
c("diagonal_3d", lambda n: n.diagonal(A(n, X[None]).reshape(1, 3, 4) * 1, 0, 1, 2))
c("diagonal_3d_def", lambda n: n.diagonal(A(n, np.arange(24.0).reshape(2, 3, 4))))
c("diff", lambda n: n.diff(A(n, X)))
c("diff_n2", lambda n: n.diff(A(n, X), n=2, axis=0))
c("diff_pre", lambda n: n.diff(A(n, V), prepend=A(n, np.float32(0))))
c("dsplit", lambda n: n.dsplit(A(n, np.arange(16.0).reshape(2, 2, 4)), 2))
c("dstack", lambda n: n.dstack([A(n, V), A(n, W)]))
c("einsum", lambda n: n.einsum("ij->j", A(n, X)))
c("empty_like", lambda n: n.zeros_like(n.empty_like(A(n, X))))
c("fliplr", lambda n: n.fliplr(A(n, X)))
c("flipud", lambda n: n.flipud(A(n, X)))
c("frexp", lambda n: n.frexp(A(n, X)))
c("gradient", lambda n: n.gradient(A(n, V)))
c("gradient_2d", lambda n: n.gradient(A(n, X)))
c("histogram", lambda n: n.histogram(A(n, V)))
c("histogram_b", lambda n: n.histogram(A(n, V), bins=3, range=(-1, 1)))
c("hsplit", lambda n: n.hsplit(A(n, X), 2))
c("vsplit", lambda n: n.vsplit(A(n, X), 3))
c("isclose", lambda n: n.isclose(A(n, X), A(n, X + 1e-6)))
c("isin", lambda n: n.isin(A(n, I), A(n, J)))
c("kron", lambda n: n.kron(A(n, X[:2, :2]), A(n, X[1:, 1:3])))
c("kron_1d", lambda n: n.kron(A(n, V), A(n, W)))
c("logspace", lambda n: n.logspace(0, 2, 5))
c("matmul", lambda n: n.matmul(A(n, X), A(n, X.T)))
c("meshgrid", lambda n: n.meshgrid(A(n, V), A(n, W[:3])))
c("meshgrid_ij", lambda n: n.meshgrid(A(n, V), A(n, W[:3]), indexing="ij"))
c("nan_to_num", lambda n: n.nan_to_num(A(n, np.array([np.nan, np.inf, -np.inf, 1.0], np.float32))))
c("nanmean", lambda n: n.nanmean(A(n, NX), axis=0))
c("nanmedian", lambda n: n.nanmedian(A(n, NX)))
c("nanquantile", lambda n: n.nanquantile(A(n, NX), 0.3))
c("nansum", lambda n: n.nansum(A(n, NX), axis=1))
c("nansum_all", lambda n: n.nansum(A(n, NX)))
c("put", lambda n:
    n.put(A(n, X), A(n, np.array([0, 3])), A(n, np.array([9.0, 8.0], np.float32)), inplace=False))
c("promote", lambda n: n.zeros(2, n.promote_types(n.int32, n.float32)))
c("result_type", lambda n: n.zeros(2, n.result_type(n.int32, n.float32)))
c("rot90", lambda n: n.rot90(A(n, X)))
c("rot90_k", lambda n: n.rot90(A(n, X), 3))
c("searchsorted", lambda n: n.searchsorted(A(n, np.sort(V)), A(n, W)))
c("searchsorted_r", lambda n:
    n.searchsorted(A(n, np.array([1, 2, 2, 3], np.float32)),
                   A(n, np.array([2.0], np.float32)), side="right"))
c("select", lambda n: n.select([A(n, X > 0.5), A(n, X < -0.5)], [A(n, X), A(n, -X)], 7.0))
c("trace", lambda n: n.trace(A(n, X)))
c("trace_off", lambda n: n.trace(A(n, X), 1))
c("trapezoid", lambda n: n.trapezoid(A(n, X)))
c("trapezoid_x", lambda n: n.trapezoid(A(n, V), A(n, np.sort(W))))
c("tril", lambda n: n.tril(A(n, X)))
c("tril_k", lambda n: n.tril(A(n, X), -1))
c("triu", lambda n: n.triu(A(n, X), 1))
c("tril_indices", lambda n: n.tril_indices(3))
c("tril_indices_k", lambda n: n.tril_indices(3, 1, 4))
c("triu_indices", lambda n: n.triu_indices(4))
c("triu_indices_k", lambda n: n.triu_indices(3, 1, 4))
c("unique", lambda n: n.unique(A(n, J)))
c("unique_all", lambda n:
    n.unique(A(n, J), return_index=True, return_inverse=True, return_counts=True))
c("unique_2d", lambda n: n.unique(A(n, I)))
c("unravel_index", lambda n: n.unravel_index(A(n, np.array([3, 7])), (3, 4)))
c("vander", lambda n: n.vander(A(n, V)))
c("vander_n", lambda n: n.vander(A(n, V), 3, increasing=True))
c("var_fallback", lambda n: n.var(A(n, X)))
c("std_int", lambda n: n.std(A(n, I)))
c("split3", lambda n: n.split(A(n, X), 4, axis=1))
c("tensordot", lambda n: n.tensordot(A(n, T3), A(n, T3.transpose(1, 2, 0))))
c("tensordot_1", lambda n: n.tensordot(A(n, X), A(n, X.T), axes=1))
c("tensordot_0", lambda n: n.tensordot(A(n, V), A(n, W), axes=0))
c("tensordot_pair", lambda n: n.tensordot(A(n, X), A(n, X), axes=([1], [1])))
c("tensordot_int_pair", lambda n: n.tensordot(A(n, X), A(n, X), axes=(1, 1)))
c("cumsum_int", lambda n: n.cumsum(A(n, I), axis=0))
c("argsort_ties", lambda n: n.argsort(A(n, I), axis=1))
c("clip_int", lambda n: n.clip(A(n, I), 1, 2))
c("mean_int_all", lambda n: n.mean(A(n, I)))
c("sum_int", lambda n: n.sum(A(n, I), axis=1))
c("prod_int", lambda n: n.prod(A(n, I)))
c("max_int", lambda n: n.max(A(n, I)))
c("matmul_int", lambda n: n.matmul(A(n, I), A(n, I.T)))
c("divide_int_scalar", lambda n: n.divide(A(n, I), 2))
c("floor_divide_neg", lambda n: n.floor_divide(A(n, -I), 2))
c("remainder_neg", lambda n: n.remainder(A(n, -I), 3))
c("fmod_neg", lambda n: n.fmod(A(n, -I), 3))
c("power_int", lambda n: n.power(A(n, I), 2))
c("sqrt_int_explicit", lambda n: n.sqrt(A(n, I)))
c("exp_int_explicit", lambda n: n.exp(A(n, I)))
c("sign_int_explicit", lambda n: n.sign(A(n, -I)))
c("abs_int", lambda n: n.abs(A(n, -I)))
c("mod_int", lambda n: n.mod(A(n, -I), 3))
c("float16", lambda n: n.asarray(X, n.float16))
c("bfloat16", lambda n: n.asarray(X, n.bfloat16).astype(n.float32))
c("int8", lambda n: n.asarray(I, n.int8))
c("uint8", lambda n: n.asarray(I, n.uint8))
c("int16", lambda n: n.asarray(I, n.int16))
c("finfo", lambda n: n.asarray(n.finfo(n.float32).eps))
c("iinfo", lambda n: n.asarray(n.iinfo(n.int32).max))
c("linalg_det", lambda n: n.linalg.det(A(n, S3)))
c("linalg_slogdet", lambda n: n.linalg.slogdet(A(n, S3)))
c("linalg_svd", lambda n: n.linalg.svd(A(n, S3), compute_uv=False))
c("linalg_eigh", lambda n: n.linalg.eigvalsh(A(n, S3 + S3.T)))
c("linalg_solve", lambda n: n.linalg.solve(A(n, S3), A(n, V[:3])))
c("linalg_pinv", lambda n: n.linalg.pinv(A(n, X)))
c("linalg_matrix_rank", lambda n: n.linalg.matrix_rank(A(n, X)))
c("linalg_qr", lambda n: n.linalg.qr(A(n, X)))
c("linalg_cholesky", lambda n: n.linalg.cholesky(A(n, S3 @ S3.T + 3 * np.eye(3, dtype=np.float32))))
c("linalg_lstsq", lambda n: n.linalg.lstsq(A(n, X.T), A(n, V[:4]))[0])
c("linalg_matrix_power", lambda n: n.linalg.matrix_power(A(n, S3), 3))
c("linalg_norm_2", lambda n: n.linalg.norm(A(n, S3), 2))
c("linalg_cond", lambda n: n.linalg.cond(A(n, S3)))
c("linalg_multi_dot", lambda n: n.linalg.multi_dot([A(n, X), A(n, X.T), A(n, X)]))
c("linalg_tensorsolve", lambda n: n.linalg.tensorinv(A(n, S3 + 3 * np.eye(3, dtype=np.float32)), 1))
c("linalg_vector_norm", lambda n: n.linalg.vector_norm(A(n, X)))
c("linalg_matrix_norm", lambda n: n.linalg.matrix_norm(A(n, X)))
c("linalg_eigvals", lambda n: n.linalg.eigvalsh(A(n, S3 + S3.T), UPLO="U"))
c("linalg_cross", lambda n: n.linalg.cross(A(n, V3), A(n, W3)))
c("linalg_outer", lambda n: n.linalg.outer(A(n, V), A(n, W)))
c("linalg_trace", lambda n: n.linalg.trace(A(n, X)))
c("linalg_diagonal", lambda n: n.linalg.diagonal(A(n, X)))
c("linalg_matmul", lambda n: n.linalg.matmul(A(n, X), A(n, X.T)))
c("linalg_vecdot", lambda n: n.linalg.vecdot(A(n, X), A(n, X)))
c("linalg_svdvals", lambda n: n.linalg.svdvals(A(n, X)))
c("linalg_matrix_transpose", lambda n: n.linalg.matrix_transpose(A(n, X)))
c("linalg_tensordot", lambda n: n.linalg.tensordot(A(n, X), A(n, X.T), axes=1))

c("ldexp_int_exp", lambda n: n.ldexp(A(n, X), A(n, I)))
c("histogram_w_density", lambda n: n.histogram(A(n, V), bins=4, weights=A(n, P[0, :1] * W + 2),
                                                density=True))
c("histogram_edges", lambda n: n.histogram(A(n, V), bins=A(n, np.array([-2, 0, 0.5, 3],
                                                                         np.float32))))
c("histogram_bin_edges", lambda n: n.histogram_bin_edges(A(n, V), 5))
c("histogram_const", lambda n: n.histogram(A(n, np.ones(4, np.float32)), 3))
c("meshgrid_3", lambda n: n.meshgrid(A(n, V), A(n, W[:3]), A(n, J[:2])))
c("meshgrid_sparse", lambda n: n.meshgrid(A(n, V), A(n, W[:3]), sparse=True))
c("equal_b", lambda n: n.equal(A(n, I), 1))
c("around", lambda n: n.around(A(n, X * 100), -1))
c("round_int_dec", lambda n: n.round(A(n, I), 2))
c("round_dec3", lambda n: n.round(A(n, X), 3))
c("cbrt", lambda n: n.cbrt(A(n, X)))
c("cbrt_int", lambda n: n.cbrt(A(n, -I)))
c("interp", lambda n: n.interp(A(n, np.linspace(-3, 3, 13, dtype=np.float32)),
                               A(n, np.sort(V)), A(n, W)))
c("interp_lr", lambda n: n.interp(A(n, np.linspace(-3, 3, 13, dtype=np.float32)),
                                  A(n, np.sort(V)), A(n, W), left=-9.0, right=9.0))
c("interp_period", lambda n: n.interp(A(n, np.linspace(-7, 7, 15, dtype=np.float32)),
                                      A(n, V * 3), A(n, W), period=4.0))
c("interp_int", lambda n: n.interp(A(n, np.array([0.5, 2.5, 9])), A(n, np.arange(4)),
                                   A(n, np.array([1, 4, 9, 16]))))
c("polyval", lambda n: n.polyval(A(n, V), A(n, X)))
c("polyval_int", lambda n: n.polyval(A(n, J), A(n, I)))
for mode in ("full", "same", "valid"):
    for la, lb in ((5, 3), (3, 5), (4, 4), (5, 2)):
        c(f"convolve_{mode}_{la}_{lb}", lambda n, m=mode, la=la, lb=lb: n.convolve(
            A(n, V[:la] if la <= 5 else X.ravel()[:la]), A(n, W[:lb]), mode=m))
        c(f"correlate_{mode}_{la}_{lb}", lambda n, m=mode, la=la, lb=lb: n.correlate(
            A(n, V[:la]), A(n, W[:lb]), mode=m))
c("convolve_int", lambda n: n.convolve(A(n, J), A(n, J[:2])))
c("convolve_default", lambda n: n.convolve(A(n, V), A(n, W[:3])))
c("correlate_default", lambda n: n.correlate(A(n, V), A(n, W[:3])))
for mode in ("edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "median",
             "empty"):
    c(f"pad_{mode}", lambda n, m=mode: n.pad(A(n, X), ((2, 1), (3, 0)), mode=m))
    c(f"pad_{mode}_int", lambda n, m=mode: n.pad(A(n, I), 2, mode=m))
c("pad_reflect_wide", lambda n: n.pad(A(n, V[:3]), (6, 5), mode="reflect"))
c("pad_wrap_wide", lambda n: n.pad(A(n, V[:3]), (7, 4), mode="wrap"))
c("pad_const_pairs", lambda n: n.pad(A(n, X), ((1, 2), (2, 1)), constant_values=((1, 2), (3, 4))))
c("pad_const_scalar_width", lambda n: n.pad(A(n, X), 2, constant_values=-1))
c("bincount_len_drop", lambda n: n.bincount(A(n, J), length=4))
c("bincount_neg", lambda n: n.bincount(A(n, np.array([-1, 0, 2])), length=4))
c("bincount_minlength", lambda n: n.bincount(A(n, J), minlength=9))
c("tensordot_3", lambda n: n.tensordot(A(n, X[:, :, None] * V), A(n, X[:, :, None] * V), axes=3))
c("lexsort", lambda n: n.lexsort((A(n, J), A(n, np.array([1, 0, 1, 0, 0])))))
c("lexsort_2d", lambda n: n.lexsort([A(n, X > 0), A(n, I)]))
c("lexsort_ax0", lambda n: n.lexsort([A(n, I), A(n, I % 2)], axis=0))
c("ravel_F", lambda n: n.ravel(A(n, X), order="F"))
c("reshape_F", lambda n: n.reshape(A(n, np.arange(24).reshape(2, 3, 4)), (4, -1), order="F"))
c("fill_diagonal", lambda n: n.fill_diagonal(A(n, X), 5.0, inplace=False))
c("fill_diagonal_vals", lambda n: n.fill_diagonal(A(n, np.zeros((5, 3), np.float32)),
                                                  A(n, V[:2]), inplace=False))
c("fill_diagonal_3d", lambda n: n.fill_diagonal(A(n, np.zeros((3, 3, 3), np.int32)), 7,
                                                inplace=False))
c("fill_diagonal_tall", lambda n: n.fill_diagonal(A(n, np.zeros((6, 2), np.float32)), 1.0,
                                                  inplace=False))
c("put_wrap", lambda n: n.put(A(n, X), A(n, np.array([0, 13, -1])), A(n, V[:2]), mode="wrap",
                              inplace=False))
c("tril_indices_from", lambda n: n.tril_indices_from(A(n, X), 1))
c("triu_indices_from", lambda n: n.triu_indices_from(A(n, X)))
c("diag_indices", lambda n: n.diag_indices(3))
c("diag_indices_from", lambda n: n.diag_indices_from(A(n, S3)))
c("tri", lambda n: n.tri(3, 4, 1))
c("indices", lambda n: n.indices((2, 3)))
c("unique_inverse_2d", lambda n: n.unique(A(n, I), return_inverse=True))
c("unique_size", lambda n: n.unique(A(n, J), size=6, return_index=True, return_counts=True))
c("unique_size_fill", lambda n: n.unique(A(n, J), size=3, fill_value=-1, return_counts=True))
c("unique_all_fn", lambda n: n.unique_all(A(n, I)))
c("unique_counts_fn", lambda n: n.unique_counts(A(n, J)))
c("fmax_nan", lambda n: n.fmax(A(n, NX), A(n, NX[::-1])))
c("fmin_nan", lambda n: n.fmin(A(n, NX), 0.0))
c("unique_float", lambda n: n.unique(A(n, np.array([2.0, 1.0, 2.0, np.nan, np.nan], np.float32))))
c("searchsorted_sorter", lambda n: n.searchsorted(A(n, V), A(n, W), sorter=A(n, np.argsort(V))))
c("array_split", lambda n: n.array_split(A(n, np.arange(10)), 3))
c("append", lambda n: n.append(A(n, X), A(n, V)))
c("append_ax", lambda n: n.append(A(n, X), A(n, X[:1]), axis=0))
c("astype", lambda n: n.astype(A(n, X), n.int32))
c("copy", lambda n: n.copy(A(n, X)))
c("broadcast_arrays", lambda n: n.broadcast_arrays(A(n, V), A(n, X[:, :1, None] * 0 + 1)))
c("matrix_transpose", lambda n: n.matrix_transpose(A(n, X[None])))
c("permute_dims", lambda n: n.permute_dims(A(n, X[None]), (2, 0, 1)))
c("rollaxis", lambda n: n.rollaxis(A(n, np.zeros((2, 3, 4, 5))), 3, 1))
c("rollaxis_neg", lambda n: n.rollaxis(A(n, np.zeros((2, 3, 4, 5))), 0, -1))
c("unstack", lambda n: n.unstack(A(n, X), axis=1))
c("vecdot", lambda n: n.vecdot(A(n, X), A(n, X[0])))
c("matvec", lambda n: n.matvec(A(n, X), A(n, X[0])))
c("vecmat", lambda n: n.vecmat(A(n, X[:, 0]), A(n, X)))
c("cumulative_sum", lambda n: n.cumulative_sum(A(n, X), axis=1, include_initial=True))
c("cumulative_prod", lambda n: n.cumulative_prod(A(n, V)))
c("cumsum_bool", lambda n: n.cumsum(A(n, X > 0)))
c("cumprod_int", lambda n: n.cumprod(A(n, I), axis=1))
c("sum_int8", lambda n: n.sum(A(n, I.astype(np.int8))))
c("degrees", lambda n: n.degrees(A(n, X)))
c("radians", lambda n: n.radians(A(n, I)))
c("fabs", lambda n: n.fabs(A(n, -I)))
c("rint", lambda n: n.rint(A(n, U)))
c("modf", lambda n: n.modf(A(n, X * 3)))
c("divmod", lambda n: n.divmod(A(n, -I * 3), 2))
c("invert", lambda n: n.invert(A(n, I)))
c("left_shift", lambda n: n.left_shift(A(n, I), 2))
c("right_shift", lambda n: n.right_shift(A(n, I * 8), 1))
c("geomspace", lambda n: n.geomspace(1, 1000, 4))
for w in ("bartlett", "blackman", "hamming", "hanning"):
    c(w, lambda n, w=w: getattr(n, w)(7))
c("kaiser", lambda n: n.kaiser(6, 2.0))
c("isscalar", lambda n: n.asarray(n.isscalar(3.0) + 2 * n.isscalar(A(n, X))))
c("result_type_weak", lambda n: n.zeros(2, n.result_type(A(n, I), 1.0)))
c("result_type_scalars", lambda n: n.zeros(2, n.result_type(1, 2)))
for nm in ("nanmax", "nanmin", "nanprod", "nanargmax", "nanargmin", "nancumsum", "nancumprod",
           "nanvar", "nanstd"):
    c(nm, lambda n, nm=nm: getattr(n, nm)(A(n, NX), axis=0))
    c(nm + "_all", lambda n, nm=nm: getattr(n, nm)(A(n, NX)))
c("nanvar_ddof", lambda n: n.nanvar(A(n, NX), axis=1, ddof=1, keepdims=True))
c("nanmedian_ax", lambda n: n.nanmedian(A(n, NX), axis=1))
c("nanpercentile", lambda n: n.nanpercentile(A(n, NX), 30, axis=0))
c("nanmax_int", lambda n: n.nanmax(A(n, I), axis=1))
c("polyadd", lambda n: n.polyadd(A(n, V), A(n, W[:2])))
c("polysub", lambda n: n.polysub(A(n, V[:2]), A(n, W)))
c("polymul", lambda n: n.polymul(A(n, V), A(n, W[:3])))
c("polyder", lambda n: n.polyder(A(n, V), 2))
c("polyint", lambda n: n.polyint(A(n, V), 2, k=3.0))
c("polyint_default", lambda n: n.polyint(A(n, V)))
c("ediff1d", lambda n: n.ediff1d(A(n, X), to_begin=A(n, V[:2]), to_end=1.0))
c("flatnonzero", lambda n: n.flatnonzero(A(n, I)))
c("argwhere_0d", lambda n: n.argwhere(A(n, np.float32(3))))
c("select_default", lambda n: n.select([A(n, I > 2)], [A(n, I)]))
c("trace_3d", lambda n: n.trace(A(n, np.arange(24).reshape(2, 3, 4)), 1, 2, 0))
c("corrcoef_y", lambda n: n.corrcoef(A(n, V), A(n, W)))
c("cov_y_bias", lambda n: n.cov(A(n, V), A(n, W), bias=True))
c("cov_ddof", lambda n: n.cov(A(n, X), ddof=2))
c("cov_1d", lambda n: n.cov(A(n, V)))
c("unravel_oob", lambda n: n.unravel_index(A(n, np.array([-1, 20, 5])), (3, 4)))
c("cross_axis", lambda n: n.cross(A(n, V3.T), A(n, W3.T), axisa=0, axisb=0))
c("real_b", lambda n: n.real(A(n, X)))
c("conj_b", lambda n: n.conj(A(n, X)))
c("heaviside_b", lambda n: n.heaviside(A(n, np.array([-1.0, 0.0, 2.0], np.float32)), 0.5))
c("linalg_svd_uv", lambda n: n.abs(n.linalg.svd(A(n, S3))[0]))
c("linalg_matrix_rank_tol", lambda n: n.linalg.matrix_rank(A(n, np.outer(V, W)), tol=1e-3))
c("linalg_trace_off", lambda n: n.linalg.trace(A(n, X[None]), offset=1))
c("linalg_tensordot_pair", lambda n: n.linalg.tensordot(A(n, X), A(n, X), axes=(1, 1)))
c("linalg_norm_fallthrough", lambda n: n.linalg.norm(A(n, X), axis=0, keepdims=True))
c("linalg_inv_s3", lambda n: n.linalg.inv(A(n, S3)))
c("linalg_eigh_vectors", lambda n: n.abs(n.linalg.eigh(A(n, S3 + S3.T))[1]))
c("linalg_matrix_norm_nuc", lambda n: n.linalg.matrix_norm(A(n, X), ord="nuc"))
c("linalg_vector_norm_ord", lambda n: n.linalg.vector_norm(A(n, X), ord=3, axis=1))
c("issubdtype", lambda n: n.asarray([n.issubdtype(n.float32, n.floating),
                                     n.issubdtype(A(n, I).dtype, n.integer),
                                     n.issubdtype(n.int32, n.inexact),
                                     n.issubdtype(n.float16, n.number),
                                     n.issubdtype(n.int8, n.signedinteger),
                                     n.issubdtype(n.uint8, n.unsignedinteger),
                                     n.issubdtype(n.bool_, n.generic)]))
c("isdtype", lambda n: n.asarray([n.isdtype(n.float32, "real floating"),
                                  n.isdtype(n.int32, ("bool", "integral")),
                                  n.isdtype(n.int8, "unsigned integer"),
                                  n.iterable(A(n, X)), n.iterable(3.0)]))
c("euler_gamma", lambda n: n.asarray(n.euler_gamma, n.float32) * n.ones(2, n.float_) +
  n.ones(2, n.int_))
c("digitize", lambda n: n.digitize(A(n, X), A(n, np.array([-1.0, 0.0, 0.5], np.float32))))
c("digitize_right_dec", lambda n: n.digitize(A(n, X), A(n, np.array([1.0, 0.0, -1.0],
                                                                   np.float32)), right=True))
c("digitize_ties", lambda n: n.digitize(A(n, np.array([0.0, 1.0, 2.0], np.float32)),
                                        A(n, np.array([0.0, 1.0, 2.0], np.float32))))
c("ravel_multi_index", lambda n: n.ravel_multi_index((A(n, np.array([0, 2])),
                                                      A(n, np.array([3, 1]))), (3, 4)))
c("ravel_multi_index_F", lambda n: n.ravel_multi_index((A(n, np.array([0, 5])),
                                                        A(n, np.array([3, 1]))), (3, 4),
                                                       mode="clip", order="F"))
c("resize", lambda n: n.resize(A(n, V), (3, 4)))
c("compress", lambda n: n.compress(A(n, np.array([True, False, True])), A(n, X), axis=0))
c("compress_flat", lambda n: n.compress(A(n, np.array([1, 0, 1, 1])), A(n, X)))
c("extract", lambda n: n.extract(A(n, I > 1), A(n, X)))
c("choose", lambda n: n.choose(A(n, np.array([[0, 1, 2, 1]])), [A(n, X), A(n, -X), 7.0]))
c("choose_wrap", lambda n: n.choose(A(n, np.array([0, 4, -1])), [A(n, V[:3]), A(n, W[:3])],
                                    mode="wrap"))
c("piecewise", lambda n: n.piecewise(A(n, X), [A(n, X < 0), A(n, X > 0.5)],
                                     [lambda v: -v, lambda v: v * 2, 0.25]))
c("piecewise_nodefault", lambda n: n.piecewise(A(n, V), [A(n, V < 0)], [lambda v: v * v]))
c("argpartition", lambda n: n.argpartition(A(n, X), 1))
c("argpartition_ax0", lambda n: n.argpartition(A(n, I), 2, axis=0))
c("partition", lambda n: n.partition(A(n, X), 2))
c("partition_ax0", lambda n: n.partition(A(n, I), 0, axis=0))
c("trim_zeros", lambda n: n.trim_zeros(A(n, np.array([0, 0, 1, 2, 0, 3, 0]))))
c("trim_zeros_f", lambda n: n.trim_zeros(A(n, np.array([0, 0, 1, 2, 0])), "f"))
c("insert", lambda n: n.insert(A(n, V), 2, 9.0))
c("insert_many", lambda n: n.insert(A(n, V), A(n, np.array([0, 2, 2, 5])),
                                    A(n, np.array([1.0, 2.0, 3.0, 4.0], np.float32))))
c("insert_axis", lambda n: n.insert(A(n, X), 1, A(n, W[:3]), axis=1))
c("insert_axis0", lambda n: n.insert(A(n, X), -1, 5.0, axis=0))
c("insert_none", lambda n: n.insert(A(n, I), 3, 0))
c("delete", lambda n: n.delete(A(n, V), 1))
c("delete_many", lambda n: n.delete(A(n, X), A(n, np.array([0, 2])), axis=1))
c("delete_slice", lambda n: n.delete(A(n, X), slice(None, None, 2), axis=0))
c("setdiff1d", lambda n: n.setdiff1d(A(n, J), A(n, np.array([1, 5]))))
c("union1d", lambda n: n.union1d(A(n, J), A(n, np.array([7, 1]))))
c("setxor1d", lambda n: n.setxor1d(A(n, J), A(n, np.array([7, 1]))))
c("intersect1d", lambda n: n.intersect1d(A(n, J), A(n, np.array([7, 1, 3]))))
c("intersect1d_idx", lambda n: n.intersect1d(A(n, J), A(n, np.array([7, 1, 3])),
                                             return_indices=True))
c("histogram2d", lambda n: n.histogram2d(A(n, V), A(n, W), bins=3))
c("histogram2d_range", lambda n: n.histogram2d(A(n, V), A(n, W), bins=(2, 3),
                                               range=[(-1, 1), (-2, 2)], density=True))
c("histogramdd", lambda n: n.histogramdd(A(n, X[:, :2]), bins=2))
c("histogramdd_w", lambda n: n.histogramdd(A(n, T3[:, :, 0].T), bins=(2, 3, 2),
                                           weights=A(n, V[:4])))
c("mgrid", lambda n: n.mgrid[0:3, 1:5:2])
c("mgrid_count", lambda n: n.mgrid[0:1:5j])
c("ogrid", lambda n: n.ogrid[0:3, 0:2])
c("ix_", lambda n: n.ix_(A(n, np.array([0, 2])), A(n, np.array([1, 3, 0]))))
c("apply_along_axis", lambda n: n.apply_along_axis(lambda v: n.sum(v * v), 1, A(n, X)))
c("apply_along_axis_vec", lambda n: n.apply_along_axis(lambda v: n.flip(v) * 2, 0, A(n, X)))
c("vectorize", lambda n: n.vectorize(lambda a, b: a * b + 1.0)(A(n, X), A(n, V[:4])))
c("block", lambda n: n.block([[A(n, X), A(n, X[:, :1])], [A(n, X[:1]), A(n, X[:1, :1])]]))
c("block_1d", lambda n: n.block([A(n, V), A(n, W)]))
c("spacing", lambda n: n.spacing(A(n, X)))
c("polyfit", lambda n: n.polyfit(A(n, np.arange(6.0, dtype=np.float32)),
                                 A(n, np.arange(6.0, dtype=np.float32) ** 2 - 3), 2))
c("polyfit_w", lambda n: n.polyfit(A(n, V), A(n, W), 1, w=A(n, P[0, :1] + V * 0 + 1)))
c("put_along_axis", lambda n: n.put_along_axis(A(n, X), A(n, np.array([[1], [0], [3]])),
                                               A(n, np.float32(9.0)), 1, inplace=False))
c("single_s_", lambda n: n.asarray(X, n.single)[n.s_[1:, ::2]][n.index_exp[:1]])
c("array_equiv", lambda n: n.asarray([n.array_equiv(A(n, X[:1]), A(n, X[:1] + 0 * X)),
                                      n.array_equiv(A(n, X), A(n, X[:1])),
                                      n.array_equiv(A(n, V), A(n, V + 1))]))
c("can_cast", lambda n: n.asarray([n.can_cast(n.int8, n.float32), n.can_cast(n.float32, n.int32),
                                   n.can_cast(n.float32, n.int32, "unsafe")]))
c("iscomplex", lambda n: n.iscomplex(A(n, X)))
c("fromfunction", lambda n: n.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
c("fromfunction_int", lambda n: n.fromfunction(lambda i, j: i - j, (2, 3), dtype=n.int32))
c("unwrap", lambda n: n.unwrap(A(n, np.cumsum(np.abs(X) * 3, axis=1).astype(np.float32))))
c("unwrap_axis0_period", lambda n: n.unwrap(A(n, np.cumsum(X * 5, axis=0).astype(np.float32)),
                                            axis=0, period=4.0))
c("poly", lambda n: n.poly(A(n, V[:3])))
c("polydiv", lambda n: n.polydiv(A(n, V), A(n, W[:3])))
c("polydiv_short", lambda n: n.polydiv(A(n, V[:2]), A(n, W[:3])))
c("mask_indices", lambda n: n.mask_indices(3, n.triu, 1))
c("place", lambda n: n.place(A(n, X), A(n, X > 0), A(n, V[:2]), inplace=False))
c("bitwise_count", lambda n: n.bitwise_count(A(n, np.array([0, 7, -3, 1023]))))
c("apply_over_axes", lambda n: n.apply_over_axes(n.sum, A(n, T3), [0, 2]))
c("nan_to_num_kw", lambda n: n.nan_to_num(A(n, np.array([np.nan, np.inf, 1.0], np.float32)),
                                          True, 2.0, neginf=-3.0))
c("nan_to_num_int", lambda n: n.nan_to_num(A(n, I)))
c("logspace_default", lambda n: n.logspace(0, 2))
c("logspace_pos", lambda n: n.logspace(0.0, 1.0, 4, False, 2.0))
c("gradient_spacing", lambda n: n.gradient(A(n, X), 2.0))
c("gradient_per_axis", lambda n: n.gradient(A(n, X), 2.0, 0.5))
c("gradient_axis", lambda n: n.gradient(A(n, X), axis=1))
c("gradient_coords", lambda n: n.gradient(A(n, V), A(n, np.cumsum(P[0, :1] + P.ravel()[:5]))))
c("nansum_pos", lambda n: n.nansum(A(n, NX), 0, n.float32, None, True))
c("nansum_int", lambda n: n.nansum(A(n, I), 1))
c("nanmean_pos", lambda n: n.nanmean(A(n, NX), 1, None, None, True))
c("nanmean_where", lambda n: n.nanmean(A(n, NX), where=A(n, X > -0.5)))
c("median_positional", lambda n: n.median(A(n, X), 0, None, False, True))
c("quantile_positional", lambda n: n.quantile(A(n, X), 0.3, 1, None, False, "linear", True))
c("percentile_method", lambda n: n.percentile(A(n, X), 40, 0, method="nearest"))
c("nanprod_dtype", lambda n: n.nanprod(A(n, NX), 0, n.float32))
c("ptp_positional", lambda n: n.ptp(A(n, X), 0, None, True))
c("stack_dtype", lambda n: n.stack([A(n, I), A(n, I)], 1, None, n.float32))
c("take_clip", lambda n: n.take(A(n, X), A(n, np.array([0, 7, -9])), 1, None, "clip"))
c("take_wrap", lambda n: n.take(A(n, V), A(n, np.array([0, 7, -9])), mode="wrap"))
c("take_neg", lambda n: n.take(A(n, V), A(n, np.array([-1, -5]))))
c("clip_int_float", lambda n: n.clip(A(n, I), 0.5, 2.5))
c("clip_int_arr", lambda n: n.clip(A(n, I), A(n, X)))
c("clip_int_int", lambda n: n.clip(A(n, I), 1))
c("where_scalars", lambda n: n.where(A(n, I) > 1, 1, 0))
c("where_int_float", lambda n: n.where(A(n, I) > 1, A(n, I), 0.5))
c("where_float_int", lambda n: n.where(A(n, I) > 1, 2, A(n, X)))
c("where_scalar_mix", lambda n: n.where(A(n, I) > 1, 2, 0.5))
c("sum_initial_int", lambda n: n.sum(A(n, I), initial=0.5))
c("prod_initial", lambda n: n.prod(A(n, I) + 1, axis=0, initial=2))
c("eye_int", lambda n: n.eye(3, dtype=int))
c("zeros_float64", lambda n: n.zeros(3, n.float64))
c("asarray_int64_dtype", lambda n: n.asarray(I, dtype=n.int64))
c("arange_float", lambda n: n.arange(4, dtype=float))
c("argmax_bool", lambda n: n.argmax(A(n, I > 1), axis=1))
c("argmin_bool", lambda n: n.argmin(A(n, I > 1)))
c("sign_nan_zero", lambda n: n.sign(A(n, np.array([-0.0, 0.0, np.nan, -2.0, 3.0],
                                                   np.float32))))
c("linalg_lstsq_full", lambda n: n.linalg.lstsq(A(n, X.T), A(n, V[:4])))
c("linalg_lstsq_2d_rcond", lambda n: n.linalg.lstsq(A(n, X.T), A(n, X.T[:, :2]), 1e-3))
c("linalg_lstsq_wide", lambda n: n.linalg.lstsq(A(n, X), A(n, V[:3])))
c("linalg_pinv_rtol", lambda n: n.linalg.pinv(A(n, X), 0.3))
c("linalg_matrix_power_neg", lambda n: n.linalg.matrix_power(A(n, S3), -2))
c("linalg_solve_batch", lambda n: n.linalg.solve(A(n, np.stack([S3, S3.T]) + 3 * np.eye(3)),
                                                  A(n, V3[:2, :, None])))
c("linalg_solve_bcast_vec", lambda n: n.linalg.solve(A(n, np.stack([S3, S3.T])), A(n, V[:3])))
c("heaviside_nan", lambda n: n.heaviside(A(n, np.array([np.nan, -0.0, 0.0, 2.0], np.float32)),
                                         A(n, np.array([1.0, 0.5, np.nan, 0.5], np.float32))))


def _grad(n):
    return jax.grad if n is jnp else pf.grad


# gradients, through the fallback and the composites, with jax.grad's
G: dict = {}
XG = np.array([[-1.5, 0.0, 0.3, 2.0], [0.7, -0.2, 1.1, -3.0], [0.25, 0.5, -0.5, 1.0]],
              np.float32)
for u in ("sin cos tan arcsin arctan sinh cosh tanh arcsinh exp exp2 expm1 log1p sqrt square "
          "sign trunc ceil floor round rint reciprocal sinc deg2rad rad2deg cbrt fabs "
          "degrees radians nan_to_num positive negative i0").split():
    shift = 4.0 if u in ("sqrt", "reciprocal") else 0.0
    scale = 0.25 if u in ("arcsin",) else 1.0
    G[u] = (lambda n, u=u, s=shift, k=scale: _grad(n)(
        lambda v: n.sum(getattr(n, u)(v * k + s)))(n.asarray(XG)))
for u in ("log", "log2", "log10", "arccosh"):
    G[u] = lambda n, u=u: _grad(n)(lambda v: n.sum(getattr(n, u)(v * v + 1.5)))(n.asarray(XG))
G["arccos"] = lambda n: _grad(n)(lambda v: n.sum(n.arccos(v * 0.25)))(n.asarray(XG))
G["arctanh"] = lambda n: _grad(n)(lambda v: n.sum(n.arctanh(v * 0.25)))(n.asarray(XG))
for b in ("add subtract multiply divide true_divide maximum minimum fmax fmin arctan2 hypot "
          "copysign logaddexp logaddexp2 power pow remainder fmod float_power").split():
    G[b] = (lambda n, b=b: _grad(n)(lambda u, v: n.sum(getattr(n, b)(u, v) * n.asarray(XG)),
                                    argnums=(0, 1))(n.asarray(P), n.asarray(P[::-1])))
G["maximum_ties"] = lambda n: _grad(n)(lambda u, v: n.sum(n.maximum(u, v)), argnums=(0, 1))(
    n.asarray(XG), n.asarray(np.where(XG > 0, XG, 0.0)))
G["clip_edges"] = lambda n: _grad(n)(lambda v: n.sum(n.clip(v, -0.5, 0.5)))(n.asarray(XG))
G["abs_0"] = lambda n: _grad(n)(lambda v: n.sum(n.abs(v)))(n.asarray(XG))
G["interp"] = lambda n: _grad(n)(lambda x, xp, fp: n.sum(n.interp(x, xp, fp) ** 2),
                                 argnums=(0, 1, 2))(
    n.asarray(np.linspace(-2, 2, 9, dtype=np.float32)), n.asarray(np.sort(V)), n.asarray(W))
G["polyval"] = lambda n: _grad(n)(lambda p, x: n.sum(n.polyval(p, x)), argnums=(0, 1))(
    n.asarray(V), n.asarray(XG))
G["convolve"] = lambda n: _grad(n)(lambda a, v: n.sum(n.convolve(a, v) * n.arange(7.0)),
                                   argnums=(0, 1))(n.asarray(V), n.asarray(W[:3]))
G["correlate_same"] = lambda n: _grad(n)(lambda a, v: n.sum(n.correlate(a, v, "same") ** 2),
                                         argnums=(0, 1))(n.asarray(V[:3]), n.asarray(W))
for mode in ("reflect", "symmetric", "edge", "wrap", "mean", "maximum"):
    G["pad_" + mode] = lambda n, m=mode: _grad(n)(
        lambda v: n.sum(n.pad(v, ((2, 1), (1, 3)), mode=m) * n.arange(48.0).reshape(6, 8)))(
        n.asarray(X))
G["bincount_w"] = lambda n: _grad(n)(lambda w: n.sum(n.bincount(
    n.asarray(J), w, length=6) * n.arange(6.0)))(n.asarray(V))
G["tensordot"] = lambda n: _grad(n)(lambda a: n.sum(n.tensordot(a, a, axes=([1], [1]))))(
    n.asarray(X))
G["fill_diagonal"] = lambda n: _grad(n)(lambda a, v: n.sum(
    n.fill_diagonal(a, v, inplace=False) * n.arange(12.0).reshape(3, 4)), argnums=(0, 1))(
    n.asarray(X), n.asarray(np.float32(2.0)))
G["histogram_w"] = lambda n: _grad(n)(lambda w: n.sum(n.histogram(
    n.asarray(V), 3, weights=w)[0] * n.arange(3.0)))(n.asarray(W))
G["cross"] = lambda n: _grad(n)(lambda a: n.sum(n.cross(a, n.asarray(W3))))(n.asarray(V3))
G["kron"] = lambda n: _grad(n)(lambda a: n.sum(n.kron(a, a) * n.arange(16.0).reshape(4, 4)))(
    n.asarray(S3[:2, :2]))
G["diff_prepend"] = lambda n: _grad(n)(lambda a: n.sum(n.diff(a, 2, prepend=0.0) ** 2))(
    n.asarray(V))
G["nanvar"] = lambda n: _grad(n)(lambda a: n.nansum(n.nanvar(a, axis=0)))(n.asarray(NX))
G["nanmax"] = lambda n: _grad(n)(lambda a: n.sum(n.nanmax(a, axis=1)))(n.asarray(NX))
G["cov"] = lambda n: _grad(n)(lambda a: n.sum(n.cov(a) * n.arange(9.0).reshape(3, 3)))(
    n.asarray(X))
G["trapezoid"] = lambda n: _grad(n)(lambda a: n.trapezoid(a, dx=0.5))(n.asarray(V))
G["logsumexp_mean_std"] = lambda n: _grad(n)(lambda a: n.std(a) + n.mean(a ** 2))(n.asarray(X))
G["unique_values"] = lambda n: _grad(n)(lambda a: n.sum(n.unique(a) * n.arange(4.0)))(
    n.asarray(np.array([2.0, 1.0, 2.0, 3.0, 0.5], np.float32)))
G["unique_size"] = lambda n: _grad(n)(lambda a: n.sum(n.unique(a, size=5) * n.arange(5.0)))(
    n.asarray(np.array([2.0, 1.0, 2.0, 3.0, 0.5], np.float32)))
G["piecewise"] = lambda n: _grad(n)(lambda a: n.sum(n.piecewise(
    a, [a < 0, a > 0.5], [lambda v: v * v, lambda v: n.sin(v), 1.0])))(n.asarray(XG))
G["insert_delete"] = lambda n: _grad(n)(lambda a, v: n.sum(n.delete(n.insert(
    a, 1, v, axis=1), 0, axis=0) * n.arange(10.0).reshape(2, 5)), argnums=(0, 1))(
    n.asarray(X), n.asarray(W[:3]))
G["partition"] = lambda n: _grad(n)(lambda a: n.sum(n.partition(a, 1) * n.arange(4.0)))(
    n.asarray(X))
G["polyfit"] = lambda n: _grad(n)(lambda y: n.sum(n.polyfit(
    n.arange(6.0), y, 2) * n.asarray([1.0, 2.0, 3.0])))(n.asarray(np.float32([0, 1, 3, 2, 5, 4])))
G["unwrap"] = lambda n: _grad(n)(lambda a: n.sum(n.unwrap(a * 4) ** 2))(n.asarray(V))
G["choose"] = lambda n: _grad(n)(lambda a, b: n.sum(n.choose(
    n.asarray(np.array([0, 1, 1, 0])), [a, b]) * n.arange(4.0)), argnums=(0, 1))(
    n.asarray(X[0]), n.asarray(X[1]))
G["nanmean"] = lambda n: _grad(n)(lambda a: n.sum(n.nanmean(a, axis=0)))(n.asarray(NX))
G["gradient"] = lambda n: _grad(n)(lambda a: n.sum(n.gradient(a, 0.5)[1] ** 2))(n.asarray(X))
G["sign"] = lambda n: _grad(n)(lambda a: n.sum(n.sign(a) * a))(
    n.asarray(np.float32([-1.0, 0.0, 2.0])))
G["lstsq"] = lambda n: _grad(n)(lambda a, b: n.sum(n.linalg.lstsq(a, b)[0] ** 2),
                                argnums=(0, 1))(n.asarray(X.T), n.asarray(V[:4]))
G["copysign_at_0"] = lambda n: _grad(n)(lambda a, b: n.sum(n.copysign(a, b)), argnums=(0, 1))(
    n.asarray(np.float32([0.0, 1.0, -2.0, 0.0])), n.asarray(np.float32([0.0, -1.0, 1.0, -0.0])))
G["einsum"] = lambda n: _grad(n)(lambda a: n.sum(n.einsum("ij,kj->ik", a, a)))(n.asarray(X))
G["round_dec"] = lambda n: _grad(n)(lambda a: n.sum(n.round(a, 2)))(n.asarray(X))


def _leaves(tree):
    if isinstance(tree, list | tuple):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


def _compare(got, want, rtol=2e-5, atol=2e-5):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        w = np.asarray(w)
        g = g.numpy() if isinstance(g, pf.Tensor) else np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(C))
def test_value_matches_jax_numpy(name: str) -> None:
    _compare(C[name](pn), C[name](jnp))


@pytest.mark.parametrize("name", sorted(G))
def test_grad_matches_jax_grad(name: str) -> None:
    _compare(G[name](pn), G[name](jnp), rtol=1e-4, atol=1e-4)


def _case_names() -> set[str]:
    import inspect
    names: set[str] = set()
    for f in [*C.values(), *G.values()]:
        src = inspect.getsource(f)
        names.update(w.strip("\"'") for w in src.replace("(", " ").replace(")", " ")
                     .replace(",", " ").split())
        code = f.__code__
        names.update(code.co_names)
        for d in f.__defaults__ or ():
            if isinstance(d, str):
                names.add(d)
    return names


def test_every_shared_name_has_a_case() -> None:
    """A name let through to pf's top level is one this module calls."""
    names = _case_names()
    unchecked = sorted(n for n in pn.SHARED_WITH_PF if n not in names and
                       not isinstance(getattr(pf, n), type(pf.float32)) and n not in (
                           "bool", "finfo", "iinfo"))
    assert not unchecked, unchecked


def test_unchecked_torch_names_raise() -> None:
    """A torch name with numpy's spelling but not numpy's meaning is refused,
    not answered with torch's semantics."""
    for name in ("addmm", "stft", "from_dlpack", "randn", "conv1d", "kthvalue"):
        with pytest.raises(AttributeError, match=f"pf.numpy.{name} is not implemented"):
            getattr(pn, name)
    with pytest.raises(AttributeError, match="pf.numpy.linalg.eig is not implemented"):
        pn.linalg.eig  # noqa: B018


def test_jax_numpy_public_names_are_answered_or_refused() -> None:
    """Every public jax.numpy name either resolves or raises AttributeError
    (never a torch function under the numpy name)."""
    answered = []
    for name in dir(jnp):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(pn, name)
        except AttributeError:
            continue
        answered.append(name)
        module = getattr(obj, "__module__", None) or ""
        if name not in pn.SHARED_WITH_PF and callable(obj) and not isinstance(obj, type):
            assert module == "pyflame_mlir.numpy" or name in ("linalg",), (name, module)
    assert len(answered) > 250


def test_inplace_forms_refuse_as_jax() -> None:
    with pytest.raises(ValueError, match="inplace=False"):
        pn.fill_diagonal(pn.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="inplace=False"):
        pn.put(pn.zeros(3), pn.asarray([0]), 1.0)


def test_fill_diagonal_wrap_is_numpys() -> None:
    """wrap=True (JAX refuses it) is numpy's: the diagonal restarts below
    a tall matrix's gap row."""
    want = np.zeros((7, 3), np.float32)
    np.fill_diagonal(want, [1.0, 2.0], wrap=True)
    got = pn.fill_diagonal(pn.zeros((7, 3)), pn.asarray([1.0, 2.0]), wrap=True, inplace=False)
    np.testing.assert_array_equal(got.numpy(), want)


def test_gradient_edge_order_2_is_numpys() -> None:
    """edge_order=2 (JAX refuses it) gives numpy's second-order ends."""
    np.testing.assert_allclose(pn.gradient(pn.asarray(X), 0.5, axis=1, edge_order=2).numpy(),
                               np.gradient(X, 0.5, axis=1, edge_order=2), rtol=1e-5, atol=1e-6)


def test_solve_refuses_a_batch_of_vectors_as_jax() -> None:
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        pn.linalg.solve(pn.asarray(np.stack([S3, S3])), pn.asarray(V3[:2]))


def test_meshgrid_default_is_xy() -> None:
    xs, ys = pn.meshgrid(pn.arange(3), pn.arange(2))
    assert xs.shape == (2, 3) and ys.shape == (2, 3)
    np.testing.assert_array_equal(xs.numpy(), [[0, 1, 2], [0, 1, 2]])


def test_aliases_and_windows_by_name() -> None:
    """The names the string-driven cases reach, called by attribute."""
    assert pn.conjugate is pn.conj and pn.bitwise_invert is pn.invert
    assert not pn.iscomplexobj(pn.asarray(X)) and pn.isrealobj(pn.asarray(X))
    pairs = [
        (pn.unique_values(pn.asarray(J)), jnp.unique_values(J)),
        (pn.unique_inverse(pn.asarray(J))[1], jnp.unique_inverse(J)[1]),
        (pn.bartlett(5), jnp.bartlett(5)), (pn.blackman(5), jnp.blackman(5)),
        (pn.hamming(5), jnp.hamming(5)), (pn.hanning(5), jnp.hanning(5)),
        (pn.nanmin(pn.asarray(NX), axis=1), jnp.nanmin(NX, axis=1)),
        (pn.nanprod(pn.asarray(NX)), jnp.nanprod(NX)),
        (pn.nanargmax(pn.asarray(NX), axis=0), jnp.nanargmax(NX, axis=0)),
        (pn.nanargmin(pn.asarray(NX)), jnp.nanargmin(NX)),
        (pn.nancumsum(pn.asarray(NX), axis=1), jnp.nancumsum(NX, axis=1)),
        (pn.nancumprod(pn.asarray(NX)), jnp.nancumprod(NX)),
        (pn.nanstd(pn.asarray(NX), axis=0, ddof=1), jnp.nanstd(NX, axis=0, ddof=1)),
    ]
    for got, want in pairs:
        _compare(got, want)


# jax.nn's names as pf.nn answers them (pf.nn holds JAX's activations beside torch's modules)
NN: dict = {name: (lambda n, name=name: getattr(n, name)(_arr(n, X))) for name in (
    "celu elu gelu glu hard_sigmoid hard_silu hard_swish hard_tanh identity leaky_relu "
    "log1mexp log_sigmoid log_softmax logsumexp mish relu relu6 selu sigmoid silu soft_sign "
    "softmax softplus sparse_plus sparse_sigmoid squareplus standardize swish tanh").split()}
NN["softmax_axis0"] = lambda n: n.softmax(_arr(n, X), axis=0)
NN["log_softmax_axis0"] = lambda n: n.log_softmax(_arr(n, X), axis=0)
NN["logsumexp_axis"] = lambda n: n.logsumexp(_arr(n, X), axis=1, keepdims=True)
NN["gelu_exact"] = lambda n: n.gelu(_arr(n, X), approximate=False)
NN["one_hot"] = lambda n: n.one_hot(_arr(n, J), 6)
NN["one_hot_axis0"] = lambda n: n.one_hot(_arr(n, J), 6, axis=0)
NN["leaky_relu_slope"] = lambda n: n.leaky_relu(_arr(n, X), negative_slope=0.2)
NN["celu_alpha"] = lambda n: n.celu(_arr(n, X), alpha=0.5)
NN["standardize_axis0"] = lambda n: n.standardize(_arr(n, X), axis=0)
NN["glu_axis0"] = lambda n: n.glu(_arr(n, np.concatenate([X, X[:1] * 2])), axis=0)


def _arr(n, v):
    return jnp.asarray(v) if n is jax.nn else pf.numpy.asarray(v)


@pytest.mark.parametrize("name", sorted(NN))
def test_jax_nn_matches(name: str) -> None:
    _compare(NN[name](pf.nn), NN[name](jax.nn))


def test_jax_random_names_are_pf_random_names() -> None:
    """Every sampler jax.random has, pf.random has (typed-key helpers and
    the gamma primitive aside)."""
    missing = sorted(n for n in dir(jax.random) if not n.startswith("_") and
                     not hasattr(pf.random, n))
    assert missing == ["key_dtype", "key_impl", "random_gamma_p"], missing


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e30, -2.5], np.float32)
SPECIAL2 = np.array([1.0, np.nan, 0.0, -0.0, 0.0, np.inf, -np.inf, 2.0, 1e-30, 3.0], np.float32)
UNARY = ("arccos arccosh arcsin arcsinh arctan arctanh ceil cos cosh deg2rad exp exp2 expm1 "
         "floor i0 isfinite isinf isnan isneginf isposinf log log10 log1p log2 negative "
         "positive rad2deg reciprocal signbit sin sinc sinh sqrt square tan tanh trunc round "
         "rint cbrt fabs sign nan_to_num").split()
BINARY = ("add arctan2 copysign divide floor_divide fmax fmin fmod heaviside hypot logaddexp "
          "logaddexp2 maximum minimum multiply nextafter power remainder subtract true_divide "
          "equal not_equal less greater float_power").split()


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_special_values_match_jax(name: str) -> None:
    """NaN, +-inf, +-0 and extremes through the elementwise names."""
    args = (SPECIAL,) if name in UNARY else (SPECIAL, SPECIAL2)
    want = np.asarray(getattr(jnp, name)(*args))
    got = getattr(pn, name)(*(pn.asarray(a) for a in args)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5,
                               equal_nan=True)
