// constant and iota to MO. A splat is one scalar broadcast to the shape;
// bfloat16 literals go through float32 (exact); iota is a range, reshaped
// and broadcast along the other dims.
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s

// CHECK-LABEL: mo.graph @data() -> (
func.func @data() -> (tensor<2x3xf32>, tensor<f32>, tensor<3xi32>, tensor<2xbf16>, tensor<2x2xi1>, tensor<3x4xf32>, tensor<4xi64>) {
  // CHECK: %[[C15:.*]] = mo.constant <#M.dense_array<1.500000e+00> : tensor<f32>> : !mo.tensor<[], f32>
  // CHECK: %[[SPLAT:.*]] = rmo.broadcast_to(%[[C15]]) [newShape = #mosh<ape[2, 3]> : !mosh.ape]
  %0 = pyflame.constant {value = dense<1.5> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  // CHECK: %[[SCALAR:.*]] = mo.constant <#M.dense_array<2.000000e+00> : tensor<f32>> : !mo.tensor<[], f32>
  %1 = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: %[[INTS:.*]] = mo.constant <#M.dense_array<1, -2, 3> : tensor<3xsi32>> : !mo.tensor<[3], si32>
  %2 = pyflame.constant {value = dense<[1, -2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
  // CHECK: %[[F:.*]] = mo.constant <#M.dense_array<1.500000e+00, -2.000000e+00> : tensor<2xf32>>
  // CHECK: %[[BF:.*]] = mo.cast(%[[F]]) : (!mo.tensor<[2], f32>) -> !mo.tensor<[2], bf16>
  %3 = pyflame.constant {value = dense<[1.5, -2.0]> : tensor<2xbf16>} : () -> tensor<2xbf16>
  // CHECK: %[[BOOLS:.*]] = mo.constant <#M.dense_array<true, false, false, true> : tensor<2x2xi1>> : !mo.tensor<[2, 2], bool>
  %4 = pyflame.constant {value = dense<[[true, false], [false, true]]> : tensor<2x2xi1>} : () -> tensor<2x2xi1>
  // CHECK: %[[R:.*]] = rmo.mo.range(%{{.*}}, %{{.*}}, %{{.*}}) : (!mo.tensor<[], si64>, !mo.tensor<[], si64>, !mo.tensor<[], si64>) -> !mo.tensor<[3], si64>
  // CHECK: %[[RF:.*]] = mo.cast(%[[R]]) : (!mo.tensor<[3], si64>) -> !mo.tensor<[3], f32>
  // CHECK: %[[RC:.*]] = rmo.reshape(%[[RF]]) [newShape = #mosh<ape[3, 1]> : !mosh.ape]
  // CHECK: %[[IOTA:.*]] = rmo.broadcast_to(%[[RC]]) [newShape = #mosh<ape[3, 4]> : !mosh.ape]
  %5 = pyflame.iota {shape = array<i64: 3, 4>, dim = 0, dtype = f32} : () -> tensor<3x4xf32>
  // CHECK: %[[AR:.*]] = rmo.mo.range(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> !mo.tensor<[4], si64>
  %6 = pyflame.iota {shape = array<i64: 4>, dim = 0, dtype = i64} : () -> tensor<4xi64>
  // CHECK: mo.output %[[SPLAT]], %[[SCALAR]], %[[INTS]], %[[BF]], %[[BOOLS]], %[[IOTA]], %[[AR]] :
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<f32>, tensor<3xi32>, tensor<2xbf16>, tensor<2x2xi1>, tensor<3x4xf32>, tensor<4xi64>
}
