// read_hub_config (pretrained.hpp): a Hugging Face config.json → our ModelConfig.
// The family (families/) is found from "model_type" or "architectures" and reads its own
// fields, with transformers' defaults; anything this engine cannot run (another
// architecture, relative positions, unscaled attention) is refused by name rather than
// run wrongly.

#include "base/json_value.hpp"
#include "checkpoints/pretrained.hpp"
#include "families/family.hpp"

#include <string>

namespace attn {

ModelConfig read_hub_config(const std::string& config_json) {
    JsonOptions o;
    o.prefix = "config.json: ";
    o.code = Error::Code::bad_checkpoint;
    const JsonValue root = parse_json(config_json, o);
    if (!root.is(JsonValue::Type::object)) HubConfigFields::fail("is not a JSON object");
    const HubConfigFields json(root);

    const Family& family = hub_family(json);
    ModelConfig c;
    c.family = family.name;
    // what every family so far has; a family's read_config may say otherwise
    c.layernorm = true;
    c.positional = Positional::learned;
    c.scale = true;
    c.attn_bias = true;
    family.read_config(json, c);
    if (c.head_dim == 0 && c.d_model % c.heads != 0)
        HubConfigFields::fail("the width " + std::to_string(c.d_model) + " is not divisible by " +
                              std::to_string(c.heads) + " heads");
    validate_inference_config(c);
    return c;
}

}  // namespace attn
