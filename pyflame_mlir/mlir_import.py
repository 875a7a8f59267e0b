"""``pf.load_mlir``: ``pyflame`` MLIR text back into a Python callable.

What ``pyflame-opt`` writes (after any of our passes that keep the
``pyflame`` dialect) or ``pf.to_mlir`` prints, a user runs: the function is
parsed and verified once, then compiled per backend (autodiff expansion, the
backend's pipeline, its lowering: the path ``evaluate`` takes) on the first
call there, and run on the arguments, which are checked against the
function's type.

Hostile text is refused before it can exhaust the stack or memory
(``dialects/bounded_parser.py``, which ``pyflame-opt`` uses too).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .compiler import (
    CONFIG,
    expand_transforms,
    get_backend,
    make_context,
    pipeline_for,
    run_pipeline,
)
from .core import Tensor
from .dialects.dtypes import DType

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

__all__ = ["MlirLoadError", "MlirProgram", "load_mlir"]


class MlirLoadError(ValueError):
    """MLIR text that ``load_mlir`` cannot run: ``file:line:col: error: ...``."""


def _parse(text: str, name: str) -> ModuleOp:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.utils.exceptions import ParseError

    from .dialects.bounded_parser import BoundedParser, prescan_error

    where = prescan_error(text)
    if where is not None:
        line, col, msg = where
        raise MlirLoadError(f"{name}:{line}:{col}: error: {msg}")
    try:
        module = BoundedParser(make_context(), text, name).parse_module()
    except ParseError as e:
        loc = e.span.get_location()
        raise MlirLoadError(f"{name}:{loc.line}:{loc.col}: error: {e.msg}") from None
    except RecursionError:
        raise MlirLoadError(f"{name}: error: input nested too deeply to parse") from None
    except Exception as e:  # noqa: BLE001  (xDSL raises plain exceptions on some bad input)
        raise MlirLoadError(f"{name}: error: {type(e).__name__}: {e}") from None
    assert isinstance(module, ModuleOp)
    try:
        module.verify()
    except Exception as e:  # noqa: BLE001  (VerifyException and structural errors)
        raise MlirLoadError(f"{name}: error: the module does not verify: {e}") from None
    return module


class MlirProgram:
    """A parsed ``func.func`` of ``pyflame`` ops, callable with one numpy
    array or Tensor per argument; returns realized Tensors (one, or a tuple)."""

    def __init__(self, module: ModuleOp, entry: str | None, name: str):
        from xdsl.dialects import func
        from xdsl.dialects.builtin import ModuleOp

        from .dialects.pyflame import spec_of_type

        funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
        public = [f for f in funcs if f.sym_visibility is None
                  or f.sym_visibility.data != "private"]
        if entry is not None:
            chosen = [f for f in public if f.sym_name.data == entry]
        else:
            chosen = [f for f in public if f.sym_name.data == "main"] or public
        if len(chosen) != 1:
            names = ", ".join(f"@{f.sym_name.data}" for f in public) or "none"
            raise MlirLoadError(f"{name}: error: expected one public function"
                                f"{f' @{entry}' if entry else ''} to run; found {names} "
                                "(pass entry=...)")
        fn = chosen[0]
        self.name = name
        self.entry = fn.sym_name.data
        try:
            self.input_specs = [spec_of_type(t, f"argument {i} of @{self.entry}")
                                for i, t in enumerate(fn.function_type.inputs.data)]
            self.output_specs = [spec_of_type(t, f"result {i} of @{self.entry}")
                                 for i, t in enumerate(fn.function_type.outputs.data)]
        except Exception as e:  # noqa: BLE001  (VerifyException: not a pyflame tensor type)
            raise MlirLoadError(f"{name}: error: {e}") from None
        # the entry and the private functions it may call (differentiated functions)
        keep = [op.clone() for op in funcs if op is fn or op not in public]
        self._module = ModuleOp(keep)
        self._executables: dict[tuple[str, str], Any] = {}

    def __call__(self, *args: Any) -> Tensor | tuple[Tensor, ...]:
        if len(args) != len(self.input_specs):
            raise TypeError(f"@{self.entry} ({self.name}) takes {len(self.input_specs)} "
                            f"arguments, got {len(args)}")
        arrays = [_argument(a, i, s, d, self.entry) for i, (a, (s, d))
                  in enumerate(zip(args, self.input_specs))]
        exe = self.executable()
        results = exe.run(arrays)
        outs = [Tensor._leaf(np.asarray(r)) for r in results]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def executable(self, backend: str | None = None) -> Any:
        """The function compiled for ``backend`` (default: the current one)."""
        name = backend or CONFIG.backend
        spec = pipeline_for(name, CONFIG.pipeline) if CONFIG.optimize else ""
        exe = self._executables.get((name, spec))
        if exe is None:
            b = get_backend(name)
            module = self._module.clone()
            expand_transforms(module)
            if spec:
                run_pipeline(module, spec)
            exe = self._executables[(name, spec)] = b.lower(module)
        return exe


def _argument(a: Any, i: int, shape: tuple[int, ...], d: DType, entry: str) -> np.ndarray:
    if isinstance(a, Tensor):
        v = a.numpy()
    else:
        v = np.asarray(a)
        if v.dtype != d.np and not isinstance(a, np.ndarray) and v.dtype.kind == d.np.kind:
            v = v.astype(d.np)  # a Python list or scalar of the right kind
    if v.shape != shape or v.dtype != d.np:
        raise TypeError(f"@{entry}: argument {i} must be {d.name}{list(shape)} (tensor<"
                        f"{'x'.join(map(str, shape))}{'x' if shape else ''}{d.short}>), got "
                        f"{v.dtype}{list(v.shape)}")
    return v


def load_mlir(text_or_path: str | os.PathLike, entry: str | None = None) -> MlirProgram:
    """Parse ``pyflame`` MLIR (text, or a path to a ``.mlir`` file) into a
    callable running its function (``entry``, or ``@main``, or the one public
    function) on the current backend. Bad text raises ``MlirLoadError``
    (``file:line:col: error: ...``)."""
    if isinstance(text_or_path, os.PathLike) or (
            isinstance(text_or_path, str) and "\n" not in text_or_path
            and "{" not in text_or_path and text_or_path.endswith(".mlir")):
        name = os.fspath(text_or_path)
        with open(name) as f:
            text = f.read()
    elif isinstance(text_or_path, str):
        name, text = "<string>", text_or_path
    else:
        raise TypeError(f"load_mlir: expects MLIR text or a path, got "
                        f"{type(text_or_path).__name__}")
    return MlirProgram(_parse(text, name), entry, name)

