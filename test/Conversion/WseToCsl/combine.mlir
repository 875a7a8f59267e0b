// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// RUN: pyflame-opt %s -p 'convert-wse-to-csl{arch=wse3}' -t csl | filecheck %s --check-prefix=WSE3
// RUN: pyflame-opt %s -p 'convert-wse-to-csl{sdk=1}' -t csl | filecheck %s --check-prefix=SDK1
// A reduction over a dimension tiled over the columns: the local reduce, then
// a chain toward column 0 on two colors alternating by column parity
// (checkerboard), 13 rows over 3 rows of PEs (blocks of 5, 5, 3).

wse.program @main {width = 4, height = 3} {
^bb0(%a: !wse.tensor<13x8xf32, #wse.layout<[y, x]>>):
  %r = wse.reduce "sum" %a {dims = array<i64: 1>, keepdim = false} : !wse.tensor<13x8xf32, #wse.layout<[y, x]>> -> !wse.tensor<13xf32, #wse.layout<[y], x = sum>>
  %c = wse.combine "x" %r : !wse.tensor<13xf32, #wse.layout<[y], x = sum>> -> !wse.tensor<13xf32, #wse.layout<[y], x = 0>>
  wse.return %c : !wse.tensor<13xf32, #wse.layout<[y], x = 0>>
}

// CHECK:      // FILE: pe_program
// CHECK:      param px : i16;
// CHECK-NEXT: param py : i16;
// CHECK:      var buf0 : [10]f32 = @zeros([10]f32);
// CHECK:      var buf1 : [5]f32 = @zeros([5]f32);
// CHECK:      @export_symbol(in_0_ptr, "in_0");
// CHECK:      @export_symbol(out_0_ptr, "out_0");
// CHECK:      const chain_x_send : color = if (((px % 2)  ==  0)) @get_color(0) else @get_color(1);
// CHECK-NEXT: const chain_x_recv : color = if (((px % 2)  ==  0)) @get_color(1) else @get_color(0);
//   per-arch queues: memcpy owns queue 0 on WSE-2 and queues 0-1 on WSE-3
// CHECK:      comptime {
// CHECK-NEXT:   @initialize_queue(@get_input_queue(1), .{ .color = chain_x_recv });
// CHECK-NOT:  @get_output_queue(0)
// CHECK:      task main() void {
//   the local reduce: the first column, then the others (stride 2)
// CHECK:        .tensor_access = | d0 | { 5 } -> buf0[ (d0 * 2) ]
// CHECK:        @fmovs(
// CHECK:        for(@range(i16, 1, 2, 1))
// CHECK:          @fadds(
//   the chain: the last column sends, the middle ones add and forward, column 0 adds
// CHECK:        if ((px  ==  3)) {
// CHECK:          .fabric_color = chain_x_send,
// CHECK:          @fmovs({{.*}});
// SDK 2.x idioms (the default): a fabin DSD names its queue, bound to the color
// above; on WSE-2 a fabout DSD still names its color
// CHECK:          if ((px  ==  0)) {
// CHECK:            @get_dsd(fabin_dsd, .{
// CHECK-NEXT:         .extent = 5,
// CHECK-NEXT:         .input_queue = @get_input_queue(1),
// CHECK-NEXT:       });
// CHECK-NEXT:       @fadds([[L:.*]], [[L]], {{.*}});
// CHECK:          else {
// CHECK:            @fadds({{.*}}, {{.*}}, {{.*}});
// CHECK:        sys_mod.unblock_cmd_stream();
// CHECK-NEXT:   return;
// CHECK:      @bind_local_task(main, @get_local_task_id(2));
// CHECK:      fn compute() void {
// CHECK-NEXT:   @activate(@get_local_task_id(2));
// CHECK:      // FILE: layout
// CHECK:      @set_rectangle(4, 3);
// CHECK:      @set_tile_code(px{{.*}}, py{{.*}}, "pe_program.csl", tile_params);
// CHECK:      if ((px{{.*}}  >  0)) {
// CHECK-NEXT:   @set_color_config({{.*}}, chain_x_send{{[0-9]*}}, .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ WEST } } });
// CHECK:      if ((px{{.*}}  <  3)) {
// CHECK-NEXT:   @set_color_config({{.*}}, chain_x_recv{{[0-9]*}}, .{ .routes = .{ .rx = .{ EAST }, .tx = .{ RAMP } } });
// CHECK:      @export_name("out_0", [*]f32, true);
// CHECK:      @export_name("compute", fn() void, );

// WSE-3: user queues from 2, the output queue bound to its color too, and
// local task ids from 8 (ids 0-7 are the input queues' data tasks)
// WSE3:      @initialize_queue(@get_input_queue(2), .{ .color = chain_x_recv });
// WSE3:      @initialize_queue(@get_output_queue(2), .{ .color = chain_x_send });
//   SDK 2.x on WSE-3: a fabout DSD names no color either (its queue is bound)
// WSE3:      const {{v[0-9]+}} : fabout_dsd = @get_dsd(fabout_dsd, .{
// WSE3-NEXT:   .extent = 5,
// WSE3-NEXT:   .output_queue = @get_output_queue(2),
// WSE3:      @bind_local_task(main, @get_local_task_id(8));

// SDK 1.x idioms: fabric DSDs name their color; queue set-up only on WSE-3
// SDK1:      if (@is_arch("wse3")) {
// SDK1-NEXT:   @initialize_queue(@get_input_queue(1), .{ .color = chain_x_recv });
// SDK1:      @get_dsd(fabin_dsd, .{
// SDK1-NEXT:   .extent = 5,
// SDK1-NEXT:   .fabric_color = chain_x_recv,
// SDK1-NEXT:   .input_queue = @get_input_queue(1),
