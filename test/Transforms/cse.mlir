// cse: equal pure ops merge (attributes included); commutative operands in
// either order; constants by their bytes, so 0.0 and -0.0 stay apart.
// RUN: pyflame-opt %s -p cse,dce | filecheck %s

// CHECK-LABEL: func.func @duplicates
// CHECK:         %[[E:.*]] = pyflame.exp %x
// CHECK-NEXT:    %[[A:.*]] = pyflame.add %[[E]], %y
// CHECK-NEXT:    %[[M:.*]] = pyflame.mul %[[A]], %[[A]]
// CHECK-NEXT:    func.return %[[M]]
func.func @duplicates(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.add %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.add %y, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = pyflame.mul %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// Different attributes, operand order of a non-commutative op, or constant
// bytes: no merge.
// CHECK-LABEL: func.func @distinct
// CHECK-COUNT-2: pyflame.sum
// CHECK-COUNT-2: pyflame.sub
// CHECK-COUNT-2: pyflame.maximum
// CHECK-COUNT-2: pyflame.constant
func.func @distinct(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<f32>) {
  %0 = pyflame.sum %x {dims = array<i64: 0>, keepdim = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  %1 = pyflame.sum %x {dims = array<i64: 1>, keepdim = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  %2 = pyflame.sub %x, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = pyflame.sub %y, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = pyflame.maximum %x, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = pyflame.maximum %y, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %7 = pyflame.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<f32>
}

// Equal constants merge, and then what uses them.
// CHECK-LABEL: func.func @constants
// CHECK-COUNT-1: pyflame.constant
// CHECK-NOT:     pyflame.constant
// CHECK:         pyflame.add
// CHECK-NOT:     pyflame.add
func.func @constants(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c1 = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.add %x, %c0 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = pyflame.add %x, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
