// RUN: pyflame-opt %S/../../fixtures/csl/vecadd_4x1.mlir -t csl | filecheck %s
// The vector-add fixture: a local task bound to id 10, activated by the launched function.

// CHECK:      // FILE: add
// CHECK:      param n : i16;
// CHECK:      var a : [n]f32 = @constants([n]f32, 0.0);
// CHECK:      task add_task() void {
// CHECK-NEXT:   @fadds(c_dsd, a_dsd, b_dsd);
// CHECK-NEXT:   sys_mod.unblock_cmd_stream();
// CHECK:        @bind_local_task(add_task, @get_local_task_id(10));
// CHECK:      fn compute() void {
// CHECK-NEXT:   @activate(@get_local_task_id(10));
// CHECK:      // FILE: layout
// CHECK:      param width : i16 = 4;
// CHECK:      @set_rectangle(width, 1);
// CHECK:      for(@range(i16, 0, width, 1)) |x| {
// CHECK:        @set_tile_code(x, 0, "add.csl", tile_params);
// CHECK:      @export_name("c", [*]f32, true);
// CHECK:      @export_name("compute", fn() void, );
