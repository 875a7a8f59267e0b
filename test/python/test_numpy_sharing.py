"""Memory shared with numpy (``from_numpy``, ``as_tensor``, ``from_dlpack``,
``frombuffer``, ``Tensor.numpy()``, ``np.asarray``): pf gives torch 2.13's
observable values, lazily and eagerly (the ``mode`` fixture). Each case runs
the same program on torch and on pf; the oracle is torch's result."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _vals(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(_vals(v) for v in x)
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().tolist()
    if isinstance(x, pf.Tensor):
        return x.detach().numpy().tolist()
    return np.asarray(x).tolist()


def _same(program: Callable[[Any], Any]) -> None:
    """``program(torch)`` and ``program(pf)`` give the same values."""
    want = _vals(program(torch))
    got = _vals(program(pf))
    assert got == want, f"pf {got} != torch {want}"


def _write_after_record(lib):  # the lazy result must not see the later write
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    y = t * 2
    n += 1
    return y


def _numpy_then_update(lib):
    t = lib.from_numpy(np.ones(3, np.float32))
    n = t.numpy()
    t.add_(1)
    return n


def _from_numpy_update(lib):
    n = np.ones(3, np.float32)
    lib.from_numpy(n).add_(1)
    return n


def _view_update(lib):
    n = np.ones(4, np.float32)
    t = lib.from_numpy(n)
    t[1:].mul_(3)
    return n


def _reshape_view_setitem(lib):
    n = np.ones((2, 3), np.float32)
    r = lib.from_numpy(n).reshape(3, 2)
    r[0, 1] = 8
    return n


def _setitem(lib):
    n = np.zeros(3, np.float32)
    t = lib.from_numpy(n)
    t[0] = 4
    t[2] = t[0] + 1
    return n


def _lazy_numpy_update(lib):
    t = lib.ones(3) * 2  # a lazy tensor: .numpy() computes it, then shares its memory
    n = t.numpy()
    t.add_(1)
    return n


def _numpy_write_seen(lib):
    t = lib.ones(3) * 2
    n = t.numpy()
    n[0] = 9
    return t


def _numpy_record_write(lib):
    t = lib.ones(3)
    n = t.numpy()
    y = t * 2
    n += 1
    return y, t


def _np_asarray_update(lib):
    t = lib.ones(3)
    n = np.asarray(t)
    t.add_(1)
    return n


def _np_array_copies(lib):
    t = lib.ones(3)
    with warnings.catch_warnings():  # (torch's __array__ takes no copy=)
        warnings.simplefilter("ignore", DeprecationWarning)
        n = np.array(t)
    t.add_(1)
    return n


def _as_tensor_shares(lib):
    n = np.ones(3, np.float32)
    lib.as_tensor(n).add_(1)
    return n


def _as_tensor_other_dtype_copies(lib):
    n = np.ones(3, np.float64)
    lib.as_tensor(n, dtype=lib.float32).add_(1)
    return n


def _tensor_copies(lib):
    n = np.ones(3, np.float32)
    t = lib.tensor(n)
    t.add_(1)
    n[0] = 7
    return n, t


def _dlpack_numpy(lib):
    n = np.ones(3, np.float32)
    lib.from_dlpack(n).add_(1)
    return n


def _dlpack_between_tensors(lib):
    a = lib.ones(3)
    b = lib.from_dlpack(a)
    b.add_(1)
    return a


def _frombuffer(lib):
    buf = bytearray(np.ones(3, np.float32).tobytes())
    lib.frombuffer(buf, dtype=lib.float32).add_(1)
    return np.frombuffer(buf, np.float32)


def _update_after_record(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    y = t + 0
    t.add_(1)
    return y, n


def _copy_into(lib):
    n = np.ones(3, np.float32)
    lib.from_numpy(n).copy_(lib.ones(3) * 5)
    return n


def _detach_update(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    t.detach().add_(1)
    return n, t


def _root_update_view_follows(lib):
    n = np.arange(6, dtype=np.float32)
    t = lib.from_numpy(n)
    v = t.view(2, 3)
    t.add_(1)
    return v


def _chain(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    t.mul_(2)
    t += 1
    s = t.sum()
    n[0] = 0
    return n, s, t


def _requires_grad(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n).requires_grad_()
    y = (t * 2).sum()
    n += 1
    y.backward()
    return y, t.grad


def _saved_numpy_write(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    w = lib.ones(3, requires_grad=True)
    y = (t * w).sum()
    n += 1
    y.backward()
    return y, w.grad


CASES = [_write_after_record, _numpy_then_update, _from_numpy_update, _view_update,
         _reshape_view_setitem, _setitem, _lazy_numpy_update, _numpy_write_seen,
         _numpy_record_write, _np_asarray_update, _np_array_copies, _as_tensor_shares,
         _as_tensor_other_dtype_copies, _tensor_copies, _dlpack_numpy, _dlpack_between_tensors,
         _frombuffer, _update_after_record, _copy_into, _detach_update,
         _root_update_view_follows, _chain, _requires_grad]


@pytest.mark.parametrize("program", CASES, ids=lambda f: f.__name__.strip("_"))
def test_sharing_as_torch(program, mode):
    _same(program)


def test_update_after_record_keeps_old_state(mode):
    """An in-place update through pf (not numpy) after an op was recorded:
    the op read the old state (and the array follows the update)."""
    _same(_update_after_record)


def test_compile_reads_each_call(mode):
    f = pf.compile(lambda x: x * 2)
    n = np.ones(3, np.float32)
    t = pf.from_numpy(n)
    y1 = f(t)
    n += 1
    y2 = f(t)
    assert y1.tolist() == [2.0] * 3 and y2.tolist() == [4.0] * 3


def test_compile_in_place_writes_array(mode):
    def step(x):
        x.add_(1)
        return x * 2
    f = pf.compile(step)
    n = np.ones(3, np.float32)
    t = pf.from_numpy(n)
    f(t)
    assert n.tolist() == [2.0] * 3
    y = f(t)
    assert n.tolist() == [3.0] * 3 and y.tolist() == [6.0] * 3


def test_read_only_array_update_raises(mode):
    n = np.ones(3, np.float32)
    n.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = pf.from_numpy(n)
    with pytest.raises(ValueError, match="read-only numpy array"):
        t.add_(1)
    assert n.tolist() == [1.0] * 3 and t.tolist() == [1.0] * 3


@pytest.mark.parametrize("what", ["t_", "squeeze_", "unsqueeze_"])
def test_reshape_in_place_of_shared_raises(mode, what):
    """squeeze_/unsqueeze_/t_ of a shared tensor: not implemented (torch's
    tensor keeps its storage under a new shape), refused before any change."""
    n = np.ones((2, 1), np.float32)
    t = pf.from_numpy(n)
    with pytest.raises(NotImplementedError, match="sharing memory with a numpy array"):
        if what == "t_":
            t.t_()
        else:
            getattr(t, what)(1)
    assert t.shape == (2, 1) and n.shape == (2, 1)
    t.add_(1)
    assert n.tolist() == [[2.0], [2.0]]


def test_hand_out_copies_a_value_other_tensors_hold(mode):
    """``t.numpy()`` of a value pf also holds elsewhere (a detached alias, a
    graph) is copied once: writing the array changes ``t`` only (torch: two
    storages there)."""
    x = pf.ones(3) * 1
    y = x.clone()
    n = y.numpy()
    n += 5
    assert x.tolist() == [1.0] * 3 and y.tolist() == [6.0] * 3


def test_internal_reads_do_not_share():
    """pf's own value reads (``item``, ``tolist``, printing) mark nothing as shared."""
    from pyflame_mlir import core
    t = pf.ones(3) * 2
    t.tolist()
    str(t)
    float(t.sum())
    assert core.shared_array(t) is None and t._view is None


def _grad_then_update(lib):  # backward ran before the update (pf's vjp is lazy)
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    w = lib.ones(3, requires_grad=True)
    (t * w).sum().backward()
    t.add_(1)
    return w.grad, n


def _grad_then_numpy_write(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    w = lib.ones(3, requires_grad=True)
    (t * w * w).sum().backward()
    n += 1
    return w.grad


def _leaf_grad_then_numpy_write(lib):
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n).requires_grad_()
    (t * t).sum().backward()
    n += 1
    return t.grad


def _numpy_of_view(lib):
    n = np.arange(6, dtype=np.float32)
    t = lib.from_numpy(n)
    nv = t[2:].numpy()
    t.add_(1)
    return nv, n


def _module_buffer_loaded_from_numpy(lib):  # BatchNorm's in-place running stats
    m = lib.nn.BatchNorm1d(2)
    state = {k: lib.from_numpy(v.detach().numpy().copy())
             for k, v in torch.nn.BatchNorm1d(2).state_dict().items()}
    m.load_state_dict(state)
    m(lib.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2)))
    return m.running_mean, m.running_var, m.num_batches_tracked


def _view_then_numpy_write(lib):
    n = np.ones(3, np.float32)
    v = lib.from_numpy(n)[1:]
    n[2] = 5
    return v


def _many_reads_then_write(lib):  # each op reads the array as it is when recorded
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    a = t * 2
    n[0] = 3
    b = t + a
    n[1] = 7
    return a, b, t.sum()


@pytest.mark.parametrize("program", [_view_then_numpy_write, _many_reads_then_write,
                                     _grad_then_update, _grad_then_numpy_write,
                                     _leaf_grad_then_numpy_write, _numpy_of_view,
                                     _module_buffer_loaded_from_numpy],
                         ids=lambda f: f.__name__.strip("_"))
def test_sharing_with_autograd_and_views(program, mode):
    _same(program)


def test_sharing_ends_with_the_users_arrays(mode):
    """``t.numpy().copy()`` keeps nothing shared once pf next looks at ``t``
    (an op reading it): ``t`` is an ordinary tensor again (the fast paths);
    an array (or a numpy view of it) still held keeps it shared."""
    from pyflame_mlir import core
    t = pf.ones(3) * 2
    t.numpy().copy()
    t + 0
    assert core.shared_array(t) is None and t._view is None
    part = t.numpy()[1:]
    t + 0
    assert core.shared_array(t) is not None
    t.add_(1)
    assert part.tolist() == [3.0, 3.0]
    del part
    t + 0
    assert core.shared_array(t) is None and t._view is None
    assert t.tolist() == [3.0] * 3


def _saved_then_numpy_write(lib):  # torch's saved tensor aliases the array: backward sees it
    n = np.ones(3, np.float32)
    t = lib.from_numpy(n)
    w = lib.ones(3, requires_grad=True)
    y = (t * w).sum()
    y.item()
    n += 1
    y.backward()
    return y, w.grad


@pytest.mark.parametrize("program", [_saved_numpy_write, _saved_then_numpy_write],
                         ids=lambda f: f.__name__.strip("_"))
def test_numpy_write_between_forward_and_backward(program, mode):
    _same(program)


def test_numpy_of_a_view_of_a_lazy_root_is_read_only(lazy):
    """Lazy-only (eagerly the root is computed: the view's array shares it).
    ``.numpy()`` of a view whose root was never computed: the view's values
    alone, read-only (no evaluation of the root); an in-place update of the
    root while that array lives raises instead of leaving it stale (PyTorch's
    array would follow); once dropped, updates work."""
    r = pf.arange(6, dtype=pf.float32) * 2
    v = r[1:3]
    a = v.numpy()
    assert a.tolist() == [2.0, 4.0] and not a.flags.writeable and r.is_lazy
    with pytest.raises(ValueError):
        a[0] = 1
    with pytest.raises(NotImplementedError, match="would not follow"):
        r.add_(1)
    with pytest.raises(NotImplementedError, match="would not follow"):
        v.mul_(2)
    del a
    r.add_(1)
    assert v.tolist() == [3.0, 5.0]


def test_numpy_of_a_detached_lazy_tensor_shares(mode):
    """``w.detach().numpy()`` / ``w.data.numpy()`` of a lazy ``w`` (the logging
    idiom): the alias is ``w``'s value, so ``w`` is computed with it and the
    array shares its memory, as PyTorch's: later updates of ``w`` show in it."""
    w = pf.ones(4, requires_grad=True) * 1
    h = w.detach().numpy()
    assert h.flags.writeable
    with pf.no_grad():
        w.sub_(0.5)
    assert h.tolist() == [0.5] * 4
    d = (pf.ones(3) * 2).data
    hd = d.numpy()
    d.add_(1)
    assert hd.tolist() == [3.0] * 3


def test_numpy_of_a_view_of_a_computed_root_shares(mode):
    r = pf.arange(6, dtype=pf.float32) * 2
    r.eval()
    a = r.reshape(2, 3)[:, 1].numpy()
    assert a.flags.writeable
    r.add_(1)
    assert a.tolist() == [3.0, 9.0]
    a[0] = 0
    assert r.tolist() == [1.0, 0.0, 5.0, 7.0, 9.0, 11.0]


def test_numpy_write_seen_before_backward_raises(mode):
    """The documented difference: a numpy write between forward and backward
    that pf saw (a value read) changes torch's gradient silently; pf raises."""
    n = np.ones(3, np.float32)
    t = pf.from_numpy(n)
    w = pf.ones(3, requires_grad=True)
    y = (t * w).sum()
    n += 1
    assert t.tolist() == [2.0] * 3
    with pytest.raises(RuntimeError, match="saved for backward"):
        y.backward()


def test_compile_in_place_of_a_captured_shared_tensor(mode):
    """A compiled function updating in place a tensor it captures (not an
    argument) that shares memory with numpy: the array follows each call (the
    trace's call too), and a numpy write between calls is read by the next."""
    n = np.zeros(3, np.float32)
    acc = pf.from_numpy(n)

    def step(x):
        acc.add_(x)
        return acc * 1

    f = pf.compile(step)
    for i in range(4):
        y = f(pf.ones(3))
        assert n.tolist() == [i + 1.0] * 3 and y.tolist() == [i + 1.0] * 3
    n[:] = 10
    y = f(pf.ones(3))
    assert n.tolist() == [11.0] * 3 and y.tolist() == [11.0] * 3


def test_optimizer_state_held_through_numpy_follows(mode):
    """``m = opt.state[p]['momentum_buffer'].numpy()`` held across compiled
    steps follows the buffer (torch's shares its storage), and the steps
    give the values of an uncompiled run."""
    def run(compiled):
        w = pf.tensor(np.ones(3, np.float32), requires_grad=True)
        o = pf.optim.SGD([w], lr=0.1, momentum=0.9)

        def step(x):
            o.zero_grad()
            (w * x).sum().backward()
            o.step()

        f = pf.compile(step) if compiled else step
        f(pf.full([3], 1.0))
        m = o.state[w]["momentum_buffer"].numpy()
        seen = []
        for i in range(3):
            f(pf.full([3], i + 2.0))
            seen.append(m.tolist())
        return seen, w.tolist()

    assert run(True) == run(False)
    seen, _ = run(False)
    m = [2.9, 2.9 * 0.9 + 3, (2.9 * 0.9 + 3) * 0.9 + 4]  # momentum 0.9 over grads 1, 2, 3, 4
    np.testing.assert_allclose(seen, [[v] * 3 for v in m], rtol=1e-6)


@pytest.mark.parametrize("make", [lambda a: a[:, ::2], lambda a: a.T,
                                  lambda a: np.asfortranarray(a), lambda a: a[1:3, 2:5]],
                         ids=["strided", "transposed", "fortran", "block"])
def test_numpy_of_views_of_a_non_contiguous_array(mode, make):
    """Views of a tensor sharing a strided array: ``.numpy()`` is a numpy view
    of that array (as torch's), seeing later in-place updates; writes into it
    are seen by the tensor. (torch refuses negative strides: a[::-1] is not
    an oracle case.)"""
    for lib in (torch, pf):
        a = make(np.arange(24, dtype=np.float32).reshape(4, 6))
        x = lib.from_numpy(a)
        views = [x[::2, 1:], x.T, x[1], x[:, -1], x.T[1:, ::2]]
        arrays = [v.numpy() for v in views]
        x.mul_(2)
        arrays[0][0, 0] = -1
        got = ([v.tolist() for v in arrays], x.tolist(), a.tolist())
        if lib is torch:
            want = got
    assert got == want


def _zero_dim_views(lib):  # views of a 0-d tensor: numpy views of its one element
    n = np.array(3.0, np.float32)
    t = lib.from_numpy(n)
    a, b = t[None].numpy(), t.expand(2).numpy()
    t.add_(1)
    return a, b, n


def test_numpy_of_views_of_a_zero_dim_tensor(mode):
    _same(_zero_dim_views)
