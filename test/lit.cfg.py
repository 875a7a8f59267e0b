# lit configuration: FileCheck tests of the pyflame compiler, by area
# (Dialect/, Transforms/, Conversion/, Target/). `make lit` puts the venv's
# `pyflame-opt` and `filecheck` on PATH.
import importlib.util
import os
import shutil

import lit.formats

config.name = "pyflame"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["python", "fixtures", "Output", "lit.cfg.py"]  # noqa: F821
config.environment["PATH"] = os.environ.get("PATH", "")  # noqa: F821
config.environment["MODULAR_TELEMETRY_ENABLED"] = "0"  # noqa: F821
for var in ("HOME", "PYFLAME_CACHE_DIR", "MODULAR_CACHE_DIR", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]  # noqa: F821

for tool in ("pyflame-opt", "filecheck"):
    if shutil.which(tool) is None:
        raise RuntimeError(f"lit: '{tool}' is not on PATH (run through `make lit`)")

# Optional backends become lit features, so tests can say `REQUIRES: max`.
for feature, module in (("max", "max.graph"),):
    try:
        if importlib.util.find_spec(module.split(".")[0]) is not None:
            config.available_features.add(feature)  # noqa: F821
    except (ImportError, ValueError):
        pass

# Upstream MLIR (extra [mlir], issue #18): `mlir-opt` ships in site-packages/mlir/bin,
# not on PATH; put it there and enable `REQUIRES: mlir` when it is present.
try:
    _mlir_spec = importlib.util.find_spec("mlir")
except (ImportError, ValueError):
    _mlir_spec = None
if _mlir_spec is not None and _mlir_spec.submodule_search_locations:
    _mlir_bin = os.path.join(list(_mlir_spec.submodule_search_locations)[0], "bin")
    if os.access(os.path.join(_mlir_bin, "mlir-opt"), os.X_OK):
        config.environment["PATH"] = _mlir_bin + os.pathsep + config.environment["PATH"]  # noqa: F821
        config.available_features.add("mlir")  # noqa: F821
