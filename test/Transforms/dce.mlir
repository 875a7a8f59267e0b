// dce: unused pyflame ops go, chains of them in one sweep; used ones and
// function results stay.
// RUN: pyflame-opt %s -p dce | filecheck %s

// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT:    %[[E:.*]] = pyflame.exp %x
// CHECK-NEXT:    func.return %[[E]]
func.func @dead_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.sin %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.add %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.sum %2 {dims = array<i64: 0>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  %c = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  func.return %0 : tensor<4xf32>
}

// A value used by a live op keeps its producer; an op with one used result of
// several stays whole.
// CHECK-LABEL: func.func @partly_used
// CHECK:         pyflame.split
// CHECK-NEXT:    pyflame.neg
// CHECK-NEXT:    func.return
func.func @partly_used(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0, %1 = pyflame.split %x {sizes = array<i64: 2, 2>, dim = 0 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %2 = pyflame.neg %1 : (tensor<2xf32>) -> tensor<2xf32>
  func.return %2 : tensor<2xf32>
}

// Dead ops inside a fused body go too; the fused op stays while used.
// CHECK-LABEL: func.func @fused_body
// CHECK:         pyflame.fused
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      pyflame.relu
// CHECK-NEXT:      pyflame.yield
func.func @fused_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = pyflame.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = pyflame.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    %1 = pyflame.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    pyflame.yield %0 : tensor<4xf32>
  }
  %unused = pyflame.fused %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = pyflame.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    pyflame.yield %0 : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
