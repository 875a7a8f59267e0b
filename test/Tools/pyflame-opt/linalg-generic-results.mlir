// A linalg.generic of several results prints its types in parentheses, as
// mlir-opt does (and convert-pyflame-to-linalg writes for an argmax); xDSL's
// parser read "(" as the start of a function type and refused it ("Expected
// '->'"), so the lowering's own output did not parse again.
// RUN: pyflame-opt %s | pyflame-opt | filecheck %s
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | pyflame-opt | filecheck %s --check-prefix=ARGMAX
// CHECK: } -> (tensor<4xf32>, tensor<4xi64>)
// ARGMAX: } -> (tensor<4xf32>, tensor<4xi64>)
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @max_and_count(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %n: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0, %1 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%m, %n : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %b: f32, %c: i64):
    %2 = arith.maximumf %a, %b : f32
    %one = arith.constant 1 : i64
    %3 = arith.addi %c, %one : i64
    linalg.yield %2, %3 : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  func.return %0, %1 : tensor<4xf32>, tensor<4xi64>
}
func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  %0 = pyflame.argmax %x {dim = 1} : (tensor<4x8xf32>) -> tensor<4xi64>
  func.return %0 : tensor<4xi64>
}
