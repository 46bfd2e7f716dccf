// bt::metrics: a small Prometheus instrumentation library (counter, gauge, histogram, each with
// labels) and a registry that renders the text exposition format 0.0.4.
//
//   bt::metrics::registry reg;
//   auto& requests = reg.counter("app_requests_total", "Requests served.", {"route", "status"});
//   bt::metrics::counter& ok = requests.with({"/ping", "200"});   // resolve once, keep the ref
//   ok.inc();                                                     // hot path: one relaxed add
//   auto& latency = reg.histogram("app_latency_seconds", "Latency.", {"route"},
//                                 bt::metrics::default_buckets());
//   latency.with({"/ping"}).observe(0.0012);
//   std::string text = reg.render();                              // GET /metrics
//
// Contracts:
// - Hot path: inc/set/observe on a resolved child never allocate and never lock (relaxed atomics
//   on the child). Resolving a child (family::with) takes the family's mutex and allocates the
//   first time a label set is seen (a set seen before is found without allocating): keep the
//   reference where the labels are fixed.
//   Children live as long as the registry (their addresses never change).
// - Names follow Prometheus: metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names
//   [a-zA-Z_][a-zA-Z0-9_]* not starting with "__" ("le" is reserved for histograms). Registering
//   a bad name, or a name already registered with another type, help or label set, throws
//   std::invalid_argument; registering the same metric again returns the existing family.
// - Rendering: families in registration order, children sorted by label values; HELP text
//   escapes \ and newline, label values escape \, " and newline; histogram buckets cumulative,
//   ending with le="+Inf", whose count equals _count. Collect hooks (on_collect) run at the start
//   of each render, to copy values kept elsewhere (open connections, queue depth) into gauges.
// - Thread safety: every member may be called from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace bt::metrics {

/// A monotonically increasing count.
class counter {
 public:
  void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  /// Sets the total, for a counter mirrored from a monotonically increasing count kept
  /// elsewhere (in a collect hook). Never decrease it.
  void store(std::uint64_t total) noexcept { value_.store(total, std::memory_order_relaxed); }
  std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

/// A value that goes up and down.
class gauge {
 public:
  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void inc(double d = 1) noexcept { add(d); }
  void dec(double d = 1) noexcept { add(-d); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  void add(double d) noexcept;
  std::atomic<double> value_{0};
};

/// Observations counted in fixed buckets (upper bounds, strictly increasing, finite), with their
/// sum. observe() is a short linear search over the bounds and two relaxed atomic adds.
class histogram {
 public:
  explicit histogram(const std::vector<double>& bounds);
  void observe(double v) noexcept;
  /// Per-bucket (not cumulative) counts; the last one counts observations above every bound.
  std::vector<std::uint64_t> bucket_counts() const;
  double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t count() const noexcept;
  const std::vector<double>& bounds() const noexcept { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

/// Prometheus' client default buckets, in seconds: 5 ms to 10 s.
const std::vector<double>& default_buckets();
/// Finer buckets for sub-millisecond work (signature checks, store calls): 10 us to 1 s.
const std::vector<double>& fast_buckets();

enum class metric_type { counter, gauge, histogram };

class registry;

namespace detail {

/// What a family shares with its registry, whatever its type.
class family_base {
 public:
  family_base(std::string name, std::string help, std::vector<std::string> labels,
              metric_type type);
  virtual ~family_base() = default;
  family_base(const family_base&) = delete;
  family_base& operator=(const family_base&) = delete;

  const std::string& name() const noexcept { return name_; }
  const std::string& help() const noexcept { return help_; }
  const std::vector<std::string>& label_names() const noexcept { return labels_; }
  metric_type type() const noexcept { return type_; }
  /// Appends this family's HELP, TYPE and sample lines.
  virtual void render(std::string& out) const = 0;

 protected:
  void check_arity(std::size_t n) const;

  std::string name_, help_;
  std::vector<std::string> labels_;
  metric_type type_;
};

}  // namespace detail

/// The metrics of one name: one child per distinct set of label values.
template <class T>
class family final : public detail::family_base {
 public:
  /// The child for these label values (as many as the family has label names; throws
  /// std::invalid_argument otherwise), created at first use. Keep the reference.
  T& with(std::initializer_list<std::string_view> values) {
    check_arity(values.size());
    {
      std::lock_guard lk(m_);
      if (auto it = children_.find(values); it != children_.end()) return *it->second;
    }
    return with(std::vector<std::string>(values.begin(), values.end()));
  }
  T& with(std::vector<std::string> values);
  /// The child of a family without labels.
  T& get() { return with(std::vector<std::string>{}); }

  void render(std::string& out) const override;

  // Made by registry only.
  family(std::string name, std::string help, std::vector<std::string> labels, metric_type type,
         std::vector<double> bounds = {})
      : family_base(std::move(name), std::move(help), std::move(labels), type),
        bounds_(std::move(bounds)) {}

 private:
  /// Orders label-value lists as std::vector<std::string>'s operator< does, and compares them
  /// with a list of string_views too, so that finding a known child allocates nothing.
  struct label_values_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::lexicographical_compare(
          std::begin(a), std::end(a), std::begin(b), std::end(b),
          [](std::string_view x, std::string_view y) { return x < y; });
    }
  };

  std::vector<double> bounds_;  // histograms only
  mutable std::mutex m_;
  std::map<std::vector<std::string>, std::unique_ptr<T>, label_values_less> children_;
};

/// A set of families, rendered together.
class registry {
 public:
  registry() = default;
  registry(const registry&) = delete;
  registry& operator=(const registry&) = delete;

  family<metrics::counter>& counter(std::string name, std::string help,
                                    std::vector<std::string> labels = {});
  family<metrics::gauge>& gauge(std::string name, std::string help,
                                std::vector<std::string> labels = {});
  /// `bounds`: strictly increasing finite upper bounds (the +Inf bucket is implicit).
  family<metrics::histogram>& histogram(std::string name, std::string help,
                                        std::vector<std::string> labels,
                                        std::vector<double> bounds = default_buckets());

  /// Runs `hook` at the start of every render (e.g. to set gauges from live counts). It must
  /// not call back into this registry (render or register). Hooks run in the order added, under the
  /// registry's lock.
  void on_collect(std::function<void()> hook);

  /// The text exposition format 0.0.4 ("text/plain; version=0.0.4").
  std::string render() const;
  void render(std::string& out) const;

  static constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

 private:
  template <class T>
  family<T>& add(std::string name, std::string help, std::vector<std::string> labels,
                 metric_type type, std::vector<double> bounds);

  mutable std::mutex m_;
  std::vector<std::unique_ptr<detail::family_base>> families_;
  std::vector<std::function<void()>> hooks_;
};

/// Text-format helpers (exposed for tests).
/// Appends `v` escaped as a label value: \ -> \\, " -> \", newline -> \n.
void append_label_value(std::string_view v, std::string& out);
/// Appends `v` escaped as HELP text: \ -> \\, newline -> \n.
void append_help(std::string_view v, std::string& out);
/// Appends a sample value: shortest round-trip decimal, "+Inf", "-Inf" or "NaN".
void append_value(double v, std::string& out);

}  // namespace bt::metrics
