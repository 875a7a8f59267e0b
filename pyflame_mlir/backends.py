"""``pf.backends``: the switches a PyTorch training script sets at the top
(``torch.backends.cudnn.benchmark = True``, ``cudnn.deterministic = True``,
``torch.backends.cuda.matmul.allow_tf32 = True``) and the availability
queries (``torch.backends.mps.is_available()``). pyflame has no cuDNN, CUDA
or MPS device (``pf.cuda``), so the answers are torch's on a machine without
them: not available; the flags keep the value set, with torch's defaults,
and change nothing, as torch's do there."""

from __future__ import annotations

__all__ = ["cuda", "cudnn", "mps"]


class _CudnnModule:
    """``torch.backends.cudnn``."""

    def __init__(self) -> None:
        self.enabled = True
        self.benchmark = False
        self.deterministic = False
        self.allow_tf32 = True

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def version() -> None:
        return None


class _CudaMatmul:
    """``torch.backends.cuda.matmul``."""

    def __init__(self) -> None:
        self.allow_tf32 = False


class _CudaModule:
    """``torch.backends.cuda``."""

    def __init__(self) -> None:
        self.matmul = _CudaMatmul()

    @staticmethod
    def is_built() -> bool:
        return False


class _MpsModule:
    """``torch.backends.mps``."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_built() -> bool:
        return False


cudnn = _CudnnModule()
cuda = _CudaModule()
mps = _MpsModule()
