// Shifts and bit counts by composition: a << s is a * 2**s (a table of the
// powers gathered at the clamped amount), zero where s is outside [0, bits);
// popcnt the SWAR sums (masks 0x55.., 0x33.., 0x0f..).
// RUN: pyflame-opt %s -p convert-stablehlo-to-pyflame | filecheck %s

// CHECK-LABEL: func.func public @main
func.func public @main(%a: tensor<4xi32>, %s: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  // CHECK:      %[[IN:.*]] = pyflame.logical_and
  // CHECK:      %[[POW:.*]] = pyflame.constant {value = dense<[1, 2, 4, 8, {{.*}}, 1073741824, -2147483648]> : tensor<32xi32>}
  // CHECK:      %[[P:.*]] = pyflame.gather %[[POW]]
  // CHECK:      %[[M:.*]] = pyflame.mul %a, %{{.*}}
  // CHECK-NEXT: pyflame.where %[[IN]], %[[M]]
  %0 = stablehlo.shift_left %a, %s : tensor<4xi32>
  // CHECK:      pyflame.constant {value = dense<1431655765> : tensor<i32>}
  // CHECK:      pyflame.constant {value = dense<858993459> : tensor<i32>}
  // CHECK:      pyflame.constant {value = dense<252645135> : tensor<i32>}
  // CHECK-NOT:  stablehlo.
  %1 = stablehlo.popcnt %a : tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}
