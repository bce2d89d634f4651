#!/usr/bin/env python3
"""PyTorch (float32, 1 thread) beside attn_pretrained_bench: the same Hub folder,
loaded with torch.frombuffer, and the forward of tests/pretrained/reference.py
(written from the published GPT-2 architecture) at each T.

    pretrained_torch.py DIR [--lengths 16,128,512] [--repeat 3]
Prints one JSON line for the load, then one per T (the best of --repeat by wall
time, with its CPU time).
"""
import argparse
import json
import os
import struct
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "pretrained"))
import reference  # noqa: E402

torch.set_default_dtype(torch.float32)
torch.set_num_threads(1)


def load(path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(bytes(data[8:8 + n]))
    out = {}
    for name, e in header.items():
        if name == "__metadata__" or e["dtype"] != "F32" or name.endswith(".attn.bias"):
            continue
        a, b = e["data_offsets"]
        out[name] = torch.frombuffer(data, dtype=torch.float32, count=(b - a) // 4, offset=8 + n + a).reshape(e["shape"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--lengths", default="16,128,512")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    t = load(os.path.join(a.dir, "model.safetensors"))
    print(json.dumps({"torch_load_s": round(time.perf_counter() - t0, 3), "torch_load_cpu_s": round(time.process_time() - c0, 3),
                      "threads": torch.get_num_threads()}), flush=True)
    with torch.no_grad():
        for T in [int(x) for x in a.lengths.split(",")]:
            ids = [(i * 7919) % cfg["vocab_size"] for i in range(T)]
            best, cpu = 1e30, 0.0
            for _ in range(a.repeat):
                s, c = time.perf_counter(), time.process_time()
                reference.gpt2_forward(t, cfg, ids)
                if time.perf_counter() - s < best:
                    best, cpu = time.perf_counter() - s, time.process_time() - c
            print(json.dumps({"T": T, "torch_forward_s": round(best, 4), "torch_forward_cpu_s": round(cpu, 4)}), flush=True)


if __name__ == "__main__":
    main()
