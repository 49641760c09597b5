// Backends that evaluate in a separate worker process (C-ABI plugins, external commands).
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "backends/child_process.hpp"
#include "backends/registry.hpp"
#include "spec/backend.hpp"

namespace normcheck::detail {

/// What a worker answered for one problem.
struct Evaluation {
  enum class Kind { outputs, skip, error } kind = Kind::error;
  Outputs outputs;      ///< kind == outputs
  std::string message;  ///< skip: the reason; error: what went wrong (crash, timeout, bad reply)
  bool timed_out = false;  ///< error: the worker did not answer before the deadline (it was killed)
};

/// A backend whose worker decides support and evaluates in one exchange. The runner asks
/// unsupported(p) and then run(p) for the same problem; the first call evaluates and keeps
/// the answer, the second returns it, so each problem is evaluated once. A worker failure
/// during unsupported() is kept too and thrown as BackendError by run(): the case becomes
/// ERROR and the run goes on.
class IsolatedBackend : public Backend {
 public:
  /// `opt`: what the worker may spend. timeout_s bounds one exchange (--timeout); budget_s,
  /// when > 0, all of the backend's exchanges together (--budget); max_timeouts, when > 0,
  /// the timeouts in a row after which it is not asked again (--max-timeouts). Once either
  /// limit is reached every later evaluation is an error naming it, without starting the
  /// worker: a hanging backend costs at most the budget, not --timeout per case.
  explicit IsolatedBackend(const BackendOptions& opt) : limits_(opt) {}

  std::optional<std::string> unsupported(const ValidProblem& p, const Recorded&) const override {
    auto* self = const_cast<IsolatedBackend*>(this);  // the worker is state, not observable value
    self->cached_for_ = &*p;
    self->cached_ = self->bounded(*p);
    if (cached_->kind == Evaluation::Kind::skip) return cached_->message;
    return std::nullopt;
  }
  Outputs run(const ValidProblem& p, const Recorded&) override {
    Evaluation e;
    if (cached_ && cached_for_ == &*p) e = std::move(*cached_);
    else e = bounded(*p);  // a property's transformed problem
    cached_.reset();
    cached_for_ = nullptr;
    if (e.kind == Evaluation::Kind::error) throw BackendError(e.message);
    if (e.kind == Evaluation::Kind::skip) throw BackendError("declined a transformed problem: " + e.message);
    return std::move(e.outputs);
  }

 protected:
  /// Evaluates p in the worker, its exchange ending by `deadline` (the sooner of --timeout
  /// and what is left of --budget). Never throws for a worker failure: it returns
  /// Kind::error, timed_out set when the deadline passed.
  virtual Evaluation evaluate(const Problem& p, Clock::time_point deadline) = 0;

 private:
  /// evaluate() within the limits: refused once they are spent; a timeout cut short by the
  /// budget says so.
  Evaluation bounded(const Problem& p) {
    if (gave_up_) {
      Evaluation e;
      e.message = *gave_up_;
      return e;
    }
    const auto t0 = Clock::now();
    const double left = limits_.budget_s > 0 ? limits_.budget_s - spent_s_ : limits_.timeout_s;
    const bool by_budget = limits_.budget_s > 0 && left < limits_.timeout_s;
    const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(std::max(0.0, std::min(left, limits_.timeout_s))));
    Evaluation e = evaluate(p, deadline);
    spent_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    timeouts_ = e.timed_out ? timeouts_ + 1 : 0;
    if (limits_.budget_s > 0 && spent_s_ >= limits_.budget_s) {
      gave_up_ = fmt::format("budget exhausted: this backend has spent {:.3g} s of its {:g} s (--budget); not asked again",
                             spent_s_, limits_.budget_s);
      if (e.timed_out && by_budget) e.message = *gave_up_ + " (it had not answered this case)";
    } else if (limits_.max_timeouts > 0 && timeouts_ >= limits_.max_timeouts) {
      gave_up_ = fmt::format("not asked: the backend timed out on {} cases in a row (--max-timeouts {})", timeouts_,
                             limits_.max_timeouts);
    }
    return e;
  }

  BackendOptions limits_;
  double spent_s_ = 0;
  int timeouts_ = 0;
  std::optional<std::string> gave_up_;
  const Problem* cached_for_ = nullptr;
  std::optional<Evaluation> cached_;
};

}  // namespace normcheck::detail
