// ABI 2 plugin frames without a process (backends/plugin_frames.hpp): a request carries the
// op, direction, layout, every convention key and each input as a view into its storage; the
// worker hands the plugin exactly that view, refuses requests whose views lie outside their
// storage, and reports a plugin that writes into an input or outside an output.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "backends/plugin_frames.hpp"
#include "test_util.hpp"

using namespace normcheck;
using namespace normcheck::detail;

namespace {

double read(const nc_tensor& t, std::int64_t flat) {
  std::int64_t off = 0;
  for (int d = t.ndim; d-- > 0;) off += (flat % t.shape[d]) * t.strides[d], flat /= t.shape[d];
  return static_cast<const float*>(t.data)[off];
}

int supports_all(const nc_problem*, char*, size_t) { return 1; }

std::string seen;  // what the last plugin call saw, for the checks

/// y = 2 x through x's strides; mean (optional) written as row index; records what it saw.
int twice(const nc_problem* p, char*, size_t) {
  const nc_tensor* x = nc_input(p, "x");
  nc_tensor* y = nc_output(p, "y");
  std::int64_t n = 1;
  for (int d = 0; d < x->ndim; ++d) n *= x->shape[d];
  for (std::int64_t i = 0; i < n; ++i) static_cast<float*>(y->data)[i] = static_cast<float>(2 * read(*x, i));
  seen = fmt::format("{} {} {} strides [{}, {}] eps {} {} ns {}", p->op, p->direction, p->layout, x->strides[0], x->strides[1],
                     nc_param_find(p, "eps")->text, nc_param_find(p, "eps")->number, nc_param_find(p, "normalized_shape")->items[0]);
  for (int k = 0; k < p->num_outputs; ++k)
    if (std::string(p->outputs[k].name) == "mean") {
      for (std::int64_t r = 0; r < p->outputs[k].shape[0]; ++r) static_cast<float*>(p->outputs[k].data)[r] = static_cast<float>(r);
      p->output_written[k] = 1;
    }
  return 0;
}

int writes_input(const nc_problem* p, char* e, size_t n) {
  twice(p, e, n);
  static_cast<float*>(const_cast<void*>(nc_input(p, "x")->data))[1] = 7;
  return 0;
}

int writes_before_y(const nc_problem* p, char* e, size_t n) {
  twice(p, e, n);
  static_cast<float*>(nc_output(p, "y")->data)[-1] = 7;
  return 0;
}

Problem ln(MemoryLayout l) {
  Problem p = test::row_problem(Op::layer_norm, DType::f32, {2, 3}, {1, 2, 3, 4, 5, 7}, 1e-5);
  p.layout = l;
  return p;
}

}  // namespace

TEST_CASE("plugin ABI 2: a padded view reaches the plugin as it was laid out, with every key", "[plugin][abi2]") {
  const Problem p = ln(MemoryLayout::padded);
  const Request q = encode_request(p, 2);
  REQUIRE_FALSE(q.skip);
  const Frame f = serve_request(q.payload, supports_all, twice);
  REQUIRE(f.tag == kOkay);
  CHECK(seen == "layer_norm forward padded strides [6, 1] eps 1.0000000000000001e-05 1e-05 ns 3");
  const PluginReply r = interpret_plugin_reply(f, p, "t", 2);
  REQUIRE(r.evaluation.kind == Evaluation::Kind::outputs);
  const Tensor& y = r.evaluation.outputs.at("y");
  for (std::int64_t i = 0; i < 6; ++i) CHECK(y.get(i) == 2 * p.x().get(i));
  // The optional mean was written, so it is returned; rstd was not, so it is left out.
  CHECK(r.evaluation.outputs.count("mean") == 1);
  CHECK(r.evaluation.outputs.count("rstd") == 0);
  CHECK(r.evaluation.outputs.at("mean").get(1) == 1);
}

TEST_CASE("plugin ABI 2: a plugin writing into an input or before an output is an error naming it", "[plugin][abi2]") {
  const Problem p = ln(MemoryLayout::transposed);
  const std::string payload = encode_request(p, 2).payload;
  Frame f = serve_request(payload, supports_all, writes_input);
  CHECK(f.tag == kErrr);
  CHECK_THAT(f.payload, Catch::Contains("plugin wrote into input x"));
  f = serve_request(payload, supports_all, writes_before_y);
  CHECK(f.tag == kErrr);
  CHECK_THAT(f.payload, Catch::Contains("plugin wrote before the start of output y"));
}

TEST_CASE("plugin ABI 2: views outside their storage, negative strides, truncations are malformed requests", "[plugin][abi2][hostile]") {
  const Problem p = ln(MemoryLayout::offset);
  const std::string good = encode_request(p, 2).payload;
  REQUIRE(serve_request(good, supports_all, twice).tag == kOkay);
  // The offset of the first input (beta? inputs are sorted by name: gamma, x) is the i64
  // after its strides; find x's by its name and patch the offset and a stride.
  const std::string xname = std::string("\x01\0\0\0\0\0\0\0x", 9);
  const std::size_t at = good.find(xname);
  REQUIRE(at != std::string::npos);
  const std::size_t shape_at = at + 9 + 4 + 4, stride_at = shape_at + 2 * 8, offset_at = stride_at + 2 * 8;
  auto patched = [&](std::size_t where, std::int64_t v) {
    std::string s = good;
    std::memcpy(s.data() + where, &v, sizeof v);
    return s;
  };
  for (const auto& [what, bad] : {std::pair<std::string, std::string>{"view past its storage", patched(offset_at, 1000)},
                                  {"negative offset", patched(offset_at, -1)},
                                  {"negative stride", patched(stride_at, -3)},
                                  {"view past its storage", patched(stride_at, std::int64_t{1} << 40)},
                                  {"more elements than its storage holds", patched(shape_at, 1000)},
                                  // a stride 0 under a long extent: in bounds, but 2^40 reads of one
                                  // element (a plugin would loop for hours; fuzz_plugin_frame's timeout)
                                  {"more elements than its storage holds", [&] {
                                     std::string s = patched(shape_at, std::int64_t{1} << 40);
                                     const std::int64_t zero = 0;
                                     std::memcpy(s.data() + stride_at, &zero, sizeof zero);
                                     return s;
                                   }()},
                                  {"truncated request", good.substr(0, good.size() - 3)}}) {
    INFO(what);
    const Frame f = serve_request(bad, supports_all, twice);
    CHECK(f.tag == kErrr);
    CHECK_THAT(f.payload, Catch::StartsWith("host: malformed request") && Catch::Contains(what));
  }
}

TEST_CASE("plugin ABI 2: replies that break the protocol kill the worker", "[plugin][abi2][hostile]") {
  const Problem p = ln(MemoryLayout::contiguous);
  const Frame ok = serve_request(encode_request(p, 2).payload, supports_all, twice);
  REQUIRE(ok.tag == kOkay);
  for (const std::string& bad : {ok.payload.substr(0, ok.payload.size() - 1), ok.payload + "x", std::string("\x09\0\0\0", 4)}) {
    const PluginReply r = interpret_plugin_reply({kOkay, bad}, p, "t", 2);
    CHECK(r.kill_worker);
    CHECK(r.evaluation.kind == Evaluation::Kind::error);
  }
  CHECK(reply_bound(p, 2) >= ok.payload.size());
}

TEST_CASE("plugin ABI 1: what it cannot carry is skipped with the reason", "[plugin]") {
  CHECK_THAT(*encode_request(ln(MemoryLayout::padded), 1).skip, Catch::Contains("ABI 1 takes dense tensors only"));
  Problem b = ln(MemoryLayout::contiguous);
  b.conv.direction = Direction::backward;
  b.inputs["dy"] = b.x();
  CHECK_THAT(*encode_request(b, 1).skip, Catch::Contains("ABI 1 is forward only"));
  CHECK_FALSE(encode_request(ln(MemoryLayout::contiguous), 1).skip);
}
