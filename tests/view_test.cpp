// Strided views (core/view.hpp): present() lays a tensor out per MemoryLayout with NaN around
// and between its elements, gather() reads it back; the layout key of case files; backends
// handed dense tensors only skip a view case.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "cases/case.hpp"
#include "checks/runner.hpp"
#include "core/view.hpp"
#include "backends/registry.hpp"

using namespace normcheck;

namespace {

Tensor iota(DType t, Shape s) {
  Tensor x(t, s);
  for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, static_cast<double>(i + 1));
  return x;
}

std::int64_t nan_elements(const StridedView& v) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < v.storage_elements(); ++i) {
    Tensor one(v.dtype, {1});
    std::memcpy(one.data(), v.storage.data() + i * static_cast<std::int64_t>(format_info(v.dtype).bytes), format_info(v.dtype).bytes);
    n += std::isnan(one.get(0));
  }
  return n;
}

}  // namespace

TEST_CASE("view: every layout gathers back to the same values, in every dtype and rank", "[view]") {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16})
    for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{2, 3, 2, 5}, Shape{2, 0, 3}})
      for (MemoryLayout l : all_memory_layouts()) {
        INFO(dtype_name(t) << " " << shape_str(s) << " " << to_string(l));
        const Tensor x = iota(t, s);
        const StridedView v = present(x, l);
        const Tensor y = gather(v);
        REQUIRE(y.shape() == x.shape());
        // An empty tensor has no storage (data() may be null): memcmp must not see it.
        if (x.nbytes() > 0) CHECK(std::memcmp(y.data(), x.data(), x.nbytes()) == 0);
        // Every storage element outside the view is NaN; the view's elements are not.
        CHECK(nan_elements(v) == v.storage_elements() - x.size());
        CHECK(v.dense() == (l == MemoryLayout::contiguous));
        if (l != MemoryLayout::contiguous) CHECK(v.offset == 5);
      }
}

TEST_CASE("view: the strides of each layout", "[view]") {
  const Tensor x = iota(DType::f32, {2, 3, 4});
  using V = std::vector<std::int64_t>;
  CHECK(present(x, MemoryLayout::contiguous).strides == V{12, 4, 1});
  CHECK(present(x, MemoryLayout::offset).strides == V{12, 4, 1});
  CHECK(present(x, MemoryLayout::padded).strides == V{24, 7, 1});  // rows 4 + 3 apart, each [3, 4] block 3 * 7 + 3
  CHECK(present(x, MemoryLayout::transposed).strides == V{1, 2, 6});
  CHECK(present(x, MemoryLayout::channels_last).strides == V{12, 1, 3});
  CHECK(present(iota(DType::f32, {5}), MemoryLayout::transposed).strides == V{1});  // rank 1: the offset only
  CHECK(present(iota(DType::f32, {3, 4}), MemoryLayout::channels_last).strides == V{4, 1});
}

TEST_CASE("view: a wrong reading shows NaN or other rows", "[view]") {
  const Tensor x = iota(DType::f32, {3, 4});
  StridedView v = present(x, MemoryLayout::padded);
  StridedView no_offset = v;
  no_offset.offset = 0;
  CHECK(std::isnan(gather(no_offset).get(0)));
  StridedView dense_rows = v;
  dense_rows.strides = {4, 1};
  CHECK(std::isnan(gather(dense_rows).get(4)));  // row 1 read from row 0's padding
  StridedView past = v;
  past.offset = v.storage_elements();
  CHECK_THROWS_AS(gather(past), std::invalid_argument);
}

TEST_CASE("view: layout in a case file, and a bad one names file, line and field", "[view][parser]") {
  const auto cs = parse_case_text(
      "[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\nlayout = \"transposed\"\ninputs.x = { values = [[1, 2], [3, 5]] }\n",
      "v.toml");
  REQUIRE(cs.size() == 1);
  CHECK(cs[0].problem.layout == MemoryLayout::transposed);
  try {
    parse_case_text("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\nlayout = \"strided\"\ninputs.x = { values = [1, 2] }\n",
                    "v.toml");
    FAIL("accepted layout = strided");
  } catch (const CaseError& e) {
    CHECK(std::string(e.what()).find("v.toml:5: case.a.layout: unknown layout 'strided'") != std::string::npos);
  }
}

TEST_CASE("view: a backend handed dense tensors only skips a view case, while cpu and reference pass it", "[view][runner]") {
  const auto cs = parse_case_text(
      "[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\nlayout = \"padded\"\ninputs.x = { values = [[1, 2, 4], [3, 5, 9]] }\n",
      "v.toml");
  std::vector<std::unique_ptr<Backend>> be;
  for (const char* n : {"reference", "cpu", "onednn", "cuda"}) be.push_back(make_backend(n));
  const auto r = run_cases(cs, be, {});
  REQUIRE(r.size() == 4);
  CHECK(r[0].status == Status::passed);
  CHECK(r[1].status == Status::passed);
  for (int k : {2, 3}) {
    INFO(r[k].backend << ": " << r[k].reason);
    CHECK(r[k].status == Status::skipped);
  }
  // oneDNN, when built in, says why: dense tensors only (unavailable: its own reason).
  if (!make_backend("onednn")->unavailable()) CHECK(r[2].reason.find("dense tensors only (the padded layout") != std::string::npos);
}
