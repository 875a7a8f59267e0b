"""Run an unchanged SDK host script against the WSE simulator.

    python -m pyflame_mlir.runtime.wse.run_host run.py --name out [script args]

Installs the `cerebras.sdk.runtime.sdkruntimepybind` shim (unless the real SDK
is importable), runs the script as `__main__`, then prints the cycle report
of every `SdkRuntime` it made.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from .report import CycleReport
from .sdkruntime import SdkRuntime, install_sdk_shim


def run_script(script: str | Path, argv: list[str], quiet: bool = False) -> list[CycleReport]:
    """Run `script` with `argv` in this process; return the cycle reports of its runtimes."""
    install_sdk_shim()
    before = len(SdkRuntime.instances)
    saved = sys.argv
    sys.argv = [str(script), *argv]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved
    reports = [rt.report for rt in SdkRuntime.instances[before:]]
    del SdkRuntime.instances[before:]
    if not quiet:
        for r in reports:
            print(r)
    return reports


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        raise SystemExit(0 if args else 2)
    run_script(args[0], args[1:])


if __name__ == "__main__":
    main()
