#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace bt::perf {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted.front();
  const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

summary summarize(std::vector<double> samples) {
  summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = samples.size();
  // Two passes: the mean first, then squared deviations from it (no catastrophic cancellation).
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  double sq = 0;
  for (double v : samples) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / static_cast<double>(s.count));
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = percentile_sorted(samples, 50);
  s.p90 = percentile_sorted(samples, 90);
  s.p99 = percentile_sorted(samples, 99);
  return s;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string xml_escape(const std::string& in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string label_us(double us) {
  if (us >= 1000) return fmt("%g ms", us / 1000);
  return fmt("%g µs", us);
}

}  // namespace

std::string histogram_svg(const std::vector<double>& samples_in, const std::string& title) {
  std::vector<double> samples = samples_in;
  std::sort(samples.begin(), samples.end());
  const double width = 900, height = 420;
  const double left = 70, right = 20, top = 50, bottom = 70;
  const double plot_w = width - left - right, plot_h = height - top - bottom;

  std::string svg;
  svg += fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" ", width);
  svg += fmt("height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", height);
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += fmt("<text x=\"%.0f\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">", width / 2) +
         xml_escape(title) + "</text>\n";
  if (samples.empty()) {
    svg += "<text x=\"50%\" y=\"50%\" text-anchor=\"middle\">no samples</text>\n</svg>\n";
    return svg;
  }

  // Log-spaced bins from min to p99.9; the slowest 0.1% go into one overflow bin so that a
  // single stall does not squeeze the interesting part of the distribution into one column.
  const double lo = std::max(samples.front(), 1e-3);
  double hi = std::max(percentile_sorted(samples, 99.9), lo * 1.01);
  constexpr int bins = 60;
  const double llo = std::log10(lo), lhi = std::log10(hi);
  std::vector<std::size_t> counts(bins + 1, 0);  // last one: overflow
  for (double v : samples) {
    if (v > hi) {
      ++counts[bins];
      continue;
    }
    int b = static_cast<int>((std::log10(std::max(v, lo)) - llo) / (lhi - llo) * bins);
    counts[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))]++;
  }
  const std::size_t peak = *std::max_element(counts.begin(), counts.end());
  const double bar_w = plot_w / (bins + 1);
  auto x_of = [&](double us) {
    return left + (std::log10(us) - llo) / (lhi - llo) * (plot_w - bar_w);
  };

  // Axes.
  svg += fmt("<line x1=\"%.1f\" ", left) + fmt("y1=\"%.1f\" ", top + plot_h) +
         fmt("x2=\"%.1f\" ", left + plot_w) + fmt("y2=\"%.1f\" stroke=\"black\"/>\n", top + plot_h);
  svg += fmt("<line x1=\"%.1f\" ", left) + fmt("y1=\"%.1f\" ", top) + fmt("x2=\"%.1f\" ", left) +
         fmt("y2=\"%.1f\" stroke=\"black\"/>\n", top + plot_h);

  // Bars.
  for (int b = 0; b <= bins; ++b) {
    if (counts[static_cast<std::size_t>(b)] == 0) continue;
    const double h = plot_h * static_cast<double>(counts[static_cast<std::size_t>(b)]) /
                     static_cast<double>(peak);
    const double x = left + b * bar_w;
    svg += fmt("<rect x=\"%.1f\" ", x) + fmt("y=\"%.1f\" ", top + plot_h - h) +
           fmt("width=\"%.1f\" ", bar_w - 1) + fmt("height=\"%.1f\" ", h) +
           (b == bins ? "fill=\"#c0504d\"" : "fill=\"#4f81bd\"") + "/>\n";
  }
  svg += fmt("<text x=\"%.1f\" ", left + bins * bar_w + bar_w / 2) +
         fmt("y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">&gt;p99.9</text>\n",
             top + plot_h + 14);

  // X ticks at 1-2-5 steps inside [lo, hi], denser when the range is under two decades.
  const std::vector<double> steps = (lhi - llo) < 2.0
                                        ? std::vector<double>{1, 1.5, 2, 3, 4, 5, 6, 7, 8}
                                        : std::vector<double>{1, 2, 5};
  double last_label_x = -1e9;  // labels closer than this many pixels would overlap: tick only
  for (double decade = std::pow(10, std::floor(llo)); decade <= hi; decade *= 10) {
    for (double m : steps) {
      const double t = decade * m;
      if (t < lo || t > hi) continue;
      const double x = x_of(t);
      svg += fmt("<line x1=\"%.1f\" ", x) + fmt("y1=\"%.1f\" ", top + plot_h) +
             fmt("x2=\"%.1f\" ", x) + fmt("y2=\"%.1f\" stroke=\"black\"/>\n", top + plot_h + 5);
      if (x - last_label_x < 55) continue;
      last_label_x = x;
      svg += fmt("<text x=\"%.1f\" ", x) +
             fmt("y=\"%.1f\" text-anchor=\"middle\">", top + plot_h + 18) + label_us(t) +
             "</text>\n";
    }
  }
  svg += fmt("<text x=\"%.1f\" ", left + plot_w / 2) +
         fmt("y=\"%.1f\" text-anchor=\"middle\">latency (log scale)</text>\n", height - 28);
  // Y axis: peak count.
  svg += fmt("<text x=\"%.1f\" ", left - 6) + fmt("y=\"%.1f\" text-anchor=\"end\">", top + 4) +
         std::to_string(peak) + "</text>\n";
  svg += fmt("<text x=\"%.1f\" ", left - 6) +
         fmt("y=\"%.1f\" text-anchor=\"end\">0</text>\n", top + plot_h);
  svg += fmt("<text x=\"18\" y=\"%.1f\" ", top + plot_h / 2) +
         fmt("transform=\"rotate(-90 18 %.1f)\" text-anchor=\"middle\">queries per bin</text>\n",
             top + plot_h / 2);

  // Percentile markers.
  const summary s = summarize(samples);
  const struct {
    const char* name;
    double v;
    const char* color;
  } marks[] = {{"p50", s.p50, "#2e7d32"}, {"p90", s.p90, "#ef6c00"}, {"p99", s.p99, "#c62828"}};
  // Dashed lines at the percentiles, named in a legend at the top right (clear of the bars).
  std::string legend;
  legend += fmt("<rect x=\"%.1f\" ", left + plot_w - 156) +
            fmt("y=\"%.1f\" width=\"150\" height=\"52\" ", top - 4) +
            "fill=\"white\" fill-opacity=\"0.9\" stroke=\"#999\"/>\n";
  int row = 0;
  for (const auto& m : marks) {
    if (m.v >= lo && m.v <= hi) {
      const double x = x_of(m.v);
      svg += fmt("<line x1=\"%.1f\" ", x) + fmt("y1=\"%.1f\" ", top) + fmt("x2=\"%.1f\" ", x) +
             fmt("y2=\"%.1f\" stroke=\"", top + plot_h) + m.color +
             "\" stroke-dasharray=\"4 3\"/>\n";
    }
    const double ly = top + 10 + 16 * row++;
    legend += fmt("<line x1=\"%.1f\" ", left + plot_w - 150) + fmt("y1=\"%.1f\" ", ly - 4) +
              fmt("x2=\"%.1f\" ", left + plot_w - 126) + fmt("y2=\"%.1f\" stroke=\"", ly - 4) +
              m.color + "\" stroke-dasharray=\"4 3\"/>\n";
    legend += fmt("<text x=\"%.1f\" ", left + plot_w - 120) + fmt("y=\"%.1f\" fill=\"", ly) +
              m.color + "\">" + m.name + " " + fmt("%.0f µs", m.v) + "</text>\n";
  }
  svg += legend;
  svg += fmt("<text x=\"%.1f\" ", left) + fmt("y=\"%.1f\" font-size=\"11\">", height - 8) +
         fmt("n = %.0f", static_cast<double>(s.count)) + fmt(", mean %.1f µs", s.mean) +
         fmt(", stddev %.1f µs", s.stddev) + fmt(", max %.0f µs", s.max) + "</text>\n";
  svg += "</svg>\n";
  return svg;
}

}  // namespace bt::perf
