// Backends that evaluate in a separate worker process (C-ABI plugins, external commands).
#pragma once

#include <optional>
#include <string>

#include "spec/backend.hpp"

namespace normcheck::detail {

/// What a worker answered for one problem.
struct Evaluation {
  enum class Kind { outputs, skip, error } kind = Kind::error;
  Outputs outputs;      ///< kind == outputs
  std::string message;  ///< skip: the reason; error: what went wrong (crash, timeout, bad reply)
};

/// A backend whose worker decides support and evaluates in one exchange. The runner asks
/// unsupported(p) and then run(p) for the same problem; the first call evaluates and keeps
/// the answer, the second returns it, so each problem is evaluated once. A worker failure
/// during unsupported() is kept too and thrown as BackendError by run(): the case becomes
/// ERROR and the run goes on.
class IsolatedBackend : public Backend {
 public:
  std::optional<std::string> unsupported(const ValidProblem& p, const Recorded&) const override {
    auto* self = const_cast<IsolatedBackend*>(this);  // the worker is state, not observable value
    self->cached_for_ = &*p;
    self->cached_ = self->evaluate(*p);
    if (cached_->kind == Evaluation::Kind::skip) return cached_->message;
    return std::nullopt;
  }
  Outputs run(const ValidProblem& p, const Recorded&) override {
    Evaluation e;
    if (cached_ && cached_for_ == &*p) e = std::move(*cached_);
    else e = evaluate(*p);  // a property's transformed problem
    cached_.reset();
    cached_for_ = nullptr;
    if (e.kind == Evaluation::Kind::error) throw BackendError(e.message);
    if (e.kind == Evaluation::Kind::skip) throw BackendError("declined a transformed problem: " + e.message);
    return std::move(e.outputs);
  }

 protected:
  /// Evaluates p in the worker. Never throws for a worker failure: it returns Kind::error.
  virtual Evaluation evaluate(const Problem& p) = 0;

 private:
  const Problem* cached_for_ = nullptr;
  std::optional<Evaluation> cached_;
};

}  // namespace normcheck::detail
