# ruff: noqa: E501  (embedded MLIR lines)
"""Build small csl-dialect programs around a test body and run them on the simulator.

`make_program` wraps program-module text in a layout that gives every PE of a
`width x height` rectangle the program with params `px`, `py`, and in a
program module with memcpy imported as `%sys_mod`, the requested arrays
(`%name`, exported as "name") and a launched function `@main` that runs
`body` and then unblocks the command stream.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pyflame_mlir.runtime.wse import Simulator, parse_program

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"

MLIR_TYPE = {"f32": "f32", "f16": "f16", "i16": "i16", "u16": "ui16", "i32": "i32", "u32": "ui32"}
ZERO = {"f32": "0.0 : f32", "f16": "0.0 : f16", "i16": "0 : i16", "u16": "0 : ui16",
        "i32": "0 : i32", "u32": "0 : ui32"}  # fmt: skip


def ptr(t: str) -> str:
    return f"!csl.ptr<{MLIR_TYPE[t]}, #csl<ptr_kind many>, #csl<ptr_const var>>"


def make_program(
    body: str = "",
    *,
    arrays: dict[str, tuple[str, int]] | None = None,
    extra: str = "",
    layout: str = "",
    width: int = 1,
    height: int = 1,
    unblock: bool = True,
) -> str:
    decls = []
    for name, (t, n) in (arrays or {}).items():
        mt = MLIR_TYPE[t]
        # arith has no unsigned constants: an unsigned array is @zeros of an unsigned size
        make = (f"""%{name}_n = arith.constant {n} : i{mt[-2:]}
    %{name}_nu = "csl.mlir.signedness_cast"(%{name}_n) : (i{mt[-2:]}) -> {mt}
    %{name} = "csl.zeros"(%{name}_nu) : ({mt}) -> memref<?x{mt}>""" if mt.startswith("ui") else
                f"""%{name}_n = arith.constant {n} : i16
    %{name}_zero = arith.constant {ZERO[t]}
    %{name} = "csl.constants"(%{name}_n, %{name}_zero) : (i16, {mt}) -> memref<?x{mt}>""")
        decls.append(
            f"""
    {make}
    %{name}_ptr = "csl.addressof"(%{name}) : (memref<?x{mt}>) -> {ptr(t)}
    "csl.export"(%{name}_ptr) <{{var_name = "{name}", type = {ptr(t)}}}> : ({ptr(t)}) -> ()"""
        )
    end = (
        '"csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}> : (!csl.imported_module) -> ()'
        if unblock
        else ""
    )
    return f"""
builtin.module {{
  "csl.module"() <{{kind = #csl<module_kind layout>, sym_name = "layout"}}> ({{
    %w = arith.constant {width} : i16
    %h = arith.constant {height} : i16
    %i0 = arith.constant 0 : i16
    %i1 = arith.constant 1 : i16
    %memcpy_init = "csl.const_struct"(%w, %h) <{{ssa_fields = ["width", "height"]}}> : (i16, i16) -> !csl.comptime_struct
    %memcpy = "csl.import_module"(%memcpy_init) <{{module = "<memcpy/get_params>"}}> : (!csl.comptime_struct) -> !csl.imported_module
    csl.layout {{
      "csl.set_rectangle"(%w, %h) : (i16, i16) -> ()
      scf.for %x = %i0 to %w step %i1 : i16 {{
        scf.for %y = %i0 to %h step %i1 : i16 {{
          %mp = "csl.member_call"(%memcpy, %x) <{{field = "get_params"}}> : (!csl.imported_module, i16) -> !csl.comptime_struct
          %tp = "csl.const_struct"(%mp, %x, %y) <{{ssa_fields = ["memcpy_params", "px", "py"]}}> : (!csl.comptime_struct, i16, i16) -> !csl.comptime_struct
          "csl.set_tile_code"(%x, %y, %tp) <{{file = "pe.csl"}}> : (i16, i16, !csl.comptime_struct) -> ()
        }}
      }}
      {layout}
    }}
  }}) : () -> ()
  "csl.module"() <{{kind = #csl<module_kind program>, sym_name = "pe"}}> ({{
    %memcpy_params = "csl.param"() <{{param_name = "memcpy_params"}}> : () -> !csl.comptime_struct
    %px = "csl.param"() <{{param_name = "px"}}> : () -> i16
    %py = "csl.param"() <{{param_name = "py"}}> : () -> i16
    %sys_mod = "csl.import_module"(%memcpy_params) <{{module = "<memcpy/memcpy>"}}> : (!csl.comptime_struct) -> !csl.imported_module
    {"".join(decls)}
    {extra}
    csl.func @main() {{
      {body}
      {end}
      csl.return
    }}
    "csl.export"() <{{var_name = @main, type = () -> ()}}> : () -> ()
  }}) : () -> ()
}}
"""


def simulate(text: str, **kwargs) -> Simulator:
    return Simulator(parse_program(text), **kwargs)


def run_main(sim: Simulator, inputs: dict[str, np.ndarray], at: tuple[int, int] = (0, 0)):
    for name, values in inputs.items():
        sim.symbol(name, *at)[: values.size] = values
    sim.launch("main")
    return sim


def array(sim: Simulator, name: str, at: tuple[int, int] = (0, 0)) -> np.ndarray:
    return sim.symbol(name, *at).copy()


def dsd(name: str, n: int, t: str = "f32", access: str = "") -> str:
    """`%<name>_dsd`: a mem1d DSD over n elements of array %name."""
    acc = f" <{{tensor_access = {access}}}>" if access else ""
    mt = MLIR_TYPE[t]
    return (
        f"%{name}_len = arith.constant {n} : i16\n"
        f'      %{name}_dsd = "csl.get_mem_dsd"(%{name}, %{name}_len){acc} : '
        f"(memref<?x{mt}>, i16) -> !csl<dsd mem1d_dsd>"
    )


D1 = "!csl<dsd mem1d_dsd>"
