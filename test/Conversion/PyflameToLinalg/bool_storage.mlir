// bool-bits=8 (what the mlir backend runs): bool tensors are stored as i8,
// generic bodies truncate them to i1 on entry and widen i1 results on exit.
// REQUIRES: mlir
// RUN: pyflame-opt %s -p 'convert-pyflame-to-linalg{bool-bits=8}' | mlir-opt | filecheck %s

// CHECK-LABEL: func.func @bools(%arg0: tensor<4xi8>, %arg1: tensor<4xf32>) -> (tensor<4xi8>, tensor<4xf32>, tensor<2xi8>)
// CHECK:      linalg.generic {{.*}} ins(%arg0 : tensor<4xi8>) outs(%{{.*}} : tensor<4xi8>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT:   %[[B:.*]] = arith.trunci %[[IN]] : i8 to i1
// CHECK:        %[[N:.*]] = arith.xori %[[B]], %{{.*}} : i1
// CHECK-NEXT:   %[[W:.*]] = arith.extui %[[N]] : i1 to i8
// CHECK-NEXT:   linalg.yield %[[W]] : i8
// CHECK:      arith.select
// CHECK:      arith.constant dense<[1, 0]> : tensor<2xi8>
func.func @bools(%p: tensor<4xi1>, %f: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xf32>, tensor<2xi1>) {
  %0 = pyflame.logical_not %p : (tensor<4xi1>) -> tensor<4xi1>
  %1 = pyflame.where %0, %f, %f : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  func.return %0, %1, %2 : tensor<4xi1>, tensor<4xf32>, tensor<2xi1>
}
