
func.func @batch_norm_one_value_per_group(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // An unbiased variance needs two values.
  // expected-error @+1 {{'parc.batch_norm' op each of the 2 groups has fewer than 2 values per channel}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 groups = 2 : tensor<2x3xf32>, tensor<3xf32>
  return
}
