// RUN: pyflame-opt %s -t csl | filecheck %s
// @map with a library and a local callback, &v of a variable, p.* loads and stores,
// a one-dimensional array literal (xDSL 0.74 asserts on it), >> and ^ (xDSL 0.74
// prints neither).

builtin.module {
  "csl.module"() <{kind = #csl<module_kind program>, sym_name = "pe"}> ({
    %n = arith.constant 4 : i16
    %math = "csl.import_module"() <{module = "<math>"}> : () -> !csl.imported_module
    "memref.global"() <{sym_name = "B", type = memref<4xi32>, initial_value = dense<[1, 2, 3, 4]> : tensor<4xi32>, sym_visibility = "private"}> : () -> ()
    %B = "memref.get_global"() <{name = @B}> : () -> memref<4xi32>
    %zero = arith.constant 0.0 : f32
    %a = "csl.constants"(%n, %zero) : (i16, f32) -> memref<?xf32>
    %a_dsd = "csl.get_mem_dsd"(%a, %n) : (memref<?xf32>, i16) -> !csl<dsd mem1d_dsd>
    csl.func @fold(%x: f32, %acc: !csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>) -> f32 {
      %s = csl_ext.deref %acc : !csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>> -> f32
      %r = arith.addf %s, %x : f32
      csl.return %r : f32
    }
    csl.func @f(%k: i32) {
      %v = "csl.variable"() <{default = 0.0 : f32}> : () -> !csl.var<f32>
      %p = csl_ext.addressof_var %v : !csl.var<f32> -> !csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>
      csl_ext.map @sqrt_f32 in %math (%a_dsd, %a_dsd) : !csl<dsd mem1d_dsd>, !csl<dsd mem1d_dsd>
      csl_ext.map @fold(%a_dsd, %p, %p) : !csl<dsd mem1d_dsd>, !csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>, !csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>
      %one = arith.constant 1.0 : f32
      csl_ext.store_ptr %one, %p : f32, !csl.ptr<f32, #csl<ptr_kind single>, #csl<ptr_const var>>
      %two = arith.constant 2 : i32
      %sh = arith.shrsi %k, %two : i32
      %x = arith.xori %sh, %k : i32
      %i0 = arith.constant 0 : index
      memref.store %x, %B[%i0] : memref<4xi32>
      csl.return
    }
  }) : () -> ()
}

// CHECK: var B : [4]i32 = [4]i32{1, 2, 3, 4};
// CHECK: fn fold(x : f32, acc : *f32) f32 {
// CHECK-NEXT: const s : f32 = acc.*;
// CHECK: fn f(k : i32) void {
// CHECK: const p : *f32 = &v;
// CHECK-NEXT: @map(math.sqrt_f32, a_dsd, a_dsd);
// CHECK-NEXT: @map(fold, a_dsd, p, p);
// CHECK-NEXT: p.* = 1.0;
// CHECK: B[0] = ((k >> 2) ^ k);
