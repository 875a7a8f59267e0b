// Graph structure: function arguments become graph inputs with their element
// types, several results become a multi-output graph, a returned argument is
// an output as is, one mo.graph per func.func; the device comes from
// PYFLAME_MAX_DEVICE (building for a GPU needs no GPU, only compiling does).
// REQUIRES: max
// RUN: pyflame-opt %s -t max | filecheck %s
// RUN: env PYFLAME_MAX_DEVICE=gpu:1 pyflame-opt %s -t max | filecheck %s --check-prefix=GPU
// RUN: pyflame-opt %s -p cse -t max | filecheck %s --check-prefix=CSE

// CHECK: mo.graph @multi(%arg0: !mo.tensor<[2, 3], f32>, %arg1: !mo.tensor<[3], si64>, %arg2: !mo.tensor<[2], bool>, %arg3: !mo.tensor<[2, 2], f16>, %arg4: !mo.tensor<[2], bf16>, %arg5: !mo.tensor<[], f64>, %arg6: !mo.tensor<[3], si32>) -> (!mo.tensor<[2, 3], f32>, !mo.tensor<[2, 3], f32>, !mo.tensor<[3], si64>, !mo.tensor<[2, 3], f32>)
// GPU: mo.graph @multi(%arg0: !mo.tensor<[2, 3], f32, gpu:1>
// CHECK: %[[E:.*]] = rmo.mo.exp(%arg0)
// CHECK: %[[E2:.*]] = rmo.mo.exp(%arg0)
// CHECK: mo.output %[[E]], %[[E2]], %arg1, %[[E]] :
// CSE: %[[E:.*]] = rmo.mo.exp(%arg0)
// CSE-NOT: rmo.mo.exp
// CSE: mo.output %[[E]], %[[E]], %arg1, %[[E]] :
func.func @multi(%x: tensor<2x3xf32>, %i: tensor<3xi64>, %b: tensor<2xi1>, %h: tensor<2x2xf16>, %bf: tensor<2xbf16>, %d: tensor<f64>, %j: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi64>, tensor<2x3xf32>) {
  %0 = pyflame.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = pyflame.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1, %i, %0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi64>, tensor<2x3xf32>
}

// CHECK-LABEL: mo.graph @second() -> !mo.tensor<[], si64>
// GPU-LABEL: mo.graph @second() -> !mo.tensor<[], si64, gpu:1>
func.func @second() -> tensor<i64> {
  %0 = pyflame.constant {value = dense<7> : tensor<i64>} : () -> tensor<i64>
  func.return %0 : tensor<i64>
}
