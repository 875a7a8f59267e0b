"""torch's top-level names added by issue 14's namespace scan
(``pyflame_mlir/torch_compat.py``) against torch 2.13: process settings
round-trip as torch's, window functions' values, dtype queries, and the
top-level spellings of functional and in-place ops (argument orders
included: ``torch.batch_norm`` takes weight and bias before the stats)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

RNG = np.random.default_rng(0)


def _close(got: pf.Tensor, want: torch.Tensor, tol: float = 1e-5) -> None:
    assert list(got.shape) == list(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name: str, periodic: bool) -> None:
    for n in (0, 1, 2, 5, 8):
        got = getattr(pf, name)(n, periodic)
        want = getattr(torch, name)(n, periodic)
        assert got.dtype == pf.float32
        _close(got, want)
    _close(getattr(pf, name)(7, dtype=pf.float64), getattr(torch, name)(7, dtype=torch.float64),
           1e-12)
    with pytest.raises(RuntimeError, match="floating point"):
        getattr(pf, name)(4, dtype=pf.int64)
    with pytest.raises(RuntimeError):
        getattr(torch, name)(4, dtype=torch.int64)


def test_hamming_and_kaiser_parameters() -> None:
    _close(pf.hamming_window(9, False, 0.5, 0.5), torch.hamming_window(9, False, 0.5, 0.5))
    _close(pf.kaiser_window(9, True, 5.0), torch.kaiser_window(9, True, 5.0))


def test_settings_round_trip_as_torch() -> None:
    for lib in (pf, torch):
        before = lib.get_float32_matmul_precision()
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision(before)
        with pytest.warns(UserWarning, match="no effect"):
            lib.set_float32_matmul_precision("fast")
        assert lib.get_float32_matmul_precision() == before
        threads = lib.get_num_threads()
        lib.set_num_threads(2)
        assert lib.get_num_threads() == 2
        lib.set_num_threads(threads)
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled()
        assert lib.is_deterministic_algorithms_warn_only_enabled()
        assert lib.get_deterministic_debug_mode() == 1
        lib.set_deterministic_debug_mode("error")
        assert lib.get_deterministic_debug_mode() == 2
        lib.use_deterministic_algorithms(False)
        assert lib.get_deterministic_debug_mode() == 0
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        lib.set_warn_always(False)
        lib.set_default_device("cpu")
        assert str(lib.get_default_device()) == "cpu"
        lib.set_default_device(None)


def test_printoptions() -> None:
    x = pf.tensor([1.23456789, 2.5])
    try:
        pf.set_printoptions(precision=2)
        assert "1.23," in repr(x) and "1.2346" not in repr(x)
        pf.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(pf.arange(10))
        pf.set_printoptions(profile="full")
        assert "..." not in repr(pf.arange(2000))
    finally:
        pf.set_printoptions(profile="default")
    assert "1.2346" in repr(x)


def test_dtype_queries_as_torch() -> None:
    dts = [("float32", pf.float32, torch.float32), ("int64", pf.int64, torch.int64),
           ("bool", pf.bool, torch.bool), ("float16", pf.float16, torch.float16),
           ("int32", pf.int32, torch.int32), ("uint8", pf.uint8, torch.uint8),
           ("int8", pf.int8, torch.int8)]
    for _, a, ta in dts:
        for _, b, tb in dts:
            assert pf.can_cast(a, b) == torch.can_cast(ta, tb), (a, b)
    for dt, tdt in ((pf.float32, torch.float32), (pf.int64, torch.int64),
                    (pf.float64, torch.float64), (pf.uint8, torch.uint8), (pf.int8, torch.int8),
                    (pf.int16, torch.int16)):
        assert pf.typename(pf.zeros(1, dtype=dt)) == torch.typename(torch.zeros(1, dtype=tdt))
    s, ts = pf.scalar_tensor(3), torch.scalar_tensor(3)
    assert s.shape == () and s.dtype == pf.float32 and float(s) == float(ts)
    assert pf.scalar_tensor(2, dtype=pf.int64).dtype == pf.int64
    assert pf.is_same_size(pf.zeros(2, 3), pf.ones(2, 3)) and not pf.is_storage(pf.zeros(1))


def test_linalg_spellings() -> None:
    a, b, c = (RNG.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)])
    _close(pf.chain_matmul(*(pf.from_numpy(v) for v in (a, b, c))),
           torch.chain_matmul(*(torch.from_numpy(v) for v in (a, b, c))), 1e-10)
    x = RNG.standard_normal((2, 3, 4))
    _close(pf.frobenius_norm(pf.from_numpy(x), (-2, -1)),
           torch.frobenius_norm(torch.from_numpy(x), (-2, -1)), 1e-10)
    _close(pf.frobenius_norm(pf.from_numpy(x), (0, 2), True),
           torch.frobenius_norm(torch.from_numpy(x), (0, 2), True), 1e-10)
    _close(pf.nuclear_norm(pf.from_numpy(x[0])), torch.nuclear_norm(torch.from_numpy(x[0])),
           1e-10)


def test_functional_spellings_match_torch() -> None:
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    px, tx = pf.from_numpy(x), torch.from_numpy(x)
    _close(pf.conv2d(px, pf.from_numpy(w), None, 1, 1), torch.conv2d(tx, torch.from_numpy(w),
                                                                     None, 1, 1), 1e-4)
    _close(pf.max_pool2d(px, 2), torch.max_pool2d(tx, 2))
    _close(pf.avg_pool1d(px[:, :, 0], 2), torch.avg_pool1d(tx[:, :, 0], 2))
    got, want = pf.adaptive_max_pool1d(px[:, :, 0], 3), torch.adaptive_max_pool1d(tx[:, :, 0], 3)
    _close(got[0], want[0])
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    _close(pf.layer_norm(px, (6,)), torch.layer_norm(tx, (6,)))
    _close(pf.group_norm(px, 3), torch.group_norm(tx, 3))
    g, b = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    mean, var = np.zeros(3, np.float32), np.ones(3, np.float32)
    _close(pf.batch_norm(px, pf.from_numpy(g), pf.from_numpy(b), pf.from_numpy(mean),
                         pf.from_numpy(var), False, 0.1, 1e-5),
           torch.batch_norm(tx, torch.from_numpy(g), torch.from_numpy(b),
                            torch.from_numpy(mean), torch.from_numpy(var), False, 0.1, 1e-5,
                            False))
    _close(pf.instance_norm(px, pf.from_numpy(g), pf.from_numpy(b), None, None, True, 0.1, 1e-5,
                            False),
           torch.instance_norm(tx, torch.from_numpy(g), torch.from_numpy(b), None, None, True,
                               0.1, 1e-5, False))
    _close(pf.dropout(px, 0.3, False), torch.dropout(tx, 0.3, False))
    _close(pf.pixel_shuffle(px[:, :1].repeat(1, 4, 1, 1), 2),
           torch.pixel_shuffle(tx[:, :1].repeat(1, 4, 1, 1), 2))
    _close(pf.cosine_similarity(px, px * 2 + 1), torch.cosine_similarity(tx, tx * 2 + 1))
    _close(pf.threshold(px, 0.1, 20.0), torch.threshold(tx, 0.1, 20.0))
    _close(pf.hardshrink(px, 0.5), torch.hardshrink(tx, 0.5))
    _close(pf.prelu(px, pf.tensor([0.25])), torch.prelu(tx, torch.tensor([0.25])))


def test_in_place_spellings_update_their_argument(mode: str) -> None:
    for name in ("relu_", "sigmoid_", "exp_", "tanh_", "neg_", "clamp_", "zero_", "sqrt_"):
        x = RNG.uniform(0.1, 2, (3,)).astype(np.float32)
        px, tx = pf.from_numpy(x.copy()), torch.from_numpy(x.copy())
        args = (0.5,) if name == "clamp_" else ()
        out = getattr(pf, name)(px, *args)
        getattr(torch, name)(tx, *args)
        assert out is px
        _close(px, tx)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_spectral_matrix_norms_and_gradients_match_torch(ord: object) -> None:
    x = RNG.standard_normal((2, 3, 4))
    for dim, keepdim in (((-2, -1), False), ((0, 2), True)):
        px = pf.from_numpy(x).requires_grad_()
        tx = torch.from_numpy(x).requires_grad_()
        got = pf.linalg.matrix_norm(px, ord, dim, keepdim)
        want = torch.linalg.matrix_norm(tx, ord, dim, keepdim)
        _close(got, want, 1e-10)
        got.sum().backward()
        want.sum().backward()
        _close(px.grad, tx.grad, 1e-8)
    _close(pf.linalg.norm(pf.from_numpy(x[0]), ord), torch.linalg.norm(torch.from_numpy(x[0]),
                                                                        ord), 1e-10)
    _close(pf.linalg.cond(pf.from_numpy(x[:, :3, :3]), ord),
           torch.linalg.cond(torch.from_numpy(x[:, :3, :3]), ord), 1e-8)
