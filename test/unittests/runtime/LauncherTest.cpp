//===- LauncherTest.cpp - program description, layouts, argument loading --===//

#include "main/ArgumentLoader.h"
#include "main/Feedback.h"
#include "main/Options.h"
#include "main/Program.h"
#include "main/ShardLayout.h"

#include "parcrt/Init.h"
#include "parcrt/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

using namespace parcrt;

namespace {

const char *const mlp = R"({"version":1,"function":"forward",
  "mesh":{"axes":["dp","tp"],"sizes":[2,2]},"arena_bytes":1024,
  "arguments":[
    {"name":"x","role":"input","dtype":"F32","global_shape":[4,6],
     "local_shape":[2,6],"sharding":[["dp"],[]],"offset":0,"init":null,
     "checkpoint_shape":null},
    {"name":"w","role":"param","dtype":"F32","global_shape":[6,4],
     "local_shape":[6,2],"sharding":[[],["tp"]],"offset":128,
     "init":{"distribution":"uniform","first":-1.0,"second":1.0},
     "checkpoint_shape":[24]},
    {"name":"ids","role":"label","dtype":"I64","global_shape":[4],
     "local_shape":[4],"sharding":[[]],"offset":256,"init":null,
     "checkpoint_shape":null}],
  "results":[{"name":"loss","dtype":"F32","global_shape":[],"local_shape":[],
     "sharding":[],"partial":["dp"],"offset":512}]})";

std::string parseError(const std::string &json) {
  std::string error;
  EXPECT_FALSE(parseProgram(json.c_str(), &error).has_value());
  return error;
}

/// `mlp` with the first occurrence of `from` replaced by `to`.
std::string edited(const std::string &from, const std::string &to) {
  std::string text = mlp;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(OptionsTest, ThreadsComeFromTheFlagThenOmpNumThreadsThenTheCores) {
  char program[] = "program", flag[] = "--threads", two[] = "2", zero[] = "0";
  char *good[] = {program, flag, two}, *bad[] = {program, flag, zero};
  Options options;
  std::string error;
  ASSERT_TRUE(parseOptions(3, good, options, &error)) << error;
  EXPECT_EQ(options.threads, 2);
  EXPECT_FALSE(parseOptions(3, bad, options, &error));
  EXPECT_EQ(error, "--threads expects an integer from 1 to 4096, not '0'");

  int cores = static_cast<int>(std::thread::hardware_concurrency());
  setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(defaultThreads(4), 3);
  // Not a thread count: the cores shared among the node's ranks.
  for (const char *value : {"abc", "0", "5000", ""}) {
    setenv("OMP_NUM_THREADS", value, 1);
    EXPECT_EQ(defaultThreads(1), std::max(1, cores)) << value;
  }
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(defaultThreads(1), std::max(1, cores));
  EXPECT_EQ(defaultThreads(cores + 1), 1);
}

TEST(ProgramTest, ReadsEveryField) {
  std::string error;
  std::optional<Program> program = parseProgram(mlp, &error);
  ASSERT_TRUE(program.has_value()) << error;
  EXPECT_EQ(program->numRanks(), 4);
  EXPECT_EQ(program->meshDescription(), "dp=2, tp=2");
  EXPECT_EQ(program->arenaBytes, 1024);
  ASSERT_EQ(program->arguments.size(), 3u);
  const ProgramArgument &w = program->arguments[1];
  EXPECT_EQ(w.role, ArgumentRole::Param);
  EXPECT_EQ(w.sharding, (std::vector<std::vector<int>>{{}, {1}}));
  ASSERT_TRUE(w.init.has_value());
  EXPECT_EQ(w.init->distribution, InitDistribution::Uniform);
  EXPECT_EQ(w.init->first, -1.0);
  EXPECT_EQ(*w.checkpointShape, std::vector<int64_t>{24});
  EXPECT_EQ(program->arguments[2].dtype, PARCRT_I64);
  ASSERT_EQ(program->results.size(), 1u);
  EXPECT_EQ(program->results[0].partial, std::vector<int>{0});
  EXPECT_EQ(typeString({2, 3}, PARCRT_BF16), "2x3xbf16");
}

TEST(ProgramTest, ReportsTheOffendingField) {
  EXPECT_NE(parseError("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(parseError(edited("\"version\":1", "\"version\":2"))
                .find("version: this runtime reads version 1"),
            std::string::npos);
  EXPECT_NE(parseError(edited("[[\"dp\"],[]]", "[[\"pp\"],[]]"))
                .find("arguments[0].sharding[0]: 'pp' is not an axis"),
            std::string::npos);
  EXPECT_NE(parseError(edited("\"local_shape\":[2,6]", "\"local_shape\":[3,6]"))
                .find("arguments[0]: dimension 0 has local size 3"),
            std::string::npos);
  EXPECT_NE(parseError(edited("\"offset\":512", "\"offset\":1022"))
                .find("results[0]: bytes [1022, 1026) lie outside the arena"),
            std::string::npos);
  EXPECT_NE(
      parseError(edited("\"role\":\"input\"", "\"role\":\"weight\""))
          .find("arguments[0].role: expected input, param, label, optstate, "
                "buffer or carry"),
      std::string::npos);
  EXPECT_NE(parseError(edited("\"dtype\":\"F32\"", "\"dtype\":\"F64\""))
                .find("arguments[0].dtype"),
            std::string::npos);
  EXPECT_NE(parseError(edited("\"arena_bytes\":1024,", ""))
                .find("document.arena_bytes: missing"),
            std::string::npos);
  EXPECT_NE(
      parseError(edited("[24]", "[25]")).find("arguments[1].checkpoint_shape"),
      std::string::npos);
}

TEST(ProgramTest, StagesOnMeshesOfTheirOwnCountEveryStagesRanks) {
  // A first axis "ps" whose stage 1 has half the dp ranks.
  auto staged = [](const std::string &meshes) {
    std::string text = mlp;
    text.replace(text.find("\"axes\":[\"dp\",\"tp\"],\"sizes\":[2,2]"),
                 std::strlen("\"axes\":[\"dp\",\"tp\"],\"sizes\":[2,2]"),
                 "\"axes\":[\"ps\",\"dp\",\"tp\"],\"sizes\":[2,2,2]");
    std::string stage = "\"stage\":{\"axis\":\"ps\",\"index\":0,"
                        "\"count\":2,\"meshes\":" +
                        meshes + "},";
    return text.insert(text.find("\"arena_bytes\""), stage);
  };
  std::string error;
  std::optional<Program> program =
      parseProgram(staged("[[2,2,2],[2,1,2]]").c_str(), &error);
  ASSERT_TRUE(program.has_value()) << error;
  EXPECT_EQ(program->numRanks(), 6);
  EXPECT_EQ(program->meshDescription(),
            "stage 0: ps=2, dp=2, tp=2, 4 ranks; stage 1: ps=2, dp=1, tp=2, "
            "2 ranks");
  EXPECT_NE(parseError(staged("[[2,1,2],[2,1,2]]"))
                .find("stage.meshes[0]: differs from the program's mesh"),
            std::string::npos);
  EXPECT_NE(parseError(staged("[[2,2],[2,1]]"))
                .find("stage.meshes[0]: expected the program's axes, with 2 "
                      "stages first"),
            std::string::npos);
  EXPECT_NE(parseError(staged("[[2,2,2],[2,0,2]]"))
                .find("stage.meshes[1]: sizes must be positive"),
            std::string::npos);
  EXPECT_NE(parseError(staged("[[2,2,2]]"))
                .find("stage.meshes: expected an array of one mesh per stage"),
            std::string::npos);
}

BoundaryTensor layout(std::vector<int64_t> global, std::vector<int64_t> local,
                      std::vector<std::vector<int>> sharding,
                      std::vector<int> partial = {}) {
  BoundaryTensor tensor;
  tensor.globalShape = std::move(global);
  tensor.localShape = std::move(local);
  tensor.sharding = std::move(sharding);
  tensor.partial = std::move(partial);
  return tensor;
}

TEST(ShardLayoutTest, BlocksFollowTheShardingAxesMajorFirst) {
  // [4, 2] with dim 0 split over [tp, dp] on a 2x2 mesh: rank (dp, tp)
  // holds block tp * 2 + dp of size 1.
  BoundaryTensor tensor = layout({4, 2}, {1, 2}, {{1, 0}, {}});
  MeshInfo mesh{{"dp", "tp"}, {2, 2}, 2}; // dp = 1, tp = 0
  EXPECT_EQ(globalIndices(tensor, mesh), (std::vector<int64_t>{2, 3}));
  mesh.rank = 1; // dp = 0, tp = 1
  EXPECT_EQ(globalIndices(tensor, mesh), (std::vector<int64_t>{4, 5}));
}

TEST(ShardLayoutTest, AssemblePlacesBlocksReadsCopiesOnceSumsPartials) {
  MeshInfo mesh{{"dp", "tp"}, {2, 2}, 0};
  // Split over dp, copies over tp: ranks 1 and 3 hold copies.
  BoundaryTensor split = layout({2}, {1}, {{0}});
  EXPECT_EQ(assembleFromRanks({{1}, {100}, {2}, {200}}, split, mesh),
            (std::vector<double>{1, 2}));
  // A scalar pending over dp, copies over tp.
  BoundaryTensor partial = layout({}, {}, {}, {0});
  EXPECT_EQ(assembleFromRanks({{1}, {100}, {2}, {200}}, partial, mesh),
            std::vector<double>{3});
}

class ArgumentLoaderTest : public ::testing::Test {
protected:
  ArgumentLoaderTest() {
    std::string error;
    program = *parseProgram(mlp, &error);
  }
  Program program;
  MeshInfo mesh{{"dp", "tp"}, {2, 2}, 3}; // dp = 1, tp = 1
};

TEST_F(ArgumentLoaderTest, InitializesTheSliceAtGlobalIndices) {
  std::vector<double> values, full(24);
  std::string error;
  ASSERT_TRUE(
      argumentValues(program.arguments[1], mesh, nullptr, 7, values, &error))
      << error;
  initValues(*program.arguments[1].init, 7, "w", false, 0, 24, full.data());
  // Columns 2 and 3 of the 6x4 tensor.
  ASSERT_EQ(values.size(), 12u);
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t column = 0; column < 2; ++column)
      EXPECT_EQ(values[row * 2 + column], full[row * 4 + 2 + column]);
  // Inputs default to normal(0, 1).
  ASSERT_TRUE(
      argumentValues(program.arguments[0], mesh, nullptr, 7, values, &error));
  std::vector<double> x(24);
  initValues({InitDistribution::Normal, 0.0, 1.0}, 7, "x", false, 0, 24,
             x.data());
  EXPECT_EQ(values, std::vector<double>(x.begin() + 12, x.end()));
}

TEST_F(ArgumentLoaderTest, IntegerArgumentsNeedAnInit) {
  std::vector<double> values;
  std::string error;
  EXPECT_FALSE(
      argumentValues(program.arguments[2], mesh, nullptr, 0, values, &error));
  EXPECT_NE(error.find("'ids' holds integers but has no init"),
            std::string::npos);
}

TEST_F(ArgumentLoaderTest, ReadsItsBlockOfTheFullTensor) {
  std::string path = testing::TempDir() + "parcrt_launcher_weights.safetensors";
  std::vector<double> w(24), x(10);
  for (int i = 0; i < 24; ++i)
    w[i] = i;
  SafetensorsWriter writer;
  writer.add("w", DType::F32, {24}, w.data()); // the checkpoint shape
  writer.add("x", DType::F32, {2, 5}, x.data());
  std::string error;
  ASSERT_TRUE(writer.write(path, &error)) << error;
  TensorFile file{path, SafetensorsReader::open(path, &error)};
  ASSERT_TRUE(file.reader) << error;
  std::vector<double> values;
  ASSERT_TRUE(
      argumentValues(program.arguments[1], mesh, &file, 0, values, &error))
      << error;
  EXPECT_EQ(values,
            (std::vector<double>{2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23}));
  EXPECT_FALSE(
      argumentValues(program.arguments[0], mesh, &file, 0, values, &error));
  EXPECT_NE(error.find("tensor 'x' in " + path +
                       " has shape [2, 5] but the program's input argument "
                       "has shape [4, 6]"),
            std::string::npos)
      << error;
}

/// `mlp` with a copy of `w` that starts from `source`: an f32 master split
/// over dp where `w` is split over tp.
std::string withMaster(const std::string &source,
                       const std::string &globalShape = "[6,4]",
                       const std::string &localShape = "[3,4]") {
  return edited("\"checkpoint_shape\":null}],\n  \"results\"",
                "\"checkpoint_shape\":null},\n"
                "    {\"name\":\"w.master\",\"role\":\"optstate\",\"dtype\":"
                "\"F32\",\"global_shape\":" +
                    globalShape + ",\"local_shape\":" + localShape +
                    ",\"sharding\":[[\"dp\"],[]],"
                    "\"offset\":600,\"init\":null,\"checkpoint_shape\":null,"
                    "\"init_from\":\"" +
                    source + "\"}],\n  \"results\"");
}

TEST_F(ArgumentLoaderTest, AMasterCopyStartsAsItsSource) {
  std::string error;
  std::optional<Program> withCopy =
      parseProgram(withMaster("w").c_str(), &error);
  ASSERT_TRUE(withCopy.has_value()) << error;
  const ProgramArgument &master = withCopy->arguments[3];
  // w's uniform(-1, 1) and stream, at the global indices of rows 3-5.
  std::vector<double> values, full(24);
  ASSERT_TRUE(argumentValues(master, mesh, nullptr, 7, values, &error))
      << error;
  initValues({InitDistribution::Uniform, -1.0, 1.0}, 7, "w", false, 0, 24,
             full.data());
  EXPECT_EQ(values, std::vector<double>(full.begin() + 12, full.end()));

  // A weights file without the copy gives the source's entry; one with the
  // copy (a checkpoint) gives the copy's own.
  std::string path = testing::TempDir() + "parcrt_launcher_master.safetensors";
  std::vector<double> w(24), own(24, 5.0);
  for (int i = 0; i < 24; ++i)
    w[i] = i;
  for (bool withOwn : {false, true}) {
    SafetensorsWriter writer;
    writer.add("w", DType::F32, {6, 4}, w.data());
    if (withOwn)
      writer.add("w.master", DType::F32, {6, 4}, own.data());
    ASSERT_TRUE(writer.write(path, &error)) << error;
    TensorFile file{path, SafetensorsReader::open(path, &error)};
    ASSERT_TRUE(file.reader) << error;
    ASSERT_TRUE(argumentValues(master, mesh, &file, 0, values, &error))
        << error;
    EXPECT_EQ(values, withOwn ? std::vector<double>(12, 5.0)
                              : std::vector<double>(w.begin() + 12, w.end()));
  }

  EXPECT_NE(
      parseError(withMaster("v"))
          .find("arguments[3].init_from: names no argument that starts on its "
                "own"),
      std::string::npos);
  EXPECT_NE(parseError(withMaster("w", "[4,4]", "[2,4]"))
                .find("arguments[3].init_from: names an argument of another "
                      "global shape"),
            std::string::npos);
}

// A train step on one rank: the updated param, its moment and the step
// counter come back under their arguments' names; the loss does not.
const char *const trainStep = R"({"version":1,"function":"train_step",
  "mesh":{"axes":[],"sizes":[]},"arena_bytes":256,
  "arguments":[
    {"name":"w","role":"param","dtype":"F32","global_shape":[2],
     "local_shape":[2],"sharding":[[]],"offset":0},
    {"name":"w.adam_m","role":"optstate","dtype":"F32","global_shape":[2],
     "local_shape":[2],"sharding":[[]],"offset":16},
    {"name":"optimizer.step","role":"optstate","dtype":"F32",
     "global_shape":[],"local_shape":[],"sharding":[],"offset":32},
    {"name":"x","role":"input","dtype":"F32","global_shape":[2],
     "local_shape":[2],"sharding":[[]],"offset":48}],
  "results":[
    {"name":"loss","dtype":"F32","global_shape":[],"local_shape":[],
     "sharding":[],"offset":64},
    {"name":"w","dtype":"F32","global_shape":[2],"local_shape":[2],
     "sharding":[[]],"offset":80},
    {"name":"w.adam_m","dtype":"F32","global_shape":[2],"local_shape":[2],
     "sharding":[[]],"offset":96},
    {"name":"optimizer.step","dtype":"F32","global_shape":[],
     "local_shape":[],"sharding":[],"offset":112}]})";

/// `trainStep` with the first occurrence of `from` after `after` replaced.
std::string editedStep(const std::string &after, const std::string &from,
                       const std::string &to) {
  std::string text = trainStep;
  size_t at = text.find(from, text.find(after));
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(FeedbackTest, ResultsNamedLikeArgumentsFeedThem) {
  std::string error;
  std::optional<Program> program = parseProgram(trainStep, &error);
  ASSERT_TRUE(program.has_value()) << error;
  std::vector<Feedback> feedback;
  ASSERT_TRUE(findFeedback(*program, feedback, &error)) << error;
  ASSERT_EQ(feedback.size(), 3u);
  EXPECT_EQ(feedback[0].result, 1u);
  EXPECT_EQ(feedback[0].argument, 0u);
  EXPECT_EQ(feedback[1].result, 2u);
  EXPECT_EQ(feedback[1].argument, 1u);
  EXPECT_EQ(feedback[2].result, 3u);
  EXPECT_EQ(feedback[2].argument, 2u);
  // Only the loss is a metric to print per step.
  EXPECT_FALSE(feedsBack(feedback, 0));
  EXPECT_TRUE(feedsBack(feedback, 1));
  EXPECT_TRUE(feedsBack(feedback, 3));

  // A forward program feeds nothing back.
  std::optional<Program> forward = parseProgram(mlp, &error);
  ASSERT_TRUE(forward.has_value()) << error;
  ASSERT_TRUE(findFeedback(*forward, feedback, &error));
  EXPECT_TRUE(feedback.empty());
}

TEST(FeedbackTest, CopiesEachResultOverItsArgument) {
  std::string error;
  Program program = *parseProgram(trainStep, &error);
  std::vector<Feedback> feedback;
  ASSERT_TRUE(findFeedback(program, feedback, &error)) << error;
  MeshInfo mesh{{}, {}, 0};
  std::unique_ptr<Backend> backend = createCpuBackend(mesh);
  auto *arena = static_cast<uint8_t *>(backend->allocate(program.arenaBytes));
  auto put = [&](int64_t offset, std::vector<float> values) {
    std::memcpy(arena + offset, values.data(), values.size() * sizeof(float));
  };
  auto get = [&](int64_t offset, size_t count) {
    std::vector<float> values(count);
    std::memcpy(values.data(), arena + offset, count * sizeof(float));
    return values;
  };
  put(0, {1, 2});     // w
  put(16, {0, 0});    // w.adam_m
  put(32, {1});       // optimizer.step
  put(48, {5, 6});    // x
  put(64, {0.25});    // loss
  put(80, {0.5, 1.5}); // w'
  put(96, {0.1, 0.2}); // m'
  put(112, {2});      // step'
  applyFeedback(program, feedback, *backend, arena);
  EXPECT_EQ(get(0, 2), (std::vector<float>{0.5, 1.5}));
  EXPECT_EQ(get(16, 2), (std::vector<float>{0.1f, 0.2f}));
  EXPECT_EQ(get(32, 1), std::vector<float>{2});
  // Arguments that nothing feeds, and the results, are left alone.
  EXPECT_EQ(get(48, 2), (std::vector<float>{5, 6}));
  EXPECT_EQ(get(80, 2), (std::vector<float>{0.5, 1.5}));
  backend->release(arena);
}

TEST(FeedbackTest, RejectsAResultThatCannotServeAsItsArgument) {
  std::string error;
  std::vector<Feedback> feedback;
  // A different dtype (and so size).
  Program program = *parseProgram(
      editedStep("\"results\"", "\"name\":\"w\",\"dtype\":\"F32\"",
                 "\"name\":\"w\",\"dtype\":\"I64\"")
          .c_str(),
      &error);
  EXPECT_FALSE(findFeedback(program, feedback, &error));
  EXPECT_NE(error.find("result 'w' feeds the argument of that name into the "
                       "next step, but the result is tensor<2xi64> (local "
                       "tensor<2xi64>) and the argument tensor<2xf32>"),
            std::string::npos)
      << error;
  // A different shape.
  std::optional<Program> reshaped = parseProgram(
      editedStep("\"results\"",
                 "\"name\":\"optimizer.step\",\"dtype\":\"F32\",\"global_shape\""
                 ":[],\n     \"local_shape\":[],\"sharding\":[]",
                 "\"name\":\"optimizer.step\",\"dtype\":\"F32\",\"global_shape\""
                 ":[1],\n     \"local_shape\":[1],\"sharding\":[[]]")
          .c_str(),
      &error);
  ASSERT_TRUE(reshaped.has_value()) << error;
  EXPECT_FALSE(findFeedback(*reshaped, feedback, &error));
  EXPECT_NE(error.find("result 'optimizer.step' feeds"), std::string::npos)
      << error;
  // Addends pending over an axis are not the argument's value.
  Program partial;
  partial.arguments.resize(1);
  partial.arguments[0].name = "w";
  partial.results.resize(1);
  partial.results[0].name = "w";
  partial.results[0].partial = {0};
  EXPECT_FALSE(findFeedback(partial, feedback, &error));
  EXPECT_NE(error.find("holds partial sums"), std::string::npos) << error;
  partial.results[0].partial.clear();
  partial.results[0].sharding = {{0}};
  EXPECT_FALSE(findFeedback(partial, feedback, &error));
  EXPECT_NE(error.find("sharded differently"), std::string::npos) << error;
}

} // namespace
