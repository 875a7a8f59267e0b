// A bad pipeline or command line is one line of error and exit code 1 (as
// mlir-opt), never a traceback nor argparse's exit code 2.
// RUN: not pyflame-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=BRACE
// RUN: not pyflame-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | filecheck %s --check-prefix=PAREN
// RUN: not pyflame-opt %s --pass-pipeline='cse(dce)' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not pyflame-opt %s -p nosuchpass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not pyflame-opt %s --cse -p dce 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not pyflame-opt %s --no-such-option 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not pyflame-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not pyflame-opt %s -o %t.no/such/dir/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: pyflame-opt --version | filecheck %s --check-prefix=VERSION
// BRACE: error: bad pass pipeline 'cse{': unbalanced braces
// PAREN: error: bad pass pipeline {{.*}}unbalanced parentheses
// ANCHOR: error: bad pass pipeline 'cse(dce)': 'cse(' is not an op anchor
// UNKNOWN: error: Unrecognized passes: ['nosuchpass']
// BOTH: error: pass flags (--cse) cannot be combined with -p
// OPTION: error: unrecognized arguments: --no-such-option
// MISSING: error: cannot open input file '{{.*}}.missing': No such file or directory
// OUTPUT: error: cannot open output file '{{.*}}out.mlir': No such file or directory
// VERSION: pyflame-opt (pyflame-mlir {{[0-9.]+}}), built on xDSL
// CHECK-NOT: Traceback
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
