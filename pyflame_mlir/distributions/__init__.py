"""``pf.distributions``: torch.distributions' families, transforms and KL
registry, written from pyflame's ops (lazy: densities record ops; ``rsample``
is differentiable in the parameters). See ``distribution.py`` for sampling
and argument validation."""

from . import constraints, transforms
from .continuous import (
    Beta,
    Dirichlet,
    Exponential,
    Gamma,
    Laplace,
    MultivariateNormal,
    Normal,
    Uniform,
)
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .families2 import (
    Binomial,
    Cauchy,
    Chi2,
    Geometric,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    LogNormal,
    MixtureSameFamily,
    Multinomial,
    NegativeBinomial,
    Pareto,
    Poisson,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    StudentT,
    Weibull,
)
from .kl import kl_divergence, register_kl
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)
from .wrappers import Independent, TransformedDistribution

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform",
           "Exponential", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Pareto",
           "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "SigmoidTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "Weibull", "constraints", "kl_divergence",
           "register_kl", "transforms"]
