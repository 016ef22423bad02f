// Loading the cuBLASLt reference: a library that is missing, lacks an entry
// point or cannot create a handle is refused by name, and nothing is left
// allocated on any path (tools/sanitize.sh runs this under LeakSanitizer).
// Stand-in libraries take cuBLASLt's place, so no GPU is needed.
#include "lib/testing/cublaslt_library.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

// cuBLASLt 13 leaks 192 bytes inside every cublasLtCreate that fails (as it
// does here without a GPU; checked with a plain program under ASan: n
// failed calls, n blocks). Under LeakSanitizer (tools/sanitize.sh) that is
// excused, and only that: allocations with cublasLtCreate on their stack.
// The hook must be defined in the executable, so each test that calls the
// real library has its own.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:^cublasLtCreate$\n";
}

namespace ptxgen::gemm {
namespace {

// Under `bazel test` the working directory is the runfiles root.
constexpr char kWorking[] = "tests/gemm/libcublaslt_stub_working.so";
constexpr char kFailing[] = "tests/gemm/libcublaslt_stub_failing.so";

TEST(LoadCublasLt, ResolvesEveryEntryPointAndCreatesAHandle) {
  const absl::StatusOr<CublasLtLibrary> lt = LoadCublasLt(kWorking);
  ASSERT_TRUE(lt.ok()) << lt.status();
  for (const void* entry : {
           reinterpret_cast<const void*>(lt->create),
           reinterpret_cast<const void*>(lt->destroy),
           reinterpret_cast<const void*>(lt->matmul_desc_create),
           reinterpret_cast<const void*>(lt->matmul_desc_destroy),
           reinterpret_cast<const void*>(lt->matmul_desc_set_attribute),
           reinterpret_cast<const void*>(lt->matrix_layout_create),
           reinterpret_cast<const void*>(lt->matrix_layout_destroy),
           reinterpret_cast<const void*>(lt->matrix_layout_set_attribute),
           reinterpret_cast<const void*>(lt->preference_create),
           reinterpret_cast<const void*>(lt->preference_destroy),
           reinterpret_cast<const void*>(lt->preference_set_attribute),
           reinterpret_cast<const void*>(lt->algo_get_heuristic),
           reinterpret_cast<const void*>(lt->matmul),
       }) {
    EXPECT_NE(entry, nullptr);
  }
  EXPECT_NE(lt->handle, nullptr);
}

TEST(LoadCublasLt, AMissingLibraryIsRefusedByName) {
  const absl::StatusOr<CublasLtLibrary> lt =
      LoadCublasLt("tests/gemm/libcublaslt_absent.so");
  ASSERT_FALSE(lt.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(lt.status()));
  EXPECT_TRUE(absl::StrContains(lt.status().message(),
                                "cuBLASLt reference unavailable: cannot load "
                                "tests/gemm/libcublaslt_absent.so ("))
      << lt.status();
}

TEST(LoadCublasLt, ALibraryThatCannotCreateAHandleIsRefusedByName) {
  const absl::StatusOr<CublasLtLibrary> lt = LoadCublasLt(kFailing);
  ASSERT_FALSE(lt.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(lt.status()));
  EXPECT_EQ(std::string(lt.status().message()),
            "cuBLASLt reference unavailable: "
            "tests/gemm/libcublaslt_stub_failing.so cannot create a handle "
            "(cublasLtCreate returned 3)");
}

TEST(LoadCublasLt,
     ALibraryWithoutTheEntryPointsIsRefusedNamingTheFirstMissing) {
  const absl::StatusOr<CublasLtLibrary> lt = LoadCublasLt("libc.so.6");
  ASSERT_FALSE(lt.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(lt.status()));
  EXPECT_EQ(std::string(lt.status().message()),
            "cuBLASLt reference unavailable: libc.so.6 lacks cublasLtCreate");
}

// The cuBLAS stand-in is a real library with none of cuBLASLt's symbols.
TEST(LoadCublasLt, CublasIsNotCublasLt) {
  const absl::StatusOr<CublasLtLibrary> lt =
      LoadCublasLt("tests/gemm/libcublas_stub_working.so");
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(std::string(lt.status().message()),
            "cuBLASLt reference unavailable: "
            "tests/gemm/libcublas_stub_working.so lacks cublasLtCreate");
}

// Real cuBLASLt loads; without a GPU its handle may still be refused, and
// then the status says so.
TEST(LoadCublasLt, RealCublasLtGivesAHandleOrSaysWhyNot) {
  const absl::StatusOr<CublasLtLibrary> lt = LoadCublasLt(kCublasLtLibrary);
  if (!lt.ok() && absl::StrContains(lt.status().message(), "cannot load")) {
    GTEST_SKIP() << lt.status();
  }
  if (lt.ok()) {
    EXPECT_NE(lt->handle, nullptr);
    EXPECT_NE(lt->matmul, nullptr);
  } else {
    EXPECT_TRUE(absl::IsFailedPrecondition(lt.status()));
    EXPECT_TRUE(absl::StrContains(lt.status().message(),
                                  "libcublasLt.so.13 cannot create a handle"))
        << lt.status();
  }
}

}  // namespace
}  // namespace ptxgen::gemm
