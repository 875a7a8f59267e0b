"""Layout evaluation: run the layout module once to get the rectangle, per-PE tile
code with its params, and per-PE per-color routes.

Params take, in order: a value passed by the user (`cslc --params`), the
default in the IR, else an error. Program modules are found by the file name
given to `@set_tile_code` ("pe_program.csl" -> `csl.module` "pe_program"), or
are the only program module there is, however named (`resolve_program`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import csl
from xdsl.dialects.builtin import ModuleOp

from .errors import ProgramError
from .fabric import Fabric
from .impl import plan_module
from .instances import instantiate
from .interpreter import BlockPlan, Context, run_block, run_to_end
from .libs import import_library
from .machine import CycleModel
from .modules import library_modules, qualify
from .values import convert


@dataclass
class Tile:
    program: str
    params: dict


@dataclass
class Layout:
    width: int
    height: int
    tiles: dict[tuple[int, int], Tile]
    fabric: Fabric
    params: dict = field(default_factory=dict)


def split_modules(module: ModuleOp) -> tuple[csl.CslModuleOp, dict[str, csl.CslModuleOp]]:
    """The layout module and the tile programs (the modules some module imports are
    libraries, not programs: `modules.py`)."""
    layouts, programs = [], {}
    libraries = library_modules(module)
    for op in module.body.ops:
        if not isinstance(op, csl.CslModuleOp):
            raise ProgramError(
                f"expected only csl.module ops at top level, found {op.name} "
                "(lower csl_wrapper.module with lower-csl-wrapper first)"
            )
        if op.sym_name.data in libraries:
            continue
        if op.kind.data == csl.ModuleKind.LAYOUT:
            layouts.append(op)
        else:
            programs[op.sym_name.data] = op
    if len(layouts) != 1:
        raise ProgramError(f"expected exactly one layout csl.module, found {len(layouts)}")
    return layouts[0], programs


def resolve_program(file: str, programs: set[str], what: str) -> str:
    """The program module a ``@set_tile_code`` file names: the module of that name
    (``"pe_program.csl"`` or ``"src/pe_program.csl"`` -> ``pe_program``), else the
    only program module there is, however it is named (a project with one PE
    program, whatever file name its layout uses)."""
    stem = file.removesuffix(".csl")
    for name in (stem, stem.rsplit("/", 1)[-1]):
        if name in programs:
            return name
    if len(programs) == 1:
        return next(iter(programs))
    raise ProgramError(f"{what}: no program csl.module named '{stem}' and more than one to "
                       f"choose from (have {sorted(programs)})")


class LayoutEvaluator(Context):
    kind = "layout"

    def __init__(self, params: dict, model: CycleModel, programs: set[str]):
        self.user_params, self.model, self.programs = params, model, programs
        self.params: dict = {}
        self.tiles: dict[tuple[int, int], Tile] = {}
        self.functions: dict[str, csl.FuncOp] = {}
        self.bodies: dict[str, BlockPlan] = {}
        self.envs: dict[str, dict] = {}
        self.instances: dict[str, int] = {}
        self.fabric: Fabric | None = None
        self.width = self.height = 0

    def param(self, name, type, default):
        if name in self.user_params:
            v = convert(self.user_params[name], type)
        elif default is not None:
            v = default
        else:
            raise ProgramError(f"layout param '{name}' has no default: pass it (--params)")
        self.params[name] = v
        return v

    def import_module(self, name, params):
        return import_library(name, params, None)

    # an imported module's functions run at compile time (`reduce.get_params(px, py)`)
    def instantiate(self, op, file, params):
        return instantiate(self, op, file, params, self.instances)

    def define(self, op, body, env):
        if isinstance(op, csl.TaskOp):
            self._reject("a task")
        name = qualify(env, op.sym_name.data)
        self.functions[name], self.bodies[name], self.envs[name] = op, body, env

    def call(self, name, args):
        block = self.bodies.get(name)
        if block is None:
            raise ProgramError(f"the layout calls undefined function '{name}'")
        if len(args) != len(block.args):
            raise ProgramError(f"the layout: '{name}' takes {len(block.args)} args, "
                               f"got {len(args)}")
        env = dict(self.envs[name])
        env.update(zip(block.args, args))
        result = yield from run_block(self, env, block)
        return result[0] if result else None

    def set_rectangle(self, w, h):
        if self.fabric is not None:
            raise ProgramError("@set_rectangle is called twice")
        if w < 1 or h < 1:
            raise ProgramError(f"@set_rectangle({w}, {h}): the rectangle must not be empty")
        self.width, self.height = w, h
        self.fabric = Fabric(w, h, self.model)

    def _check(self, x: int, y: int, what: str) -> None:
        if self.fabric is None:
            raise ProgramError(f"{what} before @set_rectangle")
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ProgramError(
                f"{what} at ({x}, {y}) is outside the {self.width}x{self.height} rectangle"
            )

    def set_tile_code(self, x, y, file, params):
        self._check(x, y, "@set_tile_code")
        name = resolve_program(file, self.programs, f"@set_tile_code({x}, {y}, \"{file}\")")
        if (x, y) in self.tiles:
            raise ProgramError(f"@set_tile_code is called twice for PE ({x}, {y})")
        self.tiles[(x, y)] = Tile(name, dict(params))

    def set_route(self, x, y, color, rx, tx, switches=None, teardown=False, filter=None):
        self._check(x, y, "@set_color_config")
        assert self.fabric is not None
        self.fabric.set_route((x, y), color, rx, tx, switches, teardown, filter)


def evaluate_layout(module: ModuleOp, params: dict, model: CycleModel) -> Layout:
    layout_mod, programs = split_modules(module)
    plan = plan_module(layout_mod)
    ev = LayoutEvaluator(params, model, set(programs))
    run_to_end(run_block(ev, {}, plan), "the layout")
    if ev.fabric is None:
        raise ProgramError("the layout never calls @set_rectangle")
    missing = [(x, y) for y in range(ev.height) for x in range(ev.width) if (x, y) not in ev.tiles]
    if missing:
        raise ProgramError(f"PE(s) {missing[:8]} of the rectangle have no @set_tile_code")
    unknown = set(params) - set(ev.params)
    if unknown:
        raise ProgramError(f"--params names unknown layout param(s) {sorted(unknown)}")
    return Layout(ev.width, ev.height, ev.tiles, ev.fabric, ev.params)
