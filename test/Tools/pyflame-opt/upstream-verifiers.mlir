// What mlir-opt rejects and xDSL's verifiers let through is rejected here
// too, with mlir-opt's message at the op (each chunk was accepted, or an
// error without a place): a redefined symbol (at the second definition), a
// slice running out of its source, a collapse whose group does not multiply
// to the result, an arith op on an element type it does not take.
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

func.func @f() {
  func.return
}
// expected-error@+1 {{redefinition of symbol named 'f'}}
func.func @f() {
  func.return
}

// -----

func.func @slice(%a: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{slice along dimension 0 runs out-of-bounds: 4 >= 2}}
  %0 = tensor.extract_slice %a[1, 1] [4, 2] [1, 1] : tensor<2x3xf32> to tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @collapse(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'tensor.collapse_shape' op expected dimension 0 of collapsed type to be static value of 6}}
  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<2x3xf32> into tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @expand(%a: tensor<6xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'tensor.expand_shape' op expected dimension 0 of collapsed type to be static value of 8}}
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [4, 2] : tensor<6xf32> into tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @divf_on_ints(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{'arith.divf' op Unexpected attribute i32}}
  %0 = arith.divf %a, %a : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

func.func @fill_of_another_type() -> tensor<2xi32> {
  %e = tensor.empty() : tensor<2xi32>
  %s = arith.constant 200 : i8
  // expected-error@+1 {{'linalg.fill' op expected fill value type ('i8') to match output element type ('i32')}}
  %f = linalg.fill ins(%s : i8) outs(%e : tensor<2xi32>) -> tensor<2xi32>
  func.return %f : tensor<2xi32>
}
