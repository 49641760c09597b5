// Launch choice of the CUDA row kernels (src/kernels/cuda/launch.hpp): plain C++, no GPU.
#include <catch2/catch.hpp>

#include "kernels/cuda/launch.hpp"

using namespace normcheck;
using namespace normcheck::kernels::cuda;

namespace {

constexpr std::uintptr_t kBase = 0x7f0000000000;  // cudaMalloc-like: 256-byte aligned

LaunchQuery query(std::int64_t rows, std::int64_t d, DType x, DType y = DType::f32, DType acc = DType::f32) {
  LaunchQuery q;
  q.rows = rows;
  q.d = d;
  q.x = x;
  q.y = y;
  q.acc = acc;
  q.x_addr = kBase;
  q.y_addr = kBase + (1u << 30);
  q.gamma_addr = kBase + (2u << 30);
  q.beta_addr = kBase + (3u << 30);
  q.max_smem_per_block = 232448;  // H100/H200 opt-in limit
  return q;
}

/// Invariants every launch must satisfy to cover the problem.
void check_covers(const LaunchQuery& q, const LaunchConfig& c) {
  REQUIRE(c.threads % 32 == 0);
  REQUIRE(c.threads >= 32);
  REQUIRE(c.threads <= 1024);
  REQUIRE(c.vec >= 1);
  REQUIRE((c.vec & (c.vec - 1)) == 0);
  REQUIRE(c.vec * std::max(format_info(q.x).bytes, format_info(q.y).bytes) <= 16);
  if (c.strategy == RowStrategy::warp_per_row) {
    REQUIRE(q.d <= kWarpMaxD);
    REQUIRE(c.threads == 32 * c.rows_per_block);
  } else {
    REQUIRE(q.d > kWarpMaxD);
    REQUIRE(c.rows_per_block == 1);
  }
  // The tail (d mod vec values) is taken by threads 0 .. vec-2 of the group.
  REQUIRE(q.d % c.vec < (c.strategy == RowStrategy::warp_per_row ? 32 : c.threads));
  if (q.rows <= 0 || q.d <= 0) {
    REQUIRE(c.grid == 0);
  } else {
    REQUIRE(c.grid >= 1);
    REQUIRE(c.grid <= kMaxGrid);
    // Every row is reached: directly, or by the grid-stride loop when the grid is capped.
    REQUIRE((c.grid * c.rows_per_block >= q.rows || c.grid == kMaxGrid));
    REQUIRE((c.grid - 1) * c.rows_per_block < q.rows);  // no block without a row
  }
  if (c.cached) REQUIRE(c.smem_bytes + c.static_smem_bytes <= std::max(q.max_smem_per_block, kDefaultSmemPerBlock));
  else REQUIRE(c.smem_bytes == 0);
}

}  // namespace

TEST_CASE("cuda launch: one warp per row up to d = 1024, one block per row above", "[cuda][launch]") {
  for (std::int64_t d : {1, 3, 17, 768, 1024}) {
    const auto q = query(100, d, DType::f32);
    const auto c = choose_launch(q);
    CHECK(c.strategy == RowStrategy::warp_per_row);
    CHECK(c.threads == 32 * kWarpRowsPerBlock);
    CHECK(c.cached);
    CHECK(c.smem_bytes == static_cast<std::size_t>(kWarpRowsPerBlock * d * 4));
    check_covers(q, c);
  }
  for (std::int64_t d : {1025, 4096, 4097, 65536}) {
    const auto q = query(100, d, DType::bf16, DType::bf16);
    const auto c = choose_launch(q);
    CHECK(c.strategy == RowStrategy::block_per_row);
    check_covers(q, c);
  }
}

TEST_CASE("cuda launch: block threads grow with d, each thread holding about 8 chunks", "[cuda][launch]") {
  CHECK(choose_launch(query(8, 4096, DType::bf16, DType::bf16)).threads == 128);   // 512 chunks of 8
  CHECK(choose_launch(query(8, 4096, DType::f32, DType::f32)).threads == 128);     // 1024 chunks of 4
  CHECK(choose_launch(query(8, 16384, DType::f32, DType::f32)).threads == 512);    // 4096 chunks of 4
  CHECK(choose_launch(query(8, 65536, DType::bf16, DType::bf16)).threads == 1024); // 8192 chunks of 8
  const auto c = choose_launch(query(8, 4097, DType::bf16, DType::bf16));          // scalar: 4097 chunks
  CHECK(c.vec == 1);
  CHECK(c.threads == 1024);
  CHECK(choose_launch(query(8, 1 << 24, DType::f32)).threads == 1024);             // capped
}

TEST_CASE("cuda launch: 16-byte vectors, 8 values for f16/bf16 and 4 for f32", "[cuda][launch]") {
  CHECK(vector_width(query(16, 768, DType::f32, DType::f32)) == 4);
  CHECK(vector_width(query(16, 768, DType::bf16, DType::bf16)) == 8);
  CHECK(vector_width(query(16, 768, DType::f16, DType::f16)) == 8);
  CHECK(vector_width(query(16, 768, DType::f16, DType::bf16)) == 8);
  CHECK(vector_width(query(16, 4096, DType::f16, DType::f16)) == 8);
  CHECK(vector_width(query(16, 65536, DType::bf16, DType::bf16)) == 8);
  // The wider of x and y sets the width: bf16 in, f32 out reads 8 bytes and writes 16.
  CHECK(vector_width(query(16, 768, DType::bf16, DType::f32)) == 4);
  CHECK(vector_width(query(16, 768, DType::f32, DType::f16)) == 4);
  CHECK(max_vector_width(DType::bf16, DType::bf16, DType::f32) == 8);
  CHECK(max_vector_width(DType::f32, DType::f32, DType::f32) == 4);
}

TEST_CASE("cuda launch: d that misaligns later rows gives narrower vectors or scalar", "[cuda][launch]") {
  // Row r starts at element r*d: with d = 4097 every other row is misaligned.
  CHECK(vector_width(query(16, 4097, DType::bf16, DType::bf16)) == 1);
  CHECK(vector_width(query(16, 4097, DType::f32, DType::f32)) == 1);
  CHECK(vector_width(query(16, 17, DType::f32, DType::f32)) == 1);
  CHECK(vector_width(query(16, 3, DType::f16, DType::f16)) == 1);
  CHECK(vector_width(query(16, 1, DType::f32, DType::f32)) == 1);
  CHECK(vector_width(query(16, 4098, DType::bf16, DType::bf16)) == 2);   // d = 2 mod 4
  CHECK(vector_width(query(16, 4100, DType::bf16, DType::bf16)) == 4);   // d = 4 mod 8
  CHECK(vector_width(query(16, 770, DType::f32, DType::f32)) == 2);
  // A single row: vectors over the body, scalar tail.
  CHECK(vector_width(query(1, 4097, DType::bf16, DType::bf16)) == 8);
  CHECK(vector_width(query(1, 17, DType::f32, DType::f32)) == 4);
  CHECK(vector_width(query(1, 3, DType::f32, DType::f32)) == 2);
  CHECK(vector_width(query(1, 1, DType::bf16, DType::bf16)) == 1);   // never wider than d
  CHECK(vector_width(query(1, 5, DType::bf16, DType::bf16)) == 4);
}

TEST_CASE("cuda launch: misaligned pointers choose narrower vectors or scalar", "[cuda][launch]") {
  auto q = query(16, 4096, DType::bf16, DType::bf16);
  q.x_addr = kBase + 2;  // one bf16 off
  CHECK(vector_width(q) == 1);
  q.x_addr = kBase + 4;
  CHECK(vector_width(q) == 2);
  q.x_addr = kBase + 8;
  CHECK(vector_width(q) == 4);
  q.x_addr = kBase + 16;
  CHECK(vector_width(q) == 8);
  q.y_addr += 6;  // y misaligned too: both must hold
  CHECK(vector_width(q) == 1);

  auto f = query(16, 4096, DType::f32, DType::f32);
  f.y_addr = kBase + 8;
  CHECK(vector_width(f) == 2);
  f.y_addr = kBase + 4;
  CHECK(vector_width(f) == 1);

  // gamma/beta are f32: 8 values of a bf16 chunk need 16-byte alignment, 2 need 8.
  auto g = query(16, 4096, DType::bf16, DType::bf16);
  g.gamma_addr = kBase + 8;
  CHECK(vector_width(g) == 2);
  g.gamma_addr = kBase + 4;
  CHECK(vector_width(g) == 1);
  g.gamma_addr = 0;  // no gamma: no constraint
  g.beta_addr = 0;
  CHECK(vector_width(g) == 8);
  check_covers(g, choose_launch(g));
}

TEST_CASE("cuda launch: f64 data or accumulation takes the scalar generic kernel", "[cuda][launch]") {
  CHECK(uses_generic_kernel(DType::f64, DType::f64, DType::f64));
  CHECK(uses_generic_kernel(DType::f32, DType::f32, DType::f64));
  CHECK(uses_generic_kernel(DType::f16, DType::f64, DType::f32));
  CHECK_FALSE(uses_generic_kernel(DType::bf16, DType::f32, DType::f32));
  for (std::int64_t d : {1, 3, 17, 768, 4096, 4097, 65536}) {
    const auto q = query(5, d, DType::f64, DType::f64, DType::f64);
    const auto c = choose_launch(q);
    CHECK(c.generic);
    CHECK(c.vec == 1);
    check_covers(q, c);
  }
}

TEST_CASE("cuda launch: rows cached in shared memory when they fit", "[cuda][launch]") {
  auto q = query(4, 16384, DType::f32, DType::f32);
  CHECK(choose_launch(q).cached);  // 64 KiB of 227 KiB
  CHECK(choose_launch(q).smem_bytes == 16384 * 4);
  q.max_smem_per_block = kDefaultSmemPerBlock;
  CHECK_FALSE(choose_launch(q).cached);  // without the opt-in
  auto big = query(4, 65536, DType::bf16, DType::bf16);
  CHECK_FALSE(choose_launch(big).cached);  // 256 KiB of f32 values
  check_covers(big, choose_launch(big));
  auto f64 = query(4, 16384, DType::f64, DType::f64, DType::f64);
  CHECK(choose_launch(f64).cached);
  CHECK(choose_launch(f64).smem_bytes == 16384 * 8);
  CHECK(choose_launch(query(4, 1024, DType::f64, DType::f64, DType::f64)).smem_bytes == 4 * 1024 * 8);
}

TEST_CASE("cuda launch: any row count", "[cuda][launch]") {
  for (std::int64_t rows : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5},
                            std::int64_t{16384}, std::int64_t{1000003}, std::int64_t{1} << 40})
    for (std::int64_t d : {1, 3, 17, 768, 4096, 4097, 65536}) {
      const auto q = query(rows, d, DType::bf16, DType::bf16);
      check_covers(q, choose_launch(q));
    }
  CHECK(choose_launch(query(5, 768, DType::f32)).grid == 2);  // 4 rows per block
  CHECK(choose_launch(query(5, 4096, DType::f32)).grid == 5);
  CHECK(choose_launch(query(std::int64_t{1} << 40, 4096, DType::f32)).grid == kMaxGrid);
  CHECK(choose_launch(query(7, 0, DType::f32)).grid == 0);
}

TEST_CASE("cuda launch: kernel parameters are the CPU kernels' (1 + w formed once in f32)", "[cuda][launch]") {
  Problem p;
  p.op = Op::rms_norm;
  p.conv.affine = Affine::one_plus_w;
  p.conv.normalized_shape = {3};
  p.inputs["x"] = Tensor::from_doubles(DType::bf16, {2, 3}, {1, 2, 3, 4, 5, 6});
  p.inputs["gamma"] = Tensor::from_doubles(DType::f64, {3}, {0.1, 1e-9, -1});
  validate(p);
  CHECK(accumulation_dtype(p) == DType::f32);
  const KernelParams k = kernel_params(p, DType::f32);
  REQUIRE(k.gamma.size() == 3 * 4);
  CHECK(k.beta.empty());
  const float* g = reinterpret_cast<const float*>(k.gamma.data());
  CHECK(g[0] == 1.0f + static_cast<float>(0.1));
  CHECK(g[1] == 1.0f);  // 1 + 1e-9 rounds to 1 in f32
  CHECK(g[2] == 0.0f);
  const RowNormArgs a = row_norm_args(p, nullptr, nullptr, k.gamma.data(), nullptr);
  CHECK(a.rows == 2);
  CHECK(a.d == 3);
  CHECK(a.dof == 3);
  CHECK(a.x_dtype == DType::bf16);
  CHECK(a.y_dtype == DType::f32);
  p.conv.variance = Variance::unbiased;
  p.conv.acc_dtype = DType::f64;
  CHECK(row_norm_args(p, nullptr, nullptr, nullptr, nullptr).dof == 2);
  CHECK(accumulation_dtype(p) == DType::f64);
}
