// RUN: pyflame-opt %s -p legalize-for-wse,convert-pyflame-to-wse | filecheck %s
// The demo MLP's forward at full size, grid chosen automatically: 16x16 is the
// smallest candidate whose memory plan fits 48 KiB per PE. The first layer is
// SUMMA (x and w1 both tiled, K streamed in panels), the bias is broadcast down
// the columns, the narrow second layer has K tiled over the columns and partial
// sums combined along the rows, the softmax is local to each row block, the loss
// is combined down column 0. The splat bias is an immediate.

func.func @main(%x: tensor<1024x512xf32>, %w1: tensor<512x256xf32>, %w2: tensor<256x10xf32>) -> tensor<f32> {
  %b1 = pyflame.constant {value = dense<1.000000e-02> : tensor<256xf32>} : () -> tensor<256xf32>
  %0 = pyflame.matmul %x, %w1 : (tensor<1024x512xf32>, tensor<512x256xf32>) -> tensor<1024x256xf32>
  %1 = pyflame.add %0, %b1 : (tensor<1024x256xf32>, tensor<256xf32>) -> tensor<1024x256xf32>
  %2 = pyflame.relu %1 : (tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %3 = pyflame.matmul %2, %w2 : (tensor<1024x256xf32>, tensor<256x10xf32>) -> tensor<1024x10xf32>
  %4 = pyflame.softmax %3 {dim = 1 : i64} : (tensor<1024x10xf32>) -> tensor<1024x10xf32>
  %5 = pyflame.log %4 : (tensor<1024x10xf32>) -> tensor<1024x10xf32>
  %6 = pyflame.sum %5 {dims = array<i64: 0, 1>, keepdim = false} : (tensor<1024x10xf32>) -> tensor<f32>
  %7 = pyflame.neg %6 : (tensor<f32>) -> tensor<f32>
  func.return %7 : tensor<f32>
}

// CHECK:      wse.program @main {width = 16, height = 16} {
// CHECK-NEXT: ^bb0(%[[X:.*]]: !wse.tensor<1024x512xf32, #wse.layout<[y, x]>>, %[[W1:.*]]: !wse.tensor<512x256xf32, #wse.layout<[y, x]>>, %[[W2:.*]]: !wse.tensor<256x10xf32, #wse.layout<[x, -], y = 0>>):
// CHECK-NEXT:   %[[H:.*]] = wse.summa %[[X]], %[[W1]] : {{.*}} -> !wse.tensor<1024x256xf32, #wse.layout<[y, x]>>
// CHECK-NEXT:   %[[C:.*]] = wse.constant dense<1.000000e-02> : tensor<f32> : !wse.tensor<f32, #wse.layout<[], x = *, y = *>>
// CHECK-NEXT:   %{{.*}} = wse.map "add"(%[[H]], %[[C]])
// CHECK-NEXT:   %[[R:.*]] = wse.map "relu"
// CHECK-NEXT:   %[[W2B:.*]] = wse.broadcast "y" %[[W2]] : {{.*}} -> !wse.tensor<256x10xf32, #wse.layout<[x, -], y = *>>
// CHECK-NEXT:   %[[Z:.*]] = wse.matmul %[[R]], %[[W2B]] : {{.*}} -> !wse.tensor<1024x10xf32, #wse.layout<[y, -], x = sum>>
// CHECK-NEXT:   %{{.*}} = wse.combine "x" %[[Z]] : {{.*}} -> !wse.tensor<1024x10xf32, #wse.layout<[y, -], x = 0>>
// CHECK-NEXT:   wse.reduce "max" {{.*}} -> !wse.tensor<1024x1xf32, #wse.layout<[y, -], x = 0>>
// CHECK-NEXT:   wse.map "sub"
// CHECK-NEXT:   wse.map "exp"
// CHECK-NEXT:   wse.reduce "sum" {{.*}}{dims = array<i64: 1>, keepdim = true}
// CHECK-NEXT:   wse.map "reciprocal"
// CHECK-NEXT:   wse.map "mul"
// CHECK-NEXT:   wse.map "log"
// CHECK-NEXT:   wse.reduce "sum" {{.*}}{dims = array<i64: 0, 1>, keepdim = false} : {{.*}} -> !wse.tensor<f32, #wse.layout<[], x = 0, y = sum>>
// CHECK-NEXT:   wse.combine "y"
// CHECK-NEXT:   wse.map "neg"
// CHECK-NEXT:   wse.return {{.*}} : !wse.tensor<f32, #wse.layout<[], x = 0, y = 0>>
