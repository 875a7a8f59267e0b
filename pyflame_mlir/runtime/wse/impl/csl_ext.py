"""`csl_ext`, our extension of `csl`: task blocking, queues, fabric DSDs with an SSA
color, and routes in the layout."""

from __future__ import annotations

from pyflame_mlir.dialects import csl_ext

from ..interpreter import Functions
from .csl_dsd import fab_dsd

CSL_EXT = Functions("csl_ext")


@CSL_EXT.impl(csl_ext.BlockOp, csl_ext.UnblockOp)
def _block(op: csl_ext.BlockOp | csl_ext.UnblockOp):
    kind, id, blocked = op.kind.data.value, op.id.value.data, isinstance(op, csl_ext.BlockOp)

    def run(ctx, env):
        ctx.set_blocked(kind, id, blocked)

    return run


@CSL_EXT.impl(csl_ext.InitializeQueueOp)
def _init_queue(op: csl_ext.InitializeQueueOp):
    queue, color, output = csl_ext.queue_number(op.queue_id), op.color, op.is_output

    def run(ctx, env):
        ctx.initialize_queue(queue, env[color], output)

    return run


@CSL_EXT.impl(csl_ext.GetFabDsdOp)
def _fab_dsd(op: csl_ext.GetFabDsdOp):
    color, extent = op.color, op.extent
    return fab_dsd(op, lambda env: env[color], lambda env: env[extent])


@CSL_EXT.impl(csl_ext.SetColorConfigOp)
def _set_color_config(op: csl_ext.SetColorConfigOp):
    x, y, color, rx, tx = op.x_coord, op.y_coord, op.color, op.routes.rx_ports, op.routes.tx_ports

    def run(ctx, env):
        ctx.set_route(env[x], env[y], env[color], rx, tx)

    return run


@CSL_EXT.impl(csl_ext.BindDataTaskOp)
def _bind_data_task(op: csl_ext.BindDataTaskOp):  # csl15: WSE-3 data tasks on input queues
    task, queue = op.task_name.string_value(), csl_ext.queue_number(op.queue_id)

    def run(ctx, env):
        ctx.bind_data_task(task, queue, op)

    return run
