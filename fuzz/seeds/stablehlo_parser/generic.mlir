"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{function_type = (tensor<4x6xf32>, tensor<2xi32>) -> (tensor<6xf32>, tensor<2xi32>), res_attrs = [{jax.result_info = "[0]"}, {jax.result_info = "[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<2xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %2 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>
    %3 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2xi32>
    %4 = "stablehlo.compare"(%arg1, %3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %5 = "stablehlo.select"(%4, %arg1, %3) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    "func.return"(%1, %5) : (tensor<6xf32>, tensor<2xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32} : () -> ()
