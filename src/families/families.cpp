// The family registry (family.hpp): the list of families, its lookups and the texts that
// list them, config.json's field readers, and the two names the model layer takes from here
// (family_names, family_title: model.hpp).

#include "families/family.hpp"

#include <algorithm>

namespace attn {

// ---- the list: one line per family (its file defines the function) ------------------------

const Family& gpt2_family();
const Family& bert_family();
const Family& llama_family();
const Family& qwen2_family();
const Family& qwen3_family();

const std::vector<const Family*>& families() {
    static const std::vector<const Family*> all = {&gpt2_family(), &bert_family(), &llama_family(), &qwen2_family(),
                                                   &qwen3_family()};
    return all;
}

// ---- lookups ------------------------------------------------------------------------------

namespace {

template <typename Accepts>
const Family* find_family(Accepts accepts) {
    for (const Family* f : families())
        if (accepts(*f)) return f;
    return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
}

/// "a, b and c" / "a or b": the items joined, `last` before the last one.
std::string joined(const std::vector<std::string>& items, const std::string& last) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
    return out;
}

}  // namespace

const Family* family_named(const std::string& name) {
    return find_family([&](const Family& f) { return f.name == name; });
}

const Family* family_by_architecture(const std::string& architecture) {
    return find_family([&](const Family& f) { return contains(f.architectures, architecture); });
}

const Family* family_by_model_type(const std::string& model_type) {
    return find_family([&](const Family& f) { return contains(f.model_types, model_type); });
}

const Family* family_by_tokenizer(TokenizerKind kind) {
    // a family asking for any BPE takes each BPE kind (tokenizer_kind_accepts)
    return find_family([&](const Family& f) { return tokenizer_kind_accepts(f.tokenizer, kind); });
}

std::string family_titles() {
    std::vector<std::string> titles;
    for (const Family* f : families()) titles.push_back(f->title);
    return joined(titles, " and ");
}

std::string family_choices() {
    std::vector<std::string> names;
    for (const Family* f : families()) names.push_back(f->name);
    return joined(names, " or ");
}

std::string supported_families() {
    std::vector<std::string> architectures;
    for (const Family* f : families())
        architectures.insert(architectures.end(), f->architectures.begin(), f->architectures.end());
    return "this page runs " + family_titles() + " models (" + joined(architectures, ", ") + ")";
}

// ---- what the model layer asks (model.hpp) ------------------------------------------------

const std::vector<std::string>& family_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out = {""};
        for (const Family* f : families()) out.push_back(f->name);
        return out;
    }();
    return names;
}

std::string family_title(const std::string& family, const std::string& otherwise) {
    const Family* f = family_named(family);
    return f ? f->title : otherwise;
}

// ---- config.json --------------------------------------------------------------------------

void HubConfigFields::fail(const std::string& message) {
    throw Error(Error::Code::bad_checkpoint, "config.json: " + message);
}

bool HubConfigFields::has(const std::string& key) const {
    const JsonValue* v = root_.get(key);
    return v && !v->is(JsonValue::Type::null);
}

int HubConfigFields::integer(const std::string& key, long long lo, long long hi, long long fallback) const {
    const JsonValue* v = root_.get(key);
    if (!v || v->is(JsonValue::Type::null)) {
        if (fallback < lo) fail("the field \"" + key + "\" is missing");
        return static_cast<int>(fallback);
    }
    if (!v->is(JsonValue::Type::number) || !v->is_integer) fail("\"" + key + "\" must be a whole number");
    if (v->integer < lo || v->integer > hi)
        fail("\"" + key + "\" is " + std::to_string(v->integer) + "; this engine runs " + std::to_string(lo) + " to " +
             std::to_string(hi));
    return static_cast<int>(v->integer);
}

float HubConfigFields::epsilon(const std::string& key, double fallback) const {
    const JsonValue* v = root_.get(key);
    if (!v || v->is(JsonValue::Type::null)) return static_cast<float>(fallback);
    if (!v->is(JsonValue::Type::number) || !(v->number > 0) || v->number > 1)
        fail("\"" + key + "\" must be a number above 0 and at most 1");
    return static_cast<float>(v->number);
}

std::string HubConfigFields::text(const std::string& key, const std::string& fallback) const {
    const JsonValue* v = root_.get(key);
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::string)) fail("\"" + key + "\" must be a string");
    return v->string;
}

bool HubConfigFields::flag(const std::string& key, bool fallback) const {
    const JsonValue* v = root_.get(key);
    if (!v || v->is(JsonValue::Type::null)) return fallback;
    if (!v->is(JsonValue::Type::boolean)) fail("\"" + key + "\" must be true or false");
    return v->boolean;
}

Activation HubConfigFields::activation(const std::string& key, const std::string& fallback) const {
    const std::string name = text(key, fallback);
    // transformers' ACT2FN: "gelu" is the exact erf form; gelu_new, gelu_pytorch_tanh and
    // gelu_fast are the tanh approximation (gelu_fast: the same formula, factored)
    if (name == "gelu") return Activation::gelu_erf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::gelu_tanh;
    fail("\"" + key + "\" is \"" + name + "\"; this engine runs gelu (erf) and gelu_new (tanh)");
}

const Family& hub_family(const HubConfigFields& json) {
    const Family* by_arch = nullptr;
    std::string arch;  // the first architecture, which decides the family
    if (const JsonValue* a = json.root().get("architectures")) {
        if (!a->is(JsonValue::Type::null)) {
            if (!a->is(JsonValue::Type::array)) json.fail("\"architectures\" must be a list of names");
            for (const JsonValue& n : a->array) {
                if (!n.is(JsonValue::Type::string)) json.fail("\"architectures\" must be a list of names");
                const Family* f = family_by_architecture(n.string);
                if (!f) json.fail(n.string + " is not supported: " + supported_families());
                if (!by_arch) {
                    by_arch = f;
                    arch = n.string;
                }
            }
        }
    }
    const std::string type = json.text("model_type", "");
    if (type.empty()) {
        if (!by_arch) json.fail("has neither \"model_type\" nor \"architectures\": " + supported_families());
        return *by_arch;
    }
    const Family* by_type = family_by_model_type(type);
    if (!by_type) json.fail("model_type \"" + type + "\" is not supported: " + supported_families());
    if (by_arch && by_arch != by_type) json.fail("model_type \"" + type + "\" does not match the architecture " + arch);
    return *by_type;
}

// ---- model.safetensors --------------------------------------------------------------------

namespace {

/// A file that has every tensor (largest_file_config), or none (smallest_file_config); it is
/// only asked, never planned.
class AskedFile final : public HubTensors {
public:
    explicit AskedFile(bool every) : every_(every) {}
    bool has(const std::string&) const override { return every_; }
    void sizes(const std::string&) override {}

protected:
    void add(const std::string&, const std::vector<std::int64_t>&, const std::vector<std::string>&, HubLayout,
             const std::string&, bool) override {}

private:
    bool every_;
};

ModelConfig file_config(const ModelConfig& config, bool every) {
    ModelConfig c = config;
    if (const Family* f = family_of(config)) f->read_file(AskedFile(every), c);
    return c;
}

}  // namespace

ModelConfig largest_file_config(const ModelConfig& config) { return file_config(config, true); }
ModelConfig smallest_file_config(const ModelConfig& config) { return file_config(config, false); }

// ---- tokenizers ---------------------------------------------------------------------------

std::unique_ptr<PretrainedTokenizer> read_family_tokenizer(const std::string& family, const std::string& tokenizer_json,
                                                           const std::string& vocab_json, const std::string& merges_txt,
                                                           const std::string& vocab_txt,
                                                           const std::string& tokenizer_config_json) {
    TokenizerRequest request;
    if (!family.empty()) {
        const Family* f = family_named(family);
        if (!f)
            throw Error(Error::Code::bad_checkpoint,
                        "unknown tokenizer family \"" + family + "\" (" + family_choices() + ")");
        request = {f->tokenizer, f->name, f->title};
    }
    return read_tokenizer(request, tokenizer_json, vocab_json, merges_txt, vocab_txt, tokenizer_config_json);
}

}  // namespace attn
