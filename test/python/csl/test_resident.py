"""Issue 16, resident state: a training step (forward, backward, optimizer update:
one graph) is one launch on the WSE simulator whose host traffic is the batch in and
the loss out; parameters and optimizer state stay in PE memory between launches and
are copied out only when read. Losses and weights against the reference backend."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend

BATCH, DIM, HIDDEN, OUT = 6, 8, 12, 4


@pytest.fixture
def csl():
    """The csl backend on the simulator (options restored after the test)."""
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator")
    try:
        yield csl_backend
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


def _model(seed: int = 0) -> pf.nn.Module:
    rng = np.random.default_rng(seed)
    model = pf.nn.Sequential(pf.nn.Linear(DIM, HIDDEN), pf.nn.ReLU(), pf.nn.Linear(HIDDEN, OUT))
    for p in model.parameters():
        p.data = pf.tensor((rng.standard_normal(p.shape) * 0.3).astype(np.float32))
    return model


def _batches(steps: int, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((BATCH, DIM)).astype(np.float32),
             rng.standard_normal((BATCH, OUT)).astype(np.float32)) for _ in range(steps)]


def _optimizer(name: str, model: pf.nn.Module) -> pf.optim.Optimizer:
    if name == "sgd":
        return pf.optim.SGD(model.parameters(), lr=0.05)
    if name == "momentum":  # its first step is a graph of its own (the buffer starts)
        return pf.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return pf.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)


def _train(csl, backend: str, opt_name: str, steps: int, grid=(1, 1), on_step=None):
    pf.set_backend(backend)
    csl.configure(grid=grid)
    model = _model()
    opt = _optimizer(opt_name, model)
    losses, runs = [], []
    for i, (x, y) in enumerate(_batches(steps)):
        opt.zero_grad()
        loss = ((model(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if backend == "csl":
            runs.append(csl.last_run())
        if on_step is not None:
            on_step(i, model, opt)
    return np.array(losses), model, opt, runs


def _param_bytes(model: pf.nn.Module) -> int:
    return sum(4 * p.numel() for p in model.parameters())


@pytest.mark.parametrize("opt_name,steps,grid", [("sgd", 20, (1, 1)), ("adamw", 20, (1, 1)),
                                                 ("momentum", 3, (2, 2))])
def test_steps_match_reference_with_weights_resident(csl, opt_name, steps, grid):
    ref, ref_model, _, _ = _train(csl, "reference", opt_name, steps)
    got, model, _, runs = _train(csl, "csl", opt_name, steps, grid=grid)
    # f32 step by step; the order of the PE's f32 sums differs from numpy's (last bits)
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-7)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    batch_bytes = 4 * (BATCH * DIM + BATCH * OUT)
    params = _param_bytes(model)
    graphs = 2 if opt_name == "momentum" else 1  # the first launch of each graph loads
    for run in runs[:graphs]:
        assert run.traffic.h2d_bytes >= batch_bytes + params
    for i, run in enumerate(runs[graphs:], graphs):
        t = run.traffic
        # the batch and the step's scalars (lr, bias corrections: < 64 B) in, the loss out
        assert batch_bytes <= t.h2d_bytes < batch_bytes + 64, t
        # ... and after the last step, the weights read above (on demand, once)
        assert t.d2h_bytes == 4 + (params if i == steps - 1 else 0), t
        assert run.resident_bytes >= params
    assert runs[-1].program.resident  # state shares its input's buffer: updated in place


def test_reading_parameters_copies_them_out_on_demand(csl):
    """state_dict() mid-training copies the weights out (d2h) without a copy back in;
    reading a gradient works until the next step overwrites its buffer."""
    seen = {}

    def read(i, model, opt):
        if i == 2:
            seen["state"] = {k: v.numpy().copy() for k, v in model.state_dict().items()}
            seen["grad"] = model[0].weight.grad.numpy().copy()

    ref_reads = {}

    def ref_read(i, model, opt):
        if i == 2:
            ref_reads["state"] = {k: v.numpy().copy() for k, v in model.state_dict().items()}
            ref_reads["grad"] = model[0].weight.grad.numpy().copy()

    ref, *_ = _train(csl, "reference", "adamw", 5, on_step=ref_read)
    got, model, _, runs = _train(csl, "csl", "adamw", 5, on_step=read)
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-7)
    for k, v in ref_reads["state"].items():
        np.testing.assert_allclose(seen["state"][k], v, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(seen["grad"], ref_reads["grad"], rtol=1e-5, atol=1e-7)
    # the reads happened after step 2's launch: counted in its traffic, not copied back
    assert runs[2].traffic.d2h_bytes >= _param_bytes(model)
    assert runs[3].traffic.h2d_bytes < 4 * BATCH * (DIM + OUT) + 64


def test_host_writes_are_copied_in_never_stale(csl):
    """load_state_dict, p.data = ..., and writing into a copied-out array: the next
    step uses the host's values, as the reference backend does."""
    def edit(i, model, opt):
        if i == 1:
            sd = model.state_dict()
            model.load_state_dict({k: v.numpy() * 0.5 for k, v in sd.items()})
        if i == 2:
            model[2].bias.data = pf.full([OUT], 0.25)
        if i == 3:
            model[0].bias.numpy()[:] = 0.125  # a write into the array copied out

    ref, ref_model, *_ = _train(csl, "reference", "sgd", 6, on_step=edit)
    got, model, _, runs = _train(csl, "csl", "sgd", 6, on_step=edit)
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-7)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    batch = 4 * BATCH * (DIM + OUT)
    assert runs[2].traffic.h2d_bytes >= batch + _param_bytes(model)  # all reloaded
    assert runs[3].traffic.h2d_bytes >= batch + 4 * OUT  # the new bias
    assert runs[4].traffic.h2d_bytes >= batch + 4 * HIDDEN  # the edited copy
    assert runs[5].traffic.h2d_bytes < batch + 64  # resident again


def test_a_value_overwritten_on_the_device_raises(csl):
    """A gradient kept past the next step was overwritten in PE memory: reading it
    raises (it is never silently the next step's value)."""
    pf.set_backend("csl")
    csl.configure(grid=(1, 1))
    model = _model()
    opt = pf.optim.SGD(model.parameters(), lr=0.1)
    grads = []
    for x, y in _batches(2):
        opt.zero_grad()
        loss = ((model(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
        loss.backward()
        grads.append(model[0].weight.grad)
        opt.step()
        loss.item()
    with pytest.raises(RuntimeError, match="overwritten on the device"):
        grads[0].numpy()
    assert np.isfinite(grads[1].numpy()).all()


def test_switching_backend_copies_resident_weights_out(csl):
    _, model, _, _ = _train(csl, "csl", "sgd", 3)
    expected = [p.numpy().copy() for p in model.parameters()]
    _, model2, _, _ = _train(csl, "csl", "sgd", 3)
    pf.set_backend("reference")
    x = pf.tensor(_batches(1, seed=5)[0][0])
    out = model2(x).numpy()
    w1, b1, w2, b2 = expected
    np.testing.assert_allclose(out, np.maximum(x.numpy() @ w1.T + b1, 0) @ w2.T + b2,
                               rtol=1e-5, atol=1e-6)


def test_emitted_run_py_trains_with_the_state_resident(csl, tmp_path, monkeypatch):
    """pf.export_csl of a training step: run.py --steps 3, unchanged on the simulator's
    SdkRuntime, loads the weights once, streams the batches, copies the loss out each
    step and the weights at the end; losses and weights as the reference backend's."""
    import json

    from pyflame_mlir.runtime.wse.compile import compile_program
    from pyflame_mlir.runtime.wse.run_host import run_script
    from pyflame_mlir.runtime.wse.sdkruntime import SdkRuntime

    steps = 3
    batches = _batches(steps)
    ref, ref_model, _, _ = _train(csl, "reference", "sgd", steps)
    pf.set_backend("csl")
    csl.configure(grid=(2, 2))
    model = _model()
    initial = {tuple(p.shape): p.numpy().copy() for p in model.parameters()}
    opt = _optimizer("sgd", model)
    x, y = batches[0]
    loss = ((model(pf.tensor(x)) - pf.tensor(y)) ** 2).mean()
    loss.backward()
    opt.step()
    proj, _ = pf.export_csl(loss, tmp_path / "proj", grid=(2, 2))
    spec = json.loads((proj / "program.json").read_text())
    assert spec["requested"] == 1 and len(spec["resident"]) == 4
    stacked = {(BATCH, DIM): np.stack([b[0] for b in batches]),
               (BATCH, OUT): np.stack([b[1] for b in batches])}
    for io in spec["inputs"]:
        arr = np.load(proj / f"{io['name']}.npy")
        if arr.shape in stacked:
            np.save(proj / f"{io['name']}.npy", stacked[arr.shape])
    traffic = []
    stop = SdkRuntime.stop
    monkeypatch.setattr(SdkRuntime, "stop", lambda rt: (traffic.extend(rt.traffic), stop(rt)))
    compiled = compile_program(proj / "program.mlir", tmp_path / "out")
    run_script(proj / "run.py", ["--name", str(compiled), "--steps", str(steps)], quiet=True)
    np.testing.assert_allclose(np.load(proj / "out_0.npy"), ref, rtol=2e-6, atol=1e-7)
    final = {tuple(p.shape): p.numpy() for p in ref_model.parameters()}
    for i, k in spec["resident"]:
        shape = tuple(spec["inputs"][i]["shape"])
        np.testing.assert_array_equal(np.load(proj / f"in_{i}.npy"), initial[shape])
        np.testing.assert_allclose(np.load(proj / f"out_{k}.npy"), final[shape],
                                   rtol=1e-5, atol=1e-6)
    moved = {}
    for t in traffic:
        for name, n in t.h2d.items():
            moved[name] = moved.get(name, 0) + n
    def once(io: dict) -> int:
        return 4 * int(np.prod(io["tile"])) * io["region"][2] * io["region"][3]

    for i, _ in spec["resident"]:  # the weights went in once, the batches every step
        assert moved[spec["inputs"][i]["name"]] == once(spec["inputs"][i])
    batch_in = [io for io in spec["inputs"] if tuple(io["shape"]) in stacked]
    assert len(batch_in) == 2
    assert all(moved[io["name"]] == steps * once(io) for io in batch_in)


def _through_data(form: str):
    """An ``on_step`` touching every parameter through ``.data`` after the step."""
    held = []

    def on_step(i, model, opt):
        for p in model.parameters():
            if form == "read":  # aliases taken and kept: reading .data is no write
                held.append(p.data)
                assert p.data.shape == p.shape
            else:  # WGAN-style clipping, in place through .data
                p.data.clamp_(-0.4, 0.4)
                p.data.mul_(0.999)
    return on_step


@pytest.mark.parametrize("form", ["read", "clamp"])
def test_parameter_data_keeps_weights_resident(csl, form):
    """Parameter.data taken and kept, or written in place every step: the weights
    stay in PE memory (the batch in, the loss out) and the values are the
    reference backend's. (Not yet: an op of the step reading a computed p's
    .data, or a view of it, reads a second copy of p's value: re-sent.)"""
    steps = 6
    ref, ref_model, _, _ = _train(csl, "reference", "sgd", steps, on_step=_through_data(form))
    got, model, _, runs = _train(csl, "csl", "sgd", steps, on_step=_through_data(form))
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-7)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
    batch_bytes = 4 * (BATCH * DIM + BATCH * OUT)
    graphs = 1 if form == "read" else 2  # the update through .data joins the second graph
    assert runs[0].traffic.h2d_bytes >= batch_bytes + _param_bytes(model)
    for i, run in enumerate(runs[graphs:], graphs):
        t = run.traffic
        assert batch_bytes <= t.h2d_bytes < batch_bytes + 64, (i, t)
        assert t.d2h_bytes == 4 + (_param_bytes(model) if i == steps - 1 else 0), (i, t)
        assert run.resident_bytes >= _param_bytes(model)
