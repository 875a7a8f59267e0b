// custom_call targets with a pyflame op: @Sharding passes its operand, LAPACK's
// potrf is cholesky (the upper triangle keeps the operand's, as LAPACK leaves it).
// RUN: pyflame-opt %s -p convert-stablehlo-to-pyflame | filecheck %s

// CHECK-LABEL: func.func public @main
func.func public @main(%arg0: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>) {
  // CHECK-NEXT: %[[L:.*]] = pyflame.cholesky %arg0 : (tensor<3x3xf32>) -> tensor<3x3xf32>
  // CHECK:      %[[UP:.*]] = pyflame.lt %{{.*}}, %{{.*}} : (tensor<3x3xi64>, tensor<3x3xi64>) -> tensor<3x3xi1>
  // CHECK-NEXT: %[[F:.*]] = pyflame.where %[[UP]], %arg0, %[[L]]
  // CHECK-NEXT: %[[INFO:.*]] = pyflame.constant {value = dense<0> : tensor<i32>}
  // CHECK-NEXT: func.return %[[F]], %[[INFO]]
  %s = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{replicated}"} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%s) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<i32>
}
