// StableHLO text the stablehlo ops' verifiers refuse, located at the op.
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

func.func @no_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'stablehlo.add' op expects 1 result(s), got 0}}
  "stablehlo.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> ()
  func.return
}

// -----

func.func @reduce_body(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expects a body of one block of 2 arguments ending in stablehlo.return}}
  %r = "stablehlo.reduce"(%x, %c) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>):
    "stablehlo.return"(%a) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

func.func @missing_property(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expects the property 'broadcast_dimensions'}}
  %r = "stablehlo.broadcast_in_dim"(%x) : (tensor<4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

func.func @scalar(%x: f32) -> f32 {
  // expected-error @+1 {{operates on tensors, got f32}}
  %r = "stablehlo.negate"(%x) : (f32) -> f32
  func.return %r : f32
}

// -----

func.func @case_branch_types(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expects branches of one block without arguments, each ending in stablehlo.return of the result types}}
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<3xf32>
  }, {
    stablehlo.return %i : tensor<i32>
  }) : (tensor<i32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
