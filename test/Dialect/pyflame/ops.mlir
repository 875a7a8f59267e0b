// Every pyflame op prints and parses back, in the custom and the generic form.
// RUN: pyflame-opt %s | filecheck %s
// RUN: pyflame-opt %s | pyflame-opt | filecheck %s
// RUN: pyflame-opt %s --print-op-generic | pyflame-opt | filecheck %s
// RUN: pyflame-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// GENERIC: "pyflame.add"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: "pyflame.sum"(%{{.*}}) {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x8xi32>, %m: tensor<4x8xi1>) -> tensor<4x8xf32> {
  // CHECK: pyflame.add %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = pyflame.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.sub
  %1 = pyflame.sub %0, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.mul
  %2 = pyflame.mul %1, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.div
  %3 = pyflame.div %2, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.pow
  %4 = pyflame.pow %3, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.maximum
  %5 = pyflame.maximum %4, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.minimum
  %6 = pyflame.minimum %5, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.neg %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = pyflame.neg %6 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.abs
  %8 = pyflame.abs %7 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.sign
  %9 = pyflame.sign %8 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.square
  %10 = pyflame.square %9 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.relu
  %11 = pyflame.relu %10 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.exp
  %12 = pyflame.exp %11 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.log
  %13 = pyflame.log %12 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.sqrt
  %14 = pyflame.sqrt %13 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.rsqrt
  %15 = pyflame.rsqrt %14 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.sin
  %16 = pyflame.sin %15 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.cos
  %17 = pyflame.cos %16 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.tanh
  %18 = pyflame.tanh %17 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.reciprocal
  %19 = pyflame.reciprocal %18 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.sigmoid
  %20 = pyflame.sigmoid %19 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.erf
  %21 = pyflame.erf %20 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.gelu %{{.*}} {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %22 = pyflame.gelu %21 {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.eq %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %c0 = pyflame.eq %22, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: pyflame.ne
  %c1 = pyflame.ne %22, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: pyflame.lt
  %c2 = pyflame.lt %22, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: pyflame.le
  %c3 = pyflame.le %22, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: pyflame.gt
  %c4 = pyflame.gt %i, %i : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi1>
  // CHECK: pyflame.ge
  %c5 = pyflame.ge %22, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: pyflame.logical_and
  %c6 = pyflame.logical_and %c0, %m : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK: pyflame.logical_or
  %c7 = pyflame.logical_or %c6, %c1 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK: pyflame.logical_not
  %c8 = pyflame.logical_not %c7 : (tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK: pyflame.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %w = pyflame.where %c8, %22, %b : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: pyflame.convert %{{.*}} {dtype = bf16} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %h = pyflame.convert %w {dtype = bf16} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  // CHECK: pyflame.convert %{{.*}} {dtype = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %r = pyflame.convert %h {dtype = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> (tensor<4xf32>, tensor<1x8xf32>, tensor<f32>, tensor<8xf32>, tensor<4xi64>, tensor<1x1xi64>, tensor<i64>) {
  // CHECK: pyflame.sum %{{.*}} {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %0 = pyflame.sum %x {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  // CHECK: pyflame.mean %{{.*}} {dims = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %1 = pyflame.mean %x {dims = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  // CHECK: pyflame.max %{{.*}} {dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  %2 = pyflame.max %x {dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  // CHECK: pyflame.min %{{.*}} {dims = array<i64: 0>, keepdim = false, ties = "first"} : (tensor<4x8xf32>) -> tensor<8xf32>
  %3 = pyflame.min %x {dims = array<i64: 0>, keepdim = false, ties = "first"} : (tensor<4x8xf32>) -> tensor<8xf32>
  // CHECK: pyflame.argmax %{{.*}} {dim = 1 : i64, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xi64>
  %4 = pyflame.argmax %x {dim = 1, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xi64>
  // CHECK: pyflame.argmin %{{.*}} {keepdim = true} : (tensor<4x8xf32>) -> tensor<1x1xi64>
  %5 = pyflame.argmin %x {keepdim = true} : (tensor<4x8xf32>) -> tensor<1x1xi64>
  // CHECK: pyflame.sum %{{.*}} : (tensor<4x8xi32>) -> tensor<i64>
  %6 = pyflame.sum %i {dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x8xi32>) -> tensor<i64>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<1x8xf32>, tensor<f32>, tensor<8xf32>, tensor<4xi64>, tensor<1x1xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @shapes_and_data
func.func @shapes_and_data(%x: tensor<2x3x4xf32>, %v: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<3x8xf32>) {
  // CHECK: pyflame.matmul %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  %0 = pyflame.matmul %x, %v : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  // CHECK: pyflame.reshape %{{.*}} {shape = array<i64: 6, 4>}
  %1 = pyflame.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: pyflame.permute %{{.*}} {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %2 = pyflame.permute %1 {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  // CHECK: pyflame.broadcast_to %{{.*}} {shape = array<i64: 2, 4>} : (tensor<4xf32>) -> tensor<2x4xf32>
  %3 = pyflame.broadcast_to %v {shape = array<i64: 2, 4>} : (tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: pyflame.slice %{{.*}} {start = array<i64: 0, 1>, limit = array<i64: 4, 6>, stride = array<i64: 2, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %4 = pyflame.slice %2 {start = array<i64: 0, 1>, limit = array<i64: 4, 6>, stride = array<i64: 2, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  // CHECK: pyflame.concat %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %5 = pyflame.concat %4, %0 {dim = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  // CHECK: %{{.*}}, %{{.*}} = pyflame.split %{{.*}} {sizes = array<i64: 2, 2>, dim = 1 : i64} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %6:2 = pyflame.split %3 {sizes = array<i64: 2, 2>, dim = 1} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  // CHECK: pyflame.softmax %{{.*}} {dim = 1 : i64}
  %7 = pyflame.softmax %3 {dim = 1} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK: pyflame.log_softmax %{{.*}} {dim = 0 : i64}
  %8 = pyflame.log_softmax %7 {dim = 0} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK: pyflame.logsumexp %{{.*}} {dims = array<i64: 1>, keepdim = true} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  %9 = pyflame.logsumexp %5 {dims = array<i64: 1>, keepdim = true} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  // CHECK: pyflame.constant {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>} : () -> tensor<3xf32>
  %10 = pyflame.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  // CHECK: pyflame.constant {value = dense<0.000000e+00> : tensor<3x8xf32>} : () -> tensor<3x8xf32>
  %11 = pyflame.constant {value = dense<0.0> : tensor<3x8xf32>} : () -> tensor<3x8xf32>
  // CHECK: pyflame.iota {shape = array<i64: 3, 8>, dim = 1 : i64, dtype = i64} : () -> tensor<3x8xi64>
  %12 = pyflame.iota {shape = array<i64: 3, 8>, dim = 1, dtype = i64} : () -> tensor<3x8xi64>
  func.return %8, %11 : tensor<2x4xf32>, tensor<3x8xf32>
}
