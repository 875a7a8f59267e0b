// RUN: pyflame-opt %s -p convert-wse-to-csl -t csl | filecheck %s
// wse.relayout on 3x3: the tile grid transposed. Per step s, each row whose PE s is
// not the diagonal sends that PE's tile along the row (a broadcast from column s:
// the relay color to column 0, then the bcast color), and each column sends what
// its diagonal PE got down the column to row s (from row px); the diagonal PE of
// column s copies its own tile at home. One tile of scratch, no whole copy.

wse.program @main {width = 3, height = 3} {
^bb0(%a: !wse.tensor<7x5xf32, #wse.layout<[y, x]>>):
  %r = wse.relayout %a : !wse.tensor<7x5xf32, #wse.layout<[y, x]>> -> !wse.tensor<7x5xf32, #wse.layout<[x, y]>>
  wse.return %r : !wse.tensor<7x5xf32, #wse.layout<[x, y]>>
}

// CHECK:      task main() void {
// CHECK:        for(@range(i16, 0, 3, 1)) |[[S:.*]]| {
// CHECK:          if ((py  !=  [[S]])) {
// CHECK:          if ((px  ==  [[S]])) {
// CHECK:            if ((py  ==  [[S]])) {
// CHECK:              @fmovs(
// CHECK:          else {
// CHECK:            if ((py  ==  [[S]])) {
// CHECK:      // FILE: layout
