// Elementwise pyflame ops: one linalg.generic each, broadcasting through the
// indexing maps, with the reference's semantics in the scalar body (NaN-
// propagating maximum, sign 0 at NaN, logical bool arithmetic, ne true at NaN,
// half precision math in f32).
// REQUIRES: mlir
// RUN: pyflame-opt %s -p convert-pyflame-to-linalg | mlir-opt | filecheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[B0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @binary
// CHECK:      linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:        arith.addf
// CHECK:      linalg.generic {indexing_maps = [#[[ID]], #[[B0]], #[[ID]]]
// CHECK:        arith.subf
// CHECK:        arith.mulf
// CHECK:        arith.divf
// CHECK:        arith.maximumf
// CHECK:        arith.minimumf
// CHECK:        math.powf
// CHECK:        arith.cmpf une
// CHECK:        arith.cmpf olt
// CHECK-NOT:  pyflame.
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xi1>) {
  %0 = pyflame.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.sub %a, %c : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.mul %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.div %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = pyflame.maximum %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %5 = pyflame.minimum %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %6 = pyflame.pow %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %7 = pyflame.ne %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %8 = pyflame.lt %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi1>, tensor<4x8xi1>
}

// CHECK-LABEL: func.func @unary
// CHECK:        arith.negf
// CHECK:        math.absf
// sign: 0 at zero and NaN (PyTorch's), never x itself
// CHECK:        %[[GT:.*]] = arith.cmpf ogt, %[[X:.*]], %{{.*}} : f32
// CHECK:        %[[LT:.*]] = arith.cmpf olt, %[[X]]
// CHECK-NOT:    arith.select %[[LT]], %{{.*}}, %[[X]] : f32
// CHECK:        %[[IN:.*]] = arith.select %[[LT]], %{{.*}}, %{{.*}} : f32
// CHECK:        arith.select %[[GT]], %{{.*}}, %[[IN]] : f32
// CHECK:        math.exp
// CHECK:        math.log
// CHECK:        math.sqrt
// CHECK:        math.tanh
// CHECK:        math.erf
// relu is maximumf with 0 (NaN stays NaN)
// CHECK:        arith.maximumf
// CHECK:        math.sin
// CHECK:        math.cos
func.func @unary(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = pyflame.neg %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.abs %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyflame.sign %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = pyflame.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = pyflame.log %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = pyflame.sqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = pyflame.tanh %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = pyflame.erf %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = pyflame.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = pyflame.sin %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = pyflame.cos %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %11 = pyflame.rsqrt %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %12 = pyflame.reciprocal %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %13 = pyflame.sigmoid %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %14 = pyflame.square %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %15 = pyflame.gelu %x {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// log1p is Kahan's log(u) * x / (u - 1), u = 1 + x (x where u == 1), not
// math.log1p, which upstream's math-to-llvm lowers as log(1 + x); half
// precision computes in f32
// CHECK-LABEL: func.func @log1p
// CHECK:        %[[U:.*]] = arith.addf %{{.*}}, %[[X:.*]] : f32
// CHECK-NEXT:   %[[L:.*]] = math.log %[[U]] : f32
// CHECK-NEXT:   %[[D:.*]] = arith.subf %[[U]], %{{.*}} : f32
// CHECK-NEXT:   %[[Q:.*]] = arith.divf %[[X]], %[[D]] : f32
// CHECK-NEXT:   arith.mulf %[[L]], %[[Q]] : f32
// CHECK:        %[[R:.*]] = arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// CHECK-NEXT:   linalg.yield %[[R]] : f32
// CHECK-NOT:    math.log1p
// CHECK:        arith.extf %{{.*}} : f16 to f32
// CHECK:        math.log %{{.*}} : f32
// CHECK:        arith.truncf %{{.*}} : f32 to f16
func.func @log1p(%x: tensor<4x8xf32>, %h: tensor<4xf16>) -> (tensor<4x8xf32>, tensor<4xf16>) {
  %0 = pyflame.log1p %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyflame.log1p %h : (tensor<4xf16>) -> tensor<4xf16>
  func.return %0, %1 : tensor<4x8xf32>, tensor<4xf16>
}

// CHECK-LABEL: func.func @types
// bool add is logical or; ints compare signed; f16 exp computes in f32
// CHECK:        arith.ori %{{.*}}, %{{.*}} : i1
// CHECK:        arith.cmpi sgt, %{{.*}}, %{{.*}} : i32
// CHECK:        %[[E:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:        %[[X:.*]] = math.exp %[[E]] : f32
// CHECK:        arith.truncf %[[X]] : f32 to f16
// CHECK:        arith.sitofp %{{.*}} : i32 to f32
// CHECK:        arith.select
// CHECK:        arith.xori
func.func @types(%p: tensor<4xi1>, %i: tensor<4xi32>, %h: tensor<4xf16>, %f: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  %0 = pyflame.add %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = pyflame.gt %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = pyflame.exp %h : (tensor<4xf16>) -> tensor<4xf16>
  %3 = pyflame.convert %i {dtype = f32} : (tensor<4xi32>) -> tensor<4xf32>
  %4 = pyflame.where %p, %3, %f : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = pyflame.logical_not %p : (tensor<4xi1>) -> tensor<4xi1>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}

// integer pow: math.ipowi for exponents >= 0, the reference's rule below 0
// CHECK-LABEL: func.func @ipow
// CHECK:        %[[NEG:.*]] = arith.cmpi slt
// CHECK:        %[[E:.*]] = arith.select %[[NEG]]
// CHECK:        math.ipowi %{{.*}}, %[[E]] : i32
func.func @ipow(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = pyflame.pow %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// rational-tanh (the mlir backend's choice): f32 tanh as Eigen's rational
// approximation in arith ops (vectorizable), x itself near 0; f64 keeps math.tanh
// RUN: pyflame-opt %s -p 'convert-pyflame-to-linalg{rational-tanh=true}' | mlir-opt | filecheck %s --check-prefix=RATIONAL
// RATIONAL-LABEL: func.func @tanh
// RATIONAL:       arith.constant -7.99881172 : f32
// RATIONAL:       arith.maximumf
// RATIONAL:       arith.minimumf
// RATIONAL:       arith.divf
// RATIONAL:       arith.cmpf olt
// RATIONAL:       arith.select
// RATIONAL:       math.tanh %{{.*}} : f64
func.func @tanh(%a: tensor<4xf32>, %b: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>) {
  %0 = pyflame.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.tanh %b : (tensor<4xf64>) -> tensor<4xf64>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf64>
}
