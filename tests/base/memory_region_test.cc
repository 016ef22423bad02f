// Whether an output shares memory with another operand, told from the
// regions' addresses and strides alone: a specification by the layouts
// callers give (the same tensor, shifted dense ones, column slices of one
// buffer, padded rows, broadcasts, scalars).
#include "ptxgen/base/memory_region.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace ptxgen::base {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;

// rows x columns floats, `ld` apart, from column `first` of a buffer at
// kBase.
MemoryRegion Matrix(int64_t rows, int64_t columns, int64_t ld,
                    int64_t first = 0) {
  return {kBase + 4 * static_cast<uint64_t>(first), 4, columns, {{{rows, ld}}}};
}

TEST(MayShareMemory, TheSameTensorDoes) {
  EXPECT_TRUE(MayShareMemory(Matrix(4, 8, 8), Matrix(4, 8, 8)));
  // Padded rows: neither is dense, both start at one byte.
  EXPECT_TRUE(MayShareMemory(Matrix(4, 6, 8), Matrix(4, 6, 8)));
}

TEST(MayShareMemory, DisjointRangesDoNot) {
  const MemoryRegion a = Matrix(4, 8, 8);
  MemoryRegion after = a;
  after.address += 4 * 32;  // just past a's last float
  EXPECT_FALSE(MayShareMemory(a, after));
  after.address -= 4;
  EXPECT_TRUE(MayShareMemory(a, after));
}

TEST(MayShareMemory, ColumnSlicesOfOneBufferDoOnlyWhenTheyMeet) {
  // [:, 0:4] and [:, 4:8] of a 4 x 8 buffer: interleaved, apart.
  EXPECT_FALSE(MayShareMemory(Matrix(4, 4, 8, 0), Matrix(4, 4, 8, 4)));
  // [:, 0:5] and [:, 4:8] share column 4.
  EXPECT_TRUE(MayShareMemory(Matrix(4, 5, 8, 0), Matrix(4, 4, 8, 4)));
  // [:, 2:6] inside [:, 0:8].
  EXPECT_TRUE(MayShareMemory(Matrix(4, 8, 8, 0), Matrix(4, 4, 8, 2)));
}

TEST(MayShareMemory, HeadsOfOnePackedTensorAreApart) {
  // q, k and v as [seq, 3, heads, dim] views: 16 rows of 2 heads of 8.
  const auto head_slot = [](int64_t slot) {
    return MemoryRegion{kBase + 2 * 16 * static_cast<uint64_t>(slot),
                        2,
                        8,
                        {{{16, 48}, {2, 8}}}};
  };
  EXPECT_FALSE(MayShareMemory(head_slot(0), head_slot(1)));
  EXPECT_FALSE(MayShareMemory(head_slot(1), head_slot(2)));
  EXPECT_TRUE(MayShareMemory(head_slot(1), head_slot(1)));
}

TEST(MayShareMemory, InterleavedDimensionsAreAssumedTo) {
  // Rows 2 floats apart holding 4: no telling which bytes are whose.
  EXPECT_TRUE(MayShareMemory(Matrix(4, 4, 2), Matrix(4, 4, 8, 1)));
}

TEST(MayShareMemory, BroadcastsAndScalarsAddNoBytes) {
  MemoryRegion broadcast = Matrix(4, 8, 8);
  broadcast.outer[1] = {16, 0};  // 16 batches of one matrix
  EXPECT_TRUE(SameRegion(broadcast, Matrix(4, 8, 8)));
  const MemoryRegion scalar = MemoryRegion::Bytes(kBase + 4 * 31, 4);
  EXPECT_TRUE(MayShareMemory(Matrix(4, 8, 8), scalar));
  EXPECT_FALSE(MayShareMemory(Matrix(4, 7, 8), scalar));  // padding
  EXPECT_FALSE(MayShareMemory(Matrix(4, 8, 8), MemoryRegion::Bytes(kBase, 0)));
}

TEST(SameRegion, IsTheSameBytesWalkedTheSameWay) {
  EXPECT_TRUE(SameRegion(Matrix(4, 8, 8), Matrix(4, 8, 8)));
  EXPECT_FALSE(SameRegion(Matrix(4, 8, 8), Matrix(4, 8, 16)));
  EXPECT_FALSE(SameRegion(Matrix(4, 8, 8), Matrix(2, 8, 8)));
  EXPECT_FALSE(SameRegion(Matrix(4, 8, 8), Matrix(4, 8, 8, 1)));
}

// The first output sharing memory with another operand, outputs against
// every operand and each other once; an update in place passes.
TEST(FirstSharedPair, NamesTheFirstOutputThatMeetsAnother) {
  const MemoryRegion a = Matrix(4, 8, 8);
  MemoryRegion apart = a;
  apart.address += 1 << 20;
  OperandRegion operands[] = {
      {"A", a, false},
      {"C", apart, false},
      {"D", apart, true, "C"},
      {"amax", MemoryRegion::Bytes(kBase + (2 << 20), 4), true},
  };
  EXPECT_EQ(FirstSharedPair(operands, 4).output, -1) << "D in place of C";
  operands[2].in_place_of = nullptr;
  EXPECT_EQ(FirstSharedPair(operands, 4).output, 2);
  EXPECT_EQ(FirstSharedPair(operands, 4).other, 1);
  operands[2].region = a;
  operands[2].region.outer[0].stride = 16;  // D over A, walked otherwise
  operands[2].in_place_of = "A";
  EXPECT_EQ(FirstSharedPair(operands, 4).other, 0) << "not the same walk";
  operands[3].region = MemoryRegion::Bytes(apart.address + 4, 4);
  operands[2].region = Matrix(1, 1, 1, 1 << 19);
  EXPECT_EQ(FirstSharedPair(operands, 4).output, 3) << "amax in C";
  EXPECT_EQ(FirstSharedPair(operands, 4).other, 1);
}

}  // namespace
}  // namespace ptxgen::base
