#include "base/settings.hpp"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

/// A bound, or a whole setting: all its digits. A real-valued setting: the
/// float it is stored as, to 6 digits (the same text whether it came as a
/// double from JSON or as the float of a TrainConfig).
std::string setting_text(double v, bool as_float = false) {
    char buf[40];
    if (as_float) std::snprintf(buf, sizeof buf, "%g", static_cast<double>(static_cast<float>(v)));
    else std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

}  // namespace

double check_setting(const SettingRange& r, double value, const std::string& where, Error::Code code) {
    // real-valued settings are stored as float: compare as floats, so that the
    // float nearest a bound (1e-8f < 1e-8) is inside and 1e300 (inf) is not
    const bool inside = r.whole ? value >= r.lo && value <= r.hi
                                : static_cast<float>(value) >= static_cast<float>(r.lo) &&
                                      static_cast<float>(value) <= static_cast<float>(r.hi);
    const std::string range = setting_text(r.lo) + "…" + setting_text(r.hi) + " (" + r.label + ")";
    const std::string text = setting_text(value, !r.whole);
    if (!inside) throw Error(code, where + r.name + " " + text + " is outside " + range);
    if (r.whole && value != std::floor(value)) throw Error(code, where + r.name + " " + text + " is not a whole number in " + range);
    return value;
}

}  // namespace attn
