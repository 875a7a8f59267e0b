"""Whole short programs from PyTorch's tutorials and pytorch/examples, written
once against a module ``T`` and run with ``T = torch`` and ``T = pyflame_mlir``
from the same state dict and data: the losses step by step and the final
parameters must agree (float32, rtol ~1e-5)."""
import math
import warnings

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _run_both(prog):
    """Runs ``prog(T, weights)`` with torch (recording its initial state
    dicts in ``weights``), then with pf (loading them)."""
    weights: list = []
    ref = prog(torch, weights)
    got = prog(pf, weights)
    return ref, got


def _sync(T, model, weights, i):
    if len(weights) <= i:
        weights.append({k: v.detach().numpy().copy() for k, v in model.state_dict().items()})
    else:
        model.load_state_dict({k: T.tensor(v) for k, v in weights[i].items()})
    return model


def _assert_same(ref, got, rtol=2e-5, atol=1e-6):
    assert len(ref) == len(got)
    for i, (a, b) in enumerate(zip(ref, got)):
        if isinstance(a, str):
            assert a == b, f"item {i}"
            continue
        a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
        b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=f"item {i}")


def test_classic_mnist_implicit_log_softmax_dim():
    """The classic MNIST example (before 2019) calls ``F.log_softmax(x)`` and
    the old seq2seq tutorial ``F.softmax(x)`` without ``dim``: torch picks dim 0
    for 0-, 1- and 3-d inputs and dim 1 otherwise, with a deprecation warning."""
    rng = np.random.default_rng(0)
    data = rng.random((32, 1, 16, 16), dtype=np.float32)
    target = rng.integers(0, 10, 32)

    def prog(T, weights):
        nn, F = T.nn, T.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
                self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
                self.fc1 = nn.Linear(32, 20)
                self.fc2 = nn.Linear(20, 10)

            def forward(self, x):
                x = F.relu(F.max_pool2d(self.conv1(x), 2))
                x = F.relu(F.max_pool2d(self.conv2(x), 2))
                x = x.view(-1, 32)
                x = F.relu(self.fc1(x))
                return F.log_softmax(self.fc2(x))

        model = _sync(T, Net(), weights, 0)
        optimizer = T.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
        out = []
        for i in range(0, 32, 8):
            x, y = T.tensor(data[i:i + 8]), T.tensor(target[i:i + 8])
            optimizer.zero_grad()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                output = model(x)
            assert any("Implicit dimension choice for log_softmax" in str(m.message) for m in w)
            loss = F.nll_loss(output, y)
            loss.backward()
            optimizer.step()
            out.append(loss.item())
        v = T.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out += [F.softmax(v), F.softmax(v[0]), F.log_softmax(v[None]), F.softmin(v),
                    nn.Softmax()(v), nn.LogSoftmax()(v[None])]
        return out + list(model.parameters())

    ref, got = _run_both(prog)
    _assert_same(ref, got)


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU"])
def test_word_language_model_resume(rnn_type, tmp_path):
    """pytorch/examples word_language_model: Embedding + 2-layer RNN, tied
    decoder, ``repackage_hidden`` by ``.detach()``, ``clip_grad_norm_`` and the
    manual ``p.data.add_(p.grad, alpha=-lr)`` update; after an epoch the best
    model is saved, reloaded and ``model.rnn.flatten_parameters()`` called."""
    ntok = 30
    corpus = np.random.default_rng(1).integers(0, ntok, 161)

    def prog(T, weights):
        nn, F = T.nn, T.nn.functional

        class RNNModel(nn.Module):
            def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.0):
                super().__init__()
                self.ntoken = ntoken
                self.drop = nn.Dropout(dropout)
                self.encoder = nn.Embedding(ntoken, ninp)
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
                self.decoder = nn.Linear(nhid, ntoken)
                self.decoder.weight = self.encoder.weight
                initrange = 0.1
                nn.init.uniform_(self.encoder.weight, -initrange, initrange)
                nn.init.zeros_(self.decoder.bias)
                self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

            def forward(self, input, hidden):
                emb = self.drop(self.encoder(input))
                output, hidden = self.rnn(emb, hidden)
                decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
                return F.log_softmax(decoded, dim=1), hidden

            def init_hidden(self, bsz):
                weight = next(self.parameters())
                if self.rnn_type == 'LSTM':
                    return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                            weight.new_zeros(self.nlayers, bsz, self.nhid))
                return weight.new_zeros(self.nlayers, bsz, self.nhid)

        def repackage_hidden(h):
            if isinstance(h, T.Tensor):
                return h.detach()
            return tuple(repackage_hidden(v) for v in h)

        data = T.tensor(corpus)
        nbatch = data.size(0) // 4
        train_data = data.narrow(0, 0, nbatch * 4).view(4, -1).t().contiguous()
        model = _sync(T, RNNModel(rnn_type, ntok, 8, 8, 2), weights, 0)
        criterion = nn.NLLLoss()
        lr, bptt, out = 5.0, 6, []
        for epoch in range(2):
            model.train()
            hidden = model.init_hidden(4)
            for i in range(0, train_data.size(0) - 1, bptt):
                seq_len = min(bptt, len(train_data) - 1 - i)
                x, y = train_data[i:i + seq_len], train_data[i + 1:i + 1 + seq_len].view(-1)
                model.zero_grad()
                hidden = repackage_hidden(hidden)
                output, hidden = model(x, hidden)
                loss = criterion(output, y)
                loss.backward()
                T.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
                out.append(loss.item())
            path = tmp_path / f"{T.__name__}_{epoch}.pt"
            with open(path, 'wb') as f:
                T.save(model.state_dict(), f)
            model = RNNModel(rnn_type, ntok, 8, 8, 2)
            with open(path, 'rb') as f:
                model.load_state_dict(T.load(f))
                model.rnn.flatten_parameters()
            out.append(math.exp(out[-1]))
        return out + list(model.parameters())

    ref, got = _run_both(prog)
    _assert_same(ref, got, rtol=2e-5, atol=1e-5)


def test_tensors_tutorial_out_arguments():
    """The Tensors tutorial: ``torch.matmul(tensor, tensor.T, out=y3)`` and
    ``torch.mul(tensor, tensor, out=z3)`` write into ``out`` and return it;
    torch's rules: the result cast without a change of kind, ``out`` resized
    (with a warning unless empty), a view written through, no autograd."""
    def prog(T, weights):
        tensor = T.ones(4, 4)
        tensor[:, 1] = 0
        y1 = tensor @ tensor.T
        y3 = T.rand_like(y1)
        r = T.matmul(tensor, tensor.T, out=y3)
        z3 = T.rand_like(tensor)
        T.mul(tensor, tensor, out=z3)
        base = T.zeros(3, 4)
        T.add(T.ones(4), 1, out=base[1])
        wide = T.zeros(2, dtype=T.float64)
        T.mul(T.tensor([1, 2]), 3, out=wide)
        empty = T.zeros(0)
        T.cat([T.ones(2), T.zeros(1)], out=empty)
        vals, idx = T.zeros(2), T.zeros(2, dtype=T.long)
        got = T.max(T.tensor([[1., 3.], [4., 2.]]), 1, out=(vals, idx))
        s = T.zeros(4)
        T.sum(T.ones(4, 3), 1, out=s)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            bigger = T.zeros(5)
            T.add(T.ones(2), 1, out=bigger)
        assert any("was resized" in str(m.message) for m in w)
        agg = tensor.sum()
        printed = [f"{agg}", f"{agg.item()} {type(agg.item()).__name__}", f"{T.tensor(0.1)}",
                   f"{T.tensor(2.5):.3f} {T.tensor(1234.5):>8.2e}"]
        return printed + [r is y3, y3, z3, base, wide, wide.dtype == T.float64, empty,
                          got[0] is vals, vals, idx, s, bigger]

    ref, got = _run_both(prog)
    _assert_same(ref, got)


@pytest.mark.parametrize("call", [
    lambda T: T.mul(T.ones(2), 2.5, out=T.zeros(2, dtype=T.long)),
    lambda T: T.add(T.ones(2), 1, out=T.zeros(2, dtype=T.bool)),
    lambda T: T.mul(T.ones(2, requires_grad=True), 2, out=T.zeros(2)),
    lambda T: T.mul(T.ones(2), 2, out=T.zeros(2, requires_grad=True)),
])
def test_out_argument_refusals(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(pf)
    assert str(theirs.value).split(":")[-1].strip()[:30] in str(ours.value)


def test_datasets_tutorial_one_hot_target_transform():
    """The Datasets & DataLoaders tutorial: a custom ``Dataset`` whose
    ``target_transform`` one-hot encodes with ``torch.zeros(10).scatter_(0,
    torch.tensor(y), value=1)`` (a 0-d index: torch takes it as a 1-element
    1-d one), batched by ``DataLoader``."""
    imgs = np.arange(10 * 4 * 4, dtype=np.float32).reshape(10, 4, 4)
    labels = np.arange(10) % 3

    def prog(T, weights):
        class CustomImageDataset(T.utils.data.Dataset):
            def __init__(self, transform=None, target_transform=None):
                self.transform = transform
                self.target_transform = target_transform

            def __len__(self):
                return len(labels)

            def __getitem__(self, idx):
                image = T.from_numpy(imgs[idx][None])
                label = int(labels[idx])
                if self.transform:
                    image = self.transform(image)
                if self.target_transform:
                    label = self.target_transform(label)
                return image, label

        ds = CustomImageDataset(transform=lambda im: im / 255.0, target_transform=lambda y: T.zeros(
            3, dtype=T.float).scatter_(0, T.tensor(y), value=1))
        out = []
        for X, y in T.utils.data.DataLoader(ds, batch_size=4, shuffle=False):
            out += [X, y]
        x = T.tensor([1.0, 2.0, 3.0])
        out += [x.gather(0, T.tensor(2)), T.zeros(3).scatter_add(0, T.tensor(1), T.tensor(5.0)),
                T.zeros(3).scatter(0, T.tensor(1), T.tensor(5.0), reduce="add")]
        return out

    ref, got = _run_both(prog)
    _assert_same(ref, got)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        pf.zeros(2, 3).scatter(0, pf.tensor(1), 1.0)


def test_spatial_transformer_tutorial():
    """The Spatial Transformer tutorial: ``fc_loc`` starts at the identity
    transform, so ``affine_grid``'s points fall on pixel centers, where
    ``grid_sample``'s gradient jumps: the grid must round as torch's does (its
    linspace, then its fused ``(x + 1) * size/2 - 0.5``) or theta's first
    gradient, and every loss after it, differ."""
    rng = np.random.default_rng(0)
    data, target = rng.random((8, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 8)

    def prog(T, weights):
        nn, F = T.nn, T.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.localization = nn.Sequential(
                    nn.Conv2d(1, 4, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                    nn.Conv2d(4, 5, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
                self.fc_loc = nn.Sequential(nn.Linear(5 * 3 * 3, 16), nn.ReLU(True),
                                            nn.Linear(16, 3 * 2))
                self.fc_loc[2].weight.data.zero_()
                self.fc_loc[2].bias.data.copy_(T.tensor([1, 0, 0, 0, 1, 0], dtype=T.float))
                self.fc = nn.Linear(28 * 28, 10)

            def stn(self, x):
                xs = self.localization(x).view(-1, 5 * 3 * 3)
                theta = self.fc_loc(xs).view(-1, 2, 3)
                grid = F.affine_grid(theta, x.size(), align_corners=False)
                return F.grid_sample(x, grid, align_corners=False)

            def forward(self, x):
                x = self.stn(x)
                return F.log_softmax(self.fc(x.view(-1, 784)), dim=1)

        model = _sync(T, Net(), weights, 0)
        optimizer = T.optim.SGD(model.parameters(), lr=0.05)
        x, y = T.tensor(data), T.tensor(target)
        out = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            out.append(loss.item())
        return out + list(model.parameters())

    ref, got = _run_both(prog)
    _assert_same(ref, got, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_grid_gradient_on_pixel_centers(padding_mode, mode, align_corners):
    """float64 affine grids (an identity and a shear) through grid_sample:
    values and the gradients of the input and of theta as torch's, points on
    pixel centers and on the border included (a border point counts as
    outside: no gradient); ``nearest`` gives theta zeros, not None."""
    rng = np.random.default_rng(1)
    x = rng.random((2, 2, 6, 5))
    th = np.array([[[1, 0, 0], [0, 1, 0]], [[1, 0.1, 0.05], [-0.1, 0.9, 0.02]]])
    g = rng.standard_normal((2, 2, 6, 5))
    res = []
    for T in (torch, pf):
        X, TH = T.tensor(x, requires_grad=True), T.tensor(th, requires_grad=True)
        grid = T.nn.functional.affine_grid(TH, (2, 2, 6, 5), align_corners=align_corners)
        y = T.nn.functional.grid_sample(X, grid, mode=mode, padding_mode=padding_mode,
                                        align_corners=align_corners)
        (y * T.tensor(g)).sum().backward()
        res.append([grid, y, X.grad, TH.grad])
    for a, b in zip(*res):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)


def test_nn_really_nll_with_range_index():
    """"What is torch.nn really?": ``-input[range(target.shape[0]), target].mean()``
    (a ``range`` is a sequence index) trained by hand under ``no_grad``."""
    rng = np.random.default_rng(2)
    xs, ys = rng.random((32, 20), dtype=np.float32), rng.integers(0, 5, 32)
    w0 = rng.standard_normal((20, 5)).astype(np.float32) / math.sqrt(20)

    def prog(T, weights):
        x_train, y_train = map(T.tensor, (xs, ys))
        w = T.tensor(w0)
        w.requires_grad_()
        bias = T.zeros(5, requires_grad=True)

        def model(xb):
            z = xb @ w + bias
            return z - z.exp().sum(-1).log().unsqueeze(-1)

        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()

        out = []
        for i in range(4):
            xb, yb = x_train[i * 8:(i + 1) * 8], y_train[i * 8:(i + 1) * 8]
            loss = nll(model(xb), yb)
            loss.backward()
            with T.no_grad():
                w -= w.grad * 0.5
                bias -= bias.grad * 0.5
                w.grad.zero_()
                bias.grad.zero_()
            out.append(loss)
        probe = T.arange(12.0).reshape(3, 4)
        probe[range(2), 0] = -1.0
        return out + [w, bias, probe, probe[:, range(0, 4, 2)]]

    ref, got = _run_both(prog)
    _assert_same(ref, got)


@pytest.mark.parametrize("spelling", ["amp", "cuda.amp"])
def test_amp_recipe_on_a_machine_without_cuda(spelling):
    """The AMP recipe as scripts write it for CUDA, run where there is none
    (pytorch/examples picks the device with ``torch.accelerator``): torch
    disables the "cuda" GradScaler and autocast with a warning and trains in
    float32, so the scale stays 1.0 and the losses are plain float32 ones."""
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((24, 6)).astype(np.float32), rng.integers(0, 3, 24)

    def prog(T, weights):
        use_accel = T.accelerator.is_available()
        device = T.accelerator.current_accelerator() if use_accel else T.device("cpu")
        model = _sync(T, T.nn.Sequential(T.nn.Linear(6, 8), T.nn.ReLU(), T.nn.Linear(8, 3)),
                      weights, 0).to(device)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = T.amp.GradScaler("cuda") if spelling == "amp" else T.cuda.amp.GradScaler()
        out = [scaler.is_enabled(), T.accelerator.device_count()]
        for i in range(0, 24, 8):
            x, y = T.tensor(xs[i:i + 8]).to(device), T.tensor(ys[i:i + 8]).to(device)
            opt.zero_grad()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ctx = T.autocast(device_type="cuda", dtype=T.float16) if spelling == "amp" \
                    else T.cuda.amp.autocast()
            with ctx:
                loss = T.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            out += [loss, loss.dtype == T.float32, scaler.get_scale()]
        return out + list(model.parameters())

    ref, got = _run_both(prog)
    _assert_same(ref, got)


def _constant_axes(y):
    return tuple(bool(np.all(np.ptp(y, axis=a) == 0)) for a in range(y.ndim))


@pytest.mark.parametrize("op, shape", [
    ("dropout2d", (16, 12, 3, 3)), ("dropout2d", (16, 12, 5)), ("dropout2d", (16, 12)),
    ("dropout3d", (8, 12, 2, 2, 2)), ("dropout3d", (40, 2, 2, 2)), ("dropout3d", (40, 3, 3)),
    ("dropout1d", (16, 12, 5)), ("dropout1d", (40, 5))])
def test_feature_dropout_masks_as_torch(op, shape):
    """The classic MNIST example's ``Dropout2d``: which elements share a draw
    is torch's, for every rank torch takes (a 3-D input to dropout2d is
    (N, C, L), torch's historical reading, with its warning)."""
    torch.manual_seed(0)
    pf.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = getattr(torch.nn.functional, op)(torch.ones(shape), 0.5, True).numpy()
        got = getattr(pf.nn.functional, op)(pf.ones(shape), 0.5, True).numpy()
    assert _constant_axes(got) == _constant_axes(ref)
    assert set(np.unique(got)) <= {0.0, 2.0} and 0.2 < (got > 0).mean() < 0.8
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        pf.nn.functional.dropout2d(pf.ones(4), 0.5, True)
