module @m {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.while(%x = %a) : tensor<4xf32>
