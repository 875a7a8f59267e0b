"""The native extensions: ``pyflame_mlir/_native.c``, the recording and
evaluation-walk hot paths of ``core.py``; ``dialects/_kernels.c``, loops of
some reference kernels (GELU, softmax, max pooling...), the numpy kernels their
fallback.
Everything else about the package is in pyproject.toml. ``optional``: without a
C compiler the package installs anyway and the pure-Python paths run (as with
PYFLAME_NO_NATIVE=1)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pyflame_mlir._native", ["pyflame_mlir/_native.c"],
                             extra_compile_args=["-O2"], optional=True),
                   # dialects/_kernels.c: vectorized loops of some reference kernels (-O3:
                   # gcc's full vectorizer; no FP traps or errno: branch-free selects
                   # vectorize); without it the numpy kernels run
                   Extension("pyflame_mlir.dialects._kernels", ["dialects/_kernels.c"],
                             extra_compile_args=["-O3", "-fno-trapping-math", "-Wno-psabi",
                                                 "-fno-math-errno"], optional=True)])
