// RUN: not pyflame-opt %s -t csl 2>&1 | filecheck %s
// xDSL's printer would emit "//unknown op" for arith.negf; our printer refuses.

builtin.module {
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    csl.func @f() {
      %a = arith.constant 1.0 : f32
      %b = arith.negf %a : f32
      csl.return
    }
  }) : () -> ()
}

// CHECK: op has no CSL spelling: {{.*}}arith.negf
