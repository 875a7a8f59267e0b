// An unterminated string or a bad escape made xDSL's lexer backtrack for
// minutes (an exponential regular expression; found by test/python/fuzz):
// refused first, with the place.
// RUN: not pyflame-opt %s --allow-unregistered-dialect 2>&1 | filecheck %s
// CHECK: string-literal.mlir:[[# @LINE + 2]]:101: error: unterminated string literal
// CHECK-NOT: Traceback
"test.op"() {a = "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij} : () -> ()
