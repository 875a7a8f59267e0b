// Pipelines and options written as mlir-opt users write them: the nested
// --pass-pipeline (also through -p), passes as flags, one-dash long options,
// `-` for stdin and stdout. Each gives the flat -p result.
// RUN: pyflame-opt %s -p cse | filecheck %s
// RUN: pyflame-opt %s --pass-pipeline='builtin.module(func.func(cse))' | filecheck %s
// RUN: pyflame-opt %s -pass-pipeline='builtin.module(func.func(cse),canonicalize)' | filecheck %s
// RUN: pyflame-opt %s -p 'builtin.module(any(cse))' | filecheck %s
// RUN: pyflame-opt %s --cse --canonicalize | filecheck %s
// RUN: pyflame-opt %s -cse -o - | filecheck %s
// RUN: pyflame-opt - --cse < %s | filecheck %s
// RUN: pyflame-opt %s -p 'fixed-point{pipeline="cse,dce" max-iterations=2}' | filecheck %s
// RUN: pyflame-opt %s --mlir-print-op-generic -cse | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0 = pyflame.add %a, %b
// CHECK-NEXT:    %1 = pyflame.mul %0, %0
// GENERIC: "pyflame.add"(%a, %b)
// GENERIC-NOT: "pyflame.add"
#loc = loc("model.py":3:4)
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "pyflame.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(#loc)
  %1 = pyflame.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> // a comment
  %2 = "pyflame.mul"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused["a", "b"])
  func.return %2 : tensor<4xf32>
}
