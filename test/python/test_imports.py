"""The import graph against DESIGN.md's layers: imports only go down, and no
module imports itself back through others.

The graph is read from the source with ``ast`` (every ``import`` statement,
in function bodies too; only ``if TYPE_CHECKING:`` blocks, which never run,
are left out), with relative imports resolved and the package-dir mapping of
pyproject.toml applied (``pyflame_mlir.dialects`` lives in ``dialects/``...).
Importing ``a.b.c`` runs the ``__init__`` of ``a.b`` too, so such a package
is an edge as well (unless it is a package of the importing module itself).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Imports that break the layers today and that another branch is removing
# (importing module, imported module): the reason. An entry also covers the
# packages whose ``__init__`` that import runs. The lead deletes an entry
# once the fix is merged; the test fails on an entry that no longer matches.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}

# DESIGN.md "Layers", bottom to top. A module may import its own layer or
# lower ones. The frontend (top-level modules of pyflame_mlir) is layered
# inside too; every top-level module must be placed here.
LAYERS = ("pyflame_mlir.dialects", "pyflame_mlir.lowering", "pyflame_mlir.passes",
          "pyflame_mlir.runtime", "pyflame_mlir", "pyflame_mlir.tools")
FRONTEND_LAYERS: dict[str, int] = {
    "pyflame_mlir.core": 0,  # Tensor, OpNode, record, collect, graphs, grad mode
    "pyflame_mlir.tree_util": 0,  # pytrees on optree
    "pyflame_mlir.tree": 0,  # jax.tree's names for tree_util's functions
    "pyflame_mlir.jax_config": 0,  # jax.config's flags (x64: pf.numpy's dtypes), on dtypes
    "pyflame_mlir.segment": 0,  # jax.ops' segment reductions on record (ops imports them)
    "pyflame_mlir.saved": 0,  # what torch's backward saves: the version check's records
    "pyflame_mlir.ops": 1,  # the op API on top of the core
    "pyflame_mlir.creation": 1,
    "pyflame_mlir.autodiff": 1,
    "pyflame_mlir.vmap": 1,  # vmap and the Jacobians on it (on top of autodiff)
    "pyflame_mlir.autograd": 1,
    "pyflame_mlir.autograd.functional": 1,  # torch.autograd.functional on the transforms
    "pyflame_mlir.autograd.forward_ad": 1,  # torch.autograd.forward_ad on the forward mode
    "pyflame_mlir.autograd.graph": 1,  # torch.autograd.graph: save_on_cpu
    "pyflame_mlir.autograd.function": 1,  # torch.autograd.function: once_differentiable
    "pyflame_mlir.autograd.gradcheck": 1,  # finite-difference checks of backward/forward
    "pyflame_mlir.torch_api": 1,  # finfo/iinfo, the default dtype, is_tensor
    "pyflame_mlir.torch_compat": 2,  # issue 14: torch's settings, windows, top-level F ops
    "pyflame_mlir.torch_compat2": 2,  # session 11: memory formats, top-level losses/cells
    "pyflame_mlir.testing": 1,  # pf.testing.assert_close
    "pyflame_mlir.cuda": 2,  # torch.cuda's queries (no CUDA device here); cuda.amp on amp
    "pyflame_mlir.accelerator": 0,  # torch.accelerator's queries (no accelerator here)
    "pyflame_mlir.tensor_str": 0,  # repr(tensor)'s body as torch's _tensor_str (numpy only)
    "pyflame_mlir.backends": 0,  # torch.backends' switches and queries (no cuDNN/CUDA/MPS)
    "pyflame_mlir.indexing": 1,  # gather/scatter indexing API and advanced getitem
    "pyflame_mlir.inplace": 1,  # in-place methods on Tensor, on top of ops and creation
    "pyflame_mlir.linalg": 1,  # pf.linalg: torch.linalg's names for ops' norms
    "pyflame_mlir.reductions": 1,  # prod, var, scans, sort... on top of ops
    "pyflame_mlir.composites": 1,  # more torch functions from the op API (on ops, inplace)
    "pyflame_mlir.composites2": 1,  # issue 14's torch surface: special functions, Tensor methods
    "pyflame_mlir.composites3": 1,  # session 11: gradient, histogram, as_strided, *_copy
    "pyflame_mlir.fft": 1,  # torch.fft's real helpers; the DFTs on (real, imag) pairs (s15)
    "pyflame_mlir.numpy_fft": 1,  # jnp.fft's names on fft's transforms (session 15)
    "pyflame_mlir.special": 1,  # torch.special's names (on composites2)
    "pyflame_mlir.math_rules": 1,  # session 12: torch's derivatives of composites (autograd)
    "pyflame_mlir.special_cephes": 0,  # session 11: torch's Bessel/Airy kernels, ported
    "pyflame_mlir.compiler": 2,  # the compile driver: cache, evaluate, backend table
    "pyflame_mlir.jit": 2,  # pf.compile / pf.trace: replay traced programs (on the driver)
    "pyflame_mlir.jax_compat": 2,  # jax.devices, default_backend, debug.print (on jit)
    # nn-core: modules, optimizers, checkpoints (on top of ops, creation, autodiff)
    "pyflame_mlir.nn": 2,
    "pyflame_mlir.nn.module": 2,
    "pyflame_mlir.nn.sparse_grad": 2,  # s13: sparse embedding gradients (rows for SparseAdam)
    "pyflame_mlir.nn.parameter": 2,  # torch.nn.parameter's path for Parameter
    "pyflame_mlir.func": 2,  # torch.func: transforms, functional_call (on nn.module)
    "pyflame_mlir.custom_derivatives": 2,  # custom_vjp / custom_jvp on autograd.Function
    "pyflame_mlir.lax": 2,  # JAX's control flow, checkpoint; convolutions (on nn.functional)
    "pyflame_mlir.random": 1,  # jax.random's threefry PRNG (on vmap, ops)
    "pyflame_mlir.scipy": 2,  # jax.scipy's names on special, linalg, numpy
    "pyflame_mlir.scipy.special": 2,
    "pyflame_mlir.scipy.stats": 2,
    "pyflame_mlir.scipy.linalg": 2,
    "pyflame_mlir.scipy.optimize": 2,  # jax.scipy.optimize.minimize (BFGS)
    "pyflame_mlir.numpy": 2,  # jax.numpy's semantics where torch's differ (on ops, lax)
    "pyflame_mlir.utils.checkpoint": 2,  # torch.utils.checkpoint (no memory saving yet)
    "pyflame_mlir.amp": 2,  # autocast regions and GradScaler (on ops' autocast policy)
    "pyflame_mlir.nn.containers": 2,
    "pyflame_mlir.nn.linear": 2,
    "pyflame_mlir.nn.init": 2,
    "pyflame_mlir.nn.initializers": 2,  # jax.nn.initializers (on random)
    "pyflame_mlir.nn.utils": 2,
    "pyflame_mlir.nn.utils.rnn": 2,  # issue 14 (userapi): packed sequences
    "pyflame_mlir.nn.utils.parametrize": 2,  # issue 14 (userapi): torch's parametrizations
    "pyflame_mlir.nn.utils.parametrizations": 2,  # weight_norm, spectral_norm
    "pyflame_mlir.nn.utils.prune": 2,  # s13: torch.nn.utils.prune
    "pyflame_mlir.nn.utils.fusion": 2,  # session 11: conv/linear + batch norm folding
    "pyflame_mlir.nn.utils.clip_grad": 2,  # torch's module paths
    "pyflame_mlir.nn.utils.convert_parameters": 2,
    "pyflame_mlir.nn.utils.stateless": 2,  # functional_call (pf.func's)
    "pyflame_mlir.optim": 2,
    "pyflame_mlir.optim.optimizer": 2,
    "pyflame_mlir.optim.sgd": 2,
    "pyflame_mlir.optim.adam": 2,
    "pyflame_mlir.optim.adam_variants": 2,
    "pyflame_mlir.optim.rmsprop": 2,
    "pyflame_mlir.optim.rprop_asgd": 2,
    "pyflame_mlir.optim.lr_scheduler": 2,
    "pyflame_mlir.optim.lbfgs": 2,  # issue 14 (userapi): L-BFGS, host-driven
    "pyflame_mlir.optim.adafactor": 2,  # session 11
    "pyflame_mlir.optim.muon": 2,  # session 11
    "pyflame_mlir.optim.swa_utils": 2,  # session 11: AveragedModel, SWALR, update_bn
    "pyflame_mlir.serialization": 2,
    "pyflame_mlir.utils": 2,  # pf.utils.data: datasets and the DataLoader
    "pyflame_mlir.utils.data": 2,
    # nn-func: nn.functional (composites of ops) and the layer modules on top of it
    "pyflame_mlir.nn.functional": 2,
    "pyflame_mlir.nn.jax_nn": 2,  # jax.nn's functions under pf.nn (composites of ops)
    "pyflame_mlir.nn.layers": 2,
    "pyflame_mlir.nn.more_layers": 2,  # thin modules over more of functional
    "pyflame_mlir.nn.surface_layers": 2,  # issue 14: Conv3d, 3-d pools, LRN, Lp pools
    "pyflame_mlir.nn.extra_layers": 2,  # issue 14: 3-d norms/dropout/pads, Softmax2d
    "pyflame_mlir.nn.rnn": 2,  # RNN/LSTM/GRU on functional and linear
    "pyflame_mlir.nn.transformer": 2,  # the Transformer layers on layers' attention
    "pyflame_mlir.nn.attention": 2,  # session 11: sdpa_kernel, SDPBackend
    "pyflame_mlir.nn.grad": 2,  # session 11: torch.nn.grad's conv gradients (vjps)
    "pyflame_mlir.nn.lazy": 2,  # session 11: lazy modules, ConvTranspose3d, AlphaDropout...
    "pyflame_mlir.nn.modules": 2,  # s16: torch.nn.modules' layout over nn's classes
    "pyflame_mlir.nn.modules.activation": 2,
    "pyflame_mlir.nn.modules.adaptive": 2,
    "pyflame_mlir.nn.modules.batchnorm": 2,
    "pyflame_mlir.nn.modules.channelshuffle": 2,
    "pyflame_mlir.nn.modules.container": 2,
    "pyflame_mlir.nn.modules.conv": 2,
    "pyflame_mlir.nn.modules.distance": 2,
    "pyflame_mlir.nn.modules.dropout": 2,
    "pyflame_mlir.nn.modules.flatten": 2,
    "pyflame_mlir.nn.modules.fold": 2,
    "pyflame_mlir.nn.modules.instancenorm": 2,
    "pyflame_mlir.nn.modules.lazy": 2,
    "pyflame_mlir.nn.modules.linear": 2,
    "pyflame_mlir.nn.modules.loss": 2,
    "pyflame_mlir.nn.modules.module": 2,
    "pyflame_mlir.nn.modules.normalization": 2,
    "pyflame_mlir.nn.modules.padding": 2,
    "pyflame_mlir.nn.modules.pixelshuffle": 2,
    "pyflame_mlir.nn.modules.pooling": 2,
    "pyflame_mlir.nn.modules.rnn": 2,
    "pyflame_mlir.nn.modules.sparse": 2,
    "pyflame_mlir.nn.modules.transformer": 2,
    "pyflame_mlir.nn.modules.upsampling": 2,
    "pyflame_mlir.nn.modules.utils": 2,
    "pyflame_mlir": 3,  # __init__: the public API
    # issue 20: PYFLAME_LOG set-up; the cache command over the runtime's disk caches
    "pyflame_mlir.logging_util": 0,
    "pyflame_mlir.cache_cli": 2,
    "pyflame_mlir.__main__": 4,  # python -m pyflame_mlir
    # issue 19 (graphs): PFGB files, MLIR text back into a callable, DOT
    "pyflame_mlir.graph_file": 2,
    "pyflame_mlir.graphviz": 2,
    "pyflame_mlir.mlir_import": 2,
    "pyflame_mlir.linalg_generic_import": 2,  # load_mlir: linalg.generic as pyflame ops
    "pyflame_mlir.tosa_import": 2,  # load_mlir: tosa ops as pyflame ops
    # issue 17: meshes, shard_map, collectives (virtual mesh); torch.distributed; the launcher
    "pyflame_mlir.sharding": 2,
    "pyflame_mlir.distributed": 2,
    "pyflame_mlir.launch": 4,
    "pyflame_mlir.csl_report": 2,  # issue 16: pf.csl_report, over the csl runtime's last run
    # issue 14 (userapi): torch.distributions' families, transforms and KL registry
    "pyflame_mlir.distributions": 2,
    "pyflame_mlir.distributions.constraints": 2,
    "pyflame_mlir.distributions.distribution": 2,
    "pyflame_mlir.distributions.continuous": 2,
    "pyflame_mlir.distributions.discrete": 2,
    "pyflame_mlir.distributions.transforms": 2,
    "pyflame_mlir.distributions.wrappers": 2,
    "pyflame_mlir.distributions.kl": 2,
    "pyflame_mlir.distributions.families2": 2,
}


@dataclass(frozen=True)
class Import:
    importer: str  # module names
    imported: str
    via: str  # the module the statement names (``imported`` or a module inside it)
    file: Path
    line: int

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.importer} imports {self.imported}"


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """pyproject.toml's package-dir mapping: package name -> its folder."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {pkg: root / folder for pkg, folder in mapping.items()}


def find_modules(packages: dict[str, Path]) -> dict[str, Path]:
    """Every module of the packages (subpackages with an ``__init__.py``
    included), by its dotted name. A folder another mapping names is that
    mapping's, not a subpackage here."""
    mapped = {p.resolve() for p in packages.values()}
    modules: dict[str, Path] = {}

    def walk(pkg: str, folder: Path) -> None:
        for path in sorted(folder.iterdir()):
            if path.is_dir():
                if (path / "__init__.py").exists() and path.resolve() not in mapped:
                    walk(f"{pkg}.{path.name}", path)
            elif path.suffix == ".py":
                modules[pkg if path.stem == "__init__" else f"{pkg}.{path.stem}"] = path

    for pkg, folder in packages.items():
        walk(pkg, folder)
    return modules


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines of ``if TYPE_CHECKING:`` bodies (type-only imports never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The edges from module ``name`` to our modules."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.stem == "__init__"
    skip = _type_checking_lines(tree)
    own_packages = {name.rsplit(".", i)[0] for i in range(name.count(".") + 1)}
    if not is_package:
        own_packages.discard(name)
    edges: list[Import] = []

    def add(target: str, line: int) -> None:
        # the target and the packages whose __init__ importing it runs
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            mod = ".".join(parts[:i])
            if mod in modules and mod not in own_packages and mod != name:
                edges.append(Import(name, mod, target, path, line))

    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name if is_package else name.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    base = base.rsplit(".", 1)[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            add(target, node.lineno)
            for alias in node.names:  # ``from pkg import submodule``
                if f"{target}.{alias.name}" in modules:
                    add(f"{target}.{alias.name}", node.lineno)
    return edges


def import_graph(packages: dict[str, Path]) -> list[Import]:
    modules = find_modules(packages)
    return [e for name, path in modules.items() for e in imports_of(name, path, modules)]


def layer_of(module: str) -> tuple[int, int]:
    """(layer, frontend sublayer); a KeyError for a frontend module not placed."""
    for i in range(len(LAYERS) - 1, -1, -1):
        if i == LAYERS.index("pyflame_mlir"):
            continue
        if module == LAYERS[i] or module.startswith(LAYERS[i] + "."):
            return (i, 0)
    if module not in FRONTEND_LAYERS:
        raise KeyError(f"{module} is a frontend module without a layer: place it in "
                       f"FRONTEND_LAYERS ({__file__})")
    return (LAYERS.index("pyflame_mlir"), FRONTEND_LAYERS[module])


def upward_imports(edges: list[Import]) -> list[Import]:
    return [e for e in edges if layer_of(e.imported) > layer_of(e.importer)]


def cycles(edges: list[Import]) -> list[list[Import]]:
    """One cycle (as its edges) per strongly connected component with one."""
    succ: dict[str, list[Import]] = {}
    for e in edges:
        succ.setdefault(e.importer, []).append(e)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan (graphs here are small)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for e in succ.get(v, []):
            w = e.imported
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1 or any(e.imported == v for e in succ.get(v, [])):
                components.append(comp)

    for v in sorted({e.importer for e in edges}):
        if v not in index:
            strongconnect(v)
    found = []
    for comp in components:  # walk inside the component back to its start
        start = min(comp)
        path, seen, v = [], {start: 0}, start
        while True:
            e = next(e for e in succ[v] if e.imported in comp)
            path.append(e)
            v = e.imported
            if v in seen:
                found.append(path[seen[v]:])
                break
            seen[v] = len(path)
    return found


def violations(packages: dict[str, Path],
               allowed: dict[tuple[str, str], str] | None = None) -> list[str]:
    """Every upward import and every cycle, each naming file, line and import."""
    allowed = allowed or {}
    edges = [e for e in import_graph(packages)
             if (e.importer, e.imported) not in allowed and (e.importer, e.via) not in allowed]
    out = [f"import up a layer: {e.where()}" for e in upward_imports(edges)]
    for cycle in cycles(edges):
        out.append("import cycle:\n  " + "\n  ".join(e.where() for e in cycle))
    return out


# ---- the project ----

def test_imports_go_down_the_layers_without_cycles():
    problems = violations(package_dirs(), KNOWN_VIOLATIONS)
    assert not problems, "\n".join(problems)


def test_known_violations_still_exist():
    """An allow-list entry whose import is gone must be deleted (so it cannot
    hide a new violation later)."""
    edges = {pair for e in import_graph(package_dirs())
             for pair in ((e.importer, e.via), (e.importer, e.imported))}
    stale = [k for k in KNOWN_VIOLATIONS if k not in edges]
    assert not stale, f"remove these from KNOWN_VIOLATIONS, they are fixed: {stale}"


def test_every_top_level_module_has_a_layer():
    for name in find_modules(package_dirs()):
        layer_of(name)  # raises for an unplaced frontend module


# ---- the checker itself fails ----

def _fake_tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    packages = {"pyflame_mlir": root / "pyflame_mlir", "pyflame_mlir.dialects": root / "dialects",
                "pyflame_mlir.passes": root / "passes"}
    return {pkg: folder for pkg, folder in packages.items() if folder.is_dir()}


def test_checker_reports_a_cycle_and_upward_imports(tmp_path):
    packages = _fake_tree(tmp_path, {
        "pyflame_mlir/__init__.py": "from . import compiler\n",
        "pyflame_mlir/core.py": "import numpy\n\n\ndef f():\n    from .compiler import g\n",
        "pyflame_mlir/compiler.py": "from .core import f\nfrom .passes import cse\n",
        "dialects/__init__.py": "",
        "dialects/ops.py": "from ..passes.cse import run  # up\n",
        "passes/__init__.py": "",
        "passes/cse.py": "from pyflame_mlir.dialects import ops\n",
    })
    problems = violations(packages)
    text = "\n".join(problems)
    core, ops = tmp_path / "pyflame_mlir" / "core.py", tmp_path / "dialects" / "ops.py"
    # a function-body import that goes up (core -> compiler) and closes a cycle
    assert f"import up a layer: {core}:5: pyflame_mlir.core imports pyflame_mlir.compiler" \
        in problems
    assert f"import up a layer: {ops}:1: pyflame_mlir.dialects.ops imports " \
           "pyflame_mlir.passes.cse" in problems
    assert "import cycle:" in text and "pyflame_mlir.compiler imports pyflame_mlir.core" in text
    assert "pyflame_mlir.passes.cse imports pyflame_mlir.dialects.ops" in text  # cycle two
    assert sum(p.startswith("import cycle") for p in problems) == 2
    # passes -> dialects and compiler -> passes go down: not reported
    assert not any("compiler imports pyflame_mlir.passes" in p and "up a layer" in p
                   for p in problems)
    # allowing the edges leaves nothing
    allowed = {("pyflame_mlir.core", "pyflame_mlir.compiler"): "test",
               ("pyflame_mlir.dialects.ops", "pyflame_mlir.passes.cse"): "test"}
    assert violations(packages, allowed) == []


def test_checker_places_unknown_frontend_modules(tmp_path):
    packages = _fake_tree(tmp_path, {"pyflame_mlir/__init__.py": "from . import extra\n",
                                     "pyflame_mlir/extra.py": ""})
    with pytest.raises(KeyError, match="pyflame_mlir.extra is a frontend module"):
        violations(packages)


def test_type_checking_imports_are_not_edges(tmp_path):
    packages = _fake_tree(tmp_path, {
        "pyflame_mlir/__init__.py": "",
        "pyflame_mlir/core.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                "    from .compiler import X\n",
        "pyflame_mlir/compiler.py": "from .core import Y\n",
    })
    assert violations(packages) == []


# ---- xDSL stays off the recording path ----

NO_XDSL_PROGRAM = """
import sys
import pyflame_mlir as pf
a = pf.randn(4, 3, requires_grad=True)
b = pf.ones(3, 2) + pf.arange(2) * 0.5
y = (pf.relu(a @ b) * 2 - 1).exp().sum(1)
z = pf.zeros_like(y).reshape(2, 2).T
loss = (y ** 2).mean()
loss.backward()  # records the vjp node, computes nothing
assert pf.is_lazy(loss) and pf.is_lazy(a.grad)
print(sorted(m for m in sys.modules if m == "xdsl" or m.startswith("xdsl.")))
"""

_LAZY_ENV = {**os.environ, "PYFLAME_EAGER": "0"}


def test_import_and_recording_import_no_xdsl():
    """Lazy-only (its subprocess records lazily whatever PYFLAME_EAGER says):
    eager mode compiles every op, and so loads xDSL."""
    out = subprocess.run([sys.executable, "-c", NO_XDSL_PROGRAM], capture_output=True,
                         text=True, check=True, env=_LAZY_ENV)
    assert out.stdout.strip() == "[]", out.stdout


def test_evaluation_does_import_xdsl():
    """The check above can fail: compiling a graph loads xDSL."""
    code = NO_XDSL_PROGRAM + "loss.item()\nprint('xdsl' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=_LAZY_ENV)
    assert out.stdout.split()[-1] == "True"
