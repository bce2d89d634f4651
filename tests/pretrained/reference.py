#!/usr/bin/env python3
"""An independent float64 PyTorch forward of GPT-2 and BERT, for golden values.

Written from the published architectures (Radford et al. 2019 / transformers'
modeling_gpt2.py; Devlin et al. 2019 / modeling_bert.py), not from our C++: it
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


def fmt(x):
    return float("%.9g" % float(x))


def sequences(family, V, seed):
    rng = random.Random(1000 + seed)
    if V > 1000:  # the real vocabulary: GPT-2's ids of a sentence (tiktoken / the Hub's tokenizer)
        return [[464, 5044, 1422, 470, 3272, 262, 4675, 780, 340, 373, 1165, 10032, 13], [15496, 995]]
    if family == "gpt2":
        return [[rng.randrange(V) for _ in range(8)], [rng.randrange(V) for _ in range(3)],
                [rng.randrange(V) for _ in range(32)]]
    # BERT: [CLS]=2 … [MASK]=4 … [SEP]=3
    words = lambda n: [rng.randrange(5, V) for _ in range(n)]
    return [[2] + words(3) + [4] + words(2) + [3], [2, 4, 3], [2] + words(14) + [4] + words(14) + [3]]


def logit_ids(V):
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
    seed = 1 if family == "gpt2" else 3  # one set of sequences per family: the variants of a model agree
    out = []
    for s, ids in enumerate(sequences(family, V, seed)):
        weights, logits = (gpt2_forward if family == "gpt2" else bert_forward)(t, cfg, ids)
        T = len(ids)
        long = T > 16
        # a long sequence: two heads (the first and the last) and three rows, to keep the file small
        picks = [(0, 0), (L - 1, H - 1)] if long else [(l, h) for l in range(L) for h in range(H)]
        rows = [0, T // 2, T - 1] if long else list(range(T))
        lids = logit_ids(V)
        out.append({
            "ids": ids,
            "attention": [{"layer": l, "head": h, "rows": rows,
                           "weights": [[fmt(v) for v in weights[l][h][r]] for r in rows]} for l, h in picks],
            "logit_ids": lids,
            "logits": [[fmt(row[i]) for i in lids] for row in logits],
            "logsumexp": [fmt(v) for v in torch.logsumexp(logits, dim=-1)],
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
