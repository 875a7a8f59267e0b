"""pyflame-mlir: lazy tensors traced into the `pyflame` MLIR dialect."""
