// The catalog of framework norm conventions (presets.cpp): what a user names instead of
// spelling every field ("pytorch.LayerNorm", "hf.LlamaRMSNorm"). A preset is a convention
// of one op of the registry, written with the same keys a case file uses, plus what the
// keys cannot state yet (where the framework accumulates and rounds), and its source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "spec/op.hpp"

namespace normcheck {

/// One framework layer's convention. Data only: every entry is in presets.cpp.
struct Preset {
  std::string_view name;  ///< "framework.Layer": pytorch.LayerNorm, keras.LayerNormalization, ...
  Op op;                  ///< the op of the registry the layer computes
  /// Convention keys as compare-eps --conv spells them ("eps=1e-5,eps_placement=inside_sqrt"),
  /// read by read_convention over default_convention(op). "eps=finfo_opmath": the machine
  /// epsilon of the compute dtype (PyTorch's eps=None); "normalized_dtype=x_dtype": x's dtype. Keys not named keep the op's defaults;
  /// normalized_shape, num_groups and acc_dtype are the case's (a layer's shape, not its convention).
  std::string_view fields;
  std::string_view accumulation;  ///< the dtype the framework computes the statistics in
  /// Where intermediates are rounded to a storage dtype (documentation: normcheck's
  /// reference rounds once, at the output; a framework that rounds the normalized value
  /// before the weight differs from it by about one output ULP).
  std::string_view rounding;
  std::string_view source;    ///< the file or page, and version, the entry was read from
  std::string_view verified;  ///< "read from source" | "read from documentation" | the test that ran the framework
  /// Non-empty: part of the layer's convention normcheck cannot state yet; using the preset
  /// (case file, compare-eps) is an error quoting this, never a silent approximation.
  std::string_view unexpressible;
  std::string_view notes;  ///< what a case must still set (num_groups, axes) or how a framework's parameter maps
};

/// Every preset, grouped by op in registry order, sorted by name within an op.
const std::vector<Preset>& presets();
/// The preset named `name` (exact spelling), or nullptr.
const Preset* find_preset(std::string_view name);
/// A message for an unknown name: "unknown preset 'X' (did you mean pytorch.LayerNorm?); normcheck presets lists them".
std::string unknown_preset_message(std::string_view name);

/// The preset's fields as key=value text with eps=finfo resolved for x of dtype `x_dtype`.
std::string preset_fields(const Preset& p, DType x_dtype);
/// Reads the preset's fields into `c` (over whatever `c` holds). Throws UsageError with
/// the preset's `unexpressible` text when it has one.
void apply_preset(const Preset& p, DType x_dtype, Convention& c);

}  // namespace normcheck
