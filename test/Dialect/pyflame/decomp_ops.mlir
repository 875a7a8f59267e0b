// The matrix decompositions and solvers (dialects/decomp.py) round-trip.
// RUN: pyflame-opt %s | filecheck %s

// CHECK-LABEL: func.func @ops
// CHECK: pyflame.solve %{{.*}}, %{{.*}} : (tensor<2x3x3xf64>, tensor<2x3x1xf64>) -> tensor<2x3x1xf64>
// CHECK: pyflame.solve_triangular %{{.*}}, %{{.*}} {upper = true, unitriangular = false}
// CHECK: pyflame.slogdet %{{.*}} : (tensor<2x3x3xf64>) -> (tensor<2xf64>, tensor<2xf64>)
// CHECK: pyflame.qr %{{.*}} {complete = false} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2x2xf32>)
// CHECK: pyflame.eigh %{{.*}} {lower = true} : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3x3xf64>)
// CHECK: pyflame.pinv %{{.*}} {atol = 0.000000e+00 : f64, rtol = 1.000000e-06 : f64, hermitian = false} : (tensor<4x2xf32>) -> tensor<2x4xf32>
func.func @ops(%a: tensor<2x3x3xf64>, %b: tensor<2x3x1xf64>, %c: tensor<4x2xf32>) -> (tensor<2x3x1xf64>, tensor<2x3x1xf64>, tensor<2xf64>, tensor<2x2xf32>, tensor<2x3xf64>, tensor<2x4xf32>) {
  %0 = pyflame.solve %a, %b : (tensor<2x3x3xf64>, tensor<2x3x1xf64>) -> tensor<2x3x1xf64>
  %1 = pyflame.solve_triangular %a, %b {upper = true, unitriangular = false} : (tensor<2x3x3xf64>, tensor<2x3x1xf64>) -> tensor<2x3x1xf64>
  %2, %3 = pyflame.slogdet %a : (tensor<2x3x3xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  %4, %5 = pyflame.qr %c {complete = false} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2x2xf32>)
  %6, %7 = pyflame.eigh %a {lower = true} : (tensor<2x3x3xf64>) -> (tensor<2x3xf64>, tensor<2x3x3xf64>)
  %8 = pyflame.pinv %c {atol = 0.0 : f64, rtol = 1.0e-6 : f64, hermitian = false} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  func.return %0, %1, %3, %5, %6, %8 : tensor<2x3x1xf64>, tensor<2x3x1xf64>, tensor<2xf64>, tensor<2x2xf32>, tensor<2x3xf64>, tensor<2x4xf32>
}
