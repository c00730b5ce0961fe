//===- PlanTest.cpp - plan.json and cluster.json readers and writers ------===//
//
// The strict JSON tree's locations, the plan's and the cluster's round trips,
// every kind of reader error with its exact line:column, the presets and the
// GEMM efficiency curve.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Plan.h"
#include "parc/Plan/Cluster.h"
#include "parc/Plan/StrictJson.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir::parc;

namespace {

/// The error of reading `text` as a plan, as the tools print it.
std::string planError(llvm::StringRef text) {
  llvm::Expected<Plan> plan = readPlan(text, "plan.json");
  if (plan) {
    ADD_FAILURE() << "read without an error: " << text.str();
    return "";
  }
  return llvm::toString(plan.takeError());
}

std::string clusterError(llvm::StringRef text) {
  llvm::Expected<ClusterSpec> cluster = readCluster(text, "c.json");
  if (cluster) {
    ADD_FAILURE() << "read without an error: " << text.str();
    return "";
  }
  return llvm::toString(cluster.takeError());
}

Plan readOrFail(llvm::StringRef text) {
  llvm::Expected<Plan> plan = readPlan(text, "plan.json");
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return Plan();
  }
  return std::move(*plan);
}

//===----------------------------------------------------------------------===//
// The JSON tree
//===----------------------------------------------------------------------===//

TEST(StrictJsonTest, KeysAndValuesKnowTheirLocation) {
  llvm::Expected<json::Value> root = json::parse(
      "{\"a\\\"b\": [1, -2.50, true],\n  \"c\" :\t\"x\\u00e9\", \"d\": "
      "{\"e\": null}}",
      "t.json");
  ASSERT_TRUE(static_cast<bool>(root)) << llvm::toString(root.takeError());
  EXPECT_EQ(root->location.str(), "1:1");
  ASSERT_EQ(root->members.size(), 3u);
  const json::Member &ab = root->members[0];
  EXPECT_EQ(ab.key, "a\"b");
  EXPECT_EQ(ab.keyLocation.str(), "1:2");
  EXPECT_EQ(ab.value.location.str(), "1:10");
  ASSERT_EQ(ab.value.elements.size(), 3u);
  EXPECT_EQ(ab.value.elements[0].location.str(), "1:11");
  EXPECT_EQ(ab.value.elements[0].integer, 1);
  const json::Value &number = ab.value.elements[1];
  EXPECT_EQ(number.location.str(), "1:14");
  EXPECT_EQ(number.text, "-2.50");
  EXPECT_FALSE(number.integerLiteral);
  EXPECT_FALSE(number.integer);
  EXPECT_EQ(number.number, -2.5);
  EXPECT_EQ(ab.value.elements[2].location.str(), "1:21");
  const json::Member &c = root->members[1];
  EXPECT_EQ(c.keyLocation.str(), "2:3");
  EXPECT_EQ(c.value.location.str(), "2:9");
  EXPECT_EQ(c.value.text, "x\xc3\xa9");
  const json::Member &d = root->members[2];
  EXPECT_EQ(d.keyLocation.str(), "2:20");
  EXPECT_EQ(d.value.members[0].keyLocation.str(), "2:26");
  EXPECT_EQ(d.value.members[0].value.location.str(), "2:31");
  EXPECT_EQ(d.value.members[0].value.kind, json::Value::Kind::Null);
}

TEST(StrictJsonTest, IntegersBeyondInt64AreNotIntegers) {
  llvm::Expected<json::Value> root = json::parse(
      "[9223372036854775807, 9223372036854775808, 100000000000000000000]",
      "t.json");
  ASSERT_TRUE(static_cast<bool>(root)) << llvm::toString(root.takeError());
  EXPECT_EQ(root->elements[0].integer, INT64_MAX);
  for (int index : {1, 2}) {
    EXPECT_TRUE(root->elements[index].integerLiteral);
    EXPECT_FALSE(root->elements[index].integer);
  }
  EXPECT_EQ(root->elements[2].location.str(), "1:44");
}

TEST(StrictJsonTest, Errors) {
  auto error = [](llvm::StringRef text) {
    llvm::Expected<json::Value> root = json::parse(text, "t.json");
    EXPECT_FALSE(static_cast<bool>(root));
    return root ? std::string() : llvm::toString(root.takeError());
  };
  EXPECT_EQ(error("{\"a\": 1,\n \"b\": [1,, 2]}"),
            "t.json:2:11: not valid JSON near '1,,'");
  EXPECT_EQ(error("{\"a\": {\"b\": 1, \"c\": 2, \"b\": 3}}"),
            "t.json:1:24: duplicate key \"b\" (first at 1:8)");
  // The same key in different objects is fine.
  EXPECT_TRUE(static_cast<bool>(
      json::parse("{\"a\": {\"b\": 1}, \"c\": {\"b\": 2}}", "t.json")));
  EXPECT_EQ(error(std::string(300, '[') + std::string(300, ']')),
            "t.json:1:257: JSON nested deeper than 256 levels");
  EXPECT_EQ(error("[1e999]"), "t.json:1:7: not valid JSON near '1e999'");
}

TEST(StrictJsonTest, PrintsArraysWithoutObjectsOnOneLine) {
  json::Value root = json::Value::makeObject();
  json::Value dims = json::Value::makeArray();
  dims.push(json::Value::makeArray().push(json::Value::makeString("dp")));
  dims.push(json::Value::makeArray());
  root.add("x", std::move(dims));
  root.add("e", json::Value::makeObject());
  root.add("s", json::Value::makeString("a\"\\\n\x01"));
  root.add("n", json::Value::makeNumber(0.1));
  root.add("objects", json::Value::makeArray().push(json::Value::makeObject()));
  EXPECT_EQ(json::print(root), "{\n"
                               "  \"x\": [[\"dp\"], []],\n"
                               "  \"e\": {},\n"
                               "  \"s\": \"a\\\"\\\\\\n\\u0001\",\n"
                               "  \"n\": 0.1,\n"
                               "  \"objects\": [\n"
                               "    {}\n"
                               "  ]\n"
                               "}\n");
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

Plan makeFullPlan() {
  Plan plan;
  plan.mesh = {{"pp", 4, {}}, {"dp", 8, {}}, {"tp", 8, {}}};
  plan.shardings = {{"input_ids", {{"dp"}, {}}, {}},
                    {"h.0.attn.c_attn.weight", {{}, {}, {"tp"}, {}}, {}}};
  plan.sequenceParallel = true;
  plan.pipeline = PipelinePlan{
      "pp", 16, PipelineSchedule::Interleaved1F1B, 2, {{7, 8, 8, 7}}};
  plan.zero = 1;
  plan.recompute = Recompute::Selective;
  plan.recomputeLayers = {{0, 1}};
  plan.precision = Precision::BF16Mixed;
  plan.batch = BatchPlan{512, 2};
  plan.dataParallel = DataParallelPlan{DataParallelSync::ParameterServer, 4,
                                       ServerPlacement::Dedicated};
  Prediction predicted;
  predicted.stepTimeS = 13.9;
  predicted.tflopsPerGpu = 151;
  predicted.mfu = 0.48;
  predicted.peakMemoryBytesPerRank = 61234567890;
  predicted.commBytesPerRank = 1.5e9;
  predicted.bubbleFraction = 0.05;
  predicted.memory = MemoryPrediction{1e9, 1e9, 4e9, 3.25e10, 1.25e8};
  plan.predicted = predicted;
  plan.planner = PlannerInfo{
      "dgx-h100", 256, false, {"pipeline is issue 10", "bf16 is issue 11"}};
  return plan;
}

const char *const kFullPlanText = R"({
  "mesh": {
    "pp": 4,
    "dp": 8,
    "tp": 8
  },
  "shardings": {
    "input_ids": [["dp"], []],
    "h.0.attn.c_attn.weight": [[], [], ["tp"], []]
  },
  "sequence_parallel": true,
  "pipeline": {
    "axis": "pp",
    "microbatches": 16,
    "schedule": "interleaved-1f1b",
    "virtual_stages": 2,
    "layers_per_stage": [7, 8, 8, 7]
  },
  "zero": 1,
  "recompute": "selective",
  "recompute_layers": [0, 1],
  "precision": "bf16-mixed",
  "batch": {
    "global": 512,
    "micro": 2
  },
  "data_parallel": {
    "sync": "parameter-server",
    "servers": 4,
    "placement": "dedicated"
  },
  "predicted": {
    "step_time_s": 13.9,
    "tflops_per_gpu": 151,
    "mfu": 0.48,
    "peak_memory_bytes_per_rank": 61234567890,
    "comm_bytes_per_rank": 1.5e+09,
    "bubble_fraction": 0.05,
    "memory": {
      "parameters": 1e+09,
      "gradients": 1e+09,
      "optimizer_state": 4e+09,
      "activations": 3.25e+10,
      "temporaries": 1.25e+08
    }
  },
  "planner": {
    "cluster": "dgx-h100",
    "gpus": 256,
    "buildable": false,
    "notes": ["pipeline is issue 10", "bf16 is issue 11"]
  }
}
)";

TEST(PlanTest, FullPlanRoundTrips) {
  Plan plan = makeFullPlan();
  EXPECT_EQ(plan.getNumRanks(), 256);
  std::string text = writePlan(plan);
  EXPECT_EQ(text, kFullPlanText);

  Plan read = readOrFail(text);
  EXPECT_EQ(writePlan(read), text);
  ASSERT_EQ(read.mesh.size(), 3u);
  EXPECT_EQ(read.mesh[1].name, "dp");
  EXPECT_EQ(read.mesh[1].location.str(), "4:5");
  EXPECT_EQ(read.getNumRanks(), 256);
  EXPECT_EQ(read.getAxisSize("tp"), 8);
  EXPECT_EQ(read.getAxisSize("xp"), std::nullopt);
  ASSERT_EQ(read.shardings.size(), 2u);
  EXPECT_EQ(read.shardings[1].name, "h.0.attn.c_attn.weight");
  EXPECT_EQ(read.shardings[1].dims,
            (std::vector<std::vector<std::string>>{{}, {}, {"tp"}, {}}));
  EXPECT_EQ(read.shardings[1].location.str(), "9:5");
  ASSERT_TRUE(read.pipeline);
  EXPECT_EQ(read.pipeline->schedule, PipelineSchedule::Interleaved1F1B);
  EXPECT_EQ(read.pipeline->layersPerStage, (std::vector<int64_t>{7, 8, 8, 7}));
  EXPECT_EQ(read.locations.pipeline.str(), "12:3");
  EXPECT_EQ(read.zero, 1);
  EXPECT_EQ(read.locations.zero.str(), "19:3");
  EXPECT_EQ(read.recompute, Recompute::Selective);
  EXPECT_EQ(read.precision, Precision::BF16Mixed);
  EXPECT_EQ(read.batch->global, 512);
  EXPECT_EQ(read.predicted->stepTimeS, 13.9);
  EXPECT_EQ(read.predicted->peakMemoryBytesPerRank, 61234567890.0);
  EXPECT_EQ(read.predicted->memory->temporaries, 1.25e8);
  EXPECT_EQ(read.planner->notes.size(), 2u);
  EXPECT_EQ(read.planner->buildable, false);
}

TEST(PlanTest, SmallestPlanWritesOnlyItsMesh) {
  Plan plan = readOrFail(R"({ "mesh": { "tp": 2 }, "shardings": {} })");
  EXPECT_EQ(writePlan(plan), "{\n  \"mesh\": {\n    \"tp\": 2\n  }\n}\n");
  EXPECT_FALSE(plan.pipeline);
  EXPECT_FALSE(plan.zero);
  // Empty parts that are set stay set.
  plan = readOrFail(R"({"mesh": {"tp": 2}, "predicted": {}, "batch": {}})");
  EXPECT_EQ(writePlan(plan),
            "{\n  \"mesh\": {\n    \"tp\": 2\n  },\n  \"batch\": {},\n"
            "  \"predicted\": {}\n}\n");
}

TEST(PlanTest, MeshOfExactly2To31Ranks) {
  Plan plan = readOrFail(R"({"mesh": {"a": 2, "b": 1073741824}})");
  EXPECT_EQ(plan.getNumRanks(), kMaxPlanRanks);
  EXPECT_EQ(planError(R"({"mesh": {"a": 2, "b": 1073741825}})"),
            "plan.json:1:24: the mesh has more than 2^31 ranks (2 before axis "
            "\"b\" of size 1073741825)");
}

TEST(PlanTest, Errors) {
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2}, \"shardngs\": {}}"),
            "plan.json:1:21: unknown key \"shardngs\" in the plan (allowed: "
            "\"mesh\", \"shardings\", \"sequence_parallel\", \"pipeline\", "
            "\"zero\", \"recompute\", \"recompute_layers\", \"precision\", "
            "\"batch\", \"data_parallel\", \"predicted\", \"planner\")");
  EXPECT_EQ(planError("{\"mesh\":{\"tp\":2,\"tp\":4}}"),
            "plan.json:1:17: duplicate key \"tp\" (first at 1:10)");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": \"2\"}}"),
            "plan.json:1:17: mesh axis \"tp\" must be an integer, not the "
            "string \"2\"");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2.5}}"),
            "plan.json:1:17: mesh axis \"tp\" must be an integer, not 2.5");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2.0}}"),
            "plan.json:1:17: mesh axis \"tp\" must be an integer, not 2.0");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 0}}"),
            "plan.json:1:17: mesh axis \"tp\" must be at least 1, not 0");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 9223372036854775808}}"),
            "plan.json:1:17: mesh axis \"tp\" must be an integer that fits in "
            "int64, not 9223372036854775808");
  EXPECT_EQ(planError("{\"mesh\":{\"a\":2,\"b\":4294967296,\"c\":4294967296}}"),
            "plan.json:1:20: the mesh has more than 2^31 ranks (2 before axis "
            "\"b\" of size 4294967296)");
  EXPECT_EQ(planError("{\"mesh\": {}}"),
            "plan.json:1:10: \"mesh\" must have an axis");
  EXPECT_EQ(planError("{\"mesh\": [2]}"),
            "plan.json:1:10: \"mesh\" must map axis names to sizes, e.g. "
            "{\"dp\": 2, \"tp\": 2}, not an array");
  EXPECT_EQ(planError("{\"mesh\": {\"\": 2}}"),
            "plan.json:1:11: a mesh axis needs a name");
  EXPECT_EQ(planError("\n  {\"shardings\": {}}"),
            "plan.json:2:3: the plan has no \"mesh\"");
  EXPECT_EQ(planError("[1, 2]"),
            "plan.json:1:1: the plan must be an object, not an array");
  EXPECT_EQ(planError("{ \"mesh\": { \"tp\": 2 },\n"
                      "  \"shardings\": { \"fc1.weight\": [[], [\"tp\"]] ,, } "
                      "}"),
            "plan.json:2:47: not valid JSON near '\"tp\"]] ,,'");

  // Shardings.
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2},\n"
                      " \"shardings\": {\"w\": [[], [\"pp\"]]}}"),
            "plan.json:2:27: \"w\"[1][0] must be a mesh axis (one of \"tp\"), "
            "not the string \"pp\"");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2}, \"shardings\": {\"w\": [[], "
                      "[3]]}}"),
            "plan.json:1:46: \"w\"[1][0] must be a string, not 3");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2}, \"shardings\": {\"w\": "
                      "[\"tp\"]}}"),
            "plan.json:1:41: \"w\"[0] must be an array, not the string \"tp\"");
  EXPECT_EQ(planError("{\"mesh\": {\"tp\": 2}, \"shardings\": [1]}"),
            "plan.json:1:34: \"shardings\" must map names to shardings, e.g. "
            "{\"x\": [[\"dp\"], []]}, not an array");

  // Pipeline.
  EXPECT_EQ(planError("{\"mesh\": {\"pp\": 2},\n"
                      " \"pipeline\": {\"axis\": \"pp\", \"stages\": 2}}"),
            "plan.json:2:29: unknown key \"stages\" in \"pipeline\" (allowed: "
            "\"axis\", \"microbatches\", \"schedule\", \"virtual_stages\", "
            "\"layers_per_stage\")");
  EXPECT_EQ(planError("{\"mesh\": {\"pp\": 2}, \"pipeline\": {}}"),
            "plan.json:1:33: \"pipeline\" has no \"axis\"");
  EXPECT_EQ(planError("{\"mesh\": {\"pp\": 2, \"dp\": 2}, \"pipeline\": "
                      "{\"axis\": \"tp\"}}"),
            "plan.json:1:51: \"axis\" must be a mesh axis (one of \"pp\", "
            "\"dp\"), not the string \"tp\"");
  EXPECT_EQ(
      planError("{\"mesh\": {\"pp\": 2}, \"pipeline\": {\"axis\": \"pp\", "
                "\"microbatches\": 0}}"),
      "plan.json:1:64: \"microbatches\" must be at least 1, not 0");
  EXPECT_EQ(
      planError("{\"mesh\": {\"pp\": 2}, \"pipeline\": {\"axis\": \"pp\", "
                "\"schedule\": \"1F1B\"}}"),
      "plan.json:1:60: \"schedule\" must be one of \"gpipe\", \"1f1b\", "
      "\"interleaved-1f1b\", \"zb-h1\", \"pipedream-2bw\", not the "
            "string \"1F1B\"");
  EXPECT_EQ(
      planError("{\"mesh\": {\"pp\": 2}, \"pipeline\": {\"axis\": \"pp\", "
                "\"layers_per_stage\": [3, 2.5]}}"),
      "plan.json:1:72: \"layers_per_stage\"[1] must be an integer, not "
      "2.5");

  // The other parts.
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"zero\": 4}"),
            "plan.json:1:29: \"zero\" must be from 0 to 3, not 4");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"zero\": true}"),
            "plan.json:1:29: \"zero\" must be an integer, not true");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"sequence_parallel\": 1}"),
            "plan.json:1:42: \"sequence_parallel\" must be true or false, not "
            "1");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"recompute\": \"some\"}"),
            "plan.json:1:34: \"recompute\" must be one of \"none\", "
            "\"selective\", \"full\", not the string \"some\"");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"precision\": \"bf16\"}"),
            "plan.json:1:34: \"precision\" must be one of \"f32\", "
            "\"bf16-mixed\", \"f16-mixed\", not the string \"bf16\"");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"batch\": {\"micro\": 1, "
                      "\"mini\": 2}}"),
            "plan.json:1:43: unknown key \"mini\" in \"batch\" (allowed: "
            "\"global\", \"micro\")");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"data_parallel\": {\"sync\": "
                      "\"ps\"}}"),
            "plan.json:1:47: \"sync\" must be one of \"allreduce\", "
            "\"parameter-server\", \"local-sgd\", not the string \"ps\"");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"data_parallel\": {\"sync\": "
                      "\"local-sgd\", \"sync_every\": 4, "
                      "\"average_optimizer_state\": true, \"servers\": 0}}"),
            "plan.json:1:121: \"servers\" must be at least 1, not 0");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"data_parallel\": "
                      "{\"placement\": \"remote\"}}"),
            "plan.json:1:52: \"placement\" must be one of \"colocated\", "
            "\"dedicated\", not the string \"remote\"");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"data_parallel\": {\"sync\": "
                      "\"local-sgd\", \"sync_every\": 0}}"),
            "plan.json:1:74: \"sync_every\" must be at least 1, not 0");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"data_parallel\": "
                      "{\"average_optimizer_state\": 1}}"),
            "plan.json:1:66: \"average_optimizer_state\" must be true or "
            "false, not 1");
  EXPECT_EQ(
      planError("{\"mesh\": {\"dp\": 2}, \"predicted\": {\"mfu\": -0.1}}"),
      "plan.json:1:42: \"mfu\" must be zero or positive, not -0.1");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"predicted\": {\"memory\": "
                      "{\"weights\": 1}}}"),
            "plan.json:1:46: unknown key \"weights\" in \"memory\" (allowed: "
            "\"parameters\", \"gradients\", \"optimizer_state\", "
            "\"activations\", \"temporaries\")");
  EXPECT_EQ(planError("{\"mesh\": {\"dp\": 2}, \"planner\": {\"notes\": "
                      "[\"a\", 1]}}"),
            "plan.json:1:48: \"notes\"[1] must be a string, not 1");
}

//===----------------------------------------------------------------------===//
// Clusters
//===----------------------------------------------------------------------===//

TEST(ClusterTest, PresetsArePresentAndRoundTrip) {
  std::vector<std::string> names;
  for (llvm::StringRef name : getClusterPresetNames())
    names.push_back(name.str());
  EXPECT_EQ(names, (std::vector<std::string>{"dgx-a100-80g", "dgx-h100", "h200",
                                             "cpu-local"}));
  for (llvm::StringRef name : getClusterPresetNames()) {
    std::optional<ClusterSpec> preset = getClusterPreset(name);
    ASSERT_TRUE(preset) << name.str();
    EXPECT_EQ(preset->name, name);
    std::string text = writeCluster(*preset);
    llvm::Expected<ClusterSpec> read = readCluster(text, "preset.json");
    ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
    EXPECT_EQ(writeCluster(*read), text);
    EXPECT_EQ(read->peakFlops, preset->peakFlops);
    EXPECT_EQ(read->memoryBytes, preset->memoryBytes);
    EXPECT_EQ(read->interNode.latency, preset->interNode.latency);
  }
  EXPECT_FALSE(getClusterPreset("dgx-b200"));

  std::optional<ClusterSpec> h100 = getClusterPreset("dgx-h100");
  EXPECT_EQ(h100->devicesPerNode, 8);
  EXPECT_EQ(h100->getPeakFlops("bf16"), 989e12);
  EXPECT_EQ(h100->getPeakFlops("tf32"), 494e12);
  EXPECT_EQ(h100->getPeakFlops("f32"), 67e12);
  EXPECT_EQ(h100->getPeakFlops("f8"), std::nullopt);
  EXPECT_EQ(h100->memoryBytes, 85899345920.0);
  EXPECT_EQ(h100->intraNode.bandwidth, 450e9);
  EXPECT_EQ(h100->interNode.bandwidth, 50e9);
  std::optional<ClusterSpec> h200 = getClusterPreset("h200");
  EXPECT_EQ(h200->memoryBytes, 141e9);
  EXPECT_EQ(h200->hbmBandwidth, 4.8e12);
  EXPECT_EQ(h200->getPeakFlops("bf16"), 989e12);
  std::optional<ClusterSpec> a100 = getClusterPreset("dgx-a100-80g");
  EXPECT_EQ(a100->getPeakFlops("f16"), 312e12);
  EXPECT_EQ(a100->hbmBandwidth, 2.039e12);
  EXPECT_EQ(a100->intraNode.bandwidth, 300e9);
  EXPECT_EQ(a100->interNode.bandwidth, 25e9);
  std::optional<ClusterSpec> cpu = getClusterPreset("cpu-local");
  EXPECT_EQ(cpu->devicesPerNode, 2);
  EXPECT_EQ(cpu->getPeakFlops("f32"), 50e9);
  EXPECT_EQ(cpu->getPeakFlops("bf16"), std::nullopt);
  EXPECT_EQ(cpu->measuredBy,
            "preset: rough defaults; run parc-plan --calibrate");
}

const char *const kClusterText = R"({
  "name": "two-gpus",
  "devices_per_node": 2,
  "nodes": 1,
  "peak_flops": {
    "bf16": 1e+14
  },
  "memory_bytes": 4e+10,
  "hbm_bandwidth": 1e+12,
  "intra_node": {
    "bandwidth": 1e+11,
    "latency": 3e-06
  },
  "inter_node": {
    "bandwidth": 1e+10,
    "latency": 5e-06
  },
  "efficiency": {
    "gemm": [[1e+09, 0.5], [1e+11, 0.9]],
    "memory_bound": 0.7,
    "collective": 0.75
  }
}
)";

TEST(ClusterTest, ReadsAndWritesTheSameText) {
  llvm::Expected<ClusterSpec> cluster = readCluster(kClusterText, "c.json");
  ASSERT_TRUE(static_cast<bool>(cluster))
      << llvm::toString(cluster.takeError());
  EXPECT_EQ(cluster->name, "two-gpus");
  EXPECT_EQ(cluster->efficiency.gemm.size(), 2u);
  EXPECT_EQ(cluster->efficiency.collective, 0.75);
  EXPECT_FALSE(cluster->measuredBy);
  EXPECT_EQ(cluster->kernelLatency, 0);
  EXPECT_EQ(writeCluster(*cluster), kClusterText);

  // The optional kernel latency reads back, and a negative one is an error.
  cluster->kernelLatency = 2.5e-6;
  llvm::Expected<ClusterSpec> withLatency =
      readCluster(writeCluster(*cluster), "c.json");
  ASSERT_TRUE(static_cast<bool>(withLatency))
      << llvm::toString(withLatency.takeError());
  EXPECT_EQ(withLatency->kernelLatency, 2.5e-6);
  std::string negative = writeCluster(*cluster);
  negative.replace(negative.find("2.5e-06"), 7, "-1");
  llvm::Expected<ClusterSpec> rejected = readCluster(negative, "c.json");
  ASSERT_FALSE(static_cast<bool>(rejected));
  EXPECT_NE(llvm::toString(rejected.takeError()).find("\"kernel_latency\""),
            std::string::npos);

  // The optional collective wait reads back.
  cluster->collectiveWait = 4.5e-4;
  llvm::Expected<ClusterSpec> withWait =
      readCluster(writeCluster(*cluster), "c.json");
  ASSERT_TRUE(static_cast<bool>(withWait))
      << llvm::toString(withWait.takeError());
  EXPECT_EQ(withWait->collectiveWait, 4.5e-4);
  cluster->collectiveWait = 0;

  // The optional attention rate reads back and must be positive; absent,
  // attention's FLOPs go on the GEMM curve.
  EXPECT_FALSE(cluster->attentionFlops);
  cluster->attentionFlops = 6.5e9;
  llvm::Expected<ClusterSpec> withAttention =
      readCluster(writeCluster(*cluster), "c.json");
  ASSERT_TRUE(static_cast<bool>(withAttention))
      << llvm::toString(withAttention.takeError());
  EXPECT_EQ(withAttention->attentionFlops, 6.5e9);
  std::string zero = writeCluster(*cluster);
  size_t rate = zero.find("\"attention_flops\": ") + 19;
  zero.replace(rate, zero.find_first_of(",\n}", rate) - rate, "0");
  llvm::Expected<ClusterSpec> zeroRate = readCluster(zero, "c.json");
  ASSERT_FALSE(static_cast<bool>(zeroRate));
  EXPECT_NE(llvm::toString(zeroRate.takeError()).find("\"attention_flops\""),
            std::string::npos);
  cluster->attentionFlops.reset();

  // Collectives overlap compute unless the file says they do not (as this
  // machine's preset does); the flag reads back, and must be a boolean.
  EXPECT_TRUE(cluster->overlapsCommunication);
  EXPECT_FALSE(getClusterPreset("cpu-local")->overlapsCommunication);
  cluster->overlapsCommunication = false;
  std::string blocking = writeCluster(*cluster);
  llvm::Expected<ClusterSpec> blockingRead = readCluster(blocking, "c.json");
  ASSERT_TRUE(static_cast<bool>(blockingRead))
      << llvm::toString(blockingRead.takeError());
  EXPECT_FALSE(blockingRead->overlapsCommunication);
  blocking.replace(blocking.find("false"), 5, "0");
  llvm::Expected<ClusterSpec> notBoolean = readCluster(blocking, "c.json");
  ASSERT_FALSE(static_cast<bool>(notBoolean));
  EXPECT_NE(
      llvm::toString(notBoolean.takeError()).find("\"overlaps_communication\""),
      std::string::npos);
}

/// kClusterText with `from` replaced by `to`.
std::string editCluster(llvm::StringRef from, llvm::StringRef to) {
  std::string text = kClusterText;
  size_t at = text.find(from.str());
  EXPECT_NE(at, std::string::npos) << from.str();
  return text.replace(at, from.size(), to.str());
}

TEST(ClusterTest, Errors) {
  EXPECT_EQ(clusterError(editCluster("\"nodes\"", "\"node\"")),
            "c.json:4:3: unknown key \"node\" in the cluster (allowed: "
            "\"name\", \"devices_per_node\", \"nodes\", \"peak_flops\", "
            "\"memory_bytes\", \"hbm_bandwidth\", \"intra_node\", "
            "\"inter_node\", \"efficiency\", \"kernel_latency\", "
            "\"attention_flops\", \"overlaps_communication\", "
            "\"collective_wait\", \"measured_by\")");
  EXPECT_EQ(clusterError(
                editCluster("\"bandwidth\": 1e+10", "\"bandwidth\": -1e+10")),
            "c.json:15:18: \"bandwidth\" must be positive, not -1e+10");
  EXPECT_EQ(clusterError(editCluster("\"latency\": 3e-06", "\"latency\": 0")),
            "c.json:12:16: \"latency\" must be positive, not 0");
  EXPECT_EQ(clusterError(editCluster("[1e+11, 0.9]", "[1e+09, 0.9]")),
            "c.json:19:29: \"gemm\"[1][0] must be more FLOPs than the point "
            "before it (ascending), not 1e+09");
  EXPECT_EQ(clusterError(editCluster("[1e+11, 0.9]", "[1e+11, 1.5]")),
            "c.json:19:36: \"gemm\"[1][1] must be a fraction in (0, 1], not "
            "1.5");
  EXPECT_EQ(clusterError(editCluster("[1e+11, 0.9]", "[1e+11]")),
            "c.json:19:28: \"gemm\"[1] must be a pair [flops, "
            "fraction_of_peak], not an array");
  EXPECT_EQ(
      clusterError(editCluster("\"collective\": 0.75", "\"collective\": 1.01")),
      "c.json:21:19: \"collective\" must be a fraction in (0, 1], not "
      "1.01");
  EXPECT_EQ(clusterError(editCluster("\"bf16\"", "\"fp8\"")),
            "c.json:6:5: unknown key \"fp8\" in \"peak_flops\" (allowed: "
            "\"f32\", \"tf32\", \"bf16\", \"f16\")");
  EXPECT_EQ(clusterError(editCluster("\"devices_per_node\": 2",
                                     "\"devices_per_node\": 0")),
            "c.json:3:23: \"devices_per_node\" must be at least 1, not 0");
  EXPECT_EQ(clusterError(editCluster("  \"memory_bytes\": 4e+10,\n", "")),
            "c.json:1:1: the cluster has no \"memory_bytes\"");
  EXPECT_EQ(clusterError(editCluster("\"latency\": 5e-06", "\"lat\": 5e-06")),
            "c.json:16:5: unknown key \"lat\" in \"inter_node\" (allowed: "
            "\"bandwidth\", \"latency\")");
}

TEST(ClusterTest, GemmEfficiencyCurve) {
  ClusterSpec cluster = *getClusterPreset("dgx-h100");
  // At the points.
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e9), 0.32);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e10), 0.56);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e11), 0.70);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e12), 0.76);
  // Between them, linear in log10(flops).
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(std::pow(10.0, 10.5)), 0.63);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(std::pow(10.0, 9.25)),
                   0.32 + 0.25 * 0.24);
  EXPECT_NEAR(cluster.getGemmEfficiency(5e11), 0.70 + std::log10(5.0) * 0.06,
              1e-12);
  // Clamped at both ends.
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e6), 0.32);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(0), 0.32);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e15), 0.76);

  // One point: the same everywhere.
  cluster.efficiency.gemm = {{1e10, 0.5}};
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e8), 0.5);
  EXPECT_DOUBLE_EQ(cluster.getGemmEfficiency(1e12), 0.5);
}

} // namespace
