// RUN: not pyflame-opt %s -p pyflame-vmap 2>&1 | filecheck %s

func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @main(%xs: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // CHECK: error: {{.*}}argument #0 of type tensor<4x5xf32> does not map tensor<4xf32> over axis 0 of size 5
  %y = pyflame.vmap @f(%xs) {in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %y : tensor<4x5xf32>
}
