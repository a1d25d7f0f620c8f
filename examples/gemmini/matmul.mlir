// A x B with Gemmini's int8 saturation, as JAX prints it (matmul.hlo is its HLO twin): the int32
// product is clamped to [-128, 127] and converted to int8.
module @matmul attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x16xi8> loc("a"), %arg1: tensor<16x16xi8> loc("b")) -> (tensor<16x16xi8> {jax.result_info = ""}) {
    %c = stablehlo.constant dense<-128> : tensor<i32>
    %c_0 = stablehlo.constant dense<127> : tensor<i32>
    %0 = stablehlo.convert %arg0 : (tensor<16x16xi8>) -> tensor<16x16xi32>
    %1 = stablehlo.convert %arg1 : (tensor<16x16xi8>) -> tensor<16x16xi32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi32>
    %3 = stablehlo.clamp %c, %2, %c_0 : (tensor<i32>, tensor<16x16xi32>, tensor<i32>) -> tensor<16x16xi32>
    %4 = stablehlo.convert %3 : (tensor<16x16xi32>) -> tensor<16x16xi8>
    return %4 : tensor<16x16xi8>
  }
}
