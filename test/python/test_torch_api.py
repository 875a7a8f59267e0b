"""torch's names outside the op API, against torch 2.13: ``pf.func``,
``pf.autograd.functional``, ``gradcheck``, ``pf.Generator``, the default
dtype, ``finfo``/``iinfo``, ``pf.testing.assert_close``, ``pf.cuda``."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(0)


def arr(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def close(a: pf.Tensor, b: torch.Tensor, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


# ---- pf.autograd.functional ----

def _fns(lib):  # the same function in both libraries
    def two_in_two_out(a, b):
        return (lib.sin(a)[:, None] * b).sum(0), lib.exp(a).prod()

    def one_in(a):
        return lib.tanh(a) * a.sum()

    def scalar(a, b):
        return (lib.exp(a) * (b @ a)).sum()
    return two_in_two_out, one_in, scalar


def test_jacobian_nesting_and_values_match_torch(mode) -> None:
    x, y = arr(3), arr(3, 2)
    ours, theirs = _fns(pf), _fns(torch)
    px, py, tx, ty = pf.tensor(x), pf.tensor(y), torch.tensor(x), torch.tensor(y)
    got = pf.autograd.functional.jacobian(ours[0], (px, py))
    want = torch.autograd.functional.jacobian(theirs[0], (tx, ty))
    assert len(got) == 2 and all(len(g) == 2 for g in got)
    for g_out, w_out in zip(got, want):
        for g, w in zip(g_out, w_out):
            assert tuple(g.shape) == tuple(w.shape)
            close(g, w)
    # one tensor in, one out: a tensor; forward mode gives the same
    got1 = pf.autograd.functional.jacobian(ours[1], px)
    close(got1, torch.autograd.functional.jacobian(theirs[1], tx))
    fwd = pf.autograd.functional.jacobian(ours[1], px, vectorize=True, strategy="forward-mode")
    close(fwd, torch.autograd.functional.jacobian(theirs[1], tx))
    with pytest.raises(ValueError, match="vectorize=True"):
        pf.autograd.functional.jacobian(ours[1], px, strategy="forward-mode")


def test_hessian_vjp_jvp_hvp_vhp_match_torch(mode) -> None:
    x, m, v = arr(3), arr(3, 3), arr(3)
    ours, theirs = _fns(pf), _fns(torch)
    px, pm, pv = pf.tensor(x), pf.tensor(m), pf.tensor(v)
    tx, tm, tv = torch.tensor(x), torch.tensor(m), torch.tensor(v)
    got = pf.autograd.functional.hessian(ours[2], (px, pm))
    want = torch.autograd.functional.hessian(theirs[2], (tx, tm))
    for gi, wi in zip(got, want):
        for g, w in zip(gi, wi):
            close(g, w)
    single = lambda lib: (lambda a: (lib.exp(a) * a).sum())  # noqa: E731
    close(pf.autograd.functional.hessian(single(pf), px),
          torch.autograd.functional.hessian(single(torch), tx))
    for name in ("hvp", "vhp"):
        o, r = getattr(pf.autograd.functional, name)(single(pf), px, pv)
        ot, rt = getattr(torch.autograd.functional, name)(single(torch), tx, tv)
        close(o, ot)
        close(r, rt)
    o, r = pf.autograd.functional.vjp(ours[1], px, pv)
    ot, rt = torch.autograd.functional.vjp(theirs[1], tx, tv)
    close(o, ot)
    close(r, rt)
    o, r = pf.autograd.functional.jvp(ours[0], (px, pf.tensor(m[:, :2])),
                                     (pv, pf.ones(3, 2, dtype="float64")))
    ot, rt = torch.autograd.functional.jvp(theirs[0], (tx, torch.tensor(m[:, :2])),
                                           (tv, torch.ones(3, 2, dtype=torch.float64)))
    for a, b in zip(r, rt):
        close(a, b)
    with pytest.raises(RuntimeError, match="v can only be None"):
        pf.autograd.functional.vjp(ours[1], px)
    with pytest.raises(RuntimeError, match="shape"):
        pf.autograd.functional.vjp(ours[1], px, pf.ones(4, dtype="float64"))


def test_create_graph_false_detaches() -> None:
    x = pf.tensor(arr(3)).requires_grad_()
    j = pf.autograd.functional.jacobian(lambda a: a * a, x)
    assert not j.requires_grad
    j2 = pf.autograd.functional.jacobian(lambda a: a * a, x, create_graph=True)
    g, = pf.autograd.grad(j2.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.full(3, 2.0))


# ---- gradcheck ----

class _WrongSquare(pf.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * a  # should be 2a: gradcheck must catch it


class _RightSquare(_WrongSquare):
    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return 2 * g * a


def test_gradcheck_passes_right_and_catches_wrong_backward() -> None:
    x = pf.tensor(arr(4)).requires_grad_()
    w = pf.tensor(arr(4, 2)).requires_grad_()
    assert pf.autograd.gradcheck(lambda a, b: pf.tanh(a @ b), (x, w))
    assert pf.autograd.gradcheck(lambda a: pf.sin(a) * a, x, check_forward_ad=True)
    assert pf.autograd.gradgradcheck(lambda a, b: pf.tanh(a @ b), (x, w))
    assert pf.autograd.gradcheck(_RightSquare.apply, (x,))
    with pytest.raises(pf.autograd.GradcheckError, match="Jacobian mismatch for output 0 "
                                                          "with respect to input 0"):
        pf.autograd.gradcheck(_WrongSquare.apply, (x,))
    assert pf.autograd.gradcheck(_WrongSquare.apply, (x,), raise_exception=False) is False
    with pytest.raises(ValueError, match="requires_grad=True"):
        pf.autograd.gradcheck(pf.sin, (pf.tensor(arr(2)),))
    with pytest.warns(UserWarning, match="double precision"):
        pf.autograd.gradcheck(pf.sin, (pf.tensor(arr(2).astype(np.float32)).requires_grad_(),),
                              atol=1e-2, rtol=1e-2, eps=1e-3)


# ---- pf.func ----

def test_func_grad_and_value_order_and_aux_match_torch() -> None:
    x = arr(4)

    def f(lib):
        return lambda a: ((lib.sin(a) * a).sum(), {"n": a.sum()})
    g, (v, aux) = pf.func.grad_and_value(f(pf), has_aux=True)(pf.tensor(x))
    gt, (vt, auxt) = torch.func.grad_and_value(f(torch), has_aux=True)(torch.tensor(x))
    close(g, gt)
    close(v, vt)
    close(aux["n"], auxt["n"])
    g2, aux2 = pf.func.grad(f(pf), has_aux=True)(pf.tensor(x))
    close(g2, gt)
    close(aux2["n"], auxt["n"])
    out, tangent, aux3 = pf.func.jvp(f(pf), (pf.tensor(x),), (pf.ones(4, dtype="float64"),),
                                     has_aux=True)
    outt, tant, _ = torch.func.jvp(f(torch), (torch.tensor(x),),
                                   (torch.ones(4, dtype=torch.float64),), has_aux=True)
    close(out, outt)
    close(tangent, tant)
    close(aux3["n"], auxt["n"])


def _mlp(lib):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    m = m.double()
    if lib is torch:
        return m
    ours = pf.nn.Sequential(pf.nn.Linear(3, 5), pf.nn.Tanh(), pf.nn.Linear(5, 2)).double()
    ours.load_state_dict({k: pf.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    return ours


def test_functional_call_per_example_grads_match_torch() -> None:
    """torch.func's tutorial: per-example gradients of a model with
    vmap(grad(functional_call))."""
    ours, theirs = _mlp(pf), _mlp(torch)
    x, y = arr(6, 3), arr(6, 2)

    def loss(lib, model, func):
        def f(params, xb, yb):
            out = func.functional_call(model, params, (xb[None],))
            return ((out - yb[None]) ** 2).mean()
        return f
    p_ours = {k: v.detach() for k, v in ours.named_parameters()}
    p_theirs = {k: v.detach() for k, v in theirs.named_parameters()}
    got = pf.func.vmap(pf.func.grad(loss(pf, ours, pf.func)), in_dims=(None, 0, 0))(
        p_ours, pf.tensor(x), pf.tensor(y))
    want = torch.func.vmap(torch.func.grad(loss(torch, theirs, torch.func)),
                           in_dims=(None, 0, 0))(p_theirs, torch.tensor(x), torch.tensor(y))
    assert set(got) == set(want)
    for k in want:
        close(got[k], want[k])
    # the module's own parameters are back afterwards
    assert ours[0].weight is dict(ours.named_parameters())["0.weight"]
    with pytest.raises(RuntimeError, match="unexpected key"):
        pf.func.functional_call(ours, {"nope": pf.zeros(1)}, (pf.tensor(x),))


def test_stack_module_state_ensemble_matches_a_loop() -> None:
    models = [pf.nn.Linear(3, 2).double() for _ in range(3)]
    params, buffers = pf.func.stack_module_state(models)
    assert tuple(params["weight"].shape) == (3, 2, 3) and params["weight"].requires_grad
    x = pf.tensor(arr(4, 3))
    base = pf.nn.Linear(3, 2).double()

    def run(p, b):
        return pf.func.functional_call(base, (p, b), (x,))
    got = pf.func.vmap(run)(params, buffers)
    for i, m in enumerate(models):
        np.testing.assert_allclose(got[i].numpy(), m(x).detach().numpy(), rtol=1e-12)


def test_functional_call_ties_weights() -> None:
    class Tied(pf.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = pf.nn.Linear(2, 2, bias=False)
            self.b = pf.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    m = Tied()
    w = pf.tensor(np.eye(2, dtype=np.float32) * 2)
    x = pf.tensor(np.ones((1, 2), np.float32))
    out = pf.func.functional_call(m, {"a.weight": w}, (x,))
    np.testing.assert_allclose(out.numpy(), [[4.0, 4.0]])  # both layers use w
    untied = pf.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    expect = (x.numpy() @ w.numpy().T) @ m.b.weight.detach().numpy().T
    np.testing.assert_allclose(untied.numpy(), expect, rtol=1e-6)


# ---- generators ----

def test_generators_are_reproducible_and_independent() -> None:
    g1, g2 = pf.Generator().manual_seed(7), pf.Generator().manual_seed(7)
    a = pf.randn(5, generator=g1).numpy()
    pf.manual_seed(123)
    pf.randn(100)  # the default generator does not touch g2
    assert np.array_equal(a, pf.randn(5, generator=g2).numpy())
    state = g1.get_state()
    draws = [pf.rand(3, generator=g1).numpy(), pf.randint(0, 9, (4,), generator=g1).numpy(),
             pf.randperm(6, generator=g1).numpy(),
             pf.normal(0.0, 2.0, (3,), generator=g1).numpy(),
             pf.multinomial(pf.ones(5), 3, generator=g1).numpy()]
    g1.set_state(state)
    again = [pf.rand(3, generator=g1).numpy(), pf.randint(0, 9, (4,), generator=g1).numpy(),
             pf.randperm(6, generator=g1).numpy(),
             pf.normal(0.0, 2.0, (3,), generator=g1).numpy(),
             pf.multinomial(pf.ones(5), 3, generator=g1).numpy()]
    for d, e in zip(draws, again):
        assert np.array_equal(d, e)
    assert pf.manual_seed(5) is pf.default_generator and pf.initial_seed() == 5
    s = pf.get_rng_state()
    first = pf.randn(4).numpy()
    pf.set_rng_state(s)
    assert np.array_equal(first, pf.randn(4).numpy())
    with pytest.raises(TypeError, match="pf.Generator"):
        pf.randn(2, generator=np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="device"):
        pf.Generator(device="cuda")


def test_generator_in_init_dataloader_and_inplace() -> None:
    w1, w2 = pf.zeros(3, 4), pf.zeros(3, 4)
    pf.nn.init.kaiming_uniform_(w1, generator=pf.Generator().manual_seed(1))
    pf.nn.init.kaiming_uniform_(w2, generator=pf.Generator().manual_seed(1))
    assert np.array_equal(w1.numpy(), w2.numpy()) and np.abs(w1.numpy()).max() > 0
    w1.normal_(generator=pf.Generator().manual_seed(2))
    w2.normal_(generator=pf.Generator().manual_seed(2))
    assert np.array_equal(w1.numpy(), w2.numpy())
    ds = pf.utils.data.TensorDataset(pf.arange(10))
    orders = [[int(b[0][0]) for b in pf.utils.data.DataLoader(
        ds, batch_size=1, shuffle=True, generator=pf.Generator().manual_seed(3))]
        for _ in range(2)]
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(10))


# ---- default dtype ----

@pytest.mark.parametrize("default", ["float64", "float16", "float32"])
def test_default_dtype_follows_torch(default: str) -> None:
    def made(lib):
        return {
            "tensor": lib.tensor([1.0, 2.0]).dtype, "int tensor": lib.tensor([1, 2]).dtype,
            "zeros": lib.zeros(2).dtype, "ones": lib.ones(2).dtype, "rand": lib.rand(2).dtype,
            "randn": lib.randn(2).dtype, "eye": lib.eye(2).dtype,
            "full float": lib.full((2,), 1.5).dtype, "arange float": lib.arange(0.0, 2).dtype,
            "arange int": lib.arange(3).dtype, "linspace": lib.linspace(0, 1, 3).dtype,
            "int * float": (lib.arange(3) * 0.5).dtype, "sqrt int": lib.sqrt(lib.arange(3)).dtype,
            "f32 * float": (lib.ones(2, dtype=lib.float32) * 0.5).dtype,
            "linear": lib.nn.Linear(2, 2).weight.dtype,
        }
    before = pf.get_default_dtype()
    torch_before = torch.get_default_dtype()
    try:
        pf.set_default_dtype(getattr(pf, default))
        torch.set_default_dtype(getattr(torch, default))
        ours = {k: str(v).removeprefix("pyflame.") for k, v in made(pf).items()}
        theirs = {k: str(v).removeprefix("torch.") for k, v in made(torch).items()}
        assert pf.get_default_dtype() == getattr(pf, default)
    finally:
        pf.set_default_dtype(before)
        torch.set_default_dtype(torch_before)
    assert ours == theirs
    with pytest.raises(TypeError, match="floating-point"):
        pf.set_default_dtype(pf.int64)


# ---- finfo, iinfo, small utilities ----

@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_matches_torch(name: str) -> None:
    ours, theirs = pf.finfo(getattr(pf, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.dtype == theirs.dtype


@pytest.mark.parametrize("name", ["int32", "int64"])
def test_iinfo_matches_torch(name: str) -> None:
    ours, theirs = pf.iinfo(getattr(pf, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == \
        (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    with pytest.raises(TypeError):
        pf.iinfo(pf.float32)


def test_small_utilities() -> None:
    t = pf.ones(2, 3)
    assert pf.is_tensor(t) and not pf.is_tensor(np.ones(2)) and pf.numel(t) == 6
    assert pf.finfo().dtype == "float32"
    assert not pf.cuda.is_available() and pf.cuda.device_count() == 0
    pf.cuda.manual_seed_all(0)
    with pytest.raises(RuntimeError, match="no CUDA device"):
        pf.cuda.synchronize()
    from pyflame_mlir.nn.parameter import Parameter
    assert Parameter is pf.nn.Parameter


# ---- testing.assert_close ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_assert_close_verdicts_match_torch(dtype: str) -> None:
    rng = np.random.default_rng(1)
    for scale in (0.0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2):
        a = rng.standard_normal((3, 4)).astype(dtype)
        b = (a + scale * rng.standard_normal(a.shape)).astype(dtype)
        try:
            torch.testing.assert_close(torch.tensor(a), torch.tensor(b))
            want = True
        except AssertionError:
            want = False
        try:
            pf.testing.assert_close(pf.tensor(a), pf.tensor(b))
            got = True
        except AssertionError:
            got = False
        assert got == want, (dtype, scale)


def test_assert_close_messages_and_rules() -> None:
    a = pf.tensor([1.0, 2.0, 3.0])
    pf.testing.assert_close(a, pf.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 3 \(33.3%\)"):
        pf.testing.assert_close(a, pf.tensor([1.0, 2.5, 3.0]))
    with pytest.raises(AssertionError, match="'shape' do not match"):
        pf.testing.assert_close(a, pf.tensor([1.0, 2.0]))
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        pf.testing.assert_close(a, pf.tensor([1.0, 2.0, 3.0], dtype="float64"))
    pf.testing.assert_close(a, pf.tensor([1.0, 2.0, 3.0], dtype="float64"), check_dtype=False)
    nan = pf.tensor([float("nan")])
    with pytest.raises(AssertionError):
        pf.testing.assert_close(nan, nan)
    pf.testing.assert_close(nan, nan, equal_nan=True)
    pf.testing.assert_close({"x": [a, 1.0]}, {"x": [a, 1.0]})
    with pytest.raises(ValueError, match="rtol"):
        pf.testing.assert_close(a, a, atol=1e-3)
    pf.testing.assert_close(a, pf.tensor([1.0, 2.1, 3.0]), rtol=0.0, atol=0.2)
    with pytest.raises(AssertionError, match="custom"):
        pf.testing.assert_close(a, pf.tensor([0.0, 0.0, 0.0]), msg="custom")


# ---- placement keywords, where(cond) ----

def test_creation_takes_torch_placement_keywords() -> None:
    made = [pf.zeros(2, device="cpu"), pf.randn(2, device=pf.device("cpu")),
            pf.arange(3, device="cpu"), pf.tensor([1.0], device="cpu", requires_grad=True),
            pf.full((2,), 3.0, device="cpu", pin_memory=False),
            pf.randint(0, 3, (2,), device="cpu"), pf.randperm(3, device="cpu"),
            pf.empty_like(pf.ones(2), device="cpu"), pf.eye(2, layout="torch.strided")]
    assert [tuple(t.shape) for t in made] == [(2,), (2,), (3,), (1,), (2,), (2,), (3,), (2,),
                                              (2, 2)]
    assert made[3].requires_grad
    with pytest.raises(ValueError, match="device 'cuda' is not available"):
        pf.zeros(2, device="cuda")
    with pytest.raises(ValueError, match="layout"):
        pf.zeros(2, layout="sparse_coo")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        pf.ones(2).cuda()
    with pytest.raises(RuntimeError, match="no CUDA device"):
        pf.nn.Linear(2, 2).cuda()
    assert not pf.ones(2).is_cuda


def test_where_with_the_condition_alone_is_nonzero_as_tuple() -> None:
    c = np.array([[0, 1, 1], [1, 0, 0]])
    got = pf.where(pf.tensor(c))
    want = torch.where(torch.tensor(c))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.numpy().tolist() == w.tolist()
    np.testing.assert_array_equal(
        pf.where(pf.tensor(c > 0), pf.tensor(c), -1).numpy(),
        torch.where(torch.tensor(c > 0), torch.tensor(c), -1).numpy())
    with pytest.raises(TypeError, match="condition alone"):
        pf.where(pf.tensor(c > 0), 1.0)


@pytest.mark.parametrize("out", [(1, 1), (2, 3), (3, 4), (5, 5)])
def test_adaptive_avg_pool_keeps_a_nan_in_its_regions(out) -> None:
    """torch's adaptive average pooling: a NaN spoils only the regions that
    hold it (averaging matrices spread it over the whole plane before)."""
    x = arr(2, 3, 6, 8)
    x[0, 1, 2, 5] = np.nan
    x[1, 0, 5, 0] = np.inf
    got = pf.nn.functional.adaptive_avg_pool2d(pf.tensor(x), out).numpy()
    want = F.adaptive_avg_pool2d(torch.tensor(x), out).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got1 = pf.nn.functional.adaptive_avg_pool1d(pf.tensor(x[:, :, 2]), out[1]).numpy()
    np.testing.assert_allclose(got1, F.adaptive_avg_pool1d(torch.tensor(x[:, :, 2]), out[1]),
                               rtol=1e-12, atol=1e-12)


# ---- session 10: names a user hunt found missing ----

def test_detach_in_place_as_torch() -> None:
    for lib in (torch, pf):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        assert y.detach_() is y
        (y * x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # y is a constant now
        assert not y.requires_grad and y.is_leaf and y.grad_fn is None
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            x[0:1].detach_()


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_and_put_(accumulate: bool) -> None:
    idx, src = [0, -1, 3, 3], [1.0, 2.0, 3.0, 4.0]
    theirs = torch.put(torch.zeros(2, 3), torch.tensor(idx), torch.tensor(src), accumulate)
    ours = pf.put(pf.zeros(2, 3), pf.tensor(idx), pf.tensor(src), accumulate)
    if accumulate:  # (without it, torch leaves which duplicate wins unspecified)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = pf.zeros(2, 3)
    assert x.put_(pf.tensor([1, 4]), pf.tensor([5.0, 6.0])) is x
    np.testing.assert_array_equal(x.numpy(), [[0, 5, 0], [0, 6, 0]])
    with pytest.raises(RuntimeError, match="as many elements as index"):
        pf.put(pf.zeros(3), pf.tensor([0, 1]), pf.tensor([1.0]))


@pytest.mark.parametrize("n", [None, 0, 2, 4])
@pytest.mark.parametrize("increasing", [False, True])
@pytest.mark.parametrize("data", [[1, 2, 3], [1.5, 2.0, -1.0], [True, False]])
def test_vander(n, increasing, data) -> None:
    ours = pf.vander(pf.tensor(data), N=n, increasing=increasing)
    theirs = torch.vander(torch.tensor(data), N=n, increasing=increasing)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_trace_is_torch_trace_on_a_matrix_and_the_program_tracer_on_a_function() -> None:
    m = np.arange(9.0).reshape(3, 3)
    assert pf.trace(pf.tensor(m)).item() == torch.trace(torch.tensor(m)).item() == 12.0
    assert type(pf.trace(lambda a: a * 2, pf.ones(2))).__name__ == "TracedProgram"


def test_backward_inputs_and_grad_materialize_grads_as_torch() -> None:
    got = []
    for lib in (torch, pf):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0, 6.0], requires_grad=True)
        h = a * b  # a non-leaf input gets its .grad too
        y = (h * h).sum()
        ga, gc = lib.autograd.grad(y, [a, c], materialize_grads=True, retain_graph=True)
        y.backward(inputs=[b], retain_graph=True)
        y.backward(inputs=h)
        lib.autograd.backward([(a * 2).sum()], inputs=[a])
        got.append([ga.numpy(), gc.numpy(), b.grad.numpy(), h.grad.numpy(), a.grad.numpy()])
        with pytest.raises(RuntimeError, match="cannot be empty"):
            (a * 2).sum().backward(inputs=[])
        with pytest.raises(ValueError, match="allow_unused"):
            lib.autograd.grad((a * c).sum(), [a], allow_unused=False, materialize_grads=True)
    for ours, theirs in zip(got[1], got[0]):
        np.testing.assert_array_equal(ours, theirs)


def test_numpy_argument_names_as_torch_takes_them() -> None:
    """torch's functions and Tensor methods take axis= for dim= and keepdims=
    for keepdim= (JAX and numpy code writes them)."""
    data = np.arange(12.0).reshape(3, 4)
    calls = [
        lambda L, x: L.sum(x, axis=1, keepdims=True), lambda L, x: x.mean(axis=0),
        lambda L, x: L.amax(x, axis=1), lambda L, x: x.max(axis=1).values,
        lambda L, x: x.argmax(axis=0, keepdims=True), lambda L, x: L.cat([x, x], axis=1),
        lambda L, x: L.stack([x, x], axis=2), lambda L, x: L.softmax(x, axis=1),
        lambda L, x: x.cumsum(axis=0), lambda L, x: x.std(axis=1, keepdims=True),
        lambda L, x: L.logsumexp(x, axis=0), lambda L, x: x[None].squeeze(axis=0),
        lambda L, x: L.prod(x, axis=1), lambda L, x: L.median(x, axis=1).values,
    ]
    for call in calls:
        ours, theirs = call(pf, pf.tensor(data)), call(torch, torch.tensor(data))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match="both dim= and its alias axis="):
        pf.tensor(data).sum(dim=0, axis=1)


def test_numpy_argument_names_in_linalg_and_special_as_torch():
    import torch

    x = np.arange(6.0).reshape(2, 3)
    cases = (lambda L, t: L.linalg.norm(t, axis=1),
             lambda L, t: L.linalg.vector_norm(t, axis=1, keepdims=True),
             lambda L, t: L.special.logsumexp(t, axis=1),
             lambda L, t: L.linalg.matrix_norm(t, axis=(0, 1)))
    for f in cases:
        np.testing.assert_allclose(f(pf, pf.tensor(x)).numpy(), f(torch, torch.tensor(x)).numpy())


def test_backends_switches_as_torch_without_cudnn():
    """A training script's first lines: ``torch.backends.cudnn.benchmark =
    True``; the flags hold what is set (torch's defaults first); nothing is
    available, as torch's answers on a machine without cuDNN/CUDA/MPS."""
    for name in ("enabled", "benchmark", "deterministic"):
        assert getattr(pf.backends.cudnn, name) == getattr(torch.backends.cudnn, name)
    assert pf.backends.cudnn.is_available() is False
    assert pf.backends.mps.is_available() is False and pf.backends.mps.is_built() is False
    assert pf.backends.cuda.matmul.allow_tf32 is False
    pf.backends.cudnn.benchmark = True
    pf.backends.cudnn.deterministic = True
    try:
        assert pf.backends.cudnn.benchmark and pf.backends.cudnn.deterministic
    finally:
        pf.backends.cudnn.benchmark = False
        pf.backends.cudnn.deterministic = False


def test_autograd_variable_legacy_constructor():
    """``Variable(t, requires_grad=True)`` (pre-0.4 scripts): a new leaf
    sharing ``t``'s data; every tensor is an instance of Variable."""
    from torch.autograd import Variable as TV

    from pyflame_mlir.autograd import Variable
    for lib, var in ((torch, TV), (pf, Variable)):
        x = lib.ones(2)
        v = var(x, requires_grad=True)
        assert v is not x and v.is_leaf and v.requires_grad and not x.requires_grad
        assert not var(x).requires_grad
        assert isinstance(x, var) and not isinstance(3, var)
        (v * 3).sum().backward()
        np.testing.assert_array_equal(np.asarray(v.grad.numpy()), [3.0, 3.0])
        with pytest.raises(TypeError, match="Variable data has to be a tensor"):
            var([1.0])


def test_python_float_as_a_dtype_is_double_as_torch():
    """``x.to(float)`` and ``dtype=float`` are float64 in torch (Python's float
    is a double); JAX's ``astype(float)`` and ``pf.numpy`` keep 32 bits."""
    torch = pytest.importorskip("torch")
    assert pf.ones(2).to(float).dtype == pf.float64 and torch.ones(2).to(float).dtype == \
        torch.float64
    assert pf.zeros(2, dtype=float).dtype == pf.float64
    assert pf.tensor([1, 2], dtype=float).dtype == pf.float64
    assert pf.ones(2).astype(float).dtype == pf.float32
    assert pf.numpy.zeros(2, dtype=float).dtype == pf.float32


def test_version_as_scripts_print_it():
    """``print(torch.__version__)`` opens many tutorials: the installed
    distribution's version string; other missing names still raise."""
    from importlib.metadata import version

    assert pf.__version__ == version("pyflame-mlir")
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        pf.not_a_name  # noqa: B018
