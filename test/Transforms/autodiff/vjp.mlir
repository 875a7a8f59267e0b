// The backward IR of small functions, after pyflame-autodiff (then cse,dce to
// drop what the requested gradients do not need).
// RUN: pyflame-opt %s --split-input-file -p pyflame-autodiff,cse,dce | filecheck %s

// d/dx sum(x * w) = broadcast(ct) * w
func.func private @mul(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = pyflame.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.sum %0 {dims = array<i64: 0>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}
func.func @main(%x: tensor<4xf32>, %w: tensor<4xf32>, %c: tensor<f32>) -> tensor<4xf32> {
  %y, %g = pyflame.vjp @mul(%x, %w) cotangents(%c) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
  func.return %g : tensor<4xf32>
}
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main(%x: tensor<4xf32>, %w: tensor<4xf32>, %c: tensor<f32>)
// CHECK-NEXT:    %[[R:.*]] = pyflame.reshape %c {shape = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
// CHECK-NEXT:    %[[B:.*]] = pyflame.broadcast_to %[[R]] {shape = array<i64: 4>} : (tensor<1xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[G:.*]] = pyflame.mul %[[B]], %w
// CHECK-NEXT:    func.return %[[G]] : tensor<4xf32>

// -----

// matmul: dA = G @ B^T, dB = A^T @ G
func.func private @mm(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xf32> {
  %0 = pyflame.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>, %g: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<3x5xf32>) {
  %y, %da, %db = pyflame.vjp @mm(%a, %b) cotangents(%g) {wrt = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x3xf32>, tensor<3x5xf32>)
  func.return %da, %db : tensor<2x3xf32>, tensor<3x5xf32>
}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[BT:.*]] = pyflame.permute %b {perm = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    %[[DA:.*]] = pyflame.matmul %g, %[[BT]] : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[AT:.*]] = pyflame.permute %a {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[DB:.*]] = pyflame.matmul %[[AT]], %g : (tensor<3x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %[[DA]], %[[DB]]

// -----

// a broadcasting add reduces the cotangent back to each operand's shape
func.func private @badd(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = pyflame.add %x, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
func.func @main(%x: tensor<4x3xf32>, %b: tensor<3xf32>, %g: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>) {
  %y, %dx, %db = pyflame.vjp @badd(%x, %b) cotangents(%g) {wrt = array<i64: 0, 1>} : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>)
  func.return %dx, %db : tensor<4x3xf32>, tensor<3xf32>
}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[S:.*]] = pyflame.sum %g {dims = array<i64: 0>, keepdim = true} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %[[R:.*]] = pyflame.reshape %[[S]] {shape = array<i64: 3>} : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    func.return %g, %[[R]] : tensor<4x3xf32>, tensor<3xf32>

// -----

// mean over a dim: the cotangent is spread back and scaled by 1/n
func.func private @mean(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = pyflame.mean %x {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x8xf32> {
  %y, %dx = pyflame.vjp @mean(%x) cotangents(%g) {wrt = array<i64: 0>} : (tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>)
  func.return %dx : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[N:.*]] = pyflame.constant {value = dense<1.250000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[R:.*]] = pyflame.reshape %g {shape = array<i64: 4, 1>}
// CHECK-NEXT:    %[[M:.*]] = pyflame.mul %[[R]], %[[N]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[B:.*]] = pyflame.broadcast_to %[[M]] {shape = array<i64: 4, 8>}
// CHECK-NEXT:    func.return %[[B]]

// -----

// softmax: dx = z * (g - sum(g * z))
func.func private @sm(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = pyflame.softmax %x {dim = 1} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
func.func @main(%x: tensor<2x5xf32>, %g: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y, %dx = pyflame.vjp @sm(%x) cotangents(%g) {wrt = array<i64: 0>} : (tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>)
  func.return %dx : tensor<2x5xf32>
}
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[Z:.*]] = pyflame.softmax %x {dim = 1 : i64}
// CHECK-NEXT:    %[[GZ:.*]] = pyflame.mul %g, %[[Z]]
// CHECK-NEXT:    %[[S:.*]] = pyflame.sum %[[GZ]] {dims = array<i64: 1>, keepdim = true} : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %[[ZS:.*]] = pyflame.mul %[[Z]], %[[S]]
// CHECK-NEXT:    %[[DX:.*]] = pyflame.sub %[[GZ]], %[[ZS]]
// CHECK-NEXT:    func.return %[[DX]]

// -----

// max over one dim with ties = "first" (torch.max(x, dim)): the whole
// cotangent goes to the element argmax picks; without it, ties share it
func.func private @max_first(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = pyflame.max %x {dims = array<i64: 1>, keepdim = false, ties = "first"} : (tensor<3x4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
func.func @main(%x: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<3x4xf32> {
  %y, %g = pyflame.vjp @max_first(%x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<3x4xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3x4xf32>)
  func.return %g : tensor<3x4xf32>
}
// CHECK-LABEL: func.func @main(%x: tensor<3x4xf32>, %c: tensor<3xf32>)
// CHECK-DAG:     %[[I:.*]] = pyflame.argmax %x {dim = 1 : i64, keepdim = true} : (tensor<3x4xf32>) -> tensor<3x1xi64>
// CHECK-DAG:     %[[N:.*]] = pyflame.iota {shape = array<i64: 3, 4>, dim = 1 : i64, dtype = i64}
// CHECK:         %[[H:.*]] = pyflame.eq %[[N]], %[[I]] : (tensor<3x4xi64>, tensor<3x1xi64>) -> tensor<3x4xi1>
// CHECK:         %[[M:.*]] = pyflame.convert %[[H]] {dtype = f32}
// CHECK-NOT:     pyflame.div
// CHECK:         pyflame.mul %{{.*}}, %[[M]]
