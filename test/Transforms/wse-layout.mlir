// wse-layout: legalizes for the WSE, then records on every pyflame op the placement
// convert-pyflame-to-wse picks (wse.layout) and its scheme with the cost model's
// estimate (wse.scheme), and the grid on the module (wse.grid); nothing else changes.
// The grid is the pass's width x height, else the module's wse.grid, else automatic.
// RUN: pyflame-opt %s -p wse-layout --split-input-file | filecheck %s
// RUN: pyflame-opt %s -p 'wse-layout{width=2 height=2}' --split-input-file | filecheck %s --check-prefix=GRID

// GEMV on the module's 4x4 grid: the same choice as convert-pyflame-to-wse
// (test/Conversion/PyflameToWse/gemv.mlir): the result on column 0, split over rows.
// CHECK:      builtin.module attributes {wse.grid = "4x4"}
// CHECK:        %[[Y:.*]] = pyflame.matmul %A, %x {wse.layout = #wse.layout<[y], x = 0>, wse.scheme = "matmul M:y K:x N:- (~{{[0-9,]+}} cycles)"}
// CHECK-NEXT:   %[[R:.*]] = pyflame.add %[[Y]], %b {wse.layout = #wse.layout<[y], x = 0>, wse.scheme = "map add"}
// CHECK-NEXT:   func.return %[[R]]
// GRID:       builtin.module attributes {wse.grid = "2x2"}
// GRID:         pyflame.matmul %A, %x {wse.layout = #wse.layout<[y], x = 0>, wse.scheme = "matmul M:y K:x N:-
// GRID-NEXT:    pyflame.add {{.*}} {wse.layout = #wse.layout<[y], x = 0>, wse.scheme = "map add"}
module attributes {wse.grid = "4x4"} {
  func.func @main(%A: tensor<128x128xf32>, %x: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<128xf32> {
    %0 = pyflame.matmul %A, %x : (tensor<128x128xf32>, tensor<128xf32>) -> tensor<128xf32>
    %1 = pyflame.add %0, %b : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
    func.return %1 : tensor<128xf32>
  }
}

// -----

// No grid anywhere: chosen automatically (one PE suffices), and recorded. The op legalize-for-wse
// decomposes (softmax) is annotated in its decomposed form.
// CHECK:      builtin.module attributes {wse.grid = "1x1"}
// CHECK:        pyflame.max %a {{{.*}}, wse.layout = #wse.layout<[-], x = 0, y = 0>, wse.scheme = "max over [0]"}
// CHECK-NEXT:   pyflame.sub {{.*}} {wse.layout = #wse.layout<[x], y = 0>, wse.scheme = "map sub"}
// CHECK-NEXT:   pyflame.exp {{.*}} {wse.layout = #wse.layout<[x], y = 0>, wse.scheme = "map exp"}
// CHECK-NEXT:   pyflame.sum {{.*}}, wse.layout = #wse.layout<[-], x = 0, y = 0>, wse.scheme = "sum over [0]"}
// CHECK-NEXT:   pyflame.div {{.*}} {wse.layout = #wse.layout<[x], y = 0>, wse.scheme = "map mul"}
// CHECK-NEXT:   func.return
// GRID:        builtin.module attributes {wse.grid = "2x2"}
module {
  func.func @main(%a: tensor<64xf32>) -> tensor<64xf32> {
    %0 = pyflame.softmax %a {dim = 0 : i64} : (tensor<64xf32>) -> tensor<64xf32>
    func.return %0 : tensor<64xf32>
  }
}
