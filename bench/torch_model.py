#!/usr/bin/env python3
"""An independent PyTorch implementation of the training model of issue #12.

Written from the issue's model specification (not from our C++), so that the
gradients `attn grad` dumps can be checked against PyTorch's autograd, and so
that PyTorch can be timed on exactly the same model, batch and optimizer.

Dimension letters: B sequences, T tokens, C d_model, H heads, D = C/H, F mlp
width, V vocabulary, L layers.

  x = E[ids] + P[0:T]                          E (V×C); P learned (T_max×C), sinusoidal or none
  per layer l:  a = LN1(x)                     (a = x without layernorm)
                x = x + MHA(a)                 W_Q, W_K, W_V, W_O (C×C), no biases, head h = columns h·D … (h+1)·D−1
                if F > 0: m = LN2(x);  x = x + GELU(m·W_in + b_in)·W_out + b_out
  logits = LN_f(x)·W_U                         W_U (C×V), or Eᵀ when tied
  loss   = mean natural-log cross-entropy over positions whose target is >= 0

LayerNorm: biased variance, eps 1e-5, gain and bias. GELU: the exact erf form.

The architecture options of pretrained checkpoints (src/checkpoints/pretrained.hpp; absent
keys of a dump's config = the defaults above):
  attn_bias         Q = a·W_Q + b_Q, K, V likewise, MHA output concat·W_O + b_O
  activation        "gelu_erf" (above) or "gelu_tanh": 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))
  ln_eps            every LayerNorm's epsilon
  norm              "pre" (above) or "post": x = LN1(x + MHA(x)); x = LN2(x + MLP(x)); no LN_f
  token_types       x += TT[0] (token type 0 everywhere), TT (types×C)
  embed_layernorm   x = LN_e(E[ids] + P + TT) before the first layer
  output_transform  h = LN_t(act(h·W_t + b_t)) before the unembedding (BERT's MLM head)
  output_bias       logits += b_U
The modern decoders' options (Llama, Qwen; written from the Hugging Face Llama/Qwen
architecture as docs/modern.md states it, D = head_dim, H_kv = kv_heads):
  positional rope   no P; each head's q and k rotated: with θᵢ = rope_base^(−2i/D) and
                    cos/sin of t·θ repeated over the two halves, q·cos + rotate_half(q)·sin
                    (rotate_half(x) = [−x₂, x₁]); rope_scaling "llama3" rescales θ as
                    Hugging Face's _compute_llama3_parameters (factor, low/high_freq_factor,
                    rope_original_context)
  positional alibi  no P; −m_h·|i − j| added to head h's scaled scores, the slopes of the
                    ALiBi paper's get_slopes (a power of two H: 2^(−8h/H))
  rmsnorm           every block norm and LN_f: g ⊙ x / sqrt(mean(x²) + eps), no bias
  gated_mlp         MLP(m) = (act(m·W_gate + b_gate) ⊙ (m·W_in + b_in))·W_out + b_out
  mlp_bias          the MLP's biases (default true)
  activation "silu" x·σ(x)
  kv_heads, head_dim  W_Q (C×H·D), W_K, W_V (C×H_kv·D), W_O (H·D×C); query head h reads
                    K/V head h // (H / H_kv) (repeat_kv)
  qkv_bias          biases on Q, K and V, none on O
  qk_norm           each head's q and k RMSNormed over D (gains q_norm.gain, k_norm.gain) before RoPE
Sinusoidal, interleaved: P(pos, 2i) = sin(pos / 10000^(2i/C)), P(pos, 2i+1) = cos(same angle).
Masks: causal (key j visible to query i iff j <= i) and padding (keys at or past a
sequence's length are hidden from every query); a fully hidden row has zero weights.

Modes
  torch_model.py --check DUMP.json [DUMP.json ...] [--quiet] [--tolerance 1e-4]
      Loads an `attn grad --format json` dump: its params are the weights, its batch the
      input. Computes the loss and the autograd gradients in float64 and prints, per
      parameter,
          rel = max_i |g_ours_i − g_torch_i| / max(max_i |g_torch_i|, 1e-8)
      (one number per tensor: the worst element's error relative to the tensor's scale),
      and for the loss  |loss_ours − loss_torch| / max(|loss_torch|, 1e-8).
      Exit 1 if any of them exceeds --tolerance (default 1e-4), or a name or shape differs.
      Per dump, the last line is machine-readable:
          RESULT ok|FAIL max_rel=<x> worst=<parameter or loss> loss_rel=<x> file=<path>

  torch_model.py --bench DUMP.json [--lr 3e-3] [--steps 20] [--budget 2] [--serve]
      float32, torch.set_num_threads(1). The dump's params are the initial weights and
      its batch the one fixed batch; AdamW (betas (0.9, 0.999), eps 1e-8, weight decay 0)
      steps on that batch. Prints one JSON line {"losses": [loss before step 1 … before
      step --steps]}, i.e. the loss of each of the first --steps steps, then times steps
      over --budget seconds and prints {"steps", "seconds", "steps_per_s"}.
      With --serve it then reads commands from stdin, one per line: "time SECONDS" runs
      steps for that long and prints {"steps", "seconds", "steps_per_s", "cpu_seconds"};
      "quit" (or end of input) exits. bench/train.mjs drives it this way so that the
      process stays warm between interleaved rounds.

  torch_model.py --selftest
      torch.autograd.gradcheck in float64 on random small configs covering every option,
      plus a comparison of the forward loss with a plain-loop NumPy implementation.
"""

import argparse
import json
import math
import os
import sys
import time

# One thread in every library torch may call: torch.set_num_threads(1) covers torch's own
# OpenMP pool; Debian's torch does its matrix products in the system BLAS (libblas.so.3,
# OpenBLAS when libopenblas0 is installed, as libtorch1.13 recommends), whose pthread
# build has its own pool. Set before the import, since the pools are made at load time.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import torch
import torch.nn.functional as F

POSITIONALS = ("none", "sinusoidal", "learned", "rope", "alibi")
# the architecture options and their defaults (our own models)
OPTION_DEFAULTS = {"attn_bias": False, "activation": "gelu_erf", "ln_eps": 1e-5, "norm": "pre", "token_types": 0,
                   "embed_layernorm": False, "output_transform": False, "output_bias": False,
                   "rope_base": 10000.0, "rope_scaling": "none", "rope_factor": 8.0, "rope_low_freq_factor": 1.0,
                   "rope_high_freq_factor": 4.0, "rope_original_context": 8192, "rmsnorm": False, "gated_mlp": False,
                   "mlp_bias": True, "kv_heads": 0, "head_dim": 0, "qkv_bias": False, "qk_norm": False}


def opt(cfg, key):
    return cfg.get(key, OPTION_DEFAULTS[key])


# ---- the model ---------------------------------------------------------------------
def parameter_shapes(cfg):
    """Name → shape of every parameter of a config, in the issue's naming."""
    V, C, F_ = cfg["vocab"], cfg["d_model"], cfg["mlp"]
    D, Hkv = head_dim(cfg), kv_heads(cfg)
    QC, KC = cfg["heads"] * D, Hkv * D
    norm_bias = not opt(cfg, "rmsnorm")
    shapes = {"embed": (V, C)}
    if cfg["positional"] == "learned":
        shapes["pos"] = (cfg["context"], C)
    if opt(cfg, "token_types") > 0:
        shapes["token_type"] = (opt(cfg, "token_types"), C)
    if opt(cfg, "embed_layernorm"):
        shapes["embed_ln.gain"] = (C,)
        shapes["embed_ln.bias"] = (C,)
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        if cfg["layernorm"]:
            shapes[p + "ln1.gain"] = (C,)
            if norm_bias:
                shapes[p + "ln1.bias"] = (C,)
        for w, rows, cols in (("query", C, QC), ("key", C, KC), ("value", C, KC), ("output", QC, C)):
            shapes[p + "w_" + w] = (rows, cols)
            if opt(cfg, "attn_bias") or (opt(cfg, "qkv_bias") and w != "output"):
                shapes[p + "b_" + w] = (cols,)
        if opt(cfg, "qk_norm"):
            shapes[p + "q_norm.gain"] = (D,)
            shapes[p + "k_norm.gain"] = (D,)
        if F_ > 0:
            if cfg["layernorm"]:
                shapes[p + "ln2.gain"] = (C,)
                if norm_bias:
                    shapes[p + "ln2.bias"] = (C,)
            if opt(cfg, "gated_mlp"):
                shapes[p + "mlp.w_gate"] = (C, F_)
                if opt(cfg, "mlp_bias"):
                    shapes[p + "mlp.b_gate"] = (F_,)
            shapes[p + "mlp.w_in"] = (C, F_)
            if opt(cfg, "mlp_bias"):
                shapes[p + "mlp.b_in"] = (F_,)
            shapes[p + "mlp.w_out"] = (F_, C)
            if opt(cfg, "mlp_bias"):
                shapes[p + "mlp.b_out"] = (C,)
    if cfg["layernorm"] and opt(cfg, "norm") == "pre":
        shapes["final_ln.gain"] = (C,)
        if norm_bias:
            shapes["final_ln.bias"] = (C,)
    if opt(cfg, "output_transform"):
        shapes["head.w_transform"] = (C, C)
        shapes["head.b_transform"] = (C,)
        shapes["head.ln.gain"] = (C,)
        shapes["head.ln.bias"] = (C,)
    if not cfg["tied"]:
        shapes["unembed"] = (C, V)
    if opt(cfg, "output_bias"):
        shapes["unembed_bias"] = (V,)
    return shapes


def head_dim(cfg):
    return opt(cfg, "head_dim") or cfg["d_model"] // cfg["heads"]


def kv_heads(cfg):
    return opt(cfg, "kv_heads") or cfg["heads"]


def rope_inv_freq(cfg, D):
    """θᵢ (D/2), float64: rope_base^(−2i/D), rescaled as Hugging Face's llama3 rule."""
    base = float(opt(cfg, "rope_base"))
    inv = 1.0 / base ** (torch.arange(0, D, 2, dtype=torch.float64) / D)
    if opt(cfg, "rope_scaling") != "llama3":
        return inv
    factor, low, high = (float(opt(cfg, k)) for k in ("rope_factor", "rope_low_freq_factor", "rope_high_freq_factor"))
    old = float(opt(cfg, "rope_original_context"))
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


def alibi_slopes(n):
    """The ALiBi paper's get_slopes: a geometric sequence for a power of two, else the
    closest power of two's and every other one of twice as many."""
    def power_of_2(m):
        start = 2 ** (-2 ** -(math.log2(m) - 3))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def validate_config(cfg):
    for k in ("vocab", "context", "layers", "d_model", "heads", "mlp"):
        if not isinstance(cfg.get(k), int):
            raise ValueError(f"config.{k} must be an integer, got {cfg.get(k)!r}")
    assert cfg["layers"] >= 1, f"layers {cfg['layers']} must be >= 1"
    assert cfg["heads"] >= 1 and (opt(cfg, "head_dim") or cfg["d_model"] % cfg["heads"] == 0), \
        f"d_model {cfg['d_model']} is not divisible by {cfg['heads']} heads"
    assert cfg["mlp"] >= 0, f"mlp {cfg['mlp']} must be >= 0"
    assert cfg["positional"] in POSITIONALS, f"positional {cfg['positional']!r} not in {POSITIONALS}"
    for k in ("layernorm", "causal", "scale", "tied"):
        assert isinstance(cfg.get(k), bool), f"config.{k} must be a boolean, got {cfg.get(k)!r}"
    for k in ("attn_bias", "embed_layernorm", "output_transform", "output_bias"):
        assert isinstance(opt(cfg, k), bool), f"config.{k} must be a boolean, got {cfg.get(k)!r}"
    assert opt(cfg, "activation") in ("gelu_erf", "gelu_tanh", "silu"), f"activation {cfg.get('activation')!r}"
    assert cfg["heads"] % kv_heads(cfg) == 0, "kv_heads must divide heads"
    assert opt(cfg, "rope_scaling") in ("none", "llama3"), f"rope_scaling {cfg.get('rope_scaling')!r}"
    assert opt(cfg, "norm") in ("pre", "post"), f"norm {cfg.get('norm')!r}"
    assert opt(cfg, "norm") == "pre" or cfg["layernorm"], "post-LN needs layernorm"
    assert isinstance(opt(cfg, "token_types"), int) and opt(cfg, "token_types") >= 0
    assert isinstance(opt(cfg, "ln_eps"), (int, float)) and opt(cfg, "ln_eps") > 0


def sinusoidal(T, C, dtype):
    """P (T×C), interleaved: column 2i = sin(pos / 10000^(2i/C)), column 2i+1 = cos(same angle)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]            # (T, 1)
    j = torch.arange(C)
    two_i = (j - (j % 2)).to(torch.float64)                        # 2i for columns 2i and 2i+1
    angle = pos / torch.pow(torch.tensor(10000.0, dtype=torch.float64), two_i / C)  # (T, C)
    p = torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle))
    return p.to(dtype)


def allowed_mask(B, T, causal, lengths):
    """(B, T, T) bool, [b, i, j] = query i of sequence b may attend to key j; None = all allowed."""
    if not causal and lengths is None:
        return None
    allowed = torch.ones(B, T, T, dtype=torch.bool)
    if causal:
        allowed &= torch.tril(torch.ones(T, T, dtype=torch.bool))[None]
    if lengths is not None:
        keys_real = torch.arange(T)[None, :] < lengths[:, None]     # (B, T) over keys
        allowed &= keys_real[:, None, :]
    return allowed


def model_loss(cfg, P, ids, targets, lengths=None, sin_table=None):
    """Mean cross-entropy of the batch. P: name → tensor; ids, targets: (B, T) int64
    (target −1 = none); lengths: (B,) int64 or None (every sequence fills T)."""
    B, T = ids.shape
    C, H = cfg["d_model"], cfg["heads"]
    D, Hkv = head_dim(cfg), kv_heads(cfg)
    E = P["embed"]
    eps = float(opt(cfg, "ln_eps"))
    post = opt(cfg, "norm") == "post"

    def rms(v, gain):
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * gain

    def ln(v, name):
        if opt(cfg, "rmsnorm") and name != "embed_ln" and name != "head.ln":
            return rms(v, P[name + ".gain"])
        return F.layer_norm(v, (C,), P[name + ".gain"], P[name + ".bias"], eps=eps)

    def act(v):
        if opt(cfg, "activation") == "silu":
            return F.silu(v)
        if opt(cfg, "activation") == "gelu_tanh":  # GPT-2's gelu_new, written out
            return 0.5 * v * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
        return F.gelu(v)                                           # exact erf GELU

    def linear(v, w, b):
        y = v @ P[w]
        return y + P[b] if b in P else y

    def mlp_linear(v, w, b):
        y = v @ P[w]
        return y + P[b] if opt(cfg, "mlp_bias") else y

    def rotate_half(v):
        half = v.shape[-1] // 2
        return torch.cat((-v[..., half:], v[..., :half]), dim=-1)

    if cfg["positional"] == "rope":
        freqs = torch.arange(T, dtype=torch.float64)[:, None] * rope_inv_freq(cfg, D)[None, :]  # (T, D/2)
        emb = torch.cat((freqs, freqs), dim=-1)
        rope_cos, rope_sin = emb.cos().to(E.dtype), emb.sin().to(E.dtype)  # (T, D)
    if cfg["positional"] == "alibi":
        distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs().to(E.dtype)  # (T, T)
        alibi = -torch.tensor(alibi_slopes(H), dtype=E.dtype)[:, None, None] * distance        # (H, T, T)

    x = E[ids]                                                     # (B, T, C)
    if cfg["positional"] == "learned":
        x = x + P["pos"][:T]
    elif cfg["positional"] == "sinusoidal":
        x = x + (sin_table if sin_table is not None else sinusoidal(T, C, x.dtype))
    if opt(cfg, "token_types") > 0:
        x = x + P["token_type"][0]
    if opt(cfg, "embed_layernorm"):
        x = ln(x, "embed_ln")
    allowed = allowed_mask(B, T, cfg["causal"], lengths)
    if allowed is not None:
        row_any = allowed.any(dim=-1, keepdim=True)                # (B, T, 1): rows with a visible key
        full_rows = bool(row_any.all())
        allowed = allowed[:, None]                                 # (B, 1, T, T), broadcast over heads
        row_any = row_any[:, None]
    scale = 1.0 / math.sqrt(D) if cfg["scale"] else 1.0

    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        a = ln(x, p + "ln1") if cfg["layernorm"] and not post else x
        q = linear(a, p + "w_query", p + "b_query").view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = linear(a, p + "w_key", p + "b_key").view(B, T, Hkv, D).transpose(1, 2)    # (B, H_kv, T, D)
        v = linear(a, p + "w_value", p + "b_value").view(B, T, Hkv, D).transpose(1, 2)  # (B, H_kv, T, D)
        if opt(cfg, "qk_norm"):
            q, k = rms(q, P[p + "q_norm.gain"]), rms(k, P[p + "k_norm.gain"])
        if cfg["positional"] == "rope":
            q = q * rope_cos + rotate_half(q) * rope_sin
            k = k * rope_cos + rotate_half(k) * rope_sin
        k = k.repeat_interleave(H // Hkv, dim=1)                   # (B, H, T, D): query head h reads h // (H/H_kv)
        v = v.repeat_interleave(H // Hkv, dim=1)
        s = (q @ k.transpose(-2, -1)) * scale                      # (B, H, T, T)
        if cfg["positional"] == "alibi":
            s = s + alibi
        if allowed is None:
            w = torch.softmax(s, dim=-1)
        elif full_rows:
            w = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
        else:
            # A fully hidden row: softmax of zeros (finite), then weights forced to 0,
            # so no 0/0 and a zero gradient there.
            s = s.masked_fill(~allowed, float("-inf")).masked_fill(~row_any, 0.0)
            w = torch.softmax(s, dim=-1) * row_any
        o = (w @ v).transpose(1, 2).reshape(B, T, H * D)           # heads side by side (B, T, H·D)
        x = x + linear(o, p + "w_output", p + "b_output")
        if post:
            x = ln(x, p + "ln1")
        if cfg["mlp"] > 0:
            m = ln(x, p + "ln2") if cfg["layernorm"] and not post else x
            h = mlp_linear(m, p + "mlp.w_in", p + "mlp.b_in")     # (B, T, F)
            h = act(mlp_linear(m, p + "mlp.w_gate", p + "mlp.b_gate")) * h if opt(cfg, "gated_mlp") else act(h)
            x = x + mlp_linear(h, p + "mlp.w_out", p + "mlp.b_out")
            if post:
                x = ln(x, p + "ln2")
    if cfg["layernorm"] and not post:
        x = ln(x, "final_ln")
    if opt(cfg, "output_transform"):
        x = ln(act(x @ P["head.w_transform"] + P["head.b_transform"]), "head.ln")
    W_U = E.t() if cfg["tied"] else P["unembed"]
    logits = x @ W_U                                               # (B, T, V)
    if opt(cfg, "output_bias"):
        logits = logits + P["unembed_bias"]
    return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T), ignore_index=-1, reduction="mean")


# ---- dumps -------------------------------------------------------------------------
def load_dump(path):
    with open(path) as f:
        dump = json.load(f)
    cfg = dict(dump["config"])
    validate_config(cfg)
    batch = dump["batch"]
    ids = torch.tensor(batch["ids"], dtype=torch.int64)
    targets = torch.tensor(batch["targets"], dtype=torch.int64)
    assert ids.dim() == 2 and ids.shape == targets.shape, f"ids {tuple(ids.shape)} vs targets {tuple(targets.shape)}"
    lengths = batch.get("lengths")
    lengths = torch.tensor(lengths, dtype=torch.int64) if lengths is not None else None
    if lengths is not None:
        assert lengths.shape == (ids.shape[0],), f"lengths {tuple(lengths.shape)} for B = {ids.shape[0]}"
    assert int(ids.min()) >= 0 and int(ids.max()) < cfg["vocab"], "ids outside [0, vocab)"
    assert ids.shape[1] <= cfg["context"], f"T {ids.shape[1]} > context {cfg['context']}"
    return dump, cfg, ids, targets, lengths


def tensors_of(cfg, named, dtype, what):
    """Dump arrays → tensors, checking names and shapes against the spec's layout."""
    shapes = parameter_shapes(cfg)
    problems = []
    missing = [n for n in shapes if n not in named]
    extra = [n for n in named if n not in shapes]
    if missing:
        problems.append(f"{what}: missing {missing}")
    if extra:
        problems.append(f"{what}: unexpected {extra}")
    out = {}
    for name, shape in shapes.items():
        if name not in named:
            continue
        t = torch.tensor(named[name], dtype=dtype)
        if tuple(t.shape) != shape:
            problems.append(f"{what}.{name}: shape {tuple(t.shape)}, the spec says {shape}")
        out[name] = t
    return out, problems


def check(path, tolerance, quiet):
    dump, cfg, ids, targets, lengths = load_dump(path)
    params, problems = tensors_of(cfg, dump["params"], torch.float64, "params")
    ours, p2 = tensors_of(cfg, dump["grads"], torch.float64, "grads")
    problems += p2
    if problems:
        for p in problems:
            print(p)
        print(f"RESULT FAIL max_rel=inf worst=layout loss_rel=nan file={path}")
        return 1
    for t in params.values():
        t.requires_grad_(True)
    loss = model_loss(cfg, params, ids, targets, lengths)
    names = list(params)
    grads = torch.autograd.grad(loss, [params[n] for n in names])
    rows = []
    by_name = dict(zip(names, grads))
    for name, g in zip(names, grads):
        diff = (ours[name] - g).abs().max().item()
        scale = g.abs().max().item()
        if name.endswith(".b_key"):
            # exactly 0 in exact arithmetic: q·b_K adds the same number to every score of
            # a row, which the softmax ignores; float leaves rounding noise, judged on
            # the scale of the same layer's b_query gradient
            scale = max(scale, by_name[name[: -len("b_key")] + "b_query"].abs().max().item())
        rel = diff / max(scale, 1e-8)
        if not math.isfinite(rel):
            rel = math.inf
        rows.append((name, tuple(g.shape), scale, diff, rel))
    loss_t = loss.item()
    loss_o = float(dump["loss"])
    loss_rel = abs(loss_o - loss_t) / max(abs(loss_t), 1e-8)
    worst = max(rows, key=lambda r: r[4])
    failed = [r for r in rows if not r[4] <= tolerance] + ([("loss",)] if not loss_rel <= tolerance else [])
    if not quiet or failed:
        w = max(len(r[0]) for r in rows)
        print(f"{'parameter':<{w}}  {'shape':<10}  {'max|g_torch|':>12}  {'max|diff|':>10}  {'rel':>9}")
        for name, shape, scale, diff, rel in rows:
            flag = "" if rel <= tolerance else "  <-- FAIL"
            print(f"{name:<{w}}  {'x'.join(map(str, shape)):<10}  {scale:12.4e}  {diff:10.3e}  {rel:9.2e}{flag}")
    print(f"loss: ours {loss_o:.9g}, torch {loss_t:.9g}, rel {loss_rel:.2e}" + ("" if loss_rel <= tolerance else "  <-- FAIL"))
    max_rel = max(worst[4], loss_rel)
    worst_name = worst[0] if worst[4] >= loss_rel else "loss"
    print(f"RESULT {'FAIL' if failed else 'ok'} max_rel={max_rel:.3e} worst={worst_name} loss_rel={loss_rel:.3e} file={path}")
    return 1 if failed else 0


# ---- the benchmark -----------------------------------------------------------------
def loaded_blas():
    """The BLAS library this process has mapped (Debian's torch uses the system libblas.so.3:
    the slow reference BLAS unless OpenBLAS, BLIS or MKL provides it)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() or "mkl" in line.lower()}
    except OSError:
        return "unknown"
    libs = sorted(l for l in libs if l.startswith("/"))
    return ", ".join(os.path.relpath(l, "/usr/lib/x86_64-linux-gnu") if l.startswith("/usr/lib/x86_64-linux-gnu") else l
                     for l in libs) or "none mapped"


def bench(path, lr, steps, budget, serve):
    torch.set_num_threads(1)
    dump, cfg, ids, targets, lengths = load_dump(path)
    params, problems = tensors_of(cfg, dump["params"], torch.float32, "params")
    if problems:
        raise SystemExit("; ".join(problems))
    leaves = [t.requires_grad_(True) for t in params.values()]
    opt = torch.optim.AdamW(leaves, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    sin_table = sinusoidal(ids.shape[1], cfg["d_model"], torch.float32) if cfg["positional"] == "sinusoidal" else None

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model_loss(cfg, params, ids, targets, lengths, sin_table)
        loss.backward()
        opt.step()
        return loss

    losses = [step().item() for _ in range(steps)]
    print(json.dumps({"impl": "torch", "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "blas": loaded_blas(), "losses": losses}), flush=True)

    def timed(seconds):
        for _ in range(3):  # warm-up
            step()
        n = 0
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            step()
            n += 1
            el = time.perf_counter() - t0
            if el >= seconds:
                break
        return {"steps": n, "seconds": el, "steps_per_s": n / el, "cpu_seconds": time.process_time() - c0}

    if not serve:
        print(json.dumps(timed(budget)), flush=True)
        return 0
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "quit":
            break
        if cmd[0] == "time":
            print(json.dumps(timed(float(cmd[1]))), flush=True)
        else:
            print(json.dumps({"error": f"unknown command {line.strip()!r}"}), flush=True)
    return 0


# ---- self-test: gradcheck and an independent plain-loop forward ---------------------
def numpy_loss(cfg, P, ids, targets, lengths):
    """The same model in plain per-token loops over NumPy float64 (no torch ops), for
    checking the torch forward: explicit LayerNorm, erf GELU, masked softmax, CE."""
    import numpy as np
    P = {k: v.detach().numpy().astype(np.float64) for k, v in P.items()}
    B, T = ids.shape
    C, H = cfg["d_model"], cfg["heads"]
    D = C // H
    ids = ids.numpy()
    targets = targets.numpy()

    def layer_norm(row, g, b):
        mu = sum(row) / C
        var = sum((r - mu) ** 2 for r in row) / C
        return [(row[c] - mu) / math.sqrt(var + 1e-5) * g[c] + b[c] for c in range(C)]

    def matvec(row, W):  # row (n) · W (n×m)
        return [sum(row[i] * W[i, j] for i in range(len(row))) for j in range(W.shape[1])]

    total, count = 0.0, 0
    for b in range(B):
        n = T if lengths is None else int(lengths[b])
        xs = []
        for t in range(T):
            row = [P["embed"][ids[b, t], c] for c in range(C)]
            for c in range(C):
                if cfg["positional"] == "learned":
                    row[c] += P["pos"][t, c]
                elif cfg["positional"] == "sinusoidal":
                    ang = t / 10000.0 ** ((c - c % 2) / C)
                    row[c] += math.sin(ang) if c % 2 == 0 else math.cos(ang)
            xs.append(row)
        for l in range(cfg["layers"]):
            p = f"layers.{l}."
            a = [layer_norm(r, P[p + "ln1.gain"], P[p + "ln1.bias"]) if cfg["layernorm"] else r for r in xs]
            Q = [matvec(r, P[p + "w_query"]) for r in a]
            K = [matvec(r, P[p + "w_key"]) for r in a]
            Vv = [matvec(r, P[p + "w_value"]) for r in a]
            concat = [[0.0] * C for _ in range(T)]
            for h in range(H):
                cols = range(h * D, (h + 1) * D)
                for i in range(T):
                    keys = [j for j in range(T) if (not cfg["causal"] or j <= i) and j < n]
                    if not keys:
                        continue  # fully hidden row: zero weights
                    sc = {j: sum(Q[i][c] * K[j][c] for c in cols) * (1 / math.sqrt(D) if cfg["scale"] else 1) for j in keys}
                    mx = max(sc.values())
                    e = {j: math.exp(s - mx) for j, s in sc.items()}
                    z = sum(e.values())
                    for c in cols:
                        concat[i][c] = sum(e[j] / z * Vv[j][c] for j in keys)
            xs = [[xs[i][c] + v for c, v in enumerate(matvec(concat[i], P[p + "w_output"]))] for i in range(T)]
            if cfg["mlp"] > 0:
                for i in range(T):
                    m = layer_norm(xs[i], P[p + "ln2.gain"], P[p + "ln2.bias"]) if cfg["layernorm"] else xs[i]
                    pre = [u + bb for u, bb in zip(matvec(m, P[p + "mlp.w_in"]), P[p + "mlp.b_in"])]
                    hid = [0.5 * u * (1 + math.erf(u / math.sqrt(2))) for u in pre]
                    out = matvec(hid, P[p + "mlp.w_out"])
                    xs[i] = [xs[i][c] + out[c] + P[p + "mlp.b_out"][c] for c in range(C)]
        WU = P["embed"].T if cfg["tied"] else P["unembed"]
        for t in range(T):
            if targets[b, t] < 0:
                continue
            f = layer_norm(xs[t], P["final_ln.gain"], P["final_ln.bias"]) if cfg["layernorm"] else xs[t]
            logits = matvec(f, WU)
            mx = max(logits)
            lse = mx + math.log(sum(math.exp(z - mx) for z in logits))
            total += lse - logits[targets[b, t]]
            count += 1
    return total / count


def random_case(rng):
    """A random small config, params (float64, perturbed away from the init's symmetries) and batch."""
    H = int(rng.choice([1, 2, 4]))
    D = int(rng.choice([1, 2, 3]))
    cfg = {
        "vocab": int(rng.integers(3, 9)), "context": int(rng.integers(3, 7)), "layers": int(rng.integers(1, 3)),
        "d_model": H * D, "heads": H, "mlp": int(rng.choice([0, 5])),
        "layernorm": bool(rng.integers(0, 2)), "positional": str(rng.choice(POSITIONALS)),
        "causal": bool(rng.integers(0, 2)), "scale": bool(rng.integers(0, 2)), "tied": bool(rng.integers(0, 2)),
    }
    P = {}
    for name, shape in parameter_shapes(cfg).items():
        base = 1.0 if name.endswith("gain") else 0.0
        P[name] = torch.tensor(base + rng.normal(0, 0.5, size=shape), dtype=torch.float64)
    B = int(rng.integers(1, 4))
    T = int(rng.integers(2, cfg["context"] + 1))
    ids = torch.tensor(rng.integers(0, cfg["vocab"], size=(B, T)), dtype=torch.int64)
    lengths = None
    targets = torch.tensor(rng.integers(-1, cfg["vocab"], size=(B, T)), dtype=torch.int64)
    if rng.integers(0, 2):
        lengths = torch.tensor(rng.integers(0 if B > 1 else 1, T + 1, size=(B,)), dtype=torch.int64)
        for b in range(B):
            targets[b, int(lengths[b]):] = -1
    targets[0, 0] = int(rng.integers(0, cfg["vocab"]))  # at least one target
    if lengths is not None and int(lengths[0]) == 0:
        lengths[0] = 1
    return cfg, P, ids, targets, lengths


def selftest(cases):
    import numpy as np
    rng = np.random.default_rng(12)
    seen = {k: set() for k in ("layers", "heads", "mlp", "layernorm", "positional", "causal", "scale", "tied")}
    seen["padded"] = set()
    seen["empty row"] = set()
    worst_fwd = 0.0
    for n in range(cases):
        cfg, P, ids, targets, lengths = random_case(rng)
        for k in seen:
            if k in cfg:
                seen[k].add(cfg[k])
        seen["padded"].add(lengths is not None)
        seen["empty row"].add(lengths is not None and int(lengths.min()) == 0)
        names = list(P)

        def fn(*tensors):
            return model_loss(cfg, dict(zip(names, tensors)), ids, targets, lengths)

        inputs = tuple(P[n_].clone().requires_grad_(True) for n_ in names)
        ok = torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)
        grads = torch.autograd.grad(fn(*inputs), inputs)
        assert all(torch.isfinite(g).all() for g in grads), f"case {n}: non-finite gradient"
        lt = fn(*inputs).item()
        ln = numpy_loss(cfg, P, ids, targets, lengths)
        rel = abs(lt - ln) / max(abs(ln), 1.0)  # CE near 0 suffers cancellation in log-sum-exp
        worst_fwd = max(worst_fwd, rel)
        assert ok and rel < 1e-12, f"case {n}: gradcheck {ok}, forward vs loops {rel:.2e} ({cfg})"
    print(f"selftest: {cases} random configs, gradcheck passed for every parameter; "
          f"forward vs plain loops: max |diff|/max(|loss|, 1) {worst_fwd:.1e}")
    print("covered: " + ", ".join(f"{k} {sorted(v, key=str)}" for k, v in seen.items()))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="DUMP.json", nargs="+")
    mode.add_argument("--bench", metavar="DUMP.json")
    mode.add_argument("--selftest", action="store_true")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--quiet", action="store_true", help="--check: print the table only on failure")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--budget", type=float, default=2.0, help="--bench: seconds of timed steps")
    ap.add_argument("--serve", action="store_true")
    ap.add_argument("--cases", type=int, default=40)
    a = ap.parse_args()
    if a.check:
        torch.set_num_threads(1)
        status = 0
        for path in a.check:
            if len(a.check) > 1:
                print(f"== {path}")
            status |= check(path, a.tolerance, a.quiet)
        return status
    if a.bench:
        return bench(a.bench, a.lr, a.steps, a.budget, a.serve)
    torch.set_num_threads(1)
    return selftest(a.cases)


if __name__ == "__main__":
    sys.exit(main())
