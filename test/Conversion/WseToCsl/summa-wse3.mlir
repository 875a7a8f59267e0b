// RUN: pyflame-opt %s -p "legalize-for-wse,convert-pyflame-to-wse{arch=wse3 matmul=summa}" | filecheck %s
// RUN: pyflame-opt %s -p "legalize-for-wse,convert-pyflame-to-wse{arch=wse3 matmul=summa},convert-wse-to-csl{arch=wse3}" -t csl | filecheck %s --check-prefix=CSL
// Issue 15: SUMMA on WSE-3. matmul=summa is honoured there again (it was refused): its panel relays
// toward line 0 are store-and-forward through the cores on two colors chosen by
// parity, so every route has one rx direction (WSE-3 accepts one per color).

module attributes {wse.grid = "4x4"} {
  func.func @main(%x: tensor<64x32xf32>, %w1: tensor<32x16xf32>) -> tensor<64x16xf32> {
    %0 = pyflame.matmul %x, %w1 : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    func.return %0 : tensor<64x16xf32>
  }
}

// CHECK: wse.summa

// CSL:     const relay_x_send : color = if (((px % 2)  ==  0)) @get_color([[E:[0-9]+]]) else @get_color([[O:[0-9]+]]);
// CSL-NEXT: const relay_x_recv : color = if (((px % 2)  ==  0)) @get_color([[O]]) else @get_color([[E]]);
// CSL:     @initialize_queue(@get_input_queue({{[0-9]}}), .{ .color = relay_x_recv });
// CSL:     @initialize_queue(@get_output_queue({{[0-9]}}), .{ .color = relay_x_send });
// CSL:     @set_color_config({{.*}}, relay_x_send{{[0-9]*}}, .{ .routes = .{ .rx = .{ RAMP }, .tx = .{ WEST } } });
// CSL:     @set_color_config({{.*}}, relay_x_recv{{[0-9]*}}, .{ .routes = .{ .rx = .{ EAST }, .tx = .{ RAMP } } });
// CSL-NOT: .rx = .{ {{[A-Z]+}}, {{[A-Z]+}} }
