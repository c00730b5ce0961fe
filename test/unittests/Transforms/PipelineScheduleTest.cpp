//===- PipelineScheduleTest.cpp - the order of each stage's units ---------===//
//
// Each schedule's unit order, written out by hand from its definition
// (GPipe; 1F1B; Megatron-LM's interleaved 1F1B; ZB-H1), and the micro-batches
// whose activations a stage holds under it.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/Pipeline.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using namespace mlir::parc;

namespace {

/// "F0 B0 ..." with the chunk after a dot when there are chunks, "b"/"w"
/// for input- and weight-gradient halves, and a "-" or "+" prefix for a
/// unit of the previous or next step.
std::string spell(ArrayRef<ScheduleUnit> units, bool chunks = false) {
  std::string text;
  for (const ScheduleUnit &unit : units) {
    const char *kind = unit.kind == ScheduleUnit::Forward        ? "F"
                       : unit.kind == ScheduleUnit::Backward     ? "B"
                       : unit.kind == ScheduleUnit::InputGradient ? "b"
                                                                  : "w";
    const char *step = unit.step < 0 ? "-" : unit.step > 0 ? "+" : "";
    text += (text.empty() ? "" : " ") + std::string(step) + kind +
            std::to_string(unit.microbatch);
    if (chunks)
      text += "." + std::to_string(unit.chunk);
  }
  return text;
}

TEST(PipelineSchedule, GPipeRunsEveryForwardFirst) {
  auto units = getStageSchedule(PipelineSchedule::GPipe, 0, 2, 3, 1, true);
  EXPECT_EQ(spell(units), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(getMaxInFlight(units), 3);
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithTheStagesAfter) {
  EXPECT_EQ(spell(getStageSchedule(PipelineSchedule::OneFOneB, 0, 3, 4, 1,
                                   true)),
            "F0 F1 F2 B0 F3 B1 B2 B3");
  auto last = getStageSchedule(PipelineSchedule::OneFOneB, 2, 3, 4, 1, true);
  EXPECT_EQ(spell(last), "F0 B0 F1 B1 F2 B2 F3 B3");
  EXPECT_EQ(getMaxInFlight(last), 1);
  // Fewer micro-batches than the warm-up wants.
  EXPECT_EQ(spell(getStageSchedule(PipelineSchedule::OneFOneB, 0, 4, 2, 1,
                                   true)),
            "F0 F1 B0 B1");
}

TEST(PipelineSchedule, ForwardOnlyRunsTheForwardsInOrder) {
  EXPECT_EQ(spell(getStageSchedule(PipelineSchedule::OneFOneB, 0, 2, 3, 1,
                                   false)),
            "F0 F1 F2");
}

TEST(PipelineSchedule, InterleavedGoesThroughChunksInGroupsOfStages) {
  // p = 2, v = 2, m = 4: stage 0 holds chunks 0 and 2; warm-up
  // 2 (p - 1) + (v - 1) p = 4 units.
  EXPECT_EQ(spell(getStageSchedule(PipelineSchedule::Interleaved1F1B, 0, 2, 4,
                                   2, true),
                  true),
            "F0.0 F1.0 F0.2 F1.2 F2.0 B0.2 F3.0 B1.2 F2.2 B0.0 F3.2 B1.0 "
            "B2.2 B3.2 B2.0 B3.0");
  // The last stage warms up with (v - 1) p = 2 units.
  EXPECT_EQ(spell(getStageSchedule(PipelineSchedule::Interleaved1F1B, 1, 2, 4,
                                   2, true),
                  true),
            "F0.1 F1.1 F0.3 B0.3 F1.3 B1.3 F2.1 B0.1 F3.1 B1.1 F2.3 B2.3 "
            "F3.3 B3.3 B2.1 B3.1");
}

TEST(PipelineSchedule, ZeroBubbleDefersTheFirstWeightGradients) {
  // Stage s splits its first s backwards and runs their weight gradients
  // last; stage 0 splits none.
  EXPECT_EQ(spell(getStageSchedule(PipelineSchedule::ZeroBubbleH1, 0, 3, 4, 1,
                                   true)),
            "F0 F1 F2 B0 F3 B1 B2 B3");
  auto middle = getStageSchedule(PipelineSchedule::ZeroBubbleH1, 2, 3, 4, 1,
                                 true);
  EXPECT_EQ(spell(middle), "F0 b0 F1 b1 F2 B2 F3 B3 w0 w1");
  // Activations go with the input gradients: as 1F1B's.
  EXPECT_EQ(getMaxInFlight(middle), 1);
}

TEST(PipelineSchedule, PipeDream2BWRunsTheNextStepsWarmUpInTheCooldown) {
  // Stage 0 of 3 with 4 micro-batches: 1F1B's two warm-up forwards ran in
  // the previous step; its cooldown runs the next step's, so no unit waits
  // for a flush. The activations held are 1F1B's.
  auto first =
      getStageSchedule(PipelineSchedule::PipeDream2BW, 0, 3, 4, 1, true);
  EXPECT_EQ(spell(first), "-F0 -F1 F2 B0 F3 B1 +F0 B2 +F1 B3");
  EXPECT_EQ(getMaxInFlight(first), 3);
  EXPECT_EQ(getMaxInFlight(first),
            getMaxInFlight(getStageSchedule(PipelineSchedule::OneFOneB, 0, 3, 4,
                                            1, true)));
  auto last =
      getStageSchedule(PipelineSchedule::PipeDream2BW, 2, 3, 4, 1, true);
  EXPECT_EQ(spell(last), "F0 B0 F1 B1 F2 B2 F3 B3");
}

TEST(PipelineSchedule, LayersBalanceTheStagesCosts) {
  // Equal layers and nothing else: the even split.
  EXPECT_EQ(balanceLayersPerStage({1, 1, 1, 1}, 0, 0, 2),
            (SmallVector<int64_t>{2, 2}));
  // A head worth 2.5 layers on the last stage: 3 + (1 + 2.5) beats
  // 2 + (2 + 2.5).
  EXPECT_EQ(balanceLayersPerStage({1, 1, 1, 1}, 0, 2.5, 2),
            (SmallVector<int64_t>{3, 1}));
  // GPT-2 small's shape (head ~5.5 layers, embedding ~0): 12 layers on 4
  // stages. The last stage holds one layer (1 + 5.5 is the least the
  // costliest stage can be, against the even split's 3 + 5.5), the others
  // share the remaining 11 as evenly as they can.
  SmallVector<int64_t> gpt2 =
      balanceLayersPerStage(SmallVector<double>(12, 1.0), 0, 5.5, 4);
  EXPECT_EQ(gpt2.back(), 1);
  EXPECT_EQ(gpt2[0] + gpt2[1] + gpt2[2], 11);
  for (int64_t count : ArrayRef(gpt2).drop_back())
    EXPECT_TRUE(count == 3 || count == 4) << count;
  // Every stage keeps a layer.
  EXPECT_EQ(balanceLayersPerStage({1, 1, 1}, 0, 100, 3),
            (SmallVector<int64_t>{1, 1, 1}));
}

TEST(PipelineSchedule, LayersSplitEvenlyWithExtrasInTheMiddle) {
  EXPECT_EQ(*getLayersPerStage(4, 10, std::nullopt),
            (SmallVector<int64_t>{2, 3, 3, 2}));
  EXPECT_TRUE(getLayersPerStage(3, 0, std::nullopt)->empty());
  llvm::Expected<SmallVector<int64_t>> tooMany =
      getLayersPerStage(5, 4, std::nullopt);
  ASSERT_FALSE(static_cast<bool>(tooMany));
  EXPECT_NE(llvm::toString(tooMany.takeError()).find("5 stages"),
            std::string::npos);
}

} // namespace
