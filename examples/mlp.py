"""The README demo: a two-layer MLP forward pass, recorded lazily, compiled to
the pyflame dialect, run on the default backend and checked against numpy."""

import numpy as np

import pyflame_mlir as pf

# This demo prints the recorded graph and its IR, so it records lazily even
# under PYFLAME_EAGER=1 (which runs every op at once: there would be no graph).
pf.CONFIG.eager = False
pf.manual_seed(0)
x = pf.randn([1024, 512])
w1 = (pf.randn([512, 256]) * 0.05).eval()   # parameters: realized leaves
b1 = pf.full([256], 0.01)                     # a constant of the graph
w2 = (pf.randn([256, 10]) * 0.05).eval()

h = pf.relu(x @ w1 + b1)
probs = pf.softmax(h @ w2, dim=1)
loss = -pf.log(probs).sum()            # nothing has run yet

print(f"loss: shape {loss.shape}, dtype {loss.dtype.name}, is_lazy={pf.is_lazy(loss)}")
print("graph stats:", pf.get_graph_stats(loss))
pf.print_graph(loss)
print("\npyflame IR:")
print(pf.to_mlir(loss))
print(f"pyflame IR after the default pipeline\n  {pf.get_pipeline()}\n"
      "(bias + relu after the matmul fuse; log fuses into the sum it feeds):")
print(pf.to_mlir(loss, optimize=True))
report = pf.compile_graph(loss)
print(report)

value = loss.item()                    # compiles (cache hit now) and runs
print(f"\nloss = {value:.6f}   is_lazy={pf.is_lazy(loss)}   backend={pf.get_backend()}")

# the same computation in numpy, from the same data
xn, w1n, w2n = x.numpy(), w1.numpy(), w2.numpy()
hn = np.maximum(xn @ w1n + np.float32(0.01), 0)
z = hn @ w2n
p = np.exp(z - z.max(1, keepdims=True))
p /= p.sum(1, keepdims=True)
expected = float(-np.log(p).sum())
print(f"numpy = {expected:.6f}   relative difference {abs(value - expected) / abs(expected):.2e}")
assert abs(value - expected) <= 1e-4 * abs(expected), "loss does not match numpy"
print("cache:", pf.cache_stats())

# The same loss on the other backends installed here (extras: pip install
# 'pyflame-mlir[max]' / '[mlir]'). A first MAX compile takes a minute or two on
# a small CPU (a progress line says so on a terminal); the compiled model is
# cached on disk, so the next run loads it (`python -m pyflame_mlir cache info`).
for name in ("max", "mlir"):
    try:
        with pf.backend(name):
            got = (-pf.log(pf.softmax(pf.relu(x @ w1 + b1) @ w2, dim=1)).sum()).item()
    except RuntimeError as e:  # the backend is not installed: the reason says which extra
        print(f"{name}: skipped ({e})")
        continue
    print(f"{name}: loss = {got:.6f}   relative difference {abs(got - value) / abs(value):.2e}")
    assert abs(got - value) <= 1e-4 * abs(value), f"the {name} loss differs"
