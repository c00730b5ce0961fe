
// Best fit in program order leaves a hole the offline placements avoid: the
// 64-byte %0 dies before the 256-byte %2 starts, which its freed range does
// not hold, so best fit puts %2 and %3 above %1 (arguments 192 + 704). By
// size, %2 and %3 go first at the bottom, %1 above them, and %0 where %2
// will lie (192 + 640). greedy-work=0 leaves best fit alone.
// CHECK-LABEL: func.func @hole
// CHECK-SAME: parc.arena_bytes = 832 : i64
// BESTFIT-LABEL: func.func @hole
// BESTFIT-SAME: parc.arena_bytes = 896 : i64
func.func @hole(%x: tensor<16xf32> {parc.role = "input", parc.name = "x"},
                %y: tensor<32xf32> {parc.role = "input", parc.name = "y"}) -> tensor<64xf32> {
  %0 = parc.exp %x : tensor<16xf32>
  %1 = parc.concat %0, %x axis = 0 : tensor<16xf32>, tensor<16xf32> -> tensor<32xf32>
  %2 = parc.concat %y, %y axis = 0 : tensor<32xf32>, tensor<32xf32> -> tensor<64xf32>
  %3 = parc.concat %1, %1 axis = 0 : tensor<32xf32>, tensor<32xf32> -> tensor<64xf32>
  %4 = parc.add %2, %3 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %4 : tensor<64xf32>
}
