"""``pf.scipy``: ``jax.scipy``'s special functions, distributions and
linear algebra under JAX's (SciPy's) names and conventions, and
``optimize.minimize`` (JAX's BFGS), as composites of
pyflame ops: differentiable wherever the ops are, array-likes converted as
``pf.numpy`` converts them (float64 data to float32)."""

from . import linalg, optimize, special, stats

__all__ = ["linalg", "optimize", "special", "stats"]
