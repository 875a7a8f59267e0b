// Every verifier error of the sharding dialect, located on its op.
// RUN: pyflame-opt %s --split-input-file --verify-diagnostics

func.func @indivisible(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{dimension 0 (size 6) is split over ['m'] (4 devices): it must be divisible by 4}}
  %0 = sharding.annotate %x {sharding = #sharding.sharding<["d"=2, "m"=4], [{"m"}, {}]>} : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @axis_twice(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{uses a mesh axis twice}}
  %0 = sharding.annotate %x {sharding = #sharding.sharding<["d"=2], [{"d"}, {}], partial = {"d"}>} : tensor<8x8xf32> -> tensor<8x8xf32>
  func.return
}

// -----

func.func @unknown_axis(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{mesh axis 'q' is not one of ('d',)}}
  %0 = sharding.annotate %x {sharding = #sharding.sharding<["d"=2], [{"q"}, {}]>} : tensor<8x8xf32> -> tensor<8x8xf32>
  func.return
}

// -----

func.func @gather_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{does not match the all_gather of tensor<4x8xf32> over ['d'] (2 devices): expected shape [8, 8]}}
  %0 = sharding.all_gather %x {mesh = #sharding.mesh<["d"=2]>, axes = ["d"], dim = 0 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @scatter_indivisible(%x: tensor<3x8xf32>) {
  // expected-error @+1 {{dimension 0 of [3, 8] must be divisible by the group size 2}}
  %0 = sharding.reduce_scatter %x {mesh = #sharding.mesh<["d"=2]>, axes = ["d"], dim = 0 : i64} : tensor<3x8xf32> -> tensor<1x8xf32>
  func.return
}

// -----

func.func @bad_perm(%x: tensor<4xf32>) {
  // expected-error @+1 {{must be (source, destination) pairs of a partial permutation of 0..1}}
  %0 = sharding.ppermute %x {mesh = #sharding.mesh<["d"=2]>, axes = ["d"], pairs = array<i64: 0, 1, 1, 1>} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @local_block(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{is not the local block [2, 8] of tensor<4x8xf32>}}
  %0 = sharding.local_slice %x {sharding = #sharding.sharding<["d"=2], [{"d"}, {}]>} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}
