"""``pf.scipy``: ``jax.scipy``'s special functions, distributions and
linear algebra under JAX's (SciPy's) names and conventions, as composites of
pyflame ops: differentiable wherever the ops are, array-likes converted as
``pf.numpy`` converts them (float64 data to float32)."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
