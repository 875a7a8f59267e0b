// fuse{row-major-products}: a 2-D product read only transposed is computed in the
// layout its user reads, permute(matmul(a, b)) -> matmul(permute(b), permute(a));
// a product with another use, a batched one and a 3-D permute stay.
// RUN: pyflame-opt %s -p fuse --split-input-file | filecheck %s
// RUN: pyflame-opt %s -p 'fuse{row-major-products=false}' --split-input-file | filecheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @weight_grad
// CHECK-DAG:     %[[GT:.*]] = pyflame.permute %g {perm = array<i64: 1, 0>} : (tensor<16x4xf32>) -> tensor<4x16xf32>
// CHECK-DAG:     %[[XT:.*]] = pyflame.permute %x {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK:         %[[P:.*]] = pyflame.matmul %[[GT]], %[[XT]] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT:     pyflame.permute
// CHECK:         func.return %[[P]]
// OFF-LABEL: func.func @weight_grad
// OFF:         %[[M:.*]] = pyflame.matmul %x, %g
// OFF:         pyflame.permute %[[M]]
func.func @weight_grad(%x: tensor<8x16xf32>, %g: tensor<16x4xf32>) -> tensor<4x8xf32> {
  %0 = pyflame.matmul %x, %g : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.permute %0 {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @product_used_twice
// CHECK:         %[[M:.*]] = pyflame.matmul %x, %g
// CHECK:         pyflame.permute %[[M]]
func.func @product_used_twice(%x: tensor<8x16xf32>, %g: tensor<16x4xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  %0 = pyflame.matmul %x, %g : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = pyflame.permute %0 {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  func.return %1, %0 : tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @batched
// CHECK:         %[[M:.*]] = pyflame.matmul %x, %g
// CHECK:         pyflame.permute %[[M]]
func.func @batched(%x: tensor<2x8x16xf32>, %g: tensor<2x16x4xf32>) -> tensor<2x4x8xf32> {
  %0 = pyflame.matmul %x, %g : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
  %1 = pyflame.permute %0 {perm = array<i64: 0, 2, 1>} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
  func.return %1 : tensor<2x4x8xf32>
}
