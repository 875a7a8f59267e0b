// RUN: pyflame-opt %s | filecheck %s
// RUN: pyflame-opt %s -p canonicalize,cse | filecheck %s --check-prefix=CSE

// uint8 (ui8), int8 (i8) and int16 (i16) tensors round-trip, and converts
// between them keep their types.

// CHECK-LABEL: func.func @narrow(
// CHECK-SAME: %{{.*}}: tensor<3xui8>, %{{.*}}: tensor<3xi8>) -> tensor<3xi16>
// CHECK: pyflame.convert %{{.*}} {dtype = i16} : (tensor<3xui8>) -> tensor<3xi16>
// CHECK: pyflame.convert %{{.*}} {dtype = i16} : (tensor<3xi8>) -> tensor<3xi16>
// CHECK: pyflame.add %{{.*}}, %{{.*}} : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
// CSE-LABEL: func.func @narrow(
// CSE-COUNT-2: pyflame.convert
// CSE: pyflame.add
func.func @narrow(%a: tensor<3xui8>, %b: tensor<3xi8>) -> tensor<3xi16> {
  %c = pyflame.convert %a {dtype = i16} : (tensor<3xui8>) -> tensor<3xi16>
  %d = pyflame.convert %b {dtype = i16} : (tensor<3xi8>) -> tensor<3xi16>
  %e = pyflame.add %c, %d : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return %e : tensor<3xi16>
}
