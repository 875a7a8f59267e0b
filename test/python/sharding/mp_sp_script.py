"""Run by test_sequence_parallel.py under ``python -m pyflame_mlir.launch --nproc 2``:
the sequence-parallel block written with specs (``_sp_loss``: pf.reshard inside
the function), then the vocabulary-parallel cross entropy of
test_vocab_parallel.py, on a mesh of one "model" axis, one device per process
(``pyflame_mlir.distributed.partition``); rank 0 writes the losses to argv[1]."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_sequence_parallel import STEPS, _sp_data, _sp_loss  # noqa: E402
from test_vocab_parallel import _data, _loss  # noqa: E402

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir import P  # noqa: E402
from pyflame_mlir import distributed as dist  # noqa: E402

dist.init()
mesh = pf.DeviceMesh((dist.world_size(),), ("model",))
x, ws = _sp_data()
specs = [P(), P(), P(None, "model"), P("model")]
params = [pf.shard(pf.tensor(w).requires_grad_(), mesh, s) for w, s in zip(ws, specs)]
step = dist.partition(_sp_loss(mesh, None))
xs = pf.shard(pf.tensor(x), mesh, P(None, "model"))
losses = []
for _ in range(STEPS):
    loss = step(xs, *params)
    loss.backward()
    dist.all_reduce_grads(params)
    with pf.no_grad():
        for p in params:
            p -= 0.2 * p.grad
            p.grad = None
    losses.append(loss.item())
ir = step.last.device_ir
assert ir.count("sharding.all_gather") == 1 and ir.count("sharding.reduce_scatter") == 1, ir

h, w, y = _data()  # vocabulary-parallel cross entropy: the max's all-reduce has no
ws = pf.shard(pf.tensor(w).requires_grad_(), mesh, P(None, "model"))  # backward
step = dist.partition(_loss)
ce = []
for _ in range(3):
    loss = step(pf.tensor(h), ws, pf.tensor(y))
    loss.backward()
    dist.all_reduce_grads([ws])
    with pf.no_grad():
        ws -= 0.5 * ws.grad
        ws.grad = None
    ce.append(loss.item())
assert "sharding.all_gather" not in step.last.device_ir
if dist.rank() == 0:
    Path(sys.argv[1]).write_text(json.dumps({"sp": losses, "ce": ce}))
dist.shutdown()
