#!/usr/bin/env python3
"""The gradient intermediates of `attn grad --model FILE --sentence S --format json`
(issue #23) against PyTorch float64 autograd on the same parameters.

The forward is torch_model.py's specification (same layout, masks, LayerNorm,
GELU), written out per layer so that every intermediate of every head is a tensor
autograd keeps a gradient for (retain_grad):

  q, k, v = a·W_Q, a·W_K, a·W_V (per head, T×D)      -> d_query, d_key, d_value
  s  = q·kᵀ                                          -> d_scores
  s′ = s·scale, hidden keys −∞                        -> d_scaled
  p  = softmax(s′)                                   -> d_weights
  o  = p·v                                           -> d_output
  logits                                             -> d_logits

Its loss is also checked against torch_model.model_loss (the one definition the
issue #12 check uses), so this forward cannot drift from it unnoticed.

  torch_backward.py DUMP.json [DUMP.json ...] [--tolerance 1e-4]

Per dump and quantity: rel = max|ours − torch| / max(max|torch|, 1e-8), per layer
over its heads side by side (as W_Q holds them), the worst layer; the parameter gradients as torch_model.py --check. Last line per dump:
  RESULT ok|FAIL max_rel=<x> worst=<name> file=<path>
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import torch_model  # noqa: E402

HEAD_FIELDS = ["d_output", "d_weights", "d_scaled", "d_scores", "d_query", "d_key", "d_value"]


def forward_recording(cfg, P, ids, targets, lengths):
    """The loss and {field name: [layer][head] tensor (B, T, ·)} of the retained intermediates."""
    B, T = ids.shape
    C, H = cfg["d_model"], cfg["heads"]
    D = C // H
    x = P["embed"][ids]
    if cfg["positional"] == "learned":
        x = x + P["pos"][:T]
    elif cfg["positional"] == "sinusoidal":
        x = x + torch_model.sinusoidal(T, C, x.dtype)
    allowed = torch_model.allowed_mask(B, T, cfg["causal"], lengths)
    scale = 1.0 / math.sqrt(D) if cfg["scale"] else 1.0
    kept = {name: [] for name in ["q", "k", "v", "s", "s2", "p", "o"]}

    def ln(v, name):
        return F.layer_norm(v, (C,), P[name + ".gain"], P[name + ".bias"], eps=1e-5)

    def keep(name, t):
        t.retain_grad()
        kept[name][-1].append(t)
        return t

    for l in range(cfg["layers"]):
        for name in kept:
            kept[name].append([])
        pre = f"layers.{l}."
        a = ln(x, pre + "ln1") if cfg["layernorm"] else x
        outs = []
        for h in range(H):
            cols = slice(h * D, (h + 1) * D)
            q = keep("q", a @ P[pre + "w_query"][:, cols])
            k = keep("k", a @ P[pre + "w_key"][:, cols])
            v = keep("v", a @ P[pre + "w_value"][:, cols])
            s = keep("s", q @ k.transpose(-2, -1))
            s2 = s * scale
            if allowed is not None:
                s2 = s2.masked_fill(~allowed, float("-inf"))
                # a fully hidden row (a padded query with no key): weights 0, no gradient
                s2 = s2.masked_fill(~allowed.any(-1, keepdim=True), 0.0)
            s2 = keep("s2", s2)
            p = torch.softmax(s2, dim=-1)
            if allowed is not None:
                p = p * allowed.any(-1, keepdim=True)
            p = keep("p", p)
            outs.append(keep("o", p @ v))
        x = x + torch.cat(outs, dim=-1) @ P[pre + "w_output"]
        if cfg["mlp"] > 0:
            m = ln(x, pre + "ln2") if cfg["layernorm"] else x
            x = x + F.gelu(m @ P[pre + "mlp.w_in"] + P[pre + "mlp.b_in"]) @ P[pre + "mlp.w_out"] + P[pre + "mlp.b_out"]
    if cfg["layernorm"]:
        x = ln(x, "final_ln")
    logits = x @ (P["embed"].t() if cfg["tied"] else P["unembed"])
    logits.retain_grad()
    loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T), ignore_index=-1, reduction="mean")
    return loss, logits, kept


def rel_err(ours, theirs):
    diff = (ours - theirs).abs().max().item() if theirs.numel() else 0.0
    scale = theirs.abs().max().item() if theirs.numel() else 0.0
    r = diff / max(scale, 1e-8)
    return r if math.isfinite(r) else math.inf


def check(path, tolerance):
    dump, cfg, ids, targets, lengths = torch_model.load_dump(path)
    params, problems = torch_model.tensors_of(cfg, dump["params"], torch.float64, "params")
    ours_grads, p2 = torch_model.tensors_of(cfg, dump["grads"], torch.float64, "grads")
    problems += p2
    if ids.shape[0] != 1:
        problems.append(f"a backward dump has one sequence, this one {ids.shape[0]}")
    if problems:
        print("\n".join(problems))
        print(f"RESULT FAIL max_rel=inf worst=layout file={path}")
        return 1
    for t in params.values():
        t.requires_grad_(True)
    loss, logits, kept = forward_recording(cfg, params, ids, targets, lengths)
    spec_loss = torch_model.model_loss(cfg, params, ids, targets, lengths).item()
    loss.backward()
    rows = [("loss", abs(float(dump["loss"]) - loss.item()) / max(abs(loss.item()), 1e-8)),
            ("loss vs torch_model", abs(spec_loss - loss.item()) / max(abs(spec_loss), 1e-8)),
            ("d_logits", rel_err(torch.tensor(dump["d_logits"], dtype=torch.float64), logits.grad[0]))]
    # d_scaled of the dump = ∂loss/∂(scaled masked scores); s2's gradient; d_scores = ∂loss/∂(q·kᵀ)
    source = {"d_output": "o", "d_weights": "p", "d_scaled": "s2", "d_scores": "s", "d_query": "q", "d_key": "k",
              "d_value": "v"}
    layers = dump["layers"]
    if len(layers) != cfg["layers"]:
        rows.append(("layers", math.inf))
    for field in HEAD_FIELDS:
        worst = 0.0
        for l, layer in enumerate(layers):
            if len(layer["heads"]) != cfg["heads"]:
                worst = math.inf
                continue
            theirs = [kept[source[field]][l][h].grad[0] for h in range(cfg["heads"])]
            ours = [torch.tensor(head[field], dtype=torch.float64) for head in layer["heads"]]
            if any(o.shape != t.shape for o, t in zip(ours, theirs)):
                worst = math.inf
                continue
            # the layer's heads side by side, as W_Q holds them: a saturated head's
            # dS′ (1e-11 where float32 rounds the cancellation to 0) is measured
            # against the layer's scale, like one head's columns of W_Q's gradient
            worst = max(worst, rel_err(torch.cat(ours, -1), torch.cat(theirs, -1)))
        rows.append((field, worst))
    for name, t in params.items():
        rows.append((name, rel_err(ours_grads[name], t.grad)))
    failed = [r for r in rows if not r[1] <= tolerance]
    w = max(len(r[0]) for r in rows)
    for name, r in rows if failed else rows[:10]:
        print(f"  {name:<{w}}  rel {r:9.2e}" + ("  <-- FAIL" if not r <= tolerance else ""))
    worst = max(rows, key=lambda r: r[1])
    print(f"RESULT {'FAIL' if failed else 'ok'} max_rel={worst[1]:.3e} worst={worst[0]} file={path}")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    a = ap.parse_args()
    status = 0
    for path in a.dumps:
        print(f"== {path}")
        status |= check(path, a.tolerance)
    sys.exit(status)


if __name__ == "__main__":
    main()
