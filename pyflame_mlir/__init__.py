"""pyflame-mlir: a lazy tensor library traced into the ``pyflame`` MLIR dialect.

    import pyflame_mlir as pf
    a = pf.randn([1024, 512]); w = pf.randn([512, 256])
    y = pf.relu(a @ w).sum()      # recorded, not run: y.shape == ()
    y.item()                      # compiles (or hits the cache) and runs
"""

from __future__ import annotations

import os as _os
from collections.abc import Iterator as _Iterator
from contextlib import contextmanager as _contextmanager
from typing import Any as _Any

from . import (  # noqa: F401  (inplace sets the in-place methods; the rest are pf.<name>)
    accelerator,
    amp,
    autograd,
    backends,
    cuda,
    distributions,
    func,
    inplace,
    lax,
    linalg,
    nn,
    numpy,  # jax.numpy's semantics where torch's differ (pf.numpy as jnp)
    optim,
    random,  # jax.random's counter-based PRNG (threefry2x32)
    scipy,  # jax.scipy: special functions, distributions, linear algebra
    sharding,
    special,
    testing,
    tree,  # jax.tree's names (pf.tree.map, pf.tree.leaves, ...)
    tree_util,
    utils,
)
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .autodiff import (
    enable_grad,
    float0,
    grad,
    is_grad_enabled,
    jvp,
    no_grad,
    set_grad_enabled,
    value_and_grad,
    vjp,
)
from .compiler import (
    BACKENDS,
    CACHE,
    CompileReport,
    compile_graph,
    export_csl,
    format_graph,
    get_graph_stats,
    print_graph,
    structural_hash,
    to_mlir,
)
from .compiler import evaluate as _evaluate
from .compiler import get_backend as _get_backend
from .compiler import pipeline_spec as _pipeline_spec
from .composites import *  # noqa: F403  (addcmul, logaddexp, cdist, searchsorted, ...)
from .composites2 import *  # noqa: F403  (issue 14's surface: lgamma, isclose, rot90, ...)
from .composites2 import trace as _matrix_trace
from .core import (
    CONFIG,
    COUNTERS,
    GRAPH,
    Graph,
    Size,
    Tensor,
    create_graph,
    current_graph,
    graph_scope,
    reuse_graph,
)
from .creation import (
    Generator,
    arange,
    as_tensor,
    asarray,
    bernoulli,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from .csl_report import CslStepReport, csl_report  # issue 16: the csl step report
from .custom_derivatives import custom_jvp, custom_vjp  # JAX's custom derivative rules
from .dialects.dtypes import (
    DType,
    bfloat16,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from .dialects.dtypes import bool_ as bool  # noqa: A001  (pf.bool, like torch.bool)
from .dialects.dtypes import dtype as dtype
from .dialects.opdef import ShapeError

# issue 19 (graphs): PFGB graph files, MLIR text back into Python, Graphviz DOT
from .graph_file import GraphFileError, GraphProgram, load_graph, save_graph
from .graphviz import to_dot, to_svg
from .indexing import *  # noqa: F403  (gather, scatter, advanced getitem, one_hot, ...)
from .indexing import INDEXING_METHODS as _INDEXING_METHODS
from .indexing import embedding as _indexing_embedding
from .indexing import getitem as _advanced_getitem
from .indexing import where as _where_or_nonzero
from .jax_compat import (
    Array,
    ClosedProgram,
    debug,
    default_backend,
    device_count,
    devices,
    disable_jit,
    effects_barrier,
    ensure_compile_time_eval,
    experimental,
    linear_transpose,
    local_device_count,
    local_devices,
    make_jaxpr,
    named_call,
    named_scope,
    process_count,
    process_index,
    profiler,
    pure_callback,
)
from .jax_config import config  # jax.config: jax_enable_x64 (pf.numpy's dtypes), ...
from .jit import (  # noqa: A004  (pf.compile shadows the builtin)
    ShapeDtypeStruct,
    TracedProgram,
    block_until_ready,
    compile,
    device_get,
    device_put,
    eval_shape,
)
from .jit import program as _trace_program
from .lax import checkpoint, checkpoint_policies, remat, stop_gradient
from .linalg import TOP_LEVEL as _LINALG_TOP_LEVEL  # torch.inverse, det, ... (pf.linalg)
from .linalg import (
    LinAlgError,
    cholesky_inverse,
    cholesky_solve,
    det,
    inverse,
    logdet,
    lu_unpack,
    matrix_exp,
    pinverse,
    slogdet,
    triangular_solve,
)

# issue 20: PYFLAME_LOG (the module is not `log`: pf.log is the op)
from .logging_util import configure as configure_logging
from .mlir_import import MlirLoadError, MlirProgram, load_mlir  # issue 19: MLIR text back
from .ops import *  # noqa: F403  (the op API: add, relu, sum, matmul, ...)
from .ops import METHODS as _METHODS
from .ops import ValuesIndices  # noqa: F401
from .reductions import all as all  # noqa: PLC0414  (torch.all: shadows the builtin on purpose)
from .reductions import (  # reductions, scans and sorting beyond sum/mean/max/min
    aminmax,
    argsort,
    count_nonzero,
    cummax,
    cummin,
    cumprod,
    cumsum,
    kthvalue,
    logcumsumexp,
    median,
    mode,
    msort,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    prod,
    quantile,
    sort,
    std,
    std_mean,
    topk,
    var,
    var_mean,
)
from .reductions import any as any  # noqa: PLC0414
from .serialization import load, save
from .sharding import (  # issue 17: meshes, shardings, shard_map and its collectives
    DeviceMesh,
    NamedSharding,
    P,
    PartitionSpec,
    all_gather,
    all_reduce,
    all_to_all,
    axis_index,
    ppermute,
    reduce_scatter,
    reshard,
    shard,
    shard_map,
)
from .torch_api import (  # torch's dtype facts, default dtype and type tests
    finfo,
    get_default_dtype,
    iinfo,
    is_tensor,
    numel,
    set_default_dtype,
)
from .torch_api import install_numpy_names as _install_numpy_names
from .tree_util import tree_flatten, tree_unflatten  # pf.tree_flatten: an alias
from .vmap import (  # function transforms (issue 19)
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    linearize,
)
from .vmap import vmap as _jax_vmap

where = _where_or_nonzero  # after `from .ops import *`: torch's where(cond) form too
configure_logging()  # a stderr handler at PYFLAME_LOG's level, when it is set
getitem = _advanced_getitem  # ops' * brought the basic one

_os.environ.setdefault("MODULAR_TELEMETRY_ENABLED", "0")
half, double, float, long, short = float16, float64, float32, int64, int16  # noqa: A001


def embedding(weight: Tensor, input: Tensor, padding_idx: int = -1,  # noqa: A002
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding(weight, indices)`` (the weight first; ``padding_idx``
    -1 is none): ``pf.nn.functional.embedding`` takes the indices first."""
    return _indexing_embedding(input, weight, None if padding_idx == -1 else padding_idx,
                               None, 2.0, scale_grad_by_freq, sparse)


_TORCH_VMAP_KEYWORDS = frozenset({"in_dims", "out_dims", "randomness", "chunk_size"})


def vmap(f: _Any, *args: _Any, **kwargs: _Any) -> _Any:
    """JAX's ``vmap(f, in_axes, out_axes, axis_name, axis_size)`` (``pf.vmap.vmap``), or
    torch's ``vmap(f, in_dims=, out_dims=, randomness=, chunk_size=)`` when called with
    torch's keywords (``pf.func.vmap``); positionally the two agree on in/out axes."""
    torch_keywords = _TORCH_VMAP_KEYWORDS & kwargs.keys()
    if not torch_keywords:
        return _jax_vmap(f, *args, **kwargs)
    jax_keywords = kwargs.keys() - _TORCH_VMAP_KEYWORDS
    if jax_keywords:
        raise TypeError(f"vmap: torch's keywords {sorted(torch_keywords)} (torch.vmap) and "
                        f"{sorted(jax_keywords)} given together; use one library's spelling")
    return func.vmap(f, *args, **kwargs)


def trace(f: _Any, *args: _Any, **kwargs: _Any) -> _Any:
    """``pf.trace(f, *args)``: the traced program of ``f`` (inputs, outputs,
    IR); ``pf.trace(matrix)``: torch's trace, the sum of the diagonal."""
    if isinstance(f, Tensor):
        return _matrix_trace(f, *args, **kwargs)
    return _trace_program(f, *args, **kwargs)


def eval(*tensors: Tensor) -> tuple[Tensor, ...] | Tensor:  # noqa: A001
    """Evaluate several tensors in one compiled graph; returns them realized."""
    flat = [t for t in tensors if isinstance(t, Tensor)]
    _evaluate(flat)
    return tensors[0] if len(tensors) == 1 else tensors


def is_lazy(t: Tensor) -> bool:
    """True while ``t`` is a promise (nothing computed it yet)."""
    return t._node is not None


def cache_stats() -> dict[str, int]:
    return CACHE.stats()


def clear_cache() -> None:
    CACHE.clear()


def counters() -> dict[str, int]:
    return COUNTERS.snapshot()


def set_backend(name: str) -> None:
    _get_backend(name)  # fails now, with the reason, if it cannot work
    CONFIG.backend = name


def get_backend() -> str:
    return CONFIG.backend


@_contextmanager
def backend(name: str) -> _Iterator[None]:
    prev = CONFIG.backend
    set_backend(name)
    try:
        yield
    finally:
        CONFIG.backend = prev


def set_pipeline(spec: str | None) -> None:
    """Override the pass pipeline of ``evaluate``: a pass list as ``pyflame-opt -p``
    takes it (``"cse,dce,fuse"``), a named pipeline (``"default"``, ``"portable"``,
    ``"fast-math"``, ``"none"``), or None for the backend's default. A bad
    pipeline fails here, not at the next evaluation. Setting exactly the current
    backend's default means following the default, so ``prev = get_pipeline()``
    ... ``set_pipeline(prev)`` restores the state it saved."""
    if spec is None:
        CONFIG.pipeline = None
        return
    from .passes import default_pipeline  # xDSL: off the import path
    from .passes.pipeline import resolve

    text = resolve(spec)  # unknown passes and bad options raise here
    CONFIG.pipeline = None if text == default_pipeline(CONFIG.backend) else text


def get_pipeline() -> str:
    """The pass pipeline ``evaluate`` runs now (printable, and accepted back by
    ``set_pipeline`` and ``pyflame-opt -p``)."""
    return _pipeline_spec()


cholesky, svd, qr = (_LINALG_TOP_LEVEL[n]  # torch.cholesky/svd/qr: torch's old signatures
                     for n in ("cholesky", "svd", "qr"))
lu, lu_solve = _LINALG_TOP_LEVEL["lu"], _LINALG_TOP_LEVEL["lu_solve"]  # issue 14: torch.lu/lu_solve

# issue 14 (s10-surface14): torch's process settings, windows, dtype queries, and the
# top-level spellings of functional and in-place ops (torch.conv2d, torch.relu_, ...)
from .torch_compat import *  # noqa: E402, F403
from .torch_compat import FUNCTIONAL_ALIASES as _FUNCTIONAL_ALIASES  # noqa: E402
from .torch_compat import INPLACE_FUNCTIONS as _INPLACE_FUNCTIONS  # noqa: E402
from .torch_compat import (  # noqa: E402
    adaptive_max_pool1d,
    batch_norm,
    dropout,
    instance_norm,
    layer_norm,
)

globals().update({n: f for n, f in {**_FUNCTIONAL_ALIASES, **_INPLACE_FUNCTIONS}.items()
                  if n not in globals()})

_install_numpy_names(globals(), Tensor)  # axis=/keepdims= wherever dim=/keepdim= (torch)
_install_numpy_names(vars(linalg))  # (torch.linalg's and torch.special's native functions too)
_install_numpy_names(vars(special))

def __getattr__(name: str) -> _Any:
    """``pf.__version__`` (scripts print ``torch.__version__``): the installed
    distribution's version, read when asked (importlib.metadata costs ~1 ms)."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pyflame-mlir")
        except PackageNotFoundError:
            return "0+unknown"  # (run from a source tree that was never installed)
    raise AttributeError(f"module 'pyflame_mlir' has no attribute {name!r}")


__all__ = ([n for n in dir() if not n.startswith("_")
            and n not in ("annotations", "numpy", "random")]  # (star imports keep numpy/random)
           + list(_METHODS) + list(_INDEXING_METHODS))
