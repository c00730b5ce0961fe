//===- Cluster.cpp - cluster.json, the machine a plan is for --------------===//

#include "parc/Plan/Cluster.h"
#include "parc/Plan/StrictJson.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir::parc;
using json::Member;
using json::ObjectReader;
using json::Reader;
using json::Value;
using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

namespace {

constexpr StringRef kDtypes[] = {"f32", "tf32", "bf16", "f16"};

constexpr StringRef kClusterKeys[] = {"name",
                                      "devices_per_node",
                                      "nodes",
                                      "peak_flops",
                                      "memory_bytes",
                                      "hbm_bandwidth",
                                      "intra_node",
                                      "inter_node",
                                      "efficiency",
                                      "kernel_latency",
                                      "attention_flops",
                                      "overlaps_communication",
                                      "collective_wait",
                                      "measured_by"};
constexpr StringRef kLinkKeys[] = {"bandwidth", "latency"};
constexpr StringRef kEfficiencyKeys[] = {"gemm", "memory_bound", "collective"};

//===----------------------------------------------------------------------===//
// Default efficiencies. Defaults; see docs/planner.md. The planner tunes and
// justifies them; every preset uses these until calibrated.
//===----------------------------------------------------------------------===//

/// [FLOPs of one GEMM, fraction of peak]: small GEMMs cannot fill the
/// device, large ones come close to its peak. The shape is an assumption;
/// its level is fitted to Narayanan et al. SC21 table 1's 1T row (163
/// TFLOP/s per A100, where attention and the LM head are < 2% of the
/// FLOPs), and fitted again when the model's graph changes what the row
/// prices: bench/planner/README.md has the other nine rows as predictions.
constexpr GemmEfficiencyPoint kDefaultGemmEfficiency[] = {
    {1e9, 0.32}, {1e10, 0.56}, {1e11, 0.70}, {1e12, 0.76}};
/// Bandwidth-bound kernels (elementwise, norms, softmax) against HBM: what
/// a STREAM-like copy typically reaches on A100/H100 (not measured here).
constexpr double kDefaultMemoryBoundEfficiency = 0.8;
/// NCCL-style collectives against the link's bandwidth: nccl-tests' bus
/// bandwidth on NVLink is typically ~80% of the link's (not measured here).
constexpr double kDefaultCollectiveEfficiency = 0.8;

constexpr double kGiB = 1024.0 * 1024 * 1024;

} // namespace

EfficiencySpec mlir::parc::getDefaultEfficiency() {
  return {std::vector<GemmEfficiencyPoint>(std::begin(kDefaultGemmEfficiency),
                                           std::end(kDefaultGemmEfficiency)),
          kDefaultMemoryBoundEfficiency, kDefaultCollectiveEfficiency};
}

ArrayRef<StringRef> mlir::parc::getPeakFlopsDtypes() { return kDtypes; }

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

/// NVIDIA DGX A100 (80 GB), NVIDIA A100 datasheet (dense, no sparsity).
static ClusterSpec getDgxA100() {
  ClusterSpec cluster;
  cluster.name = "dgx-a100-80g";
  // 8 A100 SXM4 per DGX A100.
  cluster.devicesPerNode = 8;
  cluster.nodes = 0;
  cluster.peakFlops = {
      // Tensor Core BF16 / FP16: 312 TFLOPS.
      {"bf16", 312e12},
      {"f16", 312e12},
      // Tensor Core TF32: 156 TFLOPS.
      {"tf32", 156e12},
      // FP32 (CUDA cores): 19.5 TFLOPS.
      {"f32", 19.5e12},
  };
  // 80 GB HBM2e, taken as 80 GiB.
  cluster.memoryBytes = 80 * kGiB;
  // A100 80GB SXM: 2,039 GB/s.
  cluster.hbmBandwidth = 2.039e12;
  // NVLink 3: 600 GB/s bidirectional per GPU = 300 GB/s per direction.
  cluster.intraNode.bandwidth = 300e9;
  // NVLink small-message latency through NCCL: a few microseconds (rough).
  cluster.intraNode.latency = 3e-6;
  // One 200 Gb/s HDR InfiniBand NIC per GPU (8 ConnectX-6): 25 GB/s.
  cluster.interNode.bandwidth = 25e9;
  // InfiniBand small-message latency through NCCL (rough).
  cluster.interNode.latency = 5e-6;
  cluster.efficiency = getDefaultEfficiency();
  cluster.measuredBy = "preset: datasheet peaks, default efficiencies";
  return cluster;
}

/// NVIDIA DGX H100, NVIDIA H100 SXM5 datasheet (dense, no sparsity).
static ClusterSpec getDgxH100() {
  ClusterSpec cluster;
  cluster.name = "dgx-h100";
  // 8 H100 SXM5 per DGX H100.
  cluster.devicesPerNode = 8;
  cluster.nodes = 0;
  cluster.peakFlops = {
      // Tensor Core BF16 / FP16: 989 TFLOPS.
      {"bf16", 989e12},
      {"f16", 989e12},
      // Tensor Core TF32: 494 TFLOPS.
      {"tf32", 494e12},
      // FP32 (CUDA cores): 67 TFLOPS.
      {"f32", 67e12},
  };
  // 80 GB HBM3, taken as 80 GiB.
  cluster.memoryBytes = 80 * kGiB;
  // H100 SXM5: 3.35 TB/s.
  cluster.hbmBandwidth = 3.35e12;
  // NVLink 4: 900 GB/s bidirectional per GPU = 450 GB/s per direction.
  cluster.intraNode.bandwidth = 450e9;
  // NVLink small-message latency through NCCL (rough), as for A100.
  cluster.intraNode.latency = 3e-6;
  // One 400 Gb/s NDR InfiniBand NIC per GPU (8 ConnectX-7): 50 GB/s.
  cluster.interNode.bandwidth = 50e9;
  // InfiniBand small-message latency through NCCL (rough), as for A100.
  cluster.interNode.latency = 5e-6;
  cluster.efficiency = getDefaultEfficiency();
  cluster.measuredBy = "preset: datasheet peaks, default efficiencies";
  return cluster;
}

/// NVIDIA HGX H200: the H100's compute and links with more and faster
/// memory, NVIDIA H200 SXM datasheet.
static ClusterSpec getH200() {
  ClusterSpec cluster = getDgxH100();
  cluster.name = "h200";
  // 141 GB HBM3e.
  cluster.memoryBytes = 141e9;
  // H200 SXM: 4.8 TB/s.
  cluster.hbmBandwidth = 4.8e12;
  return cluster;
}

/// This machine: two CPU cores, one rank per core. Rough numbers until
/// `parc-plan --calibrate` measures them.
static ClusterSpec getCpuLocal() {
  ClusterSpec cluster;
  cluster.name = "cpu-local";
  // Two cores, one rank each.
  cluster.devicesPerNode = 2;
  // One machine.
  cluster.nodes = 1;
  // f32 GEMM (oneDNN) on one core, rough: 50 GFLOP/s.
  cluster.peakFlops = {{"f32", 50e9}};
  // A rank's share of the memory, rough: 8 GiB.
  cluster.memoryBytes = 8 * kGiB;
  // A core's share of DRAM bandwidth, rough: 10 GB/s.
  cluster.hbmBandwidth = 10e9;
  // MPI through shared memory, rough: 5 GB/s and 5 us.
  cluster.intraNode = {5e9, 5e-6};
  // There is no second node; the same as within it.
  cluster.interNode = {5e9, 5e-6};
  // The default efficiencies too, until calibrated.
  cluster.efficiency = getDefaultEfficiency();
  // libparcrt's MPI collectives block the rank.
  cluster.overlapsCommunication = false;
  cluster.measuredBy = "preset: rough defaults; run parc-plan --calibrate";
  return cluster;
}

static constexpr StringRef kPresetNames[] = {"dgx-a100-80g", "dgx-h100", "h200",
                                             "cpu-local"};

ArrayRef<StringRef> mlir::parc::getClusterPresetNames() { return kPresetNames; }

std::optional<ClusterSpec> mlir::parc::getClusterPreset(StringRef name) {
  if (name == "dgx-a100-80g")
    return getDgxA100();
  if (name == "dgx-h100")
    return getDgxH100();
  if (name == "h200")
    return getH200();
  if (name == "cpu-local")
    return getCpuLocal();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

std::optional<double> ClusterSpec::getPeakFlops(StringRef dtype) const {
  for (const auto &[name, flops] : peakFlops)
    if (name == dtype)
      return flops;
  return std::nullopt;
}

double ClusterSpec::getGemmEfficiency(double flops) const {
  ArrayRef<GemmEfficiencyPoint> curve = efficiency.gemm;
  assert(!curve.empty() && "a cluster has a GEMM efficiency curve");
  if (flops <= curve.front().flops)
    return curve.front().fraction;
  if (flops >= curve.back().flops)
    return curve.back().fraction;
  // The first point above `flops`; the one before it is at or below.
  const GemmEfficiencyPoint *upper = llvm::upper_bound(
      curve, flops, [](double value, const GemmEfficiencyPoint &point) {
        return value < point.flops;
      });
  const GemmEfficiencyPoint &lower = *(upper - 1);
  double t = (std::log10(flops) - std::log10(lower.flops)) /
             (std::log10(upper->flops) - std::log10(lower.flops));
  return lower.fraction + t * (upper->fraction - lower.fraction);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// A fraction in (0, 1].
static Expected<double> getFraction(const Reader &reader, const Value &value,
                                    const Twine &what) {
  Expected<double> fraction =
      reader.getNumber(value, what, Reader::Bound::Positive);
  if (!fraction)
    return fraction.takeError();
  if (*fraction > 1)
    return reader.error(value.location, what +
                                            " must be a fraction in (0, 1]"
                                            ", not " +
                                            value.describe());
  return *fraction;
}

static Expected<double> requirePositive(const ObjectReader &object,
                                        StringRef key) {
  Expected<const Member *> member = object.require(key);
  if (!member)
    return member.takeError();
  return object.getReader().getNumber(
      (*member)->value, ObjectReader::quote(key), Reader::Bound::Positive);
}

static Expected<LinkSpec> readLink(const ObjectReader &cluster, StringRef key) {
  Expected<const Member *> member = cluster.require(key);
  if (!member)
    return member.takeError();
  Expected<ObjectReader> link =
      ObjectReader::create(cluster.getReader(), (*member)->value,
                           ObjectReader::quote(key), kLinkKeys);
  if (!link)
    return link.takeError();
  LinkSpec spec;
  for (auto [linkKey, field] : {std::pair{"bandwidth", &spec.bandwidth},
                                std::pair{"latency", &spec.latency}}) {
    Expected<double> number = requirePositive(*link, linkKey);
    if (!number)
      return number.takeError();
    *field = *number;
  }
  return spec;
}

static Expected<std::vector<GemmEfficiencyPoint>>
readGemmCurve(const Reader &reader, const Value &value) {
  Expected<ArrayRef<Value>> points = reader.getArray(value, "\"gemm\"");
  if (!points)
    return points.takeError();
  if (points->empty())
    return reader.error(value.location, "\"gemm\" must have a point");
  std::vector<GemmEfficiencyPoint> curve;
  for (auto [index, point] : llvm::enumerate(*points)) {
    std::string what = "\"gemm\"[" + std::to_string(index) + "]";
    if (!point.isArray() || point.elements.size() != 2)
      return reader.error(point.location,
                          what +
                              " must be a pair [flops, fraction_of_peak], "
                              "not " +
                              point.describe());
    Expected<double> flops = reader.getNumber(point.elements[0], what + "[0]",
                                              Reader::Bound::Positive);
    if (!flops)
      return flops.takeError();
    if (!curve.empty() && !(*flops > curve.back().flops))
      return reader.error(point.elements[0].location,
                          what +
                              "[0] must be more FLOPs than the point "
                              "before it (ascending), not " +
                              point.elements[0].describe());
    Expected<double> fraction =
        getFraction(reader, point.elements[1], what + "[1]");
    if (!fraction)
      return fraction.takeError();
    curve.push_back({*flops, *fraction});
  }
  return curve;
}

static Expected<EfficiencySpec> readEfficiency(const ObjectReader &cluster) {
  const Reader &reader = cluster.getReader();
  Expected<const Member *> member = cluster.require("efficiency");
  if (!member)
    return member.takeError();
  Expected<ObjectReader> object = ObjectReader::create(
      reader, (*member)->value, "\"efficiency\"", kEfficiencyKeys);
  if (!object)
    return object.takeError();
  EfficiencySpec efficiency;
  Expected<const Member *> gemm = object->require("gemm");
  if (!gemm)
    return gemm.takeError();
  Expected<std::vector<GemmEfficiencyPoint>> curve =
      readGemmCurve(reader, (*gemm)->value);
  if (!curve)
    return curve.takeError();
  efficiency.gemm = std::move(*curve);
  for (auto [key, field] : {std::pair{"memory_bound", &efficiency.memoryBound},
                            std::pair{"collective", &efficiency.collective}}) {
    Expected<const Member *> fractionMember = object->require(key);
    if (!fractionMember)
      return fractionMember.takeError();
    Expected<double> fraction =
        getFraction(reader, (*fractionMember)->value, ObjectReader::quote(key));
    if (!fraction)
      return fraction.takeError();
    *field = *fraction;
  }
  return efficiency;
}

static Expected<ClusterSpec> readClusterObject(const Reader &reader,
                                               const Value &root) {
  Expected<ObjectReader> object =
      ObjectReader::create(reader, root, "the cluster", kClusterKeys);
  if (!object)
    return object.takeError();
  ClusterSpec cluster;

  Expected<const Member *> name = object->require("name");
  if (!name)
    return name.takeError();
  Expected<std::string> nameString =
      reader.getString((*name)->value, "\"name\"");
  if (!nameString)
    return nameString.takeError();
  cluster.name = std::move(*nameString);

  Expected<const Member *> devices = object->require("devices_per_node");
  if (!devices)
    return devices.takeError();
  Expected<int64_t> devicesPerNode =
      reader.getInteger((*devices)->value, "\"devices_per_node\"", 1);
  if (!devicesPerNode)
    return devicesPerNode.takeError();
  cluster.devicesPerNode = *devicesPerNode;

  std::optional<int64_t> nodes;
  if (Error error = object->read("nodes", nodes, 0))
    return std::move(error);
  cluster.nodes = nodes.value_or(0);

  Expected<const Member *> peak = object->require("peak_flops");
  if (!peak)
    return peak.takeError();
  Expected<ObjectReader> peakObject =
      ObjectReader::create(reader, (*peak)->value, "\"peak_flops\"", kDtypes);
  if (!peakObject)
    return peakObject.takeError();
  if ((*peak)->value.members.empty())
    return reader.error((*peak)->value.location,
                        "\"peak_flops\" must give a dtype's peak");
  for (const Member &dtype : (*peak)->value.members) {
    Expected<double> flops = reader.getNumber(
        dtype.value, ObjectReader::quote(dtype.key), Reader::Bound::Positive);
    if (!flops)
      return flops.takeError();
    cluster.peakFlops.push_back({dtype.key, *flops});
  }

  for (auto [key, field] :
       {std::pair{"memory_bytes", &cluster.memoryBytes},
        std::pair{"hbm_bandwidth", &cluster.hbmBandwidth}}) {
    Expected<double> number = requirePositive(*object, key);
    if (!number)
      return number.takeError();
    *field = *number;
  }
  for (auto [key, field] : {std::pair{"intra_node", &cluster.intraNode},
                            std::pair{"inter_node", &cluster.interNode}}) {
    Expected<LinkSpec> link = readLink(*object, key);
    if (!link)
      return link.takeError();
    *field = *link;
  }
  Expected<EfficiencySpec> efficiency = readEfficiency(*object);
  if (!efficiency)
    return efficiency.takeError();
  cluster.efficiency = std::move(*efficiency);
  std::optional<double> kernelLatency;
  if (Error error = object->read("kernel_latency", kernelLatency,
                                 Reader::Bound::NonNegative))
    return std::move(error);
  cluster.kernelLatency = kernelLatency.value_or(0);
  if (Error error = object->read("attention_flops", cluster.attentionFlops,
                                 Reader::Bound::Positive))
    return std::move(error);
  std::optional<bool> overlaps;
  if (Error error = object->read("overlaps_communication", overlaps))
    return std::move(error);
  cluster.overlapsCommunication = overlaps.value_or(true);
  std::optional<double> collectiveWait;
  if (Error error = object->read("collective_wait", collectiveWait,
                                 Reader::Bound::NonNegative))
    return std::move(error);
  cluster.collectiveWait = collectiveWait.value_or(0);
  if (Error error = object->read("measured_by", cluster.measuredBy))
    return std::move(error);
  return cluster;
}

Expected<ClusterSpec> mlir::parc::readCluster(StringRef text,
                                              StringRef fileName) {
  Expected<Value> root = json::parse(text, fileName);
  if (!root)
    return root.takeError();
  return readClusterObject(Reader(fileName), *root);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static Value writeLink(const LinkSpec &link) {
  Value object = Value::makeObject();
  object.add("bandwidth", Value::makeNumber(link.bandwidth));
  object.add("latency", Value::makeNumber(link.latency));
  return object;
}

std::string mlir::parc::writeCluster(const ClusterSpec &cluster) {
  Value root = Value::makeObject();
  root.add("name", Value::makeString(cluster.name));
  root.add("devices_per_node", Value::makeInteger(cluster.devicesPerNode));
  root.add("nodes", Value::makeInteger(cluster.nodes));
  Value peak = Value::makeObject();
  for (const auto &[dtype, flops] : cluster.peakFlops)
    peak.add(dtype, Value::makeNumber(flops));
  root.add("peak_flops", std::move(peak));
  root.add("memory_bytes", Value::makeNumber(cluster.memoryBytes));
  root.add("hbm_bandwidth", Value::makeNumber(cluster.hbmBandwidth));
  root.add("intra_node", writeLink(cluster.intraNode));
  root.add("inter_node", writeLink(cluster.interNode));
  Value efficiency = Value::makeObject();
  Value gemm = Value::makeArray();
  for (const GemmEfficiencyPoint &point : cluster.efficiency.gemm)
    gemm.push(std::move(Value::makeArray()
                            .push(Value::makeNumber(point.flops))
                            .push(Value::makeNumber(point.fraction))));
  efficiency.add("gemm", std::move(gemm));
  efficiency.add("memory_bound",
                 Value::makeNumber(cluster.efficiency.memoryBound));
  efficiency.add("collective",
                 Value::makeNumber(cluster.efficiency.collective));
  root.add("efficiency", std::move(efficiency));
  if (cluster.kernelLatency > 0)
    root.add("kernel_latency", Value::makeNumber(cluster.kernelLatency));
  if (cluster.attentionFlops)
    root.add("attention_flops", Value::makeNumber(*cluster.attentionFlops));
  if (!cluster.overlapsCommunication)
    root.add("overlaps_communication", Value::makeBoolean(false));
  if (cluster.collectiveWait > 0)
    root.add("collective_wait", Value::makeNumber(cluster.collectiveWait));
  if (cluster.measuredBy)
    root.add("measured_by", Value::makeString(*cluster.measuredBy));
  return json::print(root);
}
