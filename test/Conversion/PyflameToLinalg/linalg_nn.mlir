// matmul as a contraction linalg.generic (loops m, k, n: n innermost, so the
// nest vectorizes along rows), batched with broadcasting batch dims, 1-D
// operands as vectors; softmax / log_softmax / logsumexp decomposed into max,
// exp, sum, with the reference's shift (0 where the max is not usable).
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BA:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK:      %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:      linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[Z]] : tensor<4x16xf32>)
// CHECK:        %[[M:.*]] = arith.mulf %in, %in_{{.*}} : f32
// CHECK:        arith.addf %out, %[[M]] : f32
// CHECK:      linalg.generic {indexing_maps = [#[[BA]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK:      outs(%{{.*}} : tensor<8xf32>)
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %ba: tensor<1x4x8xf32>, %bb: tensor<3x8x16xf32>, %v: tensor<4xf32>) -> (tensor<4x16xf32>, tensor<3x4x16xf32>, tensor<8xf32>) {
  %0 = pyflame.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = pyflame.matmul %ba, %bb : (tensor<1x4x8xf32>, tensor<3x8x16xf32>) -> tensor<3x4x16xf32>
  %2 = pyflame.matmul %v, %a : (tensor<4xf32>, tensor<4x8xf32>) -> tensor<8xf32>
  func.return %0, %1, %2 : tensor<4x16xf32>, tensor<3x4x16xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @softmax
// CHECK:        arith.maximumf
// softmax shifts by 0 where the max is -inf
// CHECK:        arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK:        math.exp
// CHECK:        arith.addf
// CHECK:        arith.divf
// log_softmax: x - shift - log(sum)
// CHECK:        math.log
// logsumexp shifts by 0 where the max is not finite
// CHECK:        math.absf
// CHECK:        arith.cmpf ueq
// CHECK-NOT:  pyflame.
func.func @softmax(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %0 = pyflame.softmax %x {dim = 1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.log_softmax %x {dim = 1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.logsumexp %x {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}
