// The CHLO special functions JAX prints (chlo.erfc for exact gelu, sinh, lgamma...)
// parse and print; no one pyflame op computes them, so the pass refuses them at
// the op (pf.load_mlir runs them as the library's composites: pf.erfc, pf.sinh...).
// RUN: pyflame-opt %s | filecheck %s --check-prefix=PRINT
// RUN: not pyflame-opt %s -p convert-stablehlo-to-pyflame 2>&1 | filecheck %s

// PRINT:      %0 = chlo.erfc %x : tensor<3xf32> -> tensor<3xf32>
// PRINT-NEXT: %1 = chlo.erf_inv %0 : tensor<3xf32> -> tensor<3xf32>
// PRINT-NEXT: %2 = stablehlo.cbrt %1 : tensor<3xf32>
// CHECK: convert-stablehlo-to-pyflame-composites.mlir:[[# @LINE + 2]]:3: error: 'chlo.erfc' is not supported by this pass: no one pyflame op computes it (pf.load_mlir runs it as the library's composite)
func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = chlo.erfc %x : tensor<3xf32> -> tensor<3xf32>
  %1 = chlo.erf_inv %0 : tensor<3xf32> -> tensor<3xf32>
  %2 = stablehlo.cbrt %1 : tensor<3xf32>
  return %2 : tensor<3xf32>
}
