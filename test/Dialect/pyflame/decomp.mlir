// The verifier of the matrix decompositions (dialects/decomp.py) is their
// shape rule: a non-square matrix or an integer input fails on its op.
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

func.func @not_square(%a: tensor<3x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{expects square matrices, got shape [3, 4] (3 x 4)}}
  %0 = pyflame.det %a : (tensor<3x4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @integer(%a: tensor<3x3xi32>) -> tensor<3x3xi32> {
  // expected-error @+1 {{expects a float32 or float64 tensor, got int32}}
  %0 = pyflame.cholesky %a : (tensor<3x3xi32>) -> tensor<3x3xi32>
  func.return %0 : tensor<3x3xi32>
}
