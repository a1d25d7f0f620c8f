// oneDNN K1 as JAX prints it with explicit layouts (k1_u8s8_gemm_32x32x64.hlo is its HLO twin):
// u8[32,64] x s8[32,64]^T -> s32[32,32], B in AMX's VNNI tiles T(16,4), the result in 16x16 tiles.
module @amx_k1 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x64xui8> {mhlo.layout_mode = "{1,0}"} loc("a"), %arg1: tensor<32x64xi8> {mhlo.layout_mode = "{1,0:T(16,4)}"} loc("b")) -> (tensor<32x32xi32> {jax.result_info = "", mhlo.layout_mode = "{1,0:T(16,16)}"}) {
    %0 = stablehlo.convert %arg0 : (tensor<32x64xui8>) -> tensor<32x64xi32>
    %1 = stablehlo.convert %arg1 : (tensor<32x64xi8>) -> tensor<32x64xi32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<32x64xi32>, tensor<32x64xi32>) -> tensor<32x32xi32>
    return %2 : tensor<32x32xi32>
  }
}
