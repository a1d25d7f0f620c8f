module @ops {
  func.func public @main(%arg0: tensor<2x3xbf16>, %arg1: tensor<5x4xf32>, %i: tensor<i32>) -> (tensor<8x9xf32>, tensor<6xbf16>) {
    %c = stablehlo.constant dense<[[1.0, -2.5, 3.0], [0.125, 0x7FC0, 0xFF80]]> : tensor<2x3xbf16>
    %0 = stablehlo.add %arg0, %c : tensor<2x3xbf16>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
    %2 = stablehlo.reshape %1 : (tensor<3x2xbf16>) -> tensor<6xbf16>
    %3 = stablehlo.dynamic_slice %arg1, %i, %i, sizes = [2, 2] : (tensor<5x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    %4 = stablehlo.dynamic_update_slice %arg1, %3, %i, %i : (tensor<5x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<5x4xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %5 = stablehlo.pad %4, %cst, low = [1, 0], high = [2, 2], interior = [0, 1] : (tensor<5x4xf32>, tensor<f32>) -> tensor<8x9xf32>
    %6 = stablehlo.slice %5 [0:8:2, 1:9] : (tensor<8x9xf32>) -> tensor<4x8xf32>
    %7 = stablehlo.concatenate %6, %6, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %8 = stablehlo.dot_general %7, %7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.reduce_precision %8, format = e5m10 : tensor<8x8xf32>
    %10 = stablehlo.custom_call @annotate(%9) {backend_config = "x", has_side_effect = true} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %11 = call @pad_more(%10) : (tensor<8x8xf32>) -> tensor<8x9xf32>
    return %11, %2 : tensor<8x9xf32>, tensor<6xbf16>
  }
  func.func private @pad_more(%x: tensor<8x8xf32>) -> tensor<8x9xf32> {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.pad %x, %z, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x9xf32>
    return %0 : tensor<8x9xf32>
  }
}
