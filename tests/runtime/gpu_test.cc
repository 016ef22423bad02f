// The runtime on a real Hopper GPU: load, launch, clusters, big shared
// memory, JIT, tensor maps (the driver's verdicts and a real TMA load),
// memory and timing. Every test skips, saying why, without a driver or a
// compute capability 9.0 device. Self-contained: the binary runs outside
// Bazel (bazel-bin/tests/runtime/gpu_test).

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/tensor_map.h"
#include "tests/runtime/test_kernels.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::runtime {
namespace {

using ptx::ScalarType;
using ptx::Swizzle;
using testing_kernels::AffineKernel;
using testing_kernels::kClusterKernel;
using testing_kernels::kSharedKernel;
using testing_kernels::TmaKernel;

class GpuTest : public testing_support::HopperTest {};

absl::StatusOr<compile::CompiledModule> Compile(
    absl::string_view name, absl::string_view source,
    absl::string_view arch = "sm_90a") {
  compile::CompileOptions options;
  options.arch = std::string(arch);
  return compile::CompileCuda(name, source, options);
}

absl::StatusOr<Module> CompileAndLoad(absl::string_view name,
                                      absl::string_view source) {
  absl::StatusOr<compile::CompiledModule> compiled = Compile(name, source);
  if (!compiled.ok()) return compiled.status();
  return Module::LoadCubin(*compiled);
}

LaunchConfig Linear(uint32_t blocks, uint32_t threads) {
  LaunchConfig config;
  config.grid = {blocks, 1, 1};
  config.block = {threads, 1, 1};
  return config;
}

// Uploads 0..n-1, runs `affine` over it, and checks a * i + b.
void ExpectAffine(const Function& affine, int a, int b,
                  CUstream stream = nullptr) {
  constexpr int n = 1000;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i;
  absl::StatusOr<DeviceBuffer> data = DeviceBuffer::Allocate(n * sizeof(int));
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_TRUE(data->CopyFromHost(host.data(), n * sizeof(int)).ok());
  CUdeviceptr address = data->address();
  int count = n;
  void* args[] = {&address, &count};
  LaunchConfig config = Linear((n + 255) / 256, 256);
  config.stream = stream;
  const absl::Status launched = affine.Launch(config, args);
  ASSERT_TRUE(launched.ok()) << launched;
  const absl::Status synced = SynchronizeCurrentContext();
  ASSERT_TRUE(synced.ok()) << synced;
  ASSERT_TRUE(data->CopyToHost(host.data(), n * sizeof(int)).ok());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(host[i], a * i + b) << "element " << i;
  }
}

TEST_F(GpuTest, DriverAndDeviceDescribeAHopper) {
  const Driver* driver = *Driver::Get();
  EXPECT_GE(driver->version(), 12000);
  std::printf(
      "driver %s (CUDA %d.%d); device 0: %s, cc %d.%d, %d SMs, shared per "
      "block %d (opt-in %d), per SM %d, L2 %d bytes, %llu bytes of memory, "
      "cluster launch %d\n",
      driver->library_path().c_str(), driver->version() / 1000,
      driver->version() % 1000 / 10, properties().name.c_str(),
      properties().cc_major, properties().cc_minor, properties().sm_count,
      properties().max_shared_bytes_per_block,
      properties().max_shared_bytes_per_block_optin,
      properties().max_shared_bytes_per_sm, properties().l2_bytes,
      static_cast<unsigned long long>(properties().global_memory_bytes),
      properties().cluster_launch);
  EXPECT_FALSE(properties().name.empty());
  EXPECT_GT(properties().sm_count, 0);
  EXPECT_EQ(properties().max_shared_bytes_per_block, kDefaultSharedBytesLimit);
  EXPECT_GE(properties().max_shared_bytes_per_block_optin, 227 * 1024);
  EXPECT_GT(properties().l2_bytes, 0);
  EXPECT_EQ(properties().max_threads_per_block, 1024);
  EXPECT_TRUE(properties().cluster_launch);
  EXPECT_GT(properties().global_memory_bytes, 0u);
  const absl::StatusOr<CUdevice> current = CurrentDevice();
  ASSERT_TRUE(current.ok()) << current.status();
  absl::StatusOr<CUdevice> device0 = GetDevice(0);
  ASSERT_TRUE(device0.ok()) << device0.status();
  EXPECT_EQ(*current, *device0);
  const absl::StatusOr<DeviceProperties> current_properties =
      CurrentDeviceProperties();
  ASSERT_TRUE(current_properties.ok()) << current_properties.status();
  EXPECT_EQ(current_properties->ordinal, 0);
  EXPECT_EQ(current_properties->name, properties().name);
}

TEST_F(GpuTest, LoadsAndLaunchesAGeneratedKernel) {
  absl::StatusOr<Module> module = CompileAndLoad("affine", AffineKernel(3, 7));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Function> affine = module->GetFunction("affine");
  ASSERT_TRUE(affine.ok()) << affine.status();
  EXPECT_EQ(affine->name(), "affine");
  ExpectAffine(*affine, 3, 7);
}

TEST_F(GpuTest, LaunchesOnAStreamAndTimesWithEvents) {
  absl::StatusOr<Module> module = CompileAndLoad("affine", AffineKernel(2, 1));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Function> affine = module->GetFunction("affine");
  ASSERT_TRUE(affine.ok()) << affine.status();
  absl::StatusOr<Stream> stream = Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  absl::StatusOr<Event> start = Event::Create();
  absl::StatusOr<Event> end = Event::Create();
  ASSERT_TRUE(start.ok() && end.ok()) << start.status() << " " << end.status();
  ASSERT_TRUE(start->Record(stream->get()).ok());
  ExpectAffine(*affine, 2, 1, stream->get());
  ASSERT_TRUE(end->Record(stream->get()).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  const absl::StatusOr<float> ms = ElapsedMilliseconds(*start, *end);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0f);
  EXPECT_LT(*ms, 10000.0f);
}

TEST_F(GpuTest, UnknownKernelIsNotFoundWithAHint) {
  absl::StatusOr<Module> module = CompileAndLoad("affine", AffineKernel(1, 0));
  ASSERT_TRUE(module.ok()) << module.status();
  const absl::StatusOr<Function> missing = module->GetFunction("affin");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "extern \"C\""))
      << missing.status();
}

TEST_F(GpuTest, RefusesACubinForAnotherArchitectureBeforeTheDriverDoes) {
  absl::StatusOr<compile::CompiledModule> sm80 =
      Compile("affine", AffineKernel(1, 0), "sm_80");
  ASSERT_TRUE(sm80.ok()) << sm80.status();
  const absl::StatusOr<Module> module = Module::LoadCubin(*sm80);
  EXPECT_TRUE(absl::IsFailedPrecondition(module.status())) << module.status();
  EXPECT_EQ(module.status().message(),
            "module affine: sm_80 code (a CUBIN) runs only on compute "
            "capability 8.x with x >= 0 (other GPUs need PTX); this device is "
            "compute capability 9.0");
}

TEST_F(GpuTest, JitCompilesPtxText) {
  absl::StatusOr<compile::CompiledModule> compiled =
      Compile("affine", AffineKernel(5, -2));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<Module> module = Module::LoadPtx(compiled->ptx);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Function> affine = module->GetFunction("affine");
  ASSERT_TRUE(affine.ok()) << affine.status();
  ExpectAffine(*affine, 5, -2);
}

TEST_F(GpuTest, JitErrorsCarryTheDriverLog) {
  absl::StatusOr<compile::CompiledModule> compiled =
      Compile("affine", AffineKernel(1, 0));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string broken =
      absl::StrReplaceAll(compiled->ptx, {{"ret;", "no_such_instruction;"}});
  ASSERT_NE(broken, compiled->ptx) << "the PTX has no ret; to break";
  const absl::StatusOr<Module> module = Module::LoadPtx(broken);
  ASSERT_FALSE(module.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(module.status())) << module.status();
  EXPECT_TRUE(absl::StrContains(module.status().message(), "JIT error log:"))
      << module.status();
  EXPECT_TRUE(
      absl::StrContains(module.status().message(), "no_such_instruction"))
      << module.status();
}

TEST_F(GpuTest, RefusesPtxForAnotherArchitecture) {
  const absl::StatusOr<Module> module =
      Module::LoadPtx(".version 8.6\n.target sm_100a\n.address_size 64\n");
  EXPECT_TRUE(absl::IsFailedPrecondition(module.status())) << module.status();
  EXPECT_EQ(module.status().message(),
            "PTX module: compute_100a code runs only on compute capability "
            "10.0 (architecture-specific features do not exist on any other "
            "GPU); this device is compute capability 9.0");
}

// Runs cluster_rank over `blocks` blocks in clusters of `cluster` and
// returns (rank, cluster size) per block.
std::vector<unsigned> ClusterRanks(const Function& kernel, uint32_t blocks,
                                   uint32_t cluster) {
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(2 * blocks * 4);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_TRUE(out->Fill32(0xdeadbeef).ok());
  CUdeviceptr address = out->address();
  void* args[] = {&address};
  LaunchConfig config = Linear(blocks, 128);
  config.cluster = {cluster, 1, 1};
  const absl::Status launched = kernel.Launch(config, args);
  EXPECT_TRUE(launched.ok()) << launched;
  EXPECT_TRUE(SynchronizeCurrentContext().ok());
  std::vector<unsigned> host(2 * blocks);
  EXPECT_TRUE(out->CopyToHost(host.data(), host.size() * 4).ok());
  return host;
}

TEST_F(GpuTest, ClusterLaunchGivesEachBlockItsRankInTheCluster) {
  absl::StatusOr<Module> module =
      CompileAndLoad("cluster_rank", kClusterKernel);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Function> kernel = module->GetFunction("cluster_rank");
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  const std::vector<unsigned> pairs = ClusterRanks(*kernel, 8, 2);
  ASSERT_EQ(pairs.size(), 16u);
  for (unsigned block = 0; block < 8; ++block) {
    EXPECT_EQ(pairs[2 * block], block % 2) << "rank of block " << block;
    EXPECT_EQ(pairs[2 * block + 1], 2u)
        << "cluster size seen by block " << block;
  }
  const std::vector<unsigned> plain = ClusterRanks(*kernel, 4, 1);
  ASSERT_EQ(plain.size(), 8u);
  for (unsigned block = 0; block < 4; ++block) {
    EXPECT_EQ(plain[2 * block], 0u) << "plain launch, block " << block;
    EXPECT_EQ(plain[2 * block + 1], 1u) << "plain launch, block " << block;
  }
}

TEST_F(GpuTest, DynamicSharedMemoryAbove48KbNeedsTheOptIn) {
  absl::StatusOr<Module> module = CompileAndLoad("shared_sum", kSharedKernel);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Function> kernel = module->GetFunction("shared_sum");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  constexpr int kBytes = 200 * 1024;
  unsigned words = kBytes / 4;
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(8);
  ASSERT_TRUE(out.ok()) << out.status();
  CUdeviceptr address = out->address();
  void* args[] = {&address, &words};
  LaunchConfig config = Linear(1, 256);
  config.shared_bytes = kBytes;

  const absl::Status refused = kernel->Launch(config, args);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(),
                                "call SetMaxDynamicSharedMemory(204800) first"))
      << refused;

  const int optin = properties().max_shared_bytes_per_block_optin;
  const absl::Status too_much = kernel->SetMaxDynamicSharedMemory(optin + 16);
  EXPECT_TRUE(absl::IsInvalidArgument(too_much)) << too_much;
  EXPECT_TRUE(absl::StrContains(
      too_much.message(),
      absl::StrCat("exceed the device's opt-in maximum of ", optin)))
      << too_much;

  ASSERT_TRUE(kernel->SetMaxDynamicSharedMemory(kBytes).ok());
  const absl::Status launched = kernel->Launch(config, args);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_TRUE(SynchronizeCurrentContext().ok());
  unsigned long long sum = 0;
  ASSERT_TRUE(out->CopyToHost(&sum, sizeof(sum)).ok());
  EXPECT_EQ(sum, static_cast<unsigned long long>(words) * (words - 1) / 2);
}

TEST_F(GpuTest, DeviceBufferCopiesFillsAndChecksSizes) {
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(64);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ(buffer->size(), 64u);
  std::vector<uint32_t> words(16);
  ASSERT_TRUE(buffer->Fill32(0x3f800000).ok());
  ASSERT_TRUE(buffer->CopyToHost(words.data(), 64).ok());
  for (uint32_t word : words) EXPECT_EQ(word, 0x3f800000u);
  ASSERT_TRUE(buffer->Memset8(0xab).ok());
  ASSERT_TRUE(buffer->CopyToHost(words.data(), 64).ok());
  for (uint32_t word : words) EXPECT_EQ(word, 0xababababu);
  std::vector<uint8_t> bytes(64);
  for (int i = 0; i < 64; ++i) bytes[i] = static_cast<uint8_t>(i);
  ASSERT_TRUE(buffer->CopyFromHost(bytes.data(), 64).ok());
  std::vector<uint8_t> back(64);
  ASSERT_TRUE(buffer->CopyToHost(back.data(), 64).ok());
  EXPECT_EQ(back, bytes);

  // Device to device: the whole source into the start of the buffer.
  absl::StatusOr<DeviceBuffer> copy = DeviceBuffer::Allocate(64);
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(copy->CopyFromDeviceAsync(*buffer, nullptr).ok());
  ASSERT_TRUE(copy->CopyToHost(back.data(), 64).ok());
  EXPECT_EQ(back, bytes);
  absl::StatusOr<DeviceBuffer> larger = DeviceBuffer::Allocate(65);
  ASSERT_TRUE(larger.ok()) << larger.status();
  EXPECT_TRUE(absl::IsOutOfRange(copy->CopyFromDeviceAsync(*larger, nullptr)));

  std::vector<uint8_t> big(65);
  const absl::Status overflow = buffer->CopyFromHost(big.data(), 65);
  EXPECT_TRUE(absl::IsOutOfRange(overflow)) << overflow;
  EXPECT_EQ(overflow.message(),
            "DeviceBuffer::CopyFromHost of 65 bytes into a buffer of 64 bytes");
  absl::StatusOr<DeviceBuffer> odd = DeviceBuffer::Allocate(6);
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_TRUE(absl::IsInvalidArgument(odd->Fill32(0)));
  EXPECT_TRUE(absl::IsInvalidArgument(DeviceBuffer::Allocate(0).status()));
}

// --- Tensor maps ------------------------------------------------------------

// The driver's own verdict on `spec`, with ptxgen's validation bypassed.
CUresult EncodeWithoutValidation(const TensorMapSpec& spec) {
  const Driver* driver = *Driver::Get();
  std::vector<uint32_t> element_strides = spec.element_strides;
  element_strides.resize(spec.box.size(), 1);
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  switch (spec.swizzle) {
    case Swizzle::kNone:
      break;
    case Swizzle::k32B:
      swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
      break;
    case Swizzle::k64B:
      swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
      break;
    case Swizzle::k128B:
      swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
      break;
  }
  CUtensorMap map;
  return driver->cuTensorMapEncodeTiled(
      &map, TensorMapDataType(spec.element), spec.dims.size(),
      reinterpret_cast<void*>(spec.global_address), spec.dims.data(),
      spec.strides_bytes.data(), spec.box.data(), element_strides.data(),
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

struct MapCase {
  const char* name;
  void (*change)(TensorMapSpec&);
};

TEST_F(GpuTest, TheDriverAgreesWithTensorMapValidation) {
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(1 << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  TensorMapSpec base;
  base.element = ScalarType::kF16;
  base.global_address = buffer->address();
  base.dims = {64, 128};
  base.strides_bytes = {128};
  base.box = {64, 64};
  base.swizzle = Swizzle::k128B;

  const MapCase legal[] = {
      {"base", [](TensorMapSpec&) {}},
      {"rank 1",
       [](TensorMapSpec& s) {
         s.dims = {1000};
         s.strides_bytes = {};
         s.box = {256};
         s.swizzle = Swizzle::kNone;
       }},
      {"rank 5",
       [](TensorMapSpec& s) {
         s.dims = {64, 2, 3, 4, 5};
         s.strides_bytes = {128, 256, 768, 3072};
         s.box = {64, 1, 1, 1, 1};
       }},
      {"dim 2^32", [](TensorMapSpec& s) { s.dims[1] = uint64_t{1} << 32; }},
      {"stride 2^40-16",
       [](TensorMapSpec& s) { s.strides_bytes[0] = (uint64_t{1} << 40) - 16; }},
      {"box 256", [](TensorMapSpec& s) { s.box[1] = 256; }},
      {"inner box 16 bytes", [](TensorMapSpec& s) { s.box[0] = 8; }},
      {"inner box fills 32B",
       [](TensorMapSpec& s) {
         s.swizzle = Swizzle::k32B;
         s.box[0] = 16;
       }},
      {"inner box fills 64B",
       [](TensorMapSpec& s) {
         s.swizzle = Swizzle::k64B;
         s.box[0] = 32;
       }},
      {"e4m3 inner box fills 128B",
       [](TensorMapSpec& s) {
         s.element = ScalarType::kE4M3;
         s.box[0] = 128;
       }},
      {"tf32",
       [](TensorMapSpec& s) {
         s.element = ScalarType::kTF32;
         s.box[0] = 32;
       }},
      {"element strides 8",
       [](TensorMapSpec& s) {
         s.element_strides = {1, 8};
       }},
  };
  for (const MapCase& c : legal) {
    TensorMapSpec spec = base;
    c.change(spec);
    EXPECT_TRUE(ValidateTensorMap(spec).ok()) << c.name;
    const absl::StatusOr<CUtensorMap> map = EncodeTensorMap(spec);
    EXPECT_TRUE(map.ok()) << c.name << ": ptxgen calls it legal but "
                          << map.status();
  }

  // ptxgen also refuses a null address; that is its own rule, not tested here.
  const MapCase illegal[] = {
      {"rank 6",
       [](TensorMapSpec& s) {
         s.dims = {64, 2, 2, 2, 2, 2};
         s.strides_bytes = {128, 256, 512, 1024, 2048};
         s.box = {64, 1, 1, 1, 1, 1};
       }},
      {"address aligned to 8", [](TensorMapSpec& s) { s.global_address += 8; }},
      {"dim 0", [](TensorMapSpec& s) { s.dims[1] = 0; }},
      {"dim 2^32+1",
       [](TensorMapSpec& s) { s.dims[1] = (uint64_t{1} << 32) + 1; }},
      {"stride 136", [](TensorMapSpec& s) { s.strides_bytes[0] = 136; }},
      {"stride 2^40",
       [](TensorMapSpec& s) { s.strides_bytes[0] = uint64_t{1} << 40; }},
      {"box 0", [](TensorMapSpec& s) { s.box[1] = 0; }},
      {"box 257", [](TensorMapSpec& s) { s.box[1] = 257; }},
      {"inner box 24 bytes",
       [](TensorMapSpec& s) {
         s.swizzle = Swizzle::kNone;
         s.box[0] = 12;
       }},
      {"inner box beyond 128B", [](TensorMapSpec& s) { s.box[0] = 128; }},
      {"inner box beyond 32B",
       [](TensorMapSpec& s) {
         s.swizzle = Swizzle::k32B;
         s.box[0] = 32;
       }},
      {"element stride 0",
       [](TensorMapSpec& s) {
         s.element_strides = {1, 0};
       }},
      {"element stride 9",
       [](TensorMapSpec& s) {
         s.element_strides = {1, 9};
       }},
  };
  for (const MapCase& c : illegal) {
    TensorMapSpec spec = base;
    c.change(spec);
    const absl::Status ours = ValidateTensorMap(spec);
    EXPECT_TRUE(absl::IsInvalidArgument(ours)) << c.name << ": " << ours;
    EXPECT_NE(EncodeWithoutValidation(spec), CUDA_SUCCESS)
        << c.name << ": ptxgen refuses it (" << ours
        << ") but the driver encodes it";
  }
}

TEST_F(GpuTest, TmaLoadsABoxThroughTheEncodedMap) {
  const absl::StatusOr<std::string> source = TmaKernel();
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<Module> module = CompileAndLoad("tma_box", *source);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Function> kernel = module->GetFunction("tma_box");
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  // A 100 x 64 matrix of 16-bit elements, row-major; element (r, c) holds
  // r * 64 + c + 1 so that TMA's zero fill is told apart.
  constexpr int kRows = 100;
  constexpr int kCols = 64;
  std::vector<uint16_t> matrix(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i)
    matrix[i] = static_cast<uint16_t>(i + 1);
  absl::StatusOr<DeviceBuffer> global =
      DeviceBuffer::Allocate(matrix.size() * 2);
  ASSERT_TRUE(global.ok()) << global.status();
  ASSERT_TRUE(global->CopyFromHost(matrix.data(), matrix.size() * 2).ok());

  for (Swizzle swizzle :
       {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B}) {
    SCOPED_TRACE(absl::StrCat("swizzle ", ptx::SwizzleName(swizzle)));
    const uint32_t box_cols =
        swizzle == Swizzle::kNone ? kCols : ptx::SwizzleBytes(swizzle) / 2;
    constexpr uint32_t kBoxRows = 64;
    TensorMapSpec spec;
    spec.element = ScalarType::kF16;
    spec.global_address = global->address();
    spec.dims = {kCols, kRows};
    spec.strides_bytes = {kCols * 2};
    spec.box = {box_cols, kBoxRows};
    spec.swizzle = swizzle;
    absl::StatusOr<CUtensorMap> map = EncodeTensorMap(spec);
    ASSERT_TRUE(map.ok()) << map.status();

    // Columns from box_cols / 2 on (so a box that is not at the origin),
    // rows 64..127: rows 100 and up lie outside the matrix.
    int x = static_cast<int>(box_cols / 2);
    int y = 64;
    unsigned bytes = box_cols * kBoxRows * 2;
    absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(bytes);
    ASSERT_TRUE(out.ok()) << out.status();
    CUdeviceptr out_address = out->address();
    void* args[] = {&*map, &x, &y, &out_address, &bytes};
    LaunchConfig config = Linear(1, 128);
    config.shared_bytes = static_cast<int>(bytes) + 1024 + 16;
    const absl::Status launched = kernel->Launch(config, args);
    ASSERT_TRUE(launched.ok()) << launched;
    const absl::Status synced = SynchronizeCurrentContext();
    ASSERT_TRUE(synced.ok()) << synced;
    std::vector<uint16_t> smem(bytes / 2);
    ASSERT_TRUE(out->CopyToHost(smem.data(), bytes).ok());

    int mismatches = 0;
    for (uint32_t r = 0; r < kBoxRows; ++r) {
      for (uint32_t c = 0; c < box_cols; ++c) {
        const int row = y + static_cast<int>(r);
        const int col = x + static_cast<int>(c);
        const uint16_t expected =
            row < kRows && col < kCols ? matrix[row * kCols + col] : 0;
        const uint32_t logical = (r * box_cols + c) * 2;
        const uint16_t got = smem[ptx::SwizzleOffset(logical, swizzle) / 2];
        if (got != expected && ++mismatches <= 5) {
          ADD_FAILURE() << "box element (" << r << ", " << c << "): got " << got
                        << ", expected " << expected;
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

}  // namespace
}  // namespace ptxgen::runtime
