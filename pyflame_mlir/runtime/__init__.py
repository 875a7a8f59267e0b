"""pyflame_mlir/runtime."""
