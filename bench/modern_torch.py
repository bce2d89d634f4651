#!/usr/bin/env python3
"""PyTorch float32, 1 thread, beside the wasm engine on a Llama / Qwen2 Hub folder (bench/modern.sh):
the same weights (BF16 or F16 widened to float32 on load), a Llama block written from the published
architecture (modeling_llama.py: RMSNorm, RoPE in rotate_half layout with Llama 3's scaling, grouped
K/V heads, SwiGLU; Qwen2's q/k/v biases), with a KV cache for generating. Benchmark only, not a test.

    modern_torch.py DIR [--lengths 16,128,512] [--repeat 5]   one JSON line per measurement
    modern_torch.py DIR --onnx OUT.onnx                         the full forward (ids [T] → logits [T, V],
                                                               T dynamic) as ONNX for onnxruntime-web
"""
import argparse
import json
import math
import os
import struct
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
import torch  # noqa: E402

torch.set_num_threads(1)
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def load(folder):
    """config.json and model.safetensors → (config, {name: float32 tensor})."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        data = bytearray(f.read())
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    start = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = torch.frombuffer(data, dtype=DTYPES[t["dtype"]], count=(b - a) // (4 if t["dtype"] == "F32" else 2), offset=start + a)
        out[name] = raw.to(torch.float32).reshape(t["shape"])
    return cfg, out


def rope_theta(cfg, D):
    """θᵢ = base^(−2i/D), with Llama 3's rescaling by wavelength (modeling_rope_utils.py)."""
    p = cfg.get("rope_parameters") or {}
    base = cfg.get("rope_theta", p.get("rope_theta", 10000.0))
    theta = [base ** (-2 * i / D) for i in range(D // 2)]
    s = cfg.get("rope_scaling") or p
    if s and s.get("rope_type", s.get("type")) == "llama3":
        L, lo, hi, fac = s["original_max_position_embeddings"], s["low_freq_factor"], s["high_freq_factor"], s["factor"]
        out = []
        for t in theta:
            wave = 2 * math.pi / t
            if wave < L / hi:
                out.append(t)
            elif wave > L / lo:
                out.append(t / fac)
            else:
                k = (L / wave - lo) / (hi - lo)
                out.append((1 - k) * t / fac + k * t)
        theta = out
    return torch.tensor(theta, dtype=torch.float32)


class Llama(torch.nn.Module):
    def __init__(self, cfg, w):
        super().__init__()
        self.cfg, self.w = cfg, w
        self.H, self.Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.C, self.L = cfg["hidden_size"], cfg["num_hidden_layers"]
        self.D = cfg.get("head_dim") or self.C // self.H
        self.eps = cfg.get("rms_norm_eps", 1e-6)
        self.theta = rope_theta(cfg, self.D)
        self.unembed = w.get("lm_head.weight", w["model.embed_tokens.weight"])

    def rms(self, x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * g

    def rope(self, x, positions):  # x [h, T, D], rotate_half layout
        a = positions[:, None].to(torch.float32) * self.theta[None, :]
        cos, sin = torch.cat([a.cos(), a.cos()], -1), torch.cat([a.sin(), a.sin()], -1)
        half = self.D // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], -1)
        return x * cos + rot * sin

    def linear(self, x, name):
        y = x @ self.w[name + ".weight"].T
        b = self.w.get(name + ".bias")
        return y if b is None else y + b

    def forward(self, ids, cache=None):
        """ids [T] (after the cache's positions) → logits [T, V]; cache: a list of (K, V) per layer, extended."""
        w, H, Hkv, D = self.w, self.H, self.Hkv, self.D
        past = 0 if not cache else cache[0][0].shape[1]
        positions = torch.arange(ids.shape[0]) + past
        x = w["model.embed_tokens.weight"][ids]
        for l in range(self.L):
            p = "model.layers.%d." % l
            a = self.rms(x, w[p + "input_layernorm.weight"])
            q = self.linear(a, p + "self_attn.q_proj").view(-1, H, D).transpose(0, 1)  # [H, T, D] (-1: T stays dynamic in ONNX)
            k = self.linear(a, p + "self_attn.k_proj").view(-1, Hkv, D).transpose(0, 1)
            v = self.linear(a, p + "self_attn.v_proj").view(-1, Hkv, D).transpose(0, 1)
            q, k = self.rope(q, positions), self.rope(k, positions)
            if cache is not None:
                if len(cache) > l:
                    k = torch.cat([cache[l][0], k], 1)
                    v = torch.cat([cache[l][1], v], 1)
                    cache[l] = (k, v)
                else:
                    cache.append((k, v))
            # query head h reads K/V head h // (H / Hkv) (expand + reshape: repeat_interleave's ONNX
            # export fixes the traced length)
            k = k[:, None].expand(-1, H // Hkv, -1, -1).reshape(H, -1, D)
            v = v[:, None].expand(-1, H // Hkv, -1, -1).reshape(H, -1, D)
            s = q @ k.transpose(1, 2) / math.sqrt(D)  # [H, T, past + T]
            # the causal mask from the scores' own shape (a traced export keeps T dynamic)
            s = s + torch.full_like(s[0], float("-inf")).triu(past + 1)
            o = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(-1, H * D)
            x = x + self.linear(o, p + "self_attn.o_proj")
            m = self.rms(x, w[p + "post_attention_layernorm.weight"])
            g = self.linear(m, p + "mlp.gate_proj")
            x = x + self.linear(torch.nn.functional.silu(g) * self.linear(m, p + "mlp.up_proj"), p + "mlp.down_proj")
        return self.rms(x, w["model.norm.weight"]) @ self.unembed.T


def ids_of(T, V):
    return torch.tensor([(i * 7919 + 3) % V for i in range(T)], dtype=torch.int64)


def timed(f):
    w, c = time.perf_counter(), time.process_time()
    v = f()
    return v, time.perf_counter() - w, time.process_time() - c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--lengths", default="16,128,512")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--onnx")
    a = ap.parse_args()
    (cfg, w), wall, cpu = timed(lambda: load(a.dir))
    model = Llama(cfg, w)
    V = cfg["vocab_size"]
    if a.onnx:
        with torch.no_grad():
            torch.onnx.export(model, (ids_of(8, V),), a.onnx, input_names=["ids"], output_names=["logits"],
                              dynamic_axes={"ids": {0: "T"}, "logits": {0: "T"}}, opset_version=14)
        return 0
    print(json.dumps({"impl": "torch", "what": "load", "wall_s": round(wall, 4), "cpu_s": round(cpu, 4),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))
    with torch.no_grad():
        for T in [int(t) for t in a.lengths.split(",")]:
            ids = ids_of(T, V)
            model(ids)  # warm-up
            runs = [timed(lambda: model(ids)) for _ in range(a.repeat)]
            runs.sort(key=lambda r: r[1])
            med = runs[len(runs) // 2]
            print(json.dumps({"impl": "torch", "what": "forward", "T": T, "wall_s": round(med[1], 5), "cpu_s": round(med[2], 5),
                              "best_s": round(runs[0][1], 5)}))
            # one token after T with the KV cache: one untimed prefill, then each step from its own copy
            cache = []
            nxt = model(ids, cache)[-1].argmax().view(1)
            steps = []
            for _ in range(a.repeat + 1):
                mine = list(cache)
                steps.append(timed(lambda: model(nxt, mine)))
            steps = steps[1:]  # the first was the warm-up
            steps.sort(key=lambda r: r[1])
            med = steps[len(steps) // 2]
            print(json.dumps({"impl": "torch", "what": "token", "T": T, "wall_s": round(med[1], 5), "cpu_s": round(med[2], 5),
                              "best_s": round(steps[0][1], 5)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
