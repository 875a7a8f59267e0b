"""``torch.nn.utils.convert_parameters``'s module path."""

from . import parameters_to_vector, vector_to_parameters

__all__ = ["parameters_to_vector", "vector_to_parameters"]
