module @windows {
  func.func public @main(%arg0: tensor<1x5x5x2xf32>, %arg1: tensor<3x3x2x4xf32>) -> tensor<1x2x3x4xf32> {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = "stablehlo.reduce_window"(%0, %cst) <{padding = dense<[[0, 0], [0, 1], [0, 0], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 1, 1>, window_strides = array<i64: 1, 2, 1, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %2 = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<1x3x3x4xf32>, tensor<f32>) -> tensor<1x2x3x4xf32>
    return %1 : tensor<1x2x3x4xf32>
  }
}
