"""Models of the SDK library modules a program may `@import_module`.

Only their interface is modeled: memcpy's data movement is done by the host
stand-in (`sdkruntime.py`) directly on PE memory, not by simulated routing
through the halo of memcpy PEs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ProgramError, UnsupportedError

if TYPE_CHECKING:
    from .pe import PE


class Library:
    name = "?"
    fields: dict[str, Any]

    def access(self, field: str):
        if field not in self.fields:
            raise ProgramError(f"{self.name} has no member '{field}' in the simulator's model")
        return self.fields[field]

    def call(self, field: str, args: list):
        fn = getattr(self, f"fn_{field}", None)
        if fn is None:
            raise UnsupportedError(f"{self.name}.{field}() is not modeled by the WSE simulator")
        return fn(*args)


class MemcpyParams(Library):
    """`<memcpy/get_params>` in the layout: `get_params(x)` gives each column its params."""

    name = "<memcpy/get_params>"

    def __init__(self, params: dict | None):
        self.fields = dict(params or {})

    def fn_get_params(self, x: int) -> dict:
        return {"memcpy_column": x, **{k: v for k, v in self.fields.items() if k == "LAUNCH"}}


class Memcpy(Library):
    """`<memcpy/memcpy>` on a PE: the command stream and the launch color."""

    name = "<memcpy/memcpy>"

    def __init__(self, pe: PE, params: dict | None):
        self.pe = pe
        self.fields = {k: v for k, v in (params or {}).items() if k == "LAUNCH"}

    def fn_unblock_cmd_stream(self) -> None:
        self.pe.unblock_cmd_stream()


class LayoutInfo(Library):
    """`<layout>`: the PE's own coordinates at run time."""

    name = "<layout>"

    def __init__(self, pe: PE):
        self.pe, self.fields = pe, {}

    def fn_get_x_coord(self) -> int:
        return self.pe.x

    def fn_get_y_coord(self) -> int:
        return self.pe.y


class MathLib(Library):
    """`<math>` on a PE: scalar f32 elementary functions (`math_lib.exp_f32(x)`, ...).

    The `_f32` names follow the SDK's math library; which functions it has and
    their exact names are unverified (CSL_NOTES), so only these are modeled.
    Each call costs `CycleModel.math_call_cycles` (an estimate) and is computed
    in float32 by numpy.
    """

    name = "<math>"
    FUNCTIONS = {
        "exp_f32": np.exp, "log_f32": np.log, "sqrt_f32": np.sqrt, "tanh_f32": np.tanh,
        "sin_f32": np.sin, "cos_f32": np.cos,
    }

    def __init__(self, pe: PE):
        self.pe, self.fields = pe, {}

    def call(self, field: str, args: list):
        fn = self.FUNCTIONS.get(field)
        if fn is None:
            raise UnsupportedError(
                f"math_lib.{field}() is not modeled by the WSE simulator "
                f"(modeled: {', '.join(sorted(self.FUNCTIONS))})"
            )
        (x,) = args
        self.pe.t += max(0.0, self.pe.sim.model.math_call_cycles - self.pe.op_cycles)
        return np.float32(fn(np.float32(x)))


def import_library(name: str, params: dict | None, pe: PE | None) -> Library:
    if pe is None:
        if name == "<memcpy/get_params>":
            return MemcpyParams(params)
    elif name == "<memcpy/memcpy>":
        return Memcpy(pe, params)
    elif name == "<layout>":
        return LayoutInfo(pe)
    elif name == "<math>":
        return MathLib(pe)
    where = "a layout" if pe is None else "a PE program"
    raise UnsupportedError(f"@import_module(\"{name}\") in {where} is not modeled by the simulator")
