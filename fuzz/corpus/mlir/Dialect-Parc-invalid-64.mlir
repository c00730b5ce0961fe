
func.func @compare_unknown_predicate(%a: tensor<2xf32>) {
  // expected-error @+2 {{expected ::mlir::parc::ComparisonPredicate to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{failed to parse Parc_ComparisonPredicateAttr}}
  %0 = parc.compare approx %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xi32>
  return
}
