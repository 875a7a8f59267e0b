// canonicalize: xDSL's canonicalization (its patterns and folders for the ops
// that have them, then dead-code removal). pyflame ops have no canonicalization
// patterns of their own (their simplifications are algebraic-simplify and
// constant-fold, one home each); what it does here is fold arith and erase dead
// side-effect-free ops, pyflame ones included.
// RUN: pyflame-opt %s -p canonicalize --split-input-file | filecheck %s

// Integer arith on constants folds to one constant; x + 0 folds away.
// CHECK-LABEL: func.func @arith
// CHECK-NEXT:    %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT:    func.return %[[C]], %i
func.func @arith(%i: i32) -> (i32, i32) {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %c = arith.addi %a, %b : i32
  %z = arith.constant 0 : i32
  %d = arith.addi %i, %z : i32
  func.return %c, %d : i32, i32
}

// -----

// A dead pyflame op is erased; live pyflame ops stay as written, even ones
// algebraic-simplify or constant-fold would rewrite.
// CHECK-LABEL: func.func @pyflame
// CHECK-NEXT:    %[[Z:.*]] = pyflame.constant {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ONE:.*]] = pyflame.constant {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[TWO:.*]] = pyflame.add %[[ONE]], %[[ONE]]
// CHECK-NEXT:    %[[Y:.*]] = pyflame.add %x, %[[Z]]
// CHECK-NEXT:    func.return %[[Y]], %[[TWO]]
func.func @pyflame(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %two = pyflame.add %one, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %dead = pyflame.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = pyflame.add %x, %zero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %y, %two : tensor<3xf32>, tensor<f32>
}
