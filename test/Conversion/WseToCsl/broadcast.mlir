// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// A broadcast along the columns from column 2: column 2 relays to column 0 on
// the relay color (which every column may inject into), column 0 multicasts
// east on the bcast color; column 2 hears its own data back.

wse.program @main {width = 4, height = 1} {
^bb0(%a: !wse.tensor<6xf32, #wse.layout<[-], x = 2, y = 0>>):
  %b = wse.broadcast "x" %a : !wse.tensor<6xf32, #wse.layout<[-], x = 2, y = 0>> -> !wse.tensor<6xf32, #wse.layout<[-], x = *, y = 0>>
  %c = wse.map "neg"(%b) : (!wse.tensor<6xf32, #wse.layout<[-], x = *, y = 0>>) -> !wse.tensor<6xf32, #wse.layout<[-], x = *, y = 0>>
  wse.return %c : !wse.tensor<6xf32, #wse.layout<[-], x = *, y = 0>>
}

// CHECK:      task main() void {
// CHECK:        if ((2  ==  0)) {
// CHECK:        else {
// CHECK:          if ((px  ==  0)) {
// CHECK:            @fmovs([[D:.*]], [[RIN:.*]]);
// CHECK:            @fmovs([[BOUT:.*]], {{.*}});
// CHECK:          else {
// CHECK:            if ((px  ==  2)) {
// CHECK:              @fmovs([[ROUT:.*]], {{.*}});
// CHECK:              @fmovs({{.*}}, [[BIN:.*]]);
// CHECK:            else {
// CHECK:              @fmovs({{.*}}, [[BIN]]);
// CHECK:        @fnegs(
// CHECK:      // FILE: layout
//   bcast (color 0): column 0 injects, the others take and pass on east
// CHECK:      @set_color_config({{.*}}, @get_color(0), .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ EAST } } });
// CHECK:      @set_color_config({{.*}}, @get_color(0), .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } } });
// CHECK:      @set_color_config({{.*}}, @get_color(0), .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP, EAST } } });
//   relay (color 1): any column injects toward column 0
// CHECK:      @set_color_config({{.*}}, @get_color(1), .{ .routes = .{ .rx = .{ EAST }, .tx = .{ RAMP } } });
// CHECK:      @set_color_config({{.*}}, @get_color(1), .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ WEST } } });
// CHECK:      @set_color_config({{.*}}, @get_color(1), .{ .routes = .{ .rx = .{ EAST, RAMP }, .tx = .{ WEST } } });
