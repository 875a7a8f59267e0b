// The README demo MLP's optimized pyflame IR (pf.to_mlir(loss, optimize=True)):
// real mlir-opt parses and verifies its linalg form and lowers it to the LLVM
// dialect with the mlir backend's pipeline (runtime/mlir_backend.py PIPELINE).
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{hoist-static-allocs modify-public-functions},buffer-deallocation-pipeline,convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-cf-to-llvm,reconcile-unrealized-casts)' | filecheck %s --check-prefix=LLVM
// RUN: pyflame-opt %s -p unfuse --mlir-pass-pipeline=canonicalize | filecheck %s --check-prefix=IRDL

// CHECK-LABEL: func.func @main(%arg0: tensor<1024x512xf32>, %arg1: tensor<512x256xf32>, %arg2: tensor<256x10xf32>) -> tensor<f32>
// CHECK:       outs(%{{.*}} : tensor<1024x256xf32>)
// CHECK:       math.exp
// CHECK:       math.log
// CHECK-NOT:   pyflame.
// LLVM:        llvm.func @main(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr)
// LLVM-NOT:    linalg.
// upstream MLIR parses and verifies the pyflame ops themselves (IRDL; fused regions
// are inlined first: IRDL cannot declare pyflame.yield a terminator)
// IRDL-LABEL: func.func @main
// IRDL:       "pyflame.matmul"(%arg0, %arg1) : (tensor<1024x512xf32>, tensor<512x256xf32>) -> tensor<1024x256xf32>
// IRDL:       "pyflame.softmax"
builtin.module {
  func.func @main(%0: tensor<1024x512xf32>, %1: tensor<512x256xf32>, %2: tensor<256x10xf32>) -> tensor<f32> {
    %3 = pyflame.constant {value = dense<1.000000e-02> : tensor<256xf32>} : () -> tensor<256xf32>
    %4 = pyflame.matmul %0, %1 : (tensor<1024x512xf32>, tensor<512x256xf32>) -> tensor<1024x256xf32>
    %5 = pyflame.fused_add_relu %4, %3 : (tensor<1024x256xf32>, tensor<256xf32>) -> tensor<1024x256xf32>
    %6 = pyflame.matmul %5, %2 : (tensor<1024x256xf32>, tensor<256x10xf32>) -> tensor<1024x10xf32>
    %7 = pyflame.softmax %6 {dim = 1 : i64} : (tensor<1024x10xf32>) -> tensor<1024x10xf32>
    %8 = pyflame.fused %7 : (tensor<1024x10xf32>) -> tensor<f32> {
    ^bb0(%9: tensor<1024x10xf32>):
      %10 = pyflame.log %9 : (tensor<1024x10xf32>) -> tensor<1024x10xf32>
      %11 = pyflame.sum %10 {dims = array<i64: 0, 1>, keepdim = false} : (tensor<1024x10xf32>) -> tensor<f32>
      pyflame.yield %11 : tensor<f32>
    }
    %9 = pyflame.neg %8 : (tensor<f32>) -> tensor<f32>
    func.return %9 : tensor<f32>
  }
}
