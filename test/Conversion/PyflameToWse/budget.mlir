// RUN: not pyflame-opt %s -t wse 2>&1 | filecheck %s
// A 128x128 f32 tensor (64 KiB) does not fit one PE's 48 KiB.

module attributes {wse.grid = "1x1"} {
  func.func @main(%a: tensor<128x128xf32>) -> tensor<128x128xf32> {
    %0 = pyflame.exp %a : (tensor<128x128xf32>) -> tensor<128x128xf32>
    func.return %0 : tensor<128x128xf32>
  }
}

// CHECK: error: csl backend: the 1x1 grid needs {{[0-9]+}} bytes of SRAM per PE at wse.map (largest live values: {{.*}}), but the budget is 43008 bytes
