// Every verifier error of the pyflame dialect, located on its op.
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

func.func @broadcast(%a: tensor<4x8xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{cannot be broadcast together}}
  %0 = pyflame.add %a, %b : (tensor<4x8xf32>, tensor<5xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{operands must have one element type, got float32, float64}}
  %0 = pyflame.mul %a, %b : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

func.func @float_only(%a: tensor<4xi32>) {
  // expected-error @+1 {{expects a floating-point operand, got int32}}
  %0 = pyflame.exp %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @div_ints(%a: tensor<4xi64>) {
  // expected-error @+1 {{expects floating-point operands, got int64}}
  %0 = pyflame.div %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

func.func @neg_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{is not defined on bool tensors}}
  %0 = pyflame.neg %a : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @compare_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 has type tensor<4xf32>, but the operands give tensor<4xi1>}}
  %0 = pyflame.lt %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @where_cond(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{condition must be bool, got float32}}
  %0 = pyflame.where %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @arity(%a: tensor<4xf32>) {
  // expected-error @+1 {{expects 1 operand(s), got 2}}
  %0 = pyflame.relu %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @unranked(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must have a static shape}}
  %0 = pyflame.relu %a : (tensor<?xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @element_type(%a: tensor<4xi128>) {
  // expected-error @+1 {{element type i128 is not supported by pyflame}}
  %0 = pyflame.relu %a : (tensor<4xi128>) -> tensor<4xi128>
  func.return
}

// -----

func.func @gelu_mode(%a: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be 'none' or 'tanh', got 'fast'}}
  %0 = pyflame.gelu %a {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @missing_attr(%a: tensor<4xf32>) {
  // expected-error @+1 {{missing attribute 'dims'}}
  %0 = pyflame.sum %a {keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @unknown_attr(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown attribute(s) axis; 'pyflame.relu' takes none}}
  %0 = pyflame.relu %a {axis = 1} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @attr_kind(%a: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'dims' must be an array<i64: ...>, got 1 : i64}}
  %0 = pyflame.sum %a {dims = 1, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @dims_range(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 1 is out of range for rank 1}}
  %0 = pyflame.max %a {dims = array<i64: 1>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @dims_sorted(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{dimensions [1, 0] must be sorted and unique}}
  %0 = pyflame.sum %a {dims = array<i64: 1, 0>, keepdim = false} : (tensor<4x4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @mean_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{expects a floating-point operand, got int32}}
  %0 = pyflame.mean %a {dims = array<i64: 0>, keepdim = false} : (tensor<4xi32>) -> tensor<i32>
  func.return
}

// -----

func.func @max_empty(%a: tensor<0x3xf32>) {
  // expected-error @+1 {{cannot reduce over an empty dimension}}
  %0 = pyflame.max %a {dims = array<i64: 0>, keepdim = false} : (tensor<0x3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @ties_value(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{ties must be "first" (or absent), got 'last'}}
  %0 = pyflame.max %a {dims = array<i64: 0>, keepdim = false, ties = "last"} : (tensor<4x3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @ties_two_dims(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{ties = "first" picks one element along one dimension, got dims [0, 1]}}
  %0 = pyflame.min %a {dims = array<i64: 0, 1>, keepdim = false, ties = "first"} : (tensor<4x3xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @argmax_dim(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{dimension 5 is out of range for a tensor of rank 2}}
  %0 = pyflame.argmax %a {dim = 5, keepdim = false} : (tensor<4x4xf32>) -> tensor<4xi64>
  func.return
}

// -----

func.func @sum_result(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{result #0 has type tensor<4x4xf32>, but the operands give tensor<4xf32>}}
  %0 = pyflame.sum %a {dims = array<i64: 1>, keepdim = false} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @matmul_contract(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+1 {{cannot multiply [3, 4] by [5, 6]: the contracted dimensions differ (4 != 5)}}
  %0 = pyflame.matmul %a, %b : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  func.return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{both operands need at least one dimension}}
  %0 = pyflame.matmul %a, %b : (tensor<f32>, tensor<5xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{cannot be broadcast together}}
  %0 = pyflame.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

func.func @matmul_bool(%a: tensor<2x2xi1>) {
  // expected-error @+1 {{is not defined on bool tensors}}
  %0 = pyflame.matmul %a, %a : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>
  func.return
}

// -----

func.func @reshape_numel(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{cannot reshape [4, 4] (16 elements) to [3, 5] (15 elements)}}
  %0 = pyflame.reshape %a {shape = array<i64: 3, 5>} : (tensor<4x4xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

func.func @reshape_negative(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{target shape [-1, 4] has a negative size}}
  %0 = pyflame.reshape %a {shape = array<i64: -1, 4>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @permute(%a: tensor<4x5xf32>) {
  // expected-error @+1 {{[0, 0] is not a permutation of the 2 dimensions of [4, 5]}}
  %0 = pyflame.permute %a {perm = array<i64: 0, 0>} : (tensor<4x5xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @broadcast_to(%a: tensor<3xf32>) {
  // expected-error @+1 {{cannot broadcast [3] to [2, 4]}}
  %0 = pyflame.broadcast_to %a {shape = array<i64: 2, 4>} : (tensor<3xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @slice_stride(%a: tensor<8xf32>) {
  // expected-error @+1 {{stride 0 in dimension 0 must be positive}}
  %0 = pyflame.slice %a {start = array<i64: 0>, limit = array<i64: 8>, stride = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @slice_range(%a: tensor<8xf32>) {
  // expected-error @+1 {{range [2, 9) in dimension 0 is not within [0, 8]}}
  %0 = pyflame.slice %a {start = array<i64: 2>, limit = array<i64: 9>, stride = array<i64: 1>} : (tensor<8xf32>) -> tensor<7xf32>
  func.return
}

// -----

func.func @slice_rank(%a: tensor<8x2xf32>) {
  // expected-error @+1 {{start/limit/stride need 2 entries}}
  %0 = pyflame.slice %a {start = array<i64: 0>, limit = array<i64: 8>, stride = array<i64: 1>} : (tensor<8x2xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

func.func @concat_shapes(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{must match except in dimension 0}}
  %0 = pyflame.concat %a, %b {dim = 0} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for rank 2}}
  %0 = pyflame.concat %a, %a {dim = 2} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @concat_none() {
  // expected-error @+1 {{expects at least one operand}}
  %0 = pyflame.concat {dim = 0} : () -> tensor<2x3xf32>
  func.return
}

// -----

func.func @split_sizes(%a: tensor<6xf32>) {
  // expected-error @+1 {{sizes [2, 2] must be non-negative and sum to 6}}
  %0:2 = pyflame.split %a {sizes = array<i64: 2, 2>, dim = 0} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @split_results(%a: tensor<6xf32>) {
  // expected-error @+1 {{expects 3 result(s), got 2}}
  %0:2 = pyflame.split %a {sizes = array<i64: 2, 2, 2>, dim = 0} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @softmax_int(%a: tensor<6xi64>) {
  // expected-error @+1 {{expects a floating-point operand, got int64}}
  %0 = pyflame.softmax %a {dim = 0} : (tensor<6xi64>) -> tensor<6xi64>
  func.return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{dimension 2 is out of range for shape [3, 4]}}
  %0 = pyflame.iota {shape = array<i64: 3, 4>, dim = 2, dtype = i64} : () -> tensor<3x4xi64>
  func.return
}

// -----

func.func @iota_bool() {
  // expected-error @+1 {{cannot count in bool}}
  %0 = pyflame.iota {shape = array<i64: 3>, dim = 0, dtype = i1} : () -> tensor<3xi1>
  func.return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{result #0 has type tensor<4xf32>, but the operands give tensor<3xf32>}}
  %0 = pyflame.constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<4xf32>
  func.return
}

// -----

func.func @parse_error(%a: tensor<4xf32>) {
  // expected-error @+1 {{pyflame.relu has 1 operand(s) but its type lists 2}}
  %0 = pyflame.relu %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func private @f(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = pyflame.sum %x {dims = array<i64: 0>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
func.func @vjp_seed_type(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{cotangents ['tensor<4xf32>'] must have the types ['tensor<f32>']}}
  %y, %g = pyflame.vjp @f(%x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  func.return
}

// -----

func.func private @f(%x: tensor<4xi32>) -> tensor<i64> {
  %0 = pyflame.sum %x {dims = array<i64: 0>, keepdim = false} : (tensor<4xi32>) -> tensor<i64>
  func.return %0 : tensor<i64>
}
func.func @vjp_int_arg(%x: tensor<4xi32>, %c: tensor<i64>) {
  // expected-error @+1 {{argument #0 of @f is not floating point}}
  %y, %g = pyflame.vjp @f(%x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<4xi32>, tensor<i64>) -> (tensor<i64>, tensor<4xi32>)
  func.return
}

// -----

func.func @vjp_no_callee(%x: tensor<4xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'@nope' does not reference a function}}
  %y, %g = pyflame.vjp @nope(%x) cotangents(%c) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
  func.return
}

// -----

func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @jvp_wrt(%x: tensor<4xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{wrt [3] must be distinct argument indices of @f (it has 1)}}
  %y, %ty = pyflame.jvp @f(%x) tangents(%t) {wrt = array<i64: 3>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return
}
