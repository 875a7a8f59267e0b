// RUN: rm -rf %t && pyflame-opt %s -t csl --output-dir %t | filecheck %s
// RUN: ls %t | filecheck %s --check-prefix=FILES
// RUN: cat %t/commands.sh | filecheck %s --check-prefix=CMD
// RUN: cat %t/program.json | filecheck %s --check-prefix=SPEC
// A small MLP from pyflame IR to a complete SDK project on 2x2 PEs (wse3).

module attributes {wse.grid = "2x2", wse.arch = "wse3"} {
  func.func @main(%x: tensor<16x8xf32>, %w1: tensor<8x6xf32>, %w2: tensor<6x4xf32>) -> tensor<f32> {
    %0 = pyflame.matmul %x, %w1 : (tensor<16x8xf32>, tensor<8x6xf32>) -> tensor<16x6xf32>
    %1 = pyflame.relu %0 : (tensor<16x6xf32>) -> tensor<16x6xf32>
    %2 = pyflame.matmul %1, %w2 : (tensor<16x6xf32>, tensor<6x4xf32>) -> tensor<16x4xf32>
    %3 = pyflame.log_softmax %2 {dim = 1 : i64} : (tensor<16x4xf32>) -> tensor<16x4xf32>
    %4 = pyflame.sum %3 {dims = array<i64: 0, 1>, keepdim = false} : (tensor<16x4xf32>) -> tensor<f32>
    func.return %4 : tensor<f32>
  }
}

// CHECK:      // FILE: pe_program
// CHECK:      param memcpy_params;
// CHECK-NEXT: param px : i16;
// CHECK-NEXT: param py : i16;
// CHECK-NEXT: const sys_mod : imported_module = @import_module("<memcpy/memcpy>", memcpy_params);
// CHECK-NEXT: const math_lib : imported_module = @import_module("<math>");
// CHECK:      @export_symbol(in_0_ptr, "in_0");
// CHECK:      @export_symbol(in_2_ptr, "in_2");
// CHECK:      @export_symbol(out_0_ptr, "out_0");
// CHECK:      comptime {
// CHECK-NEXT:   @initialize_queue(@get_input_queue(2), .{ .color = {{.*}} });
// CHECK:      task main() void {
// CHECK:        @fmacs(
// CHECK:        @fmaxs({{.*}}, 0.0);
// CHECK:        math_lib.exp_f32(
// CHECK:        math_lib.log_f32(
// CHECK:        sys_mod.unblock_cmd_stream();
// CHECK-NEXT:   return;
// CHECK-NEXT: }
// CHECK-NEXT: comptime {
// CHECK-NEXT:   @bind_local_task(main, @get_local_task_id({{[0-9]+}}));
// CHECK:      fn compute() void {
// CHECK-NEXT:   @activate(@get_local_task_id({{[0-9]+}}));
// CHECK:      @export_symbol(compute, "compute");
// CHECK:      // FILE: layout
// CHECK:      const memcpy : imported_module = @import_module("<memcpy/get_params>", memcpy_init);
// CHECK:      @set_rectangle(2, 2);
// CHECK:      @set_tile_code(px{{.*}}, py{{.*}}, "pe_program.csl", tile_params);
// CHECK:      @export_name("in_0", [*]f32, true);
// CHECK:      @export_name("out_0", [*]f32, true);
// CHECK:      @export_name("compute", fn() void, );

// FILES: README.md
// FILES: commands.sh
// FILES: layout.csl
// FILES: pe_program.csl
// FILES: program.json
// FILES: program.mlir
// FILES: run.py

// CMD: dims=9,4
// CMD: --hardware
// CMD: cslc layout.csl --arch=wse3 --fabric-dims=$dims --fabric-offsets=4,1 \
// CMD: --memcpy --channels=1 -o $out
// CMD: cs_python run.py --name $out "$@"
// CMD: python -m pyflame_mlir.runtime.wse.compile program.mlir --arch=wse3 -o out

// SPEC: "arch": "wse3",
// SPEC: "rectangle": [
// SPEC: "launch": "compute",
// SPEC: "name": "in_0",
