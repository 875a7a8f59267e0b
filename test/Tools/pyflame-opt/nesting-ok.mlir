// 99 nested modules are within the limit and parse (the limit refuses only
// what would overflow the stack).
// RUN: pyflame-opt %s | filecheck %s
// CHECK-COUNT-99: builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
builtin.module {
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
}
