#pragma once
// The safetensors file format (what Hugging Face, PyTorch users and others
// exchange): an 8-byte little-endian unsigned header length N, N bytes of UTF-8
// JSON {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
// ..., "__metadata__": {string: string}}, then the raw little-endian tensor
// bytes; offsets are relative to the end of the header, tensors contiguous,
// row-major, not overlapping. Our checkpoints are F32 only (read_safetensors,
// read_safetensors_index, write_safetensors); read_safetensors_header reads a
// Hub file's header, whatever its dtypes, for the Hub loader (pretrained.hpp),
// which converts F16 and BF16 with f16_to_float / bf16_to_float.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {

/// The largest header this reader accepts (a model's header is a few KB).
inline constexpr std::size_t kMaxSafetensorsHeader = 1u << 20;  // 1 MiB

struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;  ///< [] for a scalar
    std::vector<float> data;          ///< row-major, product(shape) floats
};

struct SafeTensors {
    std::vector<Tensor> tensors;                  ///< in file order (the writer keeps the given order)
    std::map<std::string, std::string> metadata;  ///< "__metadata__"
    /// The tensor called `name`, or nullptr.
    const Tensor* find(const std::string& name) const;
};

/// Where one tensor's bytes are, as its header entry says (validated).
struct TensorEntry {
    std::string name;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0, end = 0;  ///< byte offsets relative to data_start, end - begin = element_size·product(shape)
    std::string dtype = "F32";         ///< "F32", "F16", "BF16", "I64", … as the header names it
    unsigned element_size = 4;         ///< bytes per element of dtype
};

/// A file's header, validated, without reading a float: what a loader checks
/// against what it expects before allocating anything the size of the data.
struct SafeTensorsIndex {
    std::vector<TensorEntry> tensors;             ///< in data order (the order read_safetensors returns)
    std::map<std::string, std::string> metadata;  ///< "__metadata__"
    std::size_t data_start = 0;                   ///< 8 + header size
    std::uint64_t data_size = 0;                  ///< bytes of tensor data after the header (where the last tensor ends)
    /// The entry called `name`, or nullptr.
    const TensorEntry* find(const std::string& name) const;
};

/// IEEE 754 binary16 bits → float, exactly (subnormals, infinities and NaN included).
float f16_to_float(std::uint16_t bits);
/// bfloat16 bits (the top half of a float32) → float, exactly.
float bf16_to_float(std::uint16_t bits);

/// The F32 at index i of an entry's data (i < product(shape)); the bytes
/// are those read_safetensors_index validated.
float tensor_float(const std::string& bytes, const SafeTensorsIndex& index, const TensorEntry& entry, std::size_t i);

/// The file's bytes. Throws attn::Error for a tensor whose data size does not
/// match its shape, duplicate or empty names, or a name "__metadata__".
std::string write_safetensors(const SafeTensors& file);

/// Parses a file. Throws attn::Error with a clear message for: fewer than 8
/// bytes, a header length past the end or above kMaxSafetensorsHeader,
/// malformed JSON, a non-object entry, a dtype other than F32 (named), a shape
/// that is not a list of non-negative integers, offsets that do not match the
/// shape, overlap, leave gaps or point past the end, duplicate names, and
/// metadata values that are not strings. Never reads out of bounds.
SafeTensors read_safetensors(const std::string& bytes);

/// The header of a file, with every check of read_safetensors (the same
/// errors), and no tensor data copied: the tensors stay in `bytes`.
SafeTensorsIndex read_safetensors_index(const std::string& bytes);

/// The header of a Hub file from its first bytes (at least 8 + N of them; the
/// data need not be there): every check of read_safetensors_index except the
/// file's length, and any dtype of the format (F64, F32, F16, BF16, I64, I32,
/// I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2) with its element size.
/// The tensors tile [0, data_size) exactly. Throws attn::Error (bad_checkpoint).
SafeTensorsIndex read_safetensors_header(const std::string& bytes);

}  // namespace attn
