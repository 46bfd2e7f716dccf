// bt::metrics: the children's atomics, the families' label sets and the text exposition format
// 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
#include <bt/metrics.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace bt::metrics {

namespace {

bool valid_name(std::string_view n, bool colon_ok) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(i > 0 && digit)) return false;
  }
  return true;
}

void atomic_add(std::atomic<double>& a, double d) noexcept {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {
  }
}

void append_uint(std::uint64_t v, std::string& out) {
  std::array<char, 24> buf;
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), r.ptr);
}

/// `name{l1="v1",l2="v2"[,le="b"]} value\n`
void append_labels(const std::vector<std::string>& names, const std::vector<std::string>& values,
                   const std::string* le, std::string& out) {
  if (names.empty() && !le) return;
  out += '{';
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i];
    out += "=\"";
    append_label_value(values[i], out);
    out += '"';
  }
  if (le) {
    if (!names.empty()) out += ',';
    out += "le=\"";
    out += *le;
    out += '"';
  }
  out += '}';
}

}  // namespace

void append_label_value(std::string_view v, std::string& out) {
  for (const char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void append_help(std::string_view v, std::string& out) {
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void append_value(double v, std::string& out) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    std::array<char, 32> buf;
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), r.ptr);
  }
}

// ---- children ----

void gauge::add(double d) noexcept {
  atomic_add(value_, d);
}

histogram::histogram(const std::vector<double>& bounds)
    : bounds_(bounds), counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
      throw std::invalid_argument(
          "bt::metrics::histogram: bucket bounds must be finite and strictly increasing");
  }
}

void histogram::observe(double v) noexcept {
  std::size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;  // le: a bucket counts v <= its bound
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  atomic_add(sum_, v);
}

std::vector<std::uint64_t> histogram::bucket_counts() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::uint64_t histogram::count() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) n += counts_[i].load(std::memory_order_relaxed);
  return n;
}

const std::vector<double>& default_buckets() {
  static const std::vector<double> b{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return b;
}

const std::vector<double>& fast_buckets() {
  static const std::vector<double> b{0.00001, 0.000025, 0.00005, 0.0001, 0.00025,
                                     0.0005,  0.001,    0.0025,  0.005,  0.01,
                                     0.025,   0.05,     0.1,     0.25,   1};
  return b;
}

// ---- families ----

namespace detail {

family_base::family_base(std::string name, std::string help, std::vector<std::string> labels,
                         metric_type type)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)), type_(type) {
  if (!valid_name(name_, true))
    throw std::invalid_argument("bt::metrics: invalid metric name '" + name_ + "'");
  for (std::size_t i = 0; i < labels_.size(); ++i) {
    const std::string& l = labels_[i];
    if (!valid_name(l, false) || l.rfind("__", 0) == 0 ||
        (type_ == metric_type::histogram && l == "le"))
      throw std::invalid_argument("bt::metrics: invalid label name '" + l + "' for " + name_);
    for (std::size_t j = 0; j < i; ++j)
      if (labels_[j] == l)
        throw std::invalid_argument("bt::metrics: duplicate label name '" + l + "' for " + name_);
  }
}

void family_base::check_arity(std::size_t n) const {
  if (n != labels_.size())
    throw std::invalid_argument("bt::metrics: " + name_ + " takes " +
                                std::to_string(labels_.size()) + " label values, got " +
                                std::to_string(n));
}

}  // namespace detail

template <class T>
T& family<T>::with(std::vector<std::string> values) {
  check_arity(values.size());
  std::lock_guard lk(m_);
  auto it = children_.find(values);
  if (it != children_.end()) return *it->second;
  std::unique_ptr<T> child;
  if constexpr (std::is_same_v<T, metrics::histogram>) {
    child = std::make_unique<T>(bounds_);
  } else {
    child = std::make_unique<T>();
  }
  return *children_.emplace(std::move(values), std::move(child)).first->second;
}

template <class T>
void family<T>::render(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  append_help(help_, out);
  out += "\n# TYPE ";
  out += name_;
  out += type_ == metric_type::counter ? " counter\n"
         : type_ == metric_type::gauge ? " gauge\n"
                                       : " histogram\n";
  std::lock_guard lk(m_);
  for (const auto& [values, child] : children_) {
    if constexpr (std::is_same_v<T, metrics::histogram>) {
      const std::vector<std::uint64_t> counts = child->bucket_counts();
      std::uint64_t cumulative = 0;
      std::string le;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        cumulative += counts[i];
        le.clear();
        if (i < bounds_.size()) {
          append_value(bounds_[i], le);
        } else {
          le = "+Inf";
        }
        out += name_;
        out += "_bucket";
        append_labels(labels_, values, &le, out);
        out += ' ';
        append_uint(cumulative, out);
        out += '\n';
      }
      out += name_;
      out += "_sum";
      append_labels(labels_, values, nullptr, out);
      out += ' ';
      append_value(child->sum(), out);
      out += '\n';
      out += name_;
      out += "_count";
      append_labels(labels_, values, nullptr, out);
      out += ' ';
      append_uint(cumulative, out);  // equals the +Inf bucket, whatever observes meanwhile
      out += '\n';
    } else {
      out += name_;
      append_labels(labels_, values, nullptr, out);
      out += ' ';
      if constexpr (std::is_same_v<T, metrics::counter>) {
        append_uint(child->value(), out);
      } else {
        append_value(child->value(), out);
      }
      out += '\n';
    }
  }
}

template class family<counter>;
template class family<gauge>;
template class family<histogram>;

// ---- registry ----

template <class T>
family<T>& registry::add(std::string name, std::string help, std::vector<std::string> labels,
                         metric_type type, std::vector<double> bounds) {
  std::lock_guard lk(m_);
  for (const auto& f : families_) {
    if (f->name() != name) continue;
    auto* same = dynamic_cast<family<T>*>(f.get());
    if (!same || f->help() != help || f->label_names() != labels)
      throw std::invalid_argument("bt::metrics: '" + name +
                                  "' is already registered with another type, help or labels");
    return *same;
  }
  // Names a histogram's series take must not collide with another family either.
  for (const auto& f : families_) {
    const auto clash = [](const std::string& a, const std::string& b) {
      return a == b + "_bucket" || a == b + "_sum" || a == b + "_count";
    };
    if ((f->type() == metric_type::histogram && clash(name, f->name())) ||
        (type == metric_type::histogram && clash(f->name(), name)))
      throw std::invalid_argument("bt::metrics: '" + name + "' collides with '" + f->name() + "'");
  }
  auto fam = std::make_unique<family<T>>(std::move(name), std::move(help), std::move(labels), type,
                                         std::move(bounds));
  family<T>& ref = *fam;
  families_.push_back(std::move(fam));
  if (ref.label_names().empty()) ref.get();  // an unlabelled metric is always rendered
  return ref;
}

family<counter>& registry::counter(std::string name, std::string help,
                                   std::vector<std::string> labels) {
  return add<metrics::counter>(std::move(name), std::move(help), std::move(labels),
                               metric_type::counter, {});
}

family<gauge>& registry::gauge(std::string name, std::string help,
                               std::vector<std::string> labels) {
  return add<metrics::gauge>(std::move(name), std::move(help), std::move(labels),
                             metric_type::gauge, {});
}

family<histogram>& registry::histogram(std::string name, std::string help,
                                       std::vector<std::string> labels,
                                       std::vector<double> bounds) {
  metrics::histogram check(bounds);  // throws on bad bounds before anything is registered
  return add<metrics::histogram>(std::move(name), std::move(help), std::move(labels),
                                 metric_type::histogram, std::move(bounds));
}

void registry::on_collect(std::function<void()> hook) {
  std::lock_guard lk(m_);
  hooks_.push_back(std::move(hook));
}

std::string registry::render() const {
  std::string out;
  render(out);
  return out;
}

void registry::render(std::string& out) const {
  std::lock_guard lk(m_);
  for (const auto& h : hooks_) h();
  for (const auto& f : families_) f->render(out);
}

}  // namespace bt::metrics
