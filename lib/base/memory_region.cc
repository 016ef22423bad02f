#include "ptxgen/base/memory_region.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ptxgen::base {
namespace {

using Wide = unsigned __int128;  // byte offsets of any product of int64s

// A region's dimensions that add bytes, outermost (largest stride) first,
// with its extent: the bytes from its first to past its last.
struct Walk {
  std::array<MemoryRegion::Dimension, 3> steps = {};
  size_t count = 0;
  Wide extent = 0;
  bool nested = true;  // each stride steps past everything inside it
  bool dense = true;   // no gaps either
};

Walk WalkOf(const MemoryRegion& r) {
  Walk w;
  for (const MemoryRegion::Dimension& d : r.outer) {
    if (d.count > 1 && d.stride != 0) w.steps[w.count++] = d;
  }
  // Largest stride first (three at most: an insertion sort).
  for (size_t i = 1; i < w.count; ++i) {
    for (size_t j = i; j > 0 && w.steps[j - 1].stride < w.steps[j].stride;
         --j) {
      std::swap(w.steps[j - 1], w.steps[j]);
    }
  }
  const Wide bytes = static_cast<Wide>(r.element_bytes);
  Wide inner = static_cast<Wide>(r.run) * bytes;
  for (size_t i = w.count; i-- > 0;) {
    const Wide stride = static_cast<Wide>(w.steps[i].stride) * bytes;
    if (w.steps[i].stride < 0 || stride < inner) w.nested = false;
    if (stride != inner) w.dense = false;
    inner += static_cast<Wide>(w.steps[i].count - 1) * stride;
  }
  w.extent = inner;
  return w;
}

// Whether byte `offset` from the region's first lies in one of its runs;
// true when the region's dimensions interleave (no telling).
bool Holds(const MemoryRegion& r, const Walk& w, Wide offset) {
  if (offset >= w.extent) return false;
  if (!w.nested) return true;
  const Wide bytes = static_cast<Wide>(r.element_bytes);
  for (size_t i = 0; i < w.count; ++i) {
    const Wide stride = static_cast<Wide>(w.steps[i].stride) * bytes;
    const Wide step = std::min<Wide>(offset / stride, w.steps[i].count - 1);
    offset -= step * stride;
  }
  return offset < static_cast<Wide>(r.run) * bytes;
}

}  // namespace

bool MayShareMemory(const MemoryRegion& a, const MemoryRegion& b) {
  if (a.run <= 0 || b.run <= 0) return false;
  const Walk wa = WalkOf(a), wb = WalkOf(b);
  const Wide a0 = a.address, b0 = b.address;
  if (a0 + wa.extent <= b0 || b0 + wb.extent <= a0) return false;
  if (wa.dense && wb.dense) return true;
  // b's first and last bytes in a, and a's in b.
  const auto in = [](const MemoryRegion& r, const Walk& w, Wide base,
                     Wide byte) {
    return byte >= base && Holds(r, w, byte - base);
  };
  return in(a, wa, a0, b0) || in(a, wa, a0, b0 + wb.extent - 1) ||
         in(b, wb, b0, a0) || in(b, wb, b0, a0 + wa.extent - 1);
}

bool SameRegion(const MemoryRegion& a, const MemoryRegion& b) {
  if (a.address != b.address || a.element_bytes != b.element_bytes ||
      a.run != b.run) {
    return false;
  }
  const Walk wa = WalkOf(a), wb = WalkOf(b);
  if (wa.count != wb.count) return false;
  for (size_t i = 0; i < wa.count; ++i) {
    if (wa.steps[i].count != wb.steps[i].count ||
        wa.steps[i].stride != wb.steps[i].stride) {
      return false;
    }
  }
  return true;
}

SharedPair FirstSharedPair(const OperandRegion* operands, int count) {
  for (int w = 0; w < count; ++w) {
    const OperandRegion& out = operands[w];
    if (!out.written) continue;
    for (int x = 0; x < count; ++x) {
      const OperandRegion& other = operands[x];
      if (x == w || (other.written && x < w)) continue;
      const bool in_place = out.in_place_of != nullptr &&
                            std::strcmp(out.in_place_of, other.name) == 0 &&
                            SameRegion(out.region, other.region);
      if (!in_place && MayShareMemory(out.region, other.region)) {
        return {w, x};
      }
    }
  }
  return {};
}

std::string SharedPairText(const OperandRegion& output,
                           const OperandRegion& other) {
  return absl::StrCat(output.name, " (at 0x", absl::Hex(output.region.address),
                      ") shares memory with ", other.name, " (at 0x",
                      absl::Hex(other.region.address),
                      "): the kernel would race on it; give each output "
                      "memory of its own");
}

}  // namespace ptxgen::base
