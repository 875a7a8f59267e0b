// Differentiating after fusion: fused ops are expanded back to the ops the rules know.
// RUN: pyflame-opt %s -p fuse,pyflame-autodiff,cse,dce | filecheck %s

func.func private @f(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  %0 = pyflame.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.relu %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.sum %1 {dims = array<i64: 0>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %2 : tensor<f32>
}
func.func @main(%x: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<f32>) -> tensor<4xf32> {
  %y, %g = pyflame.vjp @f(%x, %b) cotangents(%c) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
  func.return %g : tensor<4xf32>
}

// CHECK-NOT: pyflame.fused
// CHECK-LABEL: func.func @main
// CHECK:         %[[S:.*]] = pyflame.add %x, %b
// CHECK:         %[[R:.*]] = pyflame.relu %[[S]]
// relu's VJP is torch's threshold_backward: where(out <= 0, 0, cotangent)
// CHECK:         %[[ZERO:.*]] = pyflame.constant {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[LE:.*]] = pyflame.le %[[R]], %[[ZERO]]
// CHECK:         %g = pyflame.where %[[LE]], %[[ZERO]], %{{.*}}
// CHECK-NEXT:    func.return %g
