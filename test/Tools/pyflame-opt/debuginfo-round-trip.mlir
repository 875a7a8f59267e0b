// --mlir-print-debuginfo round trips as mlir-opt's does: every location the
// text writes is kept through two runs, and an explicit loc(unknown) stays
// unknown (it became the op's place in the file: the parser only should
// locate ops the text gives no location).
// RUN: pyflame-opt %s --mlir-print-debuginfo | pyflame-opt --mlir-print-debuginfo | filecheck %s
// CHECK: %a: tensor<2xf32> loc("model.py":1:1)
// CHECK: pyflame.add {{.*}} loc("model.py":3:4)
// CHECK: arith.mulf {{.*}} loc(fused["a.py":1:2, "b.py":3:4])
// CHECK: arith.subf {{.*}} loc(callsite("f"("x.py":1:1) at "y.py":2:2))
// CHECK: arith.negf {{.*}} loc("named"("z.py":9:9))
// CHECK: func.return {{.*}} loc(unknown)
// CHECK: } loc("model.py":1:0)
#loc1 = loc("model.py":3:4)
func.func @main(%a: tensor<2xf32> loc("model.py":1:1)) -> tensor<2xf32> {
  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc(#loc1)
  %1 = arith.mulf %0, %a : tensor<2xf32> loc(fused["a.py":1:2, "b.py":3:4])
  %2 = arith.subf %1, %a : tensor<2xf32> loc(callsite("f"("x.py":1:1) at "y.py":2:2))
  %3 = arith.negf %2 : tensor<2xf32> loc("named"("z.py":9:9))
  func.return %3 : tensor<2xf32> loc(unknown)
} loc("model.py":1:0)
