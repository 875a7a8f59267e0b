// fuse: named fused ops for the known pairs, pyflame.fused regions for longer
// elementwise chains (with their broadcasts and small constants) and for an
// elementwise prologue of a reduction. A producer with another user is not
// fused away, unless recompute copies it.
// RUN: pyflame-opt %s -p fuse --split-input-file | filecheck %s
// RUN: pyflame-opt %s -p 'fuse{named=false}' --split-input-file | filecheck %s --check-prefix=NONAMED
// RUN: pyflame-opt %s -p 'fuse{regions=false}' --split-input-file | filecheck %s --check-prefix=NAMEDONLY
// RUN: pyflame-opt %s -p 'fuse{recompute=true}' --split-input-file | filecheck %s --check-prefix=RECOMPUTE
// RUN: pyflame-opt %s -p fuse,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE

// CHECK-LABEL: func.func @named
// CHECK-NEXT:    %[[A:.*]] = pyflame.fused_add_relu %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = pyflame.fused_mul_sigmoid %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[F:.*]] = pyflame.fused_fma %a, %b, %[[S]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[G:.*]] = pyflame.fused_fma %[[A]], %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[A]], %[[S]], %[[F]], %[[G]]
// NONAMED-LABEL: func.func @named
// NONAMED-COUNT-4: pyflame.fused %
// NAMEDONLY-LABEL: func.func @named
// NAMEDONLY-NEXT:  pyflame.fused_add_relu
// NAMEDONLY-NEXT:  pyflame.fused_mul_sigmoid
// NAMEDONLY-NEXT:  pyflame.fused_fma
// NAMEDONLY-NEXT:  pyflame.fused_fma
// UNFUSE-LABEL: func.func @named
// UNFUSE-NOT:   fused
// UNFUSE:       pyflame.add %a, %b
// UNFUSE-NEXT:  pyflame.relu
// UNFUSE-NEXT:  pyflame.mul %a, %a
// UNFUSE-NEXT:  pyflame.sigmoid
func.func @named(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = pyflame.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.mul %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.sigmoid %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = pyflame.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %5 = pyflame.add %4, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = pyflame.mul %1, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = pyflame.add %b, %6 : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1, %3, %5, %7 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_epilogues
// CHECK-NEXT:    pyflame.fused_matmul_relu %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    pyflame.fused_matmul_gelu %x, %w {approximate = "tanh"} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    func.return
func.func @matmul_epilogues(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = pyflame.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = pyflame.relu %0 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = pyflame.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %3 = pyflame.gelu %2 {approximate = "tanh"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %1, %3 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A producer with another user is not fused away: the matmul and the add are
// results too, so relu runs alone.
// CHECK-LABEL: func.func @multi_use
// CHECK-NEXT:    pyflame.matmul
// CHECK-NEXT:    pyflame.relu
// CHECK-NEXT:    pyflame.add
// CHECK-NEXT:    pyflame.relu
// CHECK-NEXT:    func.return
// RECOMPUTE-LABEL: func.func @multi_use
// RECOMPUTE:       %[[A:.*]] = pyflame.add %x, %x
// RECOMPUTE-NEXT:  %[[R:.*]] = pyflame.fused_add_relu %x, %x
// RECOMPUTE-NEXT:  func.return %{{.*}}, %{{.*}}, %[[A]], %[[R]]
func.func @multi_use(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = pyflame.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.add %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.relu %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A chain with a broadcast and a scalar constant becomes one region; the
// constant is copied in, the broadcast view too.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[R:.*]] = pyflame.fused %b, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: tensor<8xf32>, %[[X:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[C:.*]] = pyflame.constant {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT:      %[[BB:.*]] = pyflame.broadcast_to %[[B]]
// CHECK-NEXT:      %[[M:.*]] = pyflame.mul %[[X]], %[[BB]]
// CHECK-NEXT:      %[[T:.*]] = pyflame.tanh %[[M]]
// CHECK-NEXT:      %[[S:.*]] = pyflame.mul %[[T]], %[[C]]
// CHECK-NEXT:      %[[E:.*]] = pyflame.exp %[[S]]
// CHECK-NEXT:      pyflame.yield %[[E]] : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
// UNFUSE-LABEL: func.func @chain
// UNFUSE-NEXT:    pyflame.constant
// UNFUSE-NEXT:    pyflame.broadcast_to %b
// UNFUSE-NEXT:    pyflame.mul %x
// UNFUSE-NEXT:    pyflame.tanh
// UNFUSE-NEXT:    pyflame.mul
// UNFUSE-NEXT:    pyflame.exp
// UNFUSE-NEXT:    func.return
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %bb = pyflame.broadcast_to %b {shape = array<i64: 4, 8>} : (tensor<8xf32>) -> tensor<4x8xf32>
  %0 = pyflame.mul %x, %bb : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.tanh %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.mul %1, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = pyflame.exp %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// An intermediate with a user outside the chain ends one region and starts
// the next.
// CHECK-LABEL: func.func @split_chain
// CHECK:         %[[R1:.*]] = pyflame.fused %x
// CHECK:           pyflame.exp
// CHECK-NEXT:      pyflame.sin
// CHECK-NEXT:      pyflame.yield
// CHECK:         %[[R2:.*]] = pyflame.fused %[[R1]]
// CHECK:           pyflame.cos
// CHECK-NEXT:      pyflame.tanh
// CHECK-NEXT:      pyflame.yield
// CHECK:         func.return %[[R2]], %[[R1]]
func.func @split_chain(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = pyflame.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %1 = pyflame.sin %0 : (tensor<16xf32>) -> tensor<16xf32>
  %2 = pyflame.cos %1 : (tensor<16xf32>) -> tensor<16xf32>
  %3 = pyflame.tanh %2 : (tensor<16xf32>) -> tensor<16xf32>
  func.return %3, %1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// An elementwise prologue joins the reduction it feeds; the reduction ends
// the region (its consumer is not fused into it).
// CHECK-LABEL: func.func @reduction
// CHECK-NEXT:    %[[R:.*]] = pyflame.fused %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK:           pyflame.exp
// CHECK-NEXT:      pyflame.mul
// CHECK-NEXT:      %[[S:.*]] = pyflame.sum
// CHECK-NEXT:      pyflame.yield %[[S]] : tensor<4xf32>
// CHECK:         pyflame.neg %[[R]]
// NONAMED-LABEL: func.func @reduction
// NONAMED:         pyflame.sum
// NONAMED-NEXT:    pyflame.yield
func.func @reduction(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = pyflame.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.mul %0, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.sum %1 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %3 = pyflame.neg %2 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// Lone ops, lone broadcasts and non-elementwise ops stay as they are.
// CHECK-LABEL: func.func @nothing_to_fuse
// CHECK-NEXT:    pyflame.broadcast_to
// CHECK-NEXT:    pyflame.softmax
// CHECK-NEXT:    pyflame.exp
// CHECK-NEXT:    pyflame.matmul
// CHECK-NEXT:    func.return
func.func @nothing_to_fuse(%x: tensor<8xf32>, %m: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = pyflame.broadcast_to %x {shape = array<i64: 8, 8>} : (tensor<8xf32>) -> tensor<8x8xf32>
  %1 = pyflame.softmax %0 {dim = 1 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = pyflame.exp %1 : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = pyflame.matmul %2, %m : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %0, %3 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// add(m, m) of a single product is not an fma (the product is needed twice):
// it becomes a region.
// CHECK-LABEL: func.func @square_sum
// CHECK-NEXT:    pyflame.fused %x
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[M:.*]] = pyflame.mul
// CHECK-NEXT:      pyflame.add %[[M]], %[[M]]
func.func @square_sum(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.add %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
