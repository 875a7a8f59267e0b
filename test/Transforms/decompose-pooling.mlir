// max_pool, max_pool_grad and gelu_grad (issue 14, s12-pool): printed as parsed,
// their VJPs from the autodiff expansion, and their decompositions (what MAX and
// linalg run): stacked strided windows, argmax and gather; pad-and-add; the
// former gelu derivative rule.
// RUN: pyflame-opt %s | filecheck %s --check-prefix=ROUND
// RUN: pyflame-opt %s -p pyflame-autodiff | filecheck %s --check-prefix=AD
// RUN: pyflame-opt %s -p 'decompose{ops=max_pool,max_pool_grad,gelu_grad}' | filecheck %s --check-prefix=DEC

// ROUND:      %1, %2 = pyflame.max_pool %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
// ROUND:      pyflame.gelu_grad %x, %z, %ct : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>

// AD-LABEL: func.func @main
// AD:         %{{.*}}, %[[OFF:.*]] = pyflame.max_pool
// AD:         pyflame.max_pool_grad %{{.*}}, %[[OFF]] {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false, size = array<i64: 4, 4>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>

// DEC-LABEL: func.func private @vjp_fn0
// DEC-NOT:     pyflame.max_pool
// DEC:         pyflame.concat
// DEC:         pyflame.argmax
// DEC:         pyflame.gather
// DEC-LABEL: func.func @main
// DEC-NOT:     pyflame.max_pool
// DEC-LABEL: func.func @gelu_vjp
// DEC-NOT:     pyflame.gelu_grad
// DEC:         pyflame.div %z
// DEC:         pyflame.exp

builtin.module {
  func.func private @vjp_fn0(%0: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
    %1, %2 = pyflame.max_pool %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
    func.return %1 : tensor<1x2x2x2xf32>
  }
  func.func @main(%0: tensor<1x2x4x4xf32>, %1: tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
    %3, %4 = pyflame.vjp @vjp_fn0(%0) cotangents(%1) {wrt = array<i64: 0>} : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>)
    func.return %4 : tensor<1x2x4x4xf32>
  }
  func.func @gelu_vjp(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %ct: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = pyflame.gelu_grad %x, %z, %ct : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    func.return %0 : tensor<4x8xf32>
  }
}
