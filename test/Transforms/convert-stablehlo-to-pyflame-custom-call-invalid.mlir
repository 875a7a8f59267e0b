// A custom_call target no pyflame op computes is refused by name, at the op.
// RUN: not pyflame-opt %s -p convert-stablehlo-to-pyflame 2>&1 | filecheck %s

// CHECK: convert-stablehlo-to-pyflame-custom-call-invalid.mlir:[[# @LINE + 2]]:3: error: 'stablehlo.custom_call' @lapack_sgeqrf_ffi is not supported: the targets load_mlir runs are SPMDFullToShardShape, SPMDShardToFullShape, Sharding and LAPACK's ?potrf, ?getrf, ?trsm, ?syevd, ?gesdd (s/d)
func.func public @main(%arg0: tensor<3x3xf32>) -> tensor<3xf32> {
  %0:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%arg0) {mhlo.backend_config = {}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}
