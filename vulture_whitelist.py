"""Names vulture reports as unused that are used, by a framework or by users.

vulture reads this file with the code (``[tool.vulture] paths``); it is never
imported or run. Each name is listed with why it stays. Dead code is removed,
not listed here.
"""

# ---- counters and records read by name (snapshot() copies __dict__ / fields()) ----
# core.Counters, compiler (COUNTERS.*), runtime.max_backend.MaxStats
_.executions
_.ir_builds
_.graph_builds
_.disk_loads
_.disk_writes
_.memory_hits
_.symbolic_fallbacks
_.graph_build_seconds
_.compile_seconds
_.load_seconds
_.last_fallback
# runtime.mlir_backend.Stats: test_mlir_backend.py prints them from a child process
_.disk_hits
# compiler.CompileReport: a field of the record pf.compile_graph() returns to users
num_outputs

# ---- kept alive on purpose ----
_._keepalive  # mlir_backend: the ExecutionEngine / library owning the JIT-ed code

# ---- public API reached by name ----
_.mark_dirty  # autograd.FunctionCtx: torch's ctx API, called by users (raises: unsupported)
getitem  # ops.py: Tensor.__getitem__ via the method table ("__getitem__": "getitem"); pf.getitem
retain_graph  # Tensor.backward(retain_graph=...): PyTorch's signature, accepted, no effect
_._recreate_cm  # autodiff._grad_mode: contextlib.ContextDecorator calls it per decorated call
_.is_task_done  # runtime/wse/sdkruntime: the Cerebras SdkRuntime API the stand-in mirrors

# ---- the WSE target description: documented machine figures and per-arch rules ----
mem_reads_per_cycle  # CycleModel figure, in FIGURES and docs/perf/wse.md
mem_writes_per_cycle  # CycleModel figure, in FIGURES and docs/perf/wse.md


# ---- lit reads these from test/lit.cfg.py ----
_.test_format
_.suffixes
_.test_source_root
_.excludes

# ---- pytest fixtures, requested by parameter name (or autouse) ----
fresh_cache
on_mlir
one_compile_at_a_time
lazy_mode  # test_core.py (autouse)

# ---- issue 14 math: PyTorch's names, used by users (tests reach them through getattr) ----
# and PyTorch-compatible keyword arguments that have nothing to do here
arctanh
arccosh
arcsinh
absolute
isinf
ger
addbmm
memory_format
non_blocking

# ---- branch surface (issue 14): torch.nn.functional's in-place activations, called by users ----
relu_
elu_
leaky_relu_
hardtanh_
selu_
celu_
rrelu_
threshold_

# ---- torch_compat's legacy tensor types: the metaclass hooks Python calls ----
_.__call__  # pf.FloatTensor([1, 2])
_.__instancecheck__  # isinstance(x, pf.FloatTensor)

# ---- serialization's torch-checkpoint reader: pickle.Unpickler's hooks ----
_.find_class
_.persistent_load
# ---- jaxhunt (s11): called by name (methodcaller) by register_pytree_with_keys_class ----
tree_flatten_with_keys
# module __getattr__ of pf.numpy (PEP 562: Python calls it for a missing name)
__getattr__
# ---- session 11 (surface): the module __getattr__ (PEP 562) Python calls on a miss ----
__getattr__  # pyflame_mlir.nn.utils: loads pf.nn.utils.stateless on first use
# ---- s12 (sdkhunt): BoundedParser overrides of xDSL parser hooks, called by xDSL ----
_._parse_dialect_resource_handle  # a dense_resource<key> handle
# pf.lax.Precision's values: JAX users pass lax.Precision.DEFAULT/HIGH/HIGHEST (accepted, ignored)
_.DEFAULT
_.HIGH
# ---- s14 (irhunt): xDSLOptMain reads it for --version ----
_.version_format
# ---- s16 (speed19): inspect.signature reads it (ops._with_out: the op functions show out=) ----
_.__signature__
# ---- s16 (irhunt): xDSL's Data attribute hooks, called by its parser and printer ----
_.parse_parameter  # dialects/stablehlo.py: custom_call's opaque attributes
_.print_parameter
# ---- s16 (jaxhunt): jax.scipy.optimize.OptimizeResults' fields, read by users ----
_.success
_.njev
_.nit
# jit(f).lower(...).cost_analysis()/memory_analysis(): JAX's names, called by users (they refuse)
_.cost_analysis
_.memory_analysis
