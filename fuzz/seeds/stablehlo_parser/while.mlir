module @loop {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>
     cond {
      %c_1 = stablehlo.constant dense<3> : tensor<i32>
      %1 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      %2 = stablehlo.multiply %iterArg_0, %iterArg_0 : tensor<4xf32>
      stablehlo.return %1, %2 : tensor<i32>, tensor<4xf32>
    }
    return %0#1 : tensor<4xf32>
  }
}
