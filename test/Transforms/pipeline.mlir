// The default pipeline: CSE, folding, simplification and DCE to a fixed
// point, then fusion; --pass-statistics reports what each pass did.
// RUN: pyflame-opt %s -p 'fixed-point{pipeline="cse,constant-fold,algebraic-simplify,dce" max-iterations=8},fuse' | filecheck %s
// RUN: pyflame-opt %s -p 'fixed-point{pipeline="cse,constant-fold,algebraic-simplify,dce" max-iterations=8},fuse' --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: pyflame-opt %s -p 'fixed-point{pipeline="cse,constant-fold,algebraic-simplify,dce" max-iterations=1}' | filecheck %s --check-prefix=ONCE

// Round 1: CSE merges the equal constants, folding turns 2*0.5 into 1,
// x*1 is x, x+neg(y) becomes x-y, DCE drops the unused sin. Round 2: CSE
// merges the new x-y with the old one. Round 3 changes nothing. Then fusion:
// x-y has two users, so it ends one region (bias, relu, sub) and feeds the
// next (exp, mul and the sum they feed).
// CHECK-LABEL: func.func @mlp_like
// CHECK-NEXT:    %[[M:.*]] = pyflame.matmul %x, %w
// CHECK-NEXT:    %[[D:.*]] = pyflame.fused %[[M]], %b
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>):
// CHECK-NEXT:      %[[H:.*]] = pyflame.add %[[A]], %[[B]]
// CHECK-NEXT:      %[[R:.*]] = pyflame.relu %[[H]]
// CHECK-NEXT:      %[[S:.*]] = pyflame.sub %[[R]], %[[B]]
// CHECK-NEXT:      pyflame.yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[F:.*]] = pyflame.fused %[[D]]
// CHECK-NEXT:    ^bb0(%[[A2:.*]]: tensor<4x3xf32>):
// CHECK-NEXT:      %[[E:.*]] = pyflame.exp %[[A2]]
// CHECK-NEXT:      %[[P:.*]] = pyflame.mul %[[E]], %[[A2]]
// CHECK-NEXT:      %[[T:.*]] = pyflame.sum %[[P]] {dims = array<i64: 1>, keepdim = false}
// CHECK-NEXT:      pyflame.yield %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[F]]
// ONCE-LABEL: func.func @mlp_like
// ONCE-COUNT-2: pyflame.sub
// STATS:       ===- Pass statistics -===
// STATS-NEXT:  fixed-point {{ *}} runs   1  ops     15 ->      7 {{.*}}(rounds_that_changed 2, stopped_at_max_iterations 0)
// STATS-NEXT:  fixed-point/cse {{ *}} runs   3  ops     15 ->      7 {{.*}}(merged 2)
// STATS-NEXT:  fixed-point/constant-fold {{.*}}(folded 1, removed 2)
// STATS-NEXT:  fixed-point/algebraic-simplify {{.*}}(rewritten 2, removed 4)
// STATS-NEXT:  fixed-point/dce {{.*}}(removed 1)
// STATS-NEXT:  fuse {{ *}} runs   1  ops      7 ->      3 {{.*}}(fused 2, ops_fused 6)
func.func @mlp_like(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %two = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %half = pyflame.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %half2 = pyflame.constant {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %scale = pyflame.mul %two, %half2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %m = pyflame.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %h = pyflame.add %m, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %r = pyflame.relu %h : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = pyflame.mul %r, %scale : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %nb = pyflame.neg %b : (tensor<3xf32>) -> tensor<3xf32>
  %d1 = pyflame.sub %s, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %d2 = pyflame.add %s, %nb : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %e = pyflame.exp %d1 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = pyflame.mul %e, %d2 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %dead = pyflame.sin %p : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = pyflame.sum %p {dims = array<i64: 1>, keepdim = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}
