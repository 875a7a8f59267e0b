"""Train a small MLP on a synthetic classification set with PyTorch-style
autograd, written as in PyTorch: ``p -= lr * p.grad`` under ``no_grad`` and
``p.grad = None``. Everything is lazy: ``loss.item()`` computes the forward,
the backward and the previous step's update in one graph; the first steps
compile, every later step hits the cache. Runs the same with PYFLAME_EAGER=1."""

import numpy as np

import pyflame_mlir as pf

rng = np.random.default_rng(0)
classes, dim, hidden, n = 4, 32, 64, 2048
centers = rng.standard_normal((classes, dim)) * 0.4
labels = rng.integers(0, classes, n)
data = (centers[labels] + rng.standard_normal((n, dim))).astype(np.float32)
onehot = np.eye(classes, dtype=np.float32)[labels]

pf.manual_seed(0)
w1 = (pf.randn(dim, hidden) * (2 / dim) ** 0.5).requires_grad_()
b1 = pf.zeros(hidden, requires_grad=True)
w2 = (pf.randn(hidden, classes) * (1 / hidden) ** 0.5).requires_grad_()
b2 = pf.zeros(classes, requires_grad=True)
params = [w1, b1, w2, b2]


def loss_fn(params, x, y):
    w1, b1, w2, b2 = params
    logits = pf.relu(x @ w1 + b1) @ w2 + b2
    return -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean(), logits


batch, lr = 64, 0.1
for epoch in range(5):
    total, correct = 0.0, 0
    for i in range(0, n, batch):
        x, y = pf.tensor(data[i:i + batch]), pf.tensor(onehot[i:i + batch])
        loss, logits = loss_fn(params, x, y)
        loss.backward()
        with pf.no_grad():                     # PyTorch's idiom: update in place
            for p in params:
                p -= lr * p.grad
                p.grad = None
            hits = (pf.argmax(logits, dim=1) == pf.argmax(y, dim=1)).sum()
        total += loss.item() * len(x)
        correct += hits.item()
    print(f"epoch {epoch}: loss {total / n:.4f}  accuracy {correct / n:.3f}")

stats = pf.cache_stats()
print(f"cache: {stats['misses']} compile(s), {stats['hits']} hits")
assert total / n < 0.5, "training did not converge"
