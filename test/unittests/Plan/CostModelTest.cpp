//===- CostModelTest.cpp - the planner's formulas against their sources ---===//
//
// Each expected value comes from the paper the formula cites or from the
// definition of the collective, computed by hand, not by the code under test.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/CostModel.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::parc;
using dist::CollectiveKind;

namespace {

ClusterSpec a100() { return *getClusterPreset("dgx-a100-80g"); }

TEST(CollectiveTime, RingAllReduceInsideANode) {
  ClusterSpec cluster = a100();
  CostModel costs(cluster, "bf16");
  // 8 ranks on NVLink: 2 (n-1)/n = 1.75 of 1 GB at 300 GB/s x the
  // collective efficiency, plus 2 (n-1) = 14 latencies of 3 us.
  double expected =
      14 * 3e-6 + 1.75e9 / (300e9 * cluster.efficiency.collective);
  EXPECT_DOUBLE_EQ(
      costs.getCollectiveTime(CollectiveKind::AllReduce, 1e9, {8, 1}),
      expected);
}

// A blocking collective waits `collective_wait` for the slowest rank once
// per call, whatever its size; a group of one does not wait.
TEST(CollectiveTime, WaitsOncePerCall) {
  ClusterSpec plain = a100(), waiting = a100();
  waiting.collectiveWait = 5e-4;
  CostModel without(plain, "bf16"), with(waiting, "bf16");
  for (double bytes : {1e3, 1e9})
    EXPECT_DOUBLE_EQ(
        with.getCollectiveTime(CollectiveKind::AllGather, bytes, {4, 1}),
        without.getCollectiveTime(CollectiveKind::AllGather, bytes, {4, 1}) +
            5e-4);
  EXPECT_DOUBLE_EQ(with.getPointToPointTime(1e6, {2, 1}),
                   without.getPointToPointTime(1e6, {2, 1}) + 5e-4);
  EXPECT_EQ(with.getCollectiveTime(CollectiveKind::AllReduce, 1e9, {1, 1}), 0);
}

TEST(CollectiveTime, GatherAndScatterMoveHalfAnAllReduce) {
  ClusterSpec cluster = a100();
  CostModel costs(cluster, "bf16");
  GroupPlacement group{4, 1};
  double gather = costs.getCollectiveTime(CollectiveKind::AllGather, 1e9, group);
  double scatter =
      costs.getCollectiveTime(CollectiveKind::ReduceScatter, 1e9, group);
  double reduce = costs.getCollectiveTime(CollectiveKind::AllReduce, 1e9, group);
  EXPECT_DOUBLE_EQ(gather, scatter);
  // Same bytes each; the all-reduce has twice the steps too.
  EXPECT_DOUBLE_EQ(gather + scatter, reduce);
  EXPECT_EQ(costs.getCollectiveTime(CollectiveKind::AllSlice, 1e9, group), 0);
  EXPECT_EQ(costs.getCollectiveTime(CollectiveKind::AllReduce, 1e9, {1, 1}),
            0);
}

TEST(CollectiveTime, GroupsAcrossNodesUseTheirNics) {
  ClusterSpec cluster = a100();
  CostModel costs(cluster, "bf16");
  // dp across nodes with tp = 8 inside: one rank per node, one 25 GB/s NIC.
  EXPECT_DOUBLE_EQ(costs.getBusBandwidth({16, 8}), 25e9);
  // 32 consecutive ranks: 8 per node, their 8 NICs (200 GB/s) are slower
  // than NVLink.
  EXPECT_DOUBLE_EQ(costs.getBusBandwidth({32, 1}), 200e9);
  // 4 ranks 2 apart: 8 ranks' span, still inside one node.
  EXPECT_DOUBLE_EQ(costs.getBusBandwidth({4, 2}), 300e9);
  EXPECT_DOUBLE_EQ(costs.getLinkLatency({16, 8}), 5e-6);
}

// Bytes each rank sends per step for 1 GB of gradients per worker, by hand:
// the ring all-reduce sends 2 (n-1)/n GB.
TEST(ParameterServer, TrafficPerRank) {
  // Colocated on all 8 workers: a server sends 7 parts of 1/8 to the other
  // servers (push) and its part to 7 workers (pull): 14/8, the ring's 1.75.
  ParameterServerTraffic all =
      getParameterServerTraffic(1e9, 8, 8, ServerPlacement::Colocated);
  EXPECT_DOUBLE_EQ(all.busiest, 1.75e9);
  EXPECT_DOUBLE_EQ(all.worker, 1.75e9);
  // One server among 8: it sends the whole parameters to 7 workers.
  ParameterServerTraffic one =
      getParameterServerTraffic(1e9, 8, 1, ServerPlacement::Colocated);
  EXPECT_DOUBLE_EQ(one.busiest, 7e9);
  EXPECT_DOUBLE_EQ(one.worker, 1e9);
  // 2 of 8: its other half to the other server, its half to 7 workers.
  EXPECT_DOUBLE_EQ(
      getParameterServerTraffic(1e9, 8, 2, ServerPlacement::Colocated).busiest,
      0.5e9 + 3.5e9);
  // Dedicated: a worker pushes and pulls 1 GB; 8 servers serve 8 workers
  // 1/8 each (1 GB), 4 servers 2 GB.
  ParameterServerTraffic dedicated =
      getParameterServerTraffic(1e9, 8, 8, ServerPlacement::Dedicated);
  EXPECT_DOUBLE_EQ(dedicated.worker, 1e9);
  EXPECT_DOUBLE_EQ(dedicated.busiest, 1e9);
  EXPECT_DOUBLE_EQ(
      getParameterServerTraffic(1e9, 8, 4, ServerPlacement::Dedicated).busiest,
      2e9);
}

TEST(ParameterServer, Time) {
  ClusterSpec cluster = a100();
  CostModel costs(cluster, "bf16");
  double efficiency = cluster.efficiency.collective;
  // Colocated on all ranks of one node: the ring all-reduce's time.
  EXPECT_DOUBLE_EQ(
      costs.getParameterServerTime(1e9, 8, 8, ServerPlacement::Colocated,
                                   {8, 1}),
      costs.getCollectiveTime(CollectiveKind::AllReduce, 1e9, {8, 1}));
  // Dedicated: 1 GB over each worker's 25 GB/s NIC, a message per worker
  // each way at the 5 us inter-node latency.
  EXPECT_DOUBLE_EQ(costs.getParameterServerTime(
                       1e9, 8, 8, ServerPlacement::Dedicated, {8, 8}),
                   2 * 8 * 5e-6 + 1e9 / (25e9 * efficiency));
}

TEST(KernelTime, RooflineWithTheGemmCurve) {
  ClusterSpec cluster = a100();
  CostModel costs(cluster, "bf16");
  double flops = 1e12;
  EXPECT_DOUBLE_EQ(costs.getKernelTime(flops, 0),
                   flops / (312e12 * cluster.getGemmEfficiency(flops)));
  // A copy of 1 GB is bandwidth-bound.
  EXPECT_DOUBLE_EQ(costs.getKernelTime(0, 1e9),
                   1e9 / (2.039e12 * cluster.efficiency.memoryBound));
}

TEST(Pipeline, BubbleFractions) {
  // Narayanan et al. 2021: (p-1)/m, interleaved (p-1)/(v m); Qi et al.
  // 2023: ZB-H1 a third of 1F1B's.
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::OneFOneB, 4, 8, 1),
                   3.0 / 8);
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::GPipe, 4, 8, 1),
                   3.0 / 8);
  EXPECT_DOUBLE_EQ(
      getBubbleFraction(PipelineSchedule::Interleaved1F1B, 4, 8, 2), 3.0 / 16);
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::ZeroBubbleH1, 4, 8, 1),
                   1.0 / 8);
  EXPECT_EQ(getBubbleFraction(PipelineSchedule::OneFOneB, 1, 8, 1), 0);
}

TEST(Pipeline, InFlightMicrobatches) {
  EXPECT_EQ(getInFlightMicrobatches(PipelineSchedule::OneFOneB, 4, 16, 1), 4);
  EXPECT_EQ(getInFlightMicrobatches(PipelineSchedule::OneFOneB, 8, 4, 1), 4);
  EXPECT_EQ(getInFlightMicrobatches(PipelineSchedule::GPipe, 4, 16, 1), 16);
  EXPECT_DOUBLE_EQ(
      getInFlightMicrobatches(PipelineSchedule::Interleaved1F1B, 4, 16, 2),
      4 * (1 + 3.0 / 8));
}

TEST(ModelState, RajbhandariFigureOne) {
  // ZeRO (Rajbhandari et al. 2020), figure 1: a 7.5B-parameter model on 64
  // GPUs with mixed-precision Adam (K = 12): 120 GB per device without
  // ZeRO, 31.4 GB with P_os, 16.6 GB with P_os+g, 1.88 GB with P_os+g+p.
  double psi = 7.5e9;
  EXPECT_NEAR(getModelStateBytes(psi, true, 0, 64).total(), 120e9, 0.05e9);
  EXPECT_NEAR(getModelStateBytes(psi, true, 1, 64).total(), 31.4e9, 0.05e9);
  EXPECT_NEAR(getModelStateBytes(psi, true, 2, 64).total(), 16.6e9, 0.05e9);
  EXPECT_NEAR(getModelStateBytes(psi, true, 3, 64).total(), 1.88e9, 0.01e9);
  // f32 Adam: 4 + 4 + 8 bytes per parameter.
  ModelStateBytes f32 = getModelStateBytes(1000, false, 0, 4);
  EXPECT_EQ(f32.parameters, 4000);
  EXPECT_EQ(f32.gradients, 4000);
  EXPECT_EQ(f32.optimizerState, 8000);
}

TEST(Activations, KorthikantiTableTwo) {
  // Korthikanti et al. 2022, GPT-3 175B (a = 96, h = 12288, s = 2048):
  // 5 a s / h = 80, so without parallelism a layer keeps
  // s b h (34 + 80) bytes.
  int64_t s = 2048, b = 1, h = 12288, a = 96;
  double sbh = double(s) * b * h;
  EXPECT_DOUBLE_EQ(
      getKorthikantiActivationBytes(s, b, h, a, 1, false, Recompute::None),
      sbh * 114);
  // Tensor parallelism t = 8: s b h (10 + 24/t + 5 a s / (h t)).
  EXPECT_DOUBLE_EQ(
      getKorthikantiActivationBytes(s, b, h, a, 8, false, Recompute::None),
      sbh * (10 + 3 + 10));
  // Sequence parallelism too: s b h / t (34 + 5 a s / h).
  EXPECT_DOUBLE_EQ(
      getKorthikantiActivationBytes(s, b, h, a, 8, true, Recompute::None),
      sbh / 8 * 114);
  // Selective recomputation drops the attention term: 34 s b h / t.
  EXPECT_DOUBLE_EQ(getKorthikantiActivationBytes(s, b, h, a, 8, true,
                                                 Recompute::Selective),
                   sbh / 8 * 34);
  // Full recomputation keeps the layer input: 2 s b h.
  EXPECT_DOUBLE_EQ(
      getKorthikantiActivationBytes(s, b, h, a, 8, false, Recompute::Full),
      2 * sbh);
}

TEST(Flops, MegatronFormulaForGpt3) {
  // 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) for GPT-3 175B, B = 1536,
  // evaluated independently: 4.51097e18 FLOPs per step (about 6 x 175e9
  // parameters x 3.1M tokens x 4/3 for the recomputed forward pass).
  EXPECT_NEAR(getMegatronStepFlops(1536, 2048, 96, 12288, 51200, true) / 1e18,
              4.51097, 1e-5);
  EXPECT_NEAR(getMegatronStepFlops(1536, 2048, 96, 12288, 51200, false) /
                  getMegatronStepFlops(1536, 2048, 96, 12288, 51200, true),
              0.75, 1e-12);
}

} // namespace
