"""``python -m pyflame_mlir.launch --nproc N script.py [args...]``: run ``script.py``
in N processes, one device each, with torchrun's environment (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``), so the script joins the group with
``pyflame_mlir.distributed.init()``; the same script runs under ``torchrun``.
On several hosts, start one launcher per host with ``--nnodes``, ``--node-rank``
and the first host's ``--master-addr``/``--master-port``.

If a process fails, the others are stopped and the launcher exits with its code.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pyflame_mlir.launch",
                                description="run a script in N processes (one device each)")
    p.add_argument("--nproc", "--nproc-per-node", type=int, required=True)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", type=int, default=0)
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=0, help="0: a free port (one host)")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if a.nproc < 1:
        p.error("--nproc must be at least 1")
    if a.nnodes > 1 and not a.master_port:
        p.error("--master-port is required with several nodes")
    port = a.master_port or _free_port()
    world = a.nproc * a.nnodes
    procs = []
    for local in range(a.nproc):
        env = dict(os.environ, RANK=str(a.node_rank * a.nproc + local), LOCAL_RANK=str(local),
                   WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(a.nproc),
                   MASTER_ADDR=a.master_addr, MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, a.script, *a.args], env=env))
    code = 0
    while procs:
        for proc in list(procs):
            rc = proc.poll()
            if rc is None:
                continue
            procs.remove(proc)
            if rc and not code:
                code = rc
                for other in procs:  # a failed rank would leave the others waiting
                    other.terminate()
        time.sleep(0.05)
    return code


if __name__ == "__main__":
    sys.exit(main())
