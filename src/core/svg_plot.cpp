#include "core/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace normcheck {

namespace {
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}
}  // namespace

std::string render_loglog_svg(const LogLogPlot& p) {
  constexpr double W = 800, H = 500, L = 80, R = 250, Tp = 40, B = 60;  // canvas and margins
  const double floor_ = std::pow(10.0, std::floor(std::log10(p.y_floor)));
  double x0 = HUGE_VAL, x1 = -HUGE_VAL, y1 = floor_ * 10;
  for (const auto& s : p.series)
    for (auto [x, y] : s.points) {
      if (!(x > 0) || !std::isfinite(x)) continue;
      x0 = std::min(x0, x); x1 = std::max(x1, x);
      if (std::isfinite(y)) y1 = std::max(y1, y);
    }
  if (!(x0 < x1)) { x0 = 1e-1; x1 = 1e1; }
  y1 = std::max(y1, p.hline * 10);
  const int ex0 = static_cast<int>(std::floor(std::log10(x0))), ex1 = static_cast<int>(std::ceil(std::log10(x1)));
  const int ey0 = static_cast<int>(std::log10(floor_)), ey1 = static_cast<int>(std::ceil(std::log10(y1)));
  auto X = [&](double x) { return L + (std::log10(x) - ex0) / (ex1 - ex0) * (W - L - R); };
  auto Y = [&](double y) {
    const double ly = std::clamp(std::isfinite(y) && y > 0 ? std::log10(y) : ey0, double(ey0), double(ey1));
    return H - B - (ly - ey0) / (ey1 - ey0) * (H - Tp - B);
  };
  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" "
      "fill=\"white\"/>\n<text x=\"{2}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      W, H, (L + W - R) / 2, esc(p.title));
  // Grid, ticks and tick labels: every decade on x (label every step so that <= 10 labels), every decade on y.
  const int xstep = std::max(1, (ex1 - ex0 + 9) / 10), ystep = std::max(1, (ey1 - ey0 + 7) / 8);
  for (int e = ex0; e <= ex1; ++e) {
    const double x = X(std::pow(10.0, e));
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e0e0e0\"/>\n", x, Tp, H - B);
    if ((e - ex0) % xstep == 0)
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">1e{}</text>\n", x, H - B + 18, e);
  }
  for (int e = ey0; e <= ey1; ++e) {
    const double y = Y(std::pow(10.0, e));
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e0e0e0\"/>\n", L, y, W - R);
    if ((e - ey0) % ystep == 0)
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}1e{}</text>\n", L - 6, y + 4,
                       e == ey0 ? "&#8804;" : "", e);
  }
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", L, Tp,
                   W - L - R, H - Tp - B);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2, H - 18, esc(p.x_label));
  s += fmt::format("<text transform=\"translate(22 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   (Tp + H - B) / 2, esc(p.y_label));
  if (p.hline > 0) {
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"black\" stroke-dasharray=\"2 3\"/>\n",
                     L, Y(p.hline), W - R);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n", W - R - 4,
                     Y(p.hline) - 4, esc(p.hline_label));
  }
  int row = 0;
  for (const auto& ser : p.series) {
    std::string pts;
    for (auto [x, y] : ser.points)
      if (x > 0 && std::isfinite(x)) pts += fmt::format("{:.1f},{:.1f} ", X(x), Y(y));
    const std::string dash = ser.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", ser.dash);
    s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} points=\"{}\"/>\n", esc(ser.color), dash, pts);
    const double ly = Tp + 10 + 18 * row++;
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"1.8\"{4}/>\n",
                     W - R + 12, ly, W - R + 40, esc(ser.color), dash);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", W - R + 46, ly + 4, esc(ser.label));
  }
  for (const auto& n : p.notes)
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", W - R + 12, Tp + 14 + 18 * row++, esc(n));
  return s + "</svg>\n";
}

}  // namespace normcheck
