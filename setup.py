"""The native extension (``pyflame_mlir/_native.c``): the recording and
evaluation-walk hot paths of ``core.py``. Everything else about the package is
in pyproject.toml. ``optional``: without a C compiler the package installs
anyway and ``core.py`` runs its pure-Python paths (as with PYFLAME_NO_NATIVE=1)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pyflame_mlir._native", ["pyflame_mlir/_native.c"],
                             extra_compile_args=["-O2"], optional=True)])
