#pragma once
// The accepted range of one setting, and the one range check. The training
// settings (settings:: in trainer.hpp) and the model's (model_schema.hpp) are
// rows of this shape; Trainer, `attn train`'s flags, the JS settings
// (train_bindings.cpp, web/trainer.js through buildInfo) and a checkpoint's
// metadata all check them with check_setting.

#include "base/types.hpp"

#include <string>

namespace attn {

struct SettingRange {
    const char* name;   ///< the key in a checkpoint's metadata ("batch", "weight_decay", …)
    const char* label;  ///< what it is, for messages
    double lo, hi;      ///< inclusive
    bool whole;         ///< integers only; the others are compared as the floats they are stored in
    const char* js = "";    ///< the key of createTrainer's settings ("weightDecay"), "" when JS does not set it
    const char* flag = "";  ///< attn train's flag ("--weight-decay"), "" when the CLI has none
};

/// `value` when it is inside `range` (and whole, if the range says so);
/// otherwise throws attn::Error(code, "<where><name> <value> is outside lo…hi (<label>)").
/// NaN and infinities are outside every range.
double check_setting(const SettingRange& range, double value, const std::string& where = "",
                     Error::Code code = Error::Code::bad_input);

}  // namespace attn
