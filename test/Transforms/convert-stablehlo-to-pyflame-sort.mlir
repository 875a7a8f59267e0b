// stablehlo.sort with JAX's comparator (jnp.argsort of floats: canonicalized,
// TOTALORDER LT) is the stable pyflame sort by the key, the operands gathered
// by its permutation; chlo.top_k a descending sort (0.0 before -0.0), sliced.
// RUN: pyflame-opt %s -p convert-stablehlo-to-pyflame | filecheck %s

// CHECK-LABEL: func.func public @argsort
func.func public @argsort(%arg0: tensor<6x3xf32>) -> (tensor<6x3xi32>, tensor<6x2xf32>) {
  // CHECK:      %[[I:.*]] = pyflame.iota {shape = array<i64: 6, 3>, dim = 1 : i64, dtype = i32}
  // CHECK-NEXT: %{{.*}}, %[[ORDER:.*]] = pyflame.sort %arg0 {dim = 1 : i64, descending = false}
  // CHECK-NEXT: %{{.*}} = pyflame.select_along %arg0, %[[ORDER]] {dim = 1 : i64}
  // CHECK-NEXT: %{{.*}} = pyflame.select_along %[[I]], %[[ORDER]] {dim = 1 : i64}
  %0 = stablehlo.iota dim = 1 : tensor<6x3xi32>
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.select %2, %cst, %arg1 : tensor<i1>, tensor<f32>
    %4 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f32>
    %6 = stablehlo.compare EQ, %arg2, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %7 = stablehlo.select %6, %cst, %arg2 : tensor<i1>, tensor<f32>
    %8 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %9 = stablehlo.select %8, %cst_1, %7 : tensor<i1>, tensor<f32>
    %10 = stablehlo.compare LT, %5, %9, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %10 : tensor<i1>
  }) : (tensor<6x3xf32>, tensor<6x3xi32>) -> (tensor<6x3xf32>, tensor<6x3xi32>)
  // CHECK:      pyflame.reciprocal %arg0
  // CHECK:      pyflame.sort %{{.*}} {dim = 1 : i64, descending = true}
  // CHECK:      pyflame.sort %{{.*}} {dim = 1 : i64, descending = true}
  // CHECK:      pyflame.slice %{{.*}} {start = array<i64: 0, 0>, limit = array<i64: 6, 2>, stride = array<i64: 1, 1>}
  // CHECK-NOT:  stablehlo.
  // CHECK-NOT:  chlo.
  %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<6x3xf32> -> (tensor<6x2xf32>, tensor<6x2xi32>)
  return %1#1, %values : tensor<6x3xi32>, tensor<6x2xf32>
}
