// A small SVG line plot with logarithmic axes (our own plots only: compare-eps).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace normcheck {

/// One polyline: points (x, y) with x, y > 0; points with y <= 0 or non-finite are
/// clamped to the plot's y_floor (and so drawn on the bottom edge).
struct PlotSeries {
  std::string label;
  std::string color = "#1f77b4";  ///< any SVG colour
  std::string dash;               ///< SVG stroke-dasharray, "" for solid
  std::vector<std::pair<double, double>> points;
};

struct LogLogPlot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  double y_floor = 1e-2;     ///< smallest y shown (decade-aligned down)
  double hline = 0;          ///< draw a dashed horizontal reference line at this y (0: none)
  std::string hline_label;
  std::vector<std::string> notes;  ///< extra legend lines below the series (e.g. "#1 = ...")
};

/// Renders the plot as a standalone SVG 1.1 document (800 x 500, decade grid and ticks,
/// legend on the right). Axes span the decades around the data. Text is XML-escaped.
std::string render_loglog_svg(const LogLogPlot& p);

}  // namespace normcheck
