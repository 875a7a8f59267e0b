// Deeply nested input: a located error and exit code 1, never a RecursionError
// traceback (issue 19). 129 nested parentheses: one more than the limit.
// RUN: not pyflame-opt %s 2>&1 | filecheck %s
// CHECK: nesting.mlir:[[# @LINE + 3]]:128: error: brackets nested deeper than 128 levels
// CHECK-NOT: Traceback
func.func @f() {
((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((()))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
}
