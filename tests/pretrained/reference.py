#!/usr/bin/env python3
"""An independent float64 PyTorch forward of GPT-2, BERT, Llama, Qwen2 and Qwen3, for golden values.

Written from the published architectures (Radford et al. 2019 / transformers'
modeling_gpt2.py; Devlin et al. 2019 / modeling_bert.py; Touvron et al. 2023, Su et al.
2021 (RoPE), Ainslie et al. 2023 (GQA) / modeling_llama.py, modeling_qwen2.py,
modeling_qwen3.py), not from our C++: it
reads each Hub folder (config.json + model.safetensors, its own safetensors
parser, F16 and BF16 decoded here) and writes, for a few id sequences, every
selected head's attention weights, the logits at a fixed set of ids and each
row's logsumexp over the whole vocabulary, to tests/pretrained/golden.json.

    python3 tests/pretrained/make_checkpoints.py /tmp/ck
    /usr/bin/python3 tests/pretrained/reference.py /tmp/ck > tests/pretrained/golden.json

(.ci/install-deps.sh torch installs Debian's python3-torch for /usr/bin/python3.)

GPT-2 (pre-LN, causal):
  x = wte[ids] + wpe[0:T]
  per block: a = LN(x; ln_1);  q|k|v = a·c_attn.W + c_attn.b   (Conv1D [C, 3C], split by columns)
             head h: softmax(q_h·k_hᵀ/√D + causal −∞)·v_h;  x += concat·c_proj.W + c_proj.b
             x += gelu_new(LN(x; ln_2)·c_fc.W + c_fc.b)·c_proj.W + c_proj.b
  logits = LN(x; ln_f)·wteᵀ   (lm_head.weight [V, C] instead of wte when present)
BERT (post-LN, bidirectional; token type 0):
  x = LN(word[ids] + pos[0:T] + type[0]; embeddings.LayerNorm)
  per layer: q = x·Wqᵀ + bq (nn.Linear [out, in]) …;  x = LN(x + attn·Wdᵀ + bd; attention.output.LayerNorm)
             x = LN(x + gelu(x·Wiᵀ + bi)·Woᵀ + bo; output.LayerNorm)
  logits = LN(gelu(x·Wtᵀ + bt); transform.LayerNorm)·wordᵀ + cls.predictions.bias   (MLM head)
           (tie_word_embeddings false: cls.predictions.decoder.weight [V, C] instead of word, as
           transformers' BertForMaskedLM unties it; true, the default: word, whatever the file saved)
           x·wordᵀ without a head (BertModel)
Llama / Qwen2 / Qwen3 (pre-RMSNorm, causal, modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py):
  x = embed_tokens[ids]
  per layer: a = RMS(x; input_layernorm);  q = a·Wqᵀ (+ bq), k, v likewise  (H·D, Hkv·D columns)
             Qwen3: each head's q and k through RMS(·; q_norm / k_norm) over its D values
             RoPE on q and k: pair (i, i + D/2) at position m turned by m·θᵢ, θᵢ = base^(−2i/D)
               (Llama 3's scaling rescales θᵢ by wavelength, below)
             head h reads K/V head h // (H / Hkv);  x += concat·Woᵀ
             x += ((silu(m·Wgᵀ) ⊙ (m·Wuᵀ))·Wdᵀ) with m = RMS(x; post_attention_layernorm)
  logits = RMS(x; model.norm)·lm_headᵀ  (embed_tokens when tie_word_embeddings)
RMS(x; w) = w ⊙ x / sqrt(mean(x²) + rms_norm_eps);  silu(x) = x·σ(x).
Llama 3's scaling (rope_type "llama3"), with λᵢ = 2π/θᵢ and L = original_max_position_embeddings:
  θᵢ kept where λᵢ < L/high_freq_factor, θᵢ/factor where λᵢ > L/low_freq_factor, and between
  (1 − s)·θᵢ/factor + s·θᵢ with s = (L/λᵢ − low_freq_factor)/(high_freq_factor − low_freq_factor).
gelu_new(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)));  gelu(x) = 0.5·x·(1 + erf(x/√2)).
LayerNorm: biased variance, eps from the config.
"""

import hashlib
import json
import math
import os
import random
import struct
import sys

import torch

torch.set_default_dtype(torch.float64)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        raw = data[base + a:base + b]
        count = 1
        for d in e["shape"]:
            count *= d
        dt = e["dtype"]
        if dt == "F32":
            vals = struct.unpack("<%df" % count, raw)
        elif dt == "F16":
            vals = struct.unpack("<%de" % count, raw)
        elif dt == "BF16":
            halves = struct.unpack("<%dH" % count, raw)
            vals = [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
        else:
            continue  # buffers (I64 position_ids, BOOL masks) are not weights
        out[name] = torch.tensor(vals, dtype=torch.float64).reshape(e["shape"])
    return out


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def attention(q, k, v, heads, causal):
    """q, k, v (T, C) → output (T, C) and weights (H, T, T)."""
    T, C = q.shape
    D = C // heads
    qh = q.reshape(T, heads, D).transpose(0, 1)  # (H, T, D)
    kh = k.reshape(T, heads, D).transpose(0, 1)
    vh = v.reshape(T, heads, D).transpose(0, 1)
    scores = qh @ kh.transpose(1, 2) / math.sqrt(D)  # (H, T, T)
    if causal:
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    out = (w @ vh).transpose(0, 1).reshape(T, C)
    return out, w


def gpt2_forward(t, cfg, ids):
    p = "transformer." if "transformer.wte.weight" in t else ""
    g = lambda n: t[p + n]
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    H, C, L = cfg["n_head"], cfg["n_embd"], cfg["n_layer"]
    T = len(ids)
    x = g("wte.weight")[ids] + g("wpe.weight")[:T]
    weights = []
    for i in range(L):
        b = "h.%d." % i
        a = layernorm(x, g(b + "ln_1.weight"), g(b + "ln_1.bias"), eps)
        qkv = a @ g(b + "attn.c_attn.weight") + g(b + "attn.c_attn.bias")  # Conv1D: x·W + b
        q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
        o, w = attention(q, k, v, H, causal=True)
        weights.append(w)
        x = x + o @ g(b + "attn.c_proj.weight") + g(b + "attn.c_proj.bias")
        m = layernorm(x, g(b + "ln_2.weight"), g(b + "ln_2.bias"), eps)
        x = x + gelu_tanh(m @ g(b + "mlp.c_fc.weight") + g(b + "mlp.c_fc.bias")) @ g(b + "mlp.c_proj.weight") \
            + g(b + "mlp.c_proj.bias")
    xf = layernorm(x, g("ln_f.weight"), g("ln_f.bias"), eps)
    unembed = t["lm_head.weight"] if "lm_head.weight" in t else g("wte.weight")  # nn.Linear [V, C]
    return weights, xf @ unembed.T


def bert_forward(t, cfg, ids):
    p = "bert." if "bert.embeddings.word_embeddings.weight" in t else ""

    def g(n):
        if p + n in t:
            return t[p + n]
        legacy = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        return t[p + legacy] if p + legacy in t else t[legacy]

    def head(n):
        if n in t:
            return t[n]
        return t[n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")]

    def linear(x, name, get=g):
        return x @ get(name + ".weight").T + get(name + ".bias")  # nn.Linear: x·Wᵀ + b

    def ln(x, name, get=g):
        return layernorm(x, get(name + ".weight"), get(name + ".bias"), cfg.get("layer_norm_eps", 1e-12))

    act = gelu_erf if cfg.get("hidden_act", "gelu") == "gelu" else gelu_tanh
    H, L = cfg["num_attention_heads"], cfg["num_hidden_layers"]
    T = len(ids)
    e = g("embeddings.word_embeddings.weight")
    x = e[ids] + g("embeddings.position_embeddings.weight")[:T] + g("embeddings.token_type_embeddings.weight")[0]
    x = ln(x, "embeddings.LayerNorm")
    weights = []
    for i in range(L):
        b = "encoder.layer.%d." % i
        q = linear(x, b + "attention.self.query")
        k = linear(x, b + "attention.self.key")
        v = linear(x, b + "attention.self.value")
        o, w = attention(q, k, v, H, causal=False)
        weights.append(w)
        x = ln(x + linear(o, b + "attention.output.dense"), b + "attention.output.LayerNorm")
        x = ln(x + linear(act(linear(x, b + "intermediate.dense")), b + "output.dense"), b + "output.LayerNorm")
    if "cls.predictions.bias" in t:
        h = ln(act(linear(x, "cls.predictions.transform.dense", head)), "cls.predictions.transform.LayerNorm", head)
        decoder = e if cfg.get("tie_word_embeddings", True) else t["cls.predictions.decoder.weight"]
        return weights, h @ decoder.T + t["cls.predictions.bias"]
    return weights, x @ e.T


def rms(x, w, eps):
    return w * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)


def rope_parameters(cfg):
    """(base, scaling or None) from either spelling of config.json."""
    p = cfg.get("rope_parameters")
    if p is not None:
        scaling = p if p.get("rope_type", "default") != "default" else None
        return p["rope_theta"], scaling
    return cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling")


def rope_frequencies(D, base, scaling):
    theta = [base ** (-2.0 * i / D) for i in range(D // 2)]
    if scaling is None:
        return theta
    assert scaling["rope_type"] == "llama3", scaling
    L = scaling["original_max_position_embeddings"]
    low, high, factor = scaling["low_freq_factor"], scaling["high_freq_factor"], scaling["factor"]
    out = []
    for t in theta:
        wavelength = 2.0 * math.pi / t
        if wavelength < L / high:
            out.append(t)
        elif wavelength > L / low:
            out.append(t / factor)
        else:
            s = (L / wavelength - low) / (high - low)
            out.append((1.0 - s) * t / factor + s * t)
    return out


def rotate(x, theta):
    """x (heads, T, D): each pair (i, i + D/2) at position m turned by the angle m·θᵢ."""
    T, half = x.shape[1], x.shape[2] // 2
    angle = torch.tensor([[m * t for t in theta] for m in range(T)])  # (T, D/2)
    c, s = torch.cos(angle), torch.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * c - b * s, b * c + a * s], dim=-1)


def modern_forward(t, cfg, ids):
    family = cfg["model_type"]
    C, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    Hkv = cfg.get("num_key_value_heads", H)
    D = cfg.get("head_dim") or C // H
    eps = cfg["rms_norm_eps"]
    theta = rope_frequencies(D, *rope_parameters(cfg))
    T = len(ids)

    def linear(x, name):
        y = x @ t[name + ".weight"].T
        return y + t[name + ".bias"] if name + ".bias" in t else y

    x = t["model.embed_tokens.weight"][ids]
    weights = []
    turned = []  # each layer's q and k after RoPE, (H, T, D): a head's k is its K/V head's
    for i in range(L):
        p = "model.layers.%d." % i
        a = rms(x, t[p + "input_layernorm.weight"], eps)
        q = linear(a, p + "self_attn.q_proj").reshape(T, H, D).transpose(0, 1)  # (H, T, D)
        k = linear(a, p + "self_attn.k_proj").reshape(T, Hkv, D).transpose(0, 1)  # (Hkv, T, D)
        v = linear(a, p + "self_attn.v_proj").reshape(T, Hkv, D).transpose(0, 1)
        if family == "qwen3":
            q = rms(q, t[p + "self_attn.q_norm.weight"], eps)
            k = rms(k, t[p + "self_attn.k_norm.weight"], eps)
        q, k = rotate(q, theta), rotate(k, theta)
        group = H // Hkv
        k = k.repeat_interleave(group, dim=0)  # query head h reads K/V head h // group
        v = v.repeat_interleave(group, dim=0)
        turned.append((q, k))
        scores = q @ k.transpose(1, 2) / math.sqrt(D)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        w = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        weights.append(w)
        x = x + linear((w @ v).transpose(0, 1).reshape(T, H * D), p + "self_attn.o_proj")
        m = rms(x, t[p + "post_attention_layernorm.weight"], eps)
        g = linear(m, p + "mlp.gate_proj")
        x = x + linear(g * torch.sigmoid(g) * linear(m, p + "mlp.up_proj"), p + "mlp.down_proj")
    xf = rms(x, t["model.norm.weight"], eps)
    unembed = t["lm_head.weight"] if "lm_head.weight" in t else t["model.embed_tokens.weight"]
    ROPE_EXTRAS.update(theta=theta, turned=turned)
    return weights, xf @ unembed.T


ROPE_EXTRAS = {}  # modern_forward's RoPE numbers of its last call, for golden()


def fmt(x):
    return float("%.9g" % float(x))


def sequences(family, V, seed):
    rng = random.Random(1000 + seed)
    # the real vocabularies: the ids of a sentence by the independent encoder @lenml/tokenizers on
    # the Hub's tokenizer.json ("The animal didn't cross the street because it was too tired.",
    # "Hello world"); Llama 3 and Llama 2 with the BOS their templates add, Qwen without
    if V == 128256:
        return [[128000, 791, 10065, 3287, 956, 5425, 279, 8761, 1606, 433, 574, 2288, 19781, 13], [128000, 9906, 1917]]
    if V == 151936:
        return [[785, 9864, 3207, 944, 5312, 279, 8592, 1576, 432, 572, 2238, 19227, 13], [9707, 1879]]
    if V == 32000:
        return [[1, 415, 8527, 1539, 28742, 28707, 3893, 272, 5948, 1096, 378, 403, 1368, 10272, 28723], [1, 22557, 1526]]
    if V > 1000:  # the real vocabulary: GPT-2's ids of a sentence (tiktoken / the Hub's tokenizer)
        return [[464, 5044, 1422, 470, 3272, 262, 4675, 780, 340, 373, 1165, 10032, 13], [15496, 995]]
    if family in ("gpt2", "llama", "qwen2", "qwen3"):
        return [[rng.randrange(V) for _ in range(8)], [rng.randrange(V) for _ in range(3)],
                [rng.randrange(V) for _ in range(32)]]
    # BERT: [CLS]=2 … [MASK]=4 … [SEP]=3
    words = lambda n: [rng.randrange(5, V) for _ in range(n)]
    return [[2] + words(3) + [4] + words(2) + [3], [2, 4, 3], [2] + words(14) + [4] + words(14) + [3]]


def logit_ids(V):
    if V > 100000:  # Llama 3's and Qwen's: ids across the whole vocabulary, the last ones included
        return [0, 1, 13, 279, 791, 1917, 9906, 19781, 50000, 100000, 128000, 128255, V - 1]
    if V == 32000:
        return [0, 1, 2, 13, 272, 415, 1526, 8527, 22557, 28723, 31999]
    if V > 1000:
        return [0, 1, 11, 13, 262, 318, 340, 373, 464, 995, 1165, 5044, 10032, 25000, 40000, 50256]
    return [0, 1, 2, 3, 4, 5, 17, 31, 42, 50, 63, 70, 77, 88, 94, 95]


def golden(folder, name):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    t = read_safetensors(os.path.join(folder, "model.safetensors"))
    family = cfg["model_type"]
    V = cfg["vocab_size"]
    H = cfg["n_head"] if family == "gpt2" else cfg["num_attention_heads"]
    L = cfg["n_layer"] if family == "gpt2" else cfg["num_hidden_layers"]
    seed = {"gpt2": 1, "bert": 3}.get(family, 7)  # one set of sequences per family: the variants of a model agree
    forward = {"gpt2": gpt2_forward, "bert": bert_forward}.get(family, modern_forward)
    out = []
    for s, ids in enumerate(sequences(family, V, seed)):
        weights, logits = forward(t, cfg, ids)
        T = len(ids)
        long = T > 16
        # a long sequence: two heads (the first and the last) and three rows, to keep the file small
        picks = [(0, 0), (L - 1, H - 1)] if long else [(l, h) for l in range(L) for h in range(H)]
        rows = [0, T // 2, T - 1] if long else list(range(T))
        lids = logit_ids(V)
        rope = {}
        if forward is modern_forward:  # the RoPE'd q and k of the picked heads, and θᵢ
            rope = {"rope_frequencies": [fmt(v) for v in ROPE_EXTRAS["theta"]],
                    "rope": [{"layer": l, "head": h, "rows": rows,
                              "query": [[fmt(v) for v in ROPE_EXTRAS["turned"][l][0][h][r]] for r in rows],
                              "key": [[fmt(v) for v in ROPE_EXTRAS["turned"][l][1][h][r]] for r in rows]}
                             for l, h in picks]}
        # the real vocabularies: each row's 5 likeliest ids and their probabilities, which the page
        # shows (softmax over the whole vocabulary in float64; ties by the smaller id)
        top = {}
        if V > 100000:
            probs = torch.softmax(logits, dim=-1)
            order = torch.sort(probs, dim=-1, descending=True, stable=True).indices[:, :5]
            top = {"top": [[int(i) for i in row] for row in order]}
            top["top_p"] = [[fmt(probs[t][i]) for i in top["top"][t]] for t in range(T)]
        out.append({
            "ids": ids,
            "attention": [{"layer": l, "head": h, "rows": rows,
                           "weights": [[fmt(v) for v in weights[l][h][r]] for r in rows]} for l, h in picks],
            "logit_ids": lids,
            "logits": [[fmt(row[i]) for i in lids] for row in logits],
            "logsumexp": [fmt(v) for v in torch.logsumexp(logits, dim=-1)],
            **rope,
            **top,
        })
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"family": family, "sha256": digest, "sequences": out}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    result = {
        "about": "Golden values of tests/pretrained/reference.py (float64 PyTorch, written from the published "
                 "architectures) for the folders of make_checkpoints.py; the tests compare our forward within 1e-4.",
        "checkpoints": {},
    }
    full = {}
    for name in sorted(os.listdir(root)):
        if not os.path.exists(os.path.join(root, name, "model.safetensors")):
            continue
        g = golden(os.path.join(root, name), name)
        # a variant of a model (another naming, prefix, buffers) gives the same numbers: say so once
        same = next((n for n, o in full.items() if o["sequences"] == g["sequences"]), None)
        full[name] = g
        result["checkpoints"][name] = {"sha256": g["sha256"], "same_as": same} if same else g
    json.dump(result, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
