"""Run by test_gpt_parallel.py under ``python -m pyflame_mlir.launch --nproc 4``:
the tiny GPT of examples/gpt.py trained data + tensor parallel on a 2x2 mesh,
one device per process (``pyflame_mlir.distributed.partition``), AdamW sharded
across the processes (ZeRO-2: ``dist.ZeroRedundancyOptimizer``; the gradients
reduce-scattered over the axes each parameter is replicated on, clipped by
their global norm); rank 0 writes the losses to argv[1] and the optimizer
state bytes of every rank to argv[1] + ".state.json" as JSON."""

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_gpt_parallel import BATCH, CONFIG, MEGATRON, STEPS, load_example  # noqa: E402

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir import P  # noqa: E402
from pyflame_mlir import distributed as dist  # noqa: E402

warnings.simplefilter("error")  # no op replicated for want of a factor rule
dist.init()
ns = load_example(False)
pf.manual_seed(0)
model = ns["GPT"](**CONFIG)
mesh = pf.DeviceMesh((2, 2), ("data", "model"))
pf.sharding.shard_parameters(model, mesh, MEGATRON)
params = list(model.parameters())
opt = dist.ZeroRedundancyOptimizer(params, pf.optim.AdamW, lr=3e-3, weight_decay=0.1)
step = dist.partition(lambda x, y: model(x, y)[1])
losses = []
for x, y in ns["batches"](BATCH, STEPS, context=CONFIG["context"]):
    loss = step(pf.shard(pf.tensor(x), mesh, P("data")), pf.shard(pf.tensor(y), mesh, P("data")))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.clip_grad_norm_(1.0)
    opt.step()
    losses.append(loss.item())
state = dist.all_gather(pf.tensor([opt.state_bytes()])).tolist()
if dist.rank() == 0:
    Path(sys.argv[1]).write_text(json.dumps(losses))
    Path(sys.argv[1] + ".state.json").write_text(json.dumps(state))
dist.shutdown()
