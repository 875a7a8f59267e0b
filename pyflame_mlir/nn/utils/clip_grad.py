"""``torch.nn.utils.clip_grad``'s module path for the clipping functions."""

from . import clip_grad_norm, clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]
