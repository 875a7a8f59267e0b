// check-indices: each indexing op of @main whose index is not a constant gets
// one more function result, the count of its out-of-range indices; the
// function's pyflame.index_checks attribute names op, dim and size in order.
// RUN: pyflame-opt %s -p check-indices | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<2x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<f32>)
// CHECK-SAME:    pyflame.index_checks = ["gather:0:4", "scatter_add:0:4"]
// CHECK:         %[[G:.*]] = pyflame.gather %x, %i {dim = 0 : i64}
// CHECK:         %[[S:.*]] = pyflame.scatter_add %x, %j, %s {dim = 0 : i64}
// CHECK:         %[[Z:.*]] = pyflame.constant {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[LT:.*]] = pyflame.lt %i, %[[Z]]
// CHECK-NEXT:    %[[N:.*]] = pyflame.constant {value = dense<4> : tensor<i64>}
// CHECK-NEXT:    %[[GE:.*]] = pyflame.ge %i, %[[N]]
// CHECK-NEXT:    %[[BAD:.*]] = pyflame.logical_or %[[LT]], %[[GE]]
// CHECK-NEXT:    %[[F:.*]] = pyflame.convert %[[BAD]] {dtype = f32}
// CHECK-NEXT:    %[[C1:.*]] = pyflame.sum %[[F]] {dims = array<i64: 0, 1>, keepdim = false}
// CHECK:         %[[C2:.*]] = pyflame.sum
// CHECK:         func.return %[[G]], %[[S]], %[[C1]], %[[C2]]
func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %j: tensor<2x3xi64>,
                %s: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %g = pyflame.gather %x, %i {dim = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %t = pyflame.scatter_add %x, %j, %s {dim = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %g, %t : tensor<2x3xf32>, tensor<4x3xf32>
}

// A constant index was checked when it was recorded: nothing is added.
// CHECK-LABEL: func.func @constant_index
// CHECK-NOT:     pyflame.index_checks
// CHECK:         func.return %{{.*}} : tensor<2x3xf32>
func.func @constant_index(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %i = pyflame.constant {value = dense<1> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  %g = pyflame.gather %x, %i {dim = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}
