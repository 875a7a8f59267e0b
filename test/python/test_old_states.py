"""A lazy op keeps the state of each input it read, however often the input is
modified in place (and evaluated) afterwards: the values are torch's, never
"its old value is gone". Found with a BatchNorm model trained with
``loss.item()`` each step and then run in eval mode."""
import gc

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def test_reader_of_a_parameter_survives_training_steps(mode):
    m = pf.nn.Linear(4, 2)
    tm = torch.nn.Linear(4, 2)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    opt, topt = pf.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(tm.parameters(), lr=0.1)
    z, tz = m.bias * 2, tm.bias.detach() * 2
    for _ in range(3):
        loss = m(pf.ones(3, 4)).sum()
        opt.zero_grad(); loss.backward(); opt.step()  # noqa: E702
        tloss = tm(torch.ones(3, 4)).sum()
        topt.zero_grad(); tloss.backward(); topt.step()  # noqa: E702
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-6)
        gc.collect()
    np.testing.assert_allclose(z.numpy(), tz.numpy(), rtol=1e-6)
    np.testing.assert_allclose(m.bias.numpy(), tm.bias.detach().numpy(), rtol=1e-6)


def test_reader_of_a_promise_modified_twice_with_a_look_between(mode):
    a = pf.ones(3)
    x = a + 1
    y = x * 2
    x.add_(1)
    np.testing.assert_array_equal(x.numpy(), [3, 3, 3])
    x.add_(1)
    gc.collect()
    np.testing.assert_array_equal(y.numpy(), [4, 4, 4])
    np.testing.assert_array_equal(x.numpy(), [4, 4, 4])


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_batchnorm_training_with_item_then_eval(mode, opt_name):
    def build(lib):
        nn = lib.nn
        # no bias before the norm: its gradient is rounding noise, which Adam
        # would turn into steps of size lr in either library's own direction
        return nn.Sequential(nn.Linear(8, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(),
                             nn.Linear(16, 3))
    m, tm = build(pf), build(torch)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    opt = getattr(pf.optim, opt_name)(m.parameters(), lr=1e-2)
    topt = getattr(torch.optim, opt_name)(tm.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.standard_normal((5, 8)).astype(np.float32)
        y = rng.integers(0, 3, 5)
        loss = pf.nn.functional.cross_entropy(m(pf.tensor(x)), pf.tensor(y))
        opt.zero_grad(); loss.backward(); opt.step()  # noqa: E702
        tloss = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        topt.zero_grad(); tloss.backward(); topt.step()  # noqa: E702
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
        gc.collect()
    m.eval(); tm.eval()  # noqa: E702
    x = rng.standard_normal((5, 8)).astype(np.float32)
    np.testing.assert_allclose(m(pf.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m[1].running_var.numpy(), tm[1].running_var.numpy(), rtol=1e-5)


def test_losses_kept_lazy_across_optimizer_steps(mode):
    m, tm = pf.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    opt, topt = pf.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(tm.parameters(), lr=0.1)
    rng = np.random.default_rng(3)
    losses, want = [], []
    for _ in range(4):
        x = rng.random((3, 4)).astype(np.float32)
        loss = m(pf.tensor(x)).pow(2).sum()
        opt.zero_grad(); loss.backward(); opt.step()  # noqa: E702
        losses.append(loss)
        tloss = tm(torch.tensor(x)).pow(2).sum()
        topt.zero_grad(); tloss.backward(); topt.step()  # noqa: E702
        want.append(tloss.item())
        gc.collect()
    assert [v.item() for v in losses] == pytest.approx(want, rel=1e-6)


def test_an_op_reading_one_tensor_twice_keeps_its_state(mode):
    x = pf.ones(3) + 1
    y = x * x  # one state, read as both operands
    x.add_(1)
    np.testing.assert_array_equal(x.numpy(), [3, 3, 3])
    x.add_(1)
    gc.collect()
    np.testing.assert_array_equal(y.numpy(), [4, 4, 4])
