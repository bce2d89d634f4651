#!/usr/bin/env bash
# The independent gradient check of issue #12: `attn grad` dumps (our loss and gradients
# for one batch, float32) against bench/torch_model.py, a PyTorch float64 autograd
# implementation of the model written from the issue's specification. For every
# parameter: max|g_ours − g_torch| / max(max|g_torch|, 1e-8) ≤ 1e-4, and the loss within
# 1e-4 relative.
#
#   bench/grad_check.sh [--keep DIR] [--tolerance 1e-4] [--only N[,N...]] [--backward-only]
#
# Then issue #23's check: `attn grad --model FILE --sentence S` dumps (one sentence's
# backward with every gradient intermediate per layer and head) of the two shipped
# trained models and of untrained checkpoints, masked and not, scaled and not, padded
# and not, against bench/torch_backward.py (float64 autograd, retain_grad on each
# intermediate). --backward-only runs that part alone.
#
# Builds the native CLI if it has no `grad` subcommand yet (build/, Release), installs
# Debian's python3-torch + python3-numpy when missing (as root; otherwise it prints the
# apt-get line and stops), then runs a matrix of configs that turns every option on and
# off — layers 1/2, heads 1/2/4, mlp 0/16, layernorm, positional none/sinusoidal/learned,
# causal, scale, tied — over several tasks (coreference has padded sequences: lengths),
# each at init (--steps 0) and after training (--steps 5); then the architecture options
# of pretrained models (biases, GELU tanh, ln_eps, post-LN, token types, embedding LN,
# MLM head, output bias; GPT-2- and BERT-shaped) and the modern decoders' options (rope, llama3
# scaling, alibi, RMSNorm, the gated MLP, grouped-query attention with head_dim, qkv_bias,
# qk_norm; a Llama-shaped block) through bench/grad_dump.cpp. Prints a table; exits 1 on
# any failure. Run by hand and by bench/train.sh; not part of the test suite (PyTorch
# is 169 Debian packages).
#
# Environment: ATTN (default build/attn), PYTHON (default /usr/bin/python3: Debian's
# python3-torch installs for Debian's Python, not for a pyenv or venv one).
set -euo pipefail
cd "$(dirname "$0")/.."

keep=""
tolerance=1e-4
only=""
backward_only=no
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --backward-only) backward_only=yes; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "grad_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
ATTN=${ATTN:-build/attn}
PYTHON=${PYTHON:-/usr/bin/python3}

# ---- the CLI ------------------------------------------------------------------------------
if ! "$ATTN" grad --help >/dev/null 2>&1; then
  echo "== building the native CLI (build/, Release)" >&2
  mkdir -p build
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build/configure.log 2>&1 || { cat build/configure.log >&2; exit 1; }
  cmake --build build -j2 --target attn -- --no-print-directory >build/attn.build.log 2>&1 || { tail -50 build/attn.build.log >&2; exit 1; }
  "$ATTN" grad --help >/dev/null 2>&1 || { echo "grad_check.sh: $ATTN has no grad subcommand" >&2; exit 1; }
fi

# ---- PyTorch --------------------------------------------------------------------------------
PYTHON="$PYTHON" ATTN_DEPS_FOR=grad_check.sh .ci/install-deps.sh torch

# ---- the matrix -----------------------------------------------------------------------------
# task layers d_model heads mlp layernorm positional causal scale tied [length batch]
# (length: the task's size option, batch: sequences; "-" or absent = 0 / 6)
# (rows 1-14: mixed combinations; rows 16-25: one option flipped from row 15's base;
# rows 26-29: larger and odd sizes: the benchmark's C 128 / T 64, D = 5, 3 heads, T 100;
# rows 30-31: the relative positions rope and alibi, trained too).
# Each dump's config is checked against its row, so a flag the CLI ignores, or a task
# recipe that overrides it, is a failure rather than a silently narrower matrix.
# (The induction recipe has no LayerNorm and the CLI can only turn LayerNorm off, so
# LayerNorm-on rows use other tasks.)
configs=(
  "previous-token 1 16 1  0 on  learned    on  on  off"
  "recall         2 16 2 16 on  learned    on  on  off"
  "reverse        2 16 4 16 off none       off off on"
  "coreference    1 16 2 16 on  sinusoidal off on  on"
  "copy           2 16 2  0 off sinusoidal on  off off"
  "sort           1 16 4  0 on  none       off off off"
  "brackets       2 16 1 16 off learned    off on  on"
  "recall         2 16 2 16 on  learned    on  off on"
  "coreference    1 16 2 16 off learned    on  on  off"
  "previous-token 2 24 4  0 on  sinusoidal on  on  off"
  "coreference    2 16 1 16 on  none       on  off on"
  "coreference    2  8 4  0 off none       off on  off"
  "induction      2 16 2  0 off learned    on  on  off"
  "induction      1 16 4 16 off sinusoidal off off on"
  "copy           2 16 2 16 on  learned    on  on  off"
  "copy           1 16 2 16 on  learned    on  on  off"
  "copy           2 16 1 16 on  learned    on  on  off"
  "copy           2 16 4 16 on  learned    on  on  off"
  "copy           2 16 2  0 on  learned    on  on  off"
  "copy           2 16 2 16 off learned    on  on  off"
  "copy           2 16 2 16 on  none       on  on  off"
  "copy           2 16 2 16 on  sinusoidal on  on  off"
  "copy           2 16 2 16 on  learned    off on  off"
  "copy           2 16 2 16 on  learned    on  off off"
  "copy           2 16 2 16 on  learned    on  on  on"
  "previous-token 2 128 4 256 on learned   on  on  off 64  16"
  "previous-token 1 20 5 16 on  learned    on  on  off 23  5"
  "coreference    2 36 3 24 on  sinusoidal off on  on  -   9"
  "induction      2 64 2  0 off learned    on  on  off 100 4"
  "previous-token 2 16 2 16 on  rope       on  on  off"
  "coreference    1 16 4 16 on  alibi      off on  on"
)
STEPS=(0 5)

# The CLI flags of one config (the one place that knows `attn grad`'s syntax).
flags_of() {
  local task=$1 layers=$2 dmodel=$3 heads=$4 mlp=$5 ln=$6 pos=$7 causal=$8 scale=$9 tied=${10}
  local length=${11:--} batch=${12:--}
  [ "$length" != - ] || length=0
  [ "$batch" != - ] || batch=6
  local f=(--task "$task" --length "$length" --layers "$layers" --d-model "$dmodel" --heads "$heads" --mlp "$mlp"
           --positional "$pos" --batch "$batch" --seed 7 --lr 1e-2)
  [ "$ln" = on ] || f+=(--no-layernorm)
  if [ "$causal" = on ]; then f+=(--mask causal); else f+=(--mask none); fi
  [ "$scale" = on ] || f+=(--no-scale)
  [ "$tied" = off ] || f+=(--tied)
  echo "${f[@]}"
}

dir=${keep:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "$keep" ] || trap 'rm -rf "$dir"' EXIT
echo "== machine load: $(cut -d' ' -f1-3 /proc/loadavg); dumps in $dir" >&2

backward_check() {
  # model-file label | sentence | extra flags
  local S="The animal didn't cross the street because it was too tired."
  local L="the cat sat on the mat and looked at the dog"
  "$ATTN" train --task coreference --steps 0 --eval-samples 8 --out "$dir/random-coref.safetensors" >/dev/null
  "$ATTN" train --task coreference --steps 0 --eval-samples 8 --no-layernorm --tied --positional sinusoidal \
    --mask causal --heads 2 --out "$dir/random-coref-variant.safetensors" >/dev/null
  "$ATTN" train --task text --corpus models/wordnet-examples.txt --steps 0 --eval-samples 8 \
    --out "$dir/random-text.safetensors" >/dev/null
  # (without the scale it was trained with, the coreference model is so sure of "animal" on $S
  # (loss 5e-4) that float32's cancellation in p − onehot alone puts W_K's gradient 1.1e-4 off)
  local cases=(
    "models/coreference.safetensors|$S|"
    "models/coreference.safetensors|the fence stopped the cat because it was too high .|--no-scale"
    "models/coreference.safetensors|$S|--pad-to 16"
    "models/coreference.safetensors|$S|--target 7:street --pad-to 14 --no-scale"
    "models/language.safetensors|$L|"
    "models/language.safetensors|$L|--no-scale --pad-to 20"
    "$dir/random-coref.safetensors|$S|--pad-to 16"
    "$dir/random-coref-variant.safetensors|$S|--no-scale --pad-to 15"
    "$dir/random-text.safetensors|$L|--target 3:cat"
  )
  local bfiles=() i=0
  for c in "${cases[@]}"; do
    IFS='|' read -r model sentence extra <<<"$c"
    i=$((i + 1))
    local file="$dir/backward-$(printf '%02d' $i).json"
    # shellcheck disable=SC2086
    "$ATTN" grad --model "$model" --sentence "$sentence" $extra --format json >"$file" ||
      { echo "attn grad --model $model failed ($extra)" >&2; exit 1; }
    echo "backward $i: $model $extra" >&2
    bfiles+=("$file")
  done
  "$PYTHON" bench/torch_backward.py "${bfiles[@]}" --tolerance "$tolerance" >"$dir/backward.log" 2>&1 || {
    grep -E '^==|FAIL' "$dir/backward.log"; echo "grad_check: the backward intermediates FAILED" >&2; exit 1; }
  grep '^RESULT' "$dir/backward.log"
  echo "grad_check: all ${#bfiles[@]} backward dumps agree with PyTorch in every intermediate (tolerance $tolerance)."
}
if [ "$backward_only" = yes ]; then backward_check; exit 0; fi

declare -a labels=() files=()
n=0
for i in "${!configs[@]}"; do
  [ -z "$only" ] || [[ "$only" == *",$((i + 1)),"* ]] || continue
  read -r -a c <<<"${configs[$i]}"
  for steps in "${STEPS[@]}"; do
    n=$((n + 1))
    file="$dir/$(printf '%02d' $((i + 1)))-steps$steps.json"
    # shellcheck disable=SC2046
    if ! "$ATTN" grad $(flags_of "${c[@]}") --steps "$steps" --format json >"$file" 2>"$file.err"; then
      echo "attn grad failed for config $((i + 1)) (${configs[$i]}), steps $steps:" >&2
      cat "$file.err" >&2
      echo "  $ATTN grad $(flags_of "${c[@]}") --steps $steps --format json" >&2
      exit 1
    fi
    want="{\"layers\": ${c[1]}, \"d_model\": ${c[2]}, \"heads\": ${c[3]}, \"mlp\": ${c[4]}, \"layernorm\": $([ "${c[5]}" = on ] && echo true || echo false), \"positional\": \"${c[6]}\", \"causal\": $([ "${c[7]}" = on ] && echo true || echo false), \"scale\": $([ "${c[8]}" = on ] && echo true || echo false), \"tied\": $([ "${c[9]}" = on ] && echo true || echo false)}"
    if ! "$PYTHON" -c 'import json, sys
got = json.load(open(sys.argv[1]))["config"]; want = json.loads(sys.argv[2])
bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
if bad: sys.exit("  config differs from the row (dump, wanted): %s" % bad)' "$file" "$want"; then
      echo "grad_check.sh: config $((i + 1)) (${configs[$i]}) did not produce the model it asks for:" >&2
      echo "  $ATTN grad $(flags_of "${c[@]}") --steps $steps --format json" >&2
      exit 1
    fi
    padded=no
    grep -q '"lengths"' "$file" && padded=yes
    labels+=("$(printf '%2d | %-14s | %d | %3d | %d | %3d | %-3s | %-10s | %-3s | %-3s | %-3s | %-3s | %d' \
      $((i + 1)) "${c[0]}" "${c[1]}" "${c[2]}" "${c[3]}" "${c[4]}" "${c[5]}" "${c[6]}" "${c[7]}" "${c[8]}" "${c[9]}" "$padded" "$steps")")
    files+=("$file")
  done
done

# ---- the architecture options (pretrained.hpp), which `attn grad` has no flags for ---------
# attn_grad_dump (bench/grad_dump.cpp) writes the same dump for a config given as JSON:
# GPT-2- and BERT-shaped models, then each option alone on one base config.
if [ ! -x build/attn_grad_dump ] || [ bench/grad_dump.cpp -nt build/attn_grad_dump ] || [ build/attn -nt build/attn_grad_dump ]; then
  echo "== building attn_grad_dump (build/, Release)" >&2
  cmake --build build -j2 --target attn_grad_dump -- --no-print-directory >build/grad_dump.build.log 2>&1 || { tail -50 build/grad_dump.build.log >&2; exit 1; }
fi
base='"vocab":9,"context":6,"layers":2,"d_model":12,"heads":3,"mlp":16,"layernorm":true,"positional":"learned","scale":true'
base0=${base/\"mlp\":16/\"mlp\":0}
# (the modern rows give heads and positional themselves)
modern='"vocab":9,"context":6,"layers":2,"d_model":12,"mlp":16,"layernorm":true,"scale":true'
option_rows=(
  "gpt2-shaped|{$base,\"causal\":true,\"tied\":true,\"attn_bias\":true,\"activation\":\"gelu_tanh\",\"family\":\"gpt2\"}|0"
  "bert-shaped|{$base,\"causal\":false,\"tied\":true,\"attn_bias\":true,\"ln_eps\":1e-12,\"norm\":\"post\",\"token_types\":2,\"embed_layernorm\":true,\"output_transform\":true,\"output_bias\":true,\"family\":\"bert\"}|1"
  "attn_bias|{$base,\"causal\":true,\"tied\":false,\"attn_bias\":true}|1"
  "gelu_tanh|{$base,\"causal\":true,\"tied\":false,\"activation\":\"gelu_tanh\"}|0"
  "ln_eps 1e-3|{$base,\"causal\":true,\"tied\":false,\"ln_eps\":0.001}|0"
  "post-LN|{$base,\"causal\":true,\"tied\":false,\"norm\":\"post\"}|1"
  "post-LN, no mlp|{$base0,\"causal\":false,\"tied\":true,\"norm\":\"post\"}|0"
  "token_types|{$base,\"causal\":true,\"tied\":false,\"token_types\":2}|0"
  "embed_layernorm|{$base,\"causal\":true,\"tied\":false,\"embed_layernorm\":true}|1"
  "output_transform|{$base,\"causal\":true,\"tied\":false,\"output_transform\":true}|0"
  "output_transform tied|{$base,\"causal\":false,\"tied\":true,\"output_transform\":true}|0"
  "output_bias|{$base,\"causal\":true,\"tied\":true,\"output_bias\":true}|1"
  "rope|{$modern,\"heads\":3,\"positional\":\"rope\",\"causal\":true,\"tied\":false}|1"
  "rope, base 100, llama3|{$modern,\"heads\":3,\"positional\":\"rope\",\"rope_base\":100,\"rope_scaling\":\"llama3\",\"rope_factor\":8,\"rope_original_context\":64,\"causal\":true,\"tied\":false}|0"
  "alibi (3 heads)|{$modern,\"heads\":3,\"positional\":\"alibi\",\"causal\":true,\"tied\":false}|1"
  "alibi, not causal|{$modern,\"heads\":4,\"positional\":\"alibi\",\"causal\":false,\"tied\":true}|1"
  "rmsnorm|{$base,\"rmsnorm\":true,\"causal\":true,\"tied\":false}|0"
  "gated mlp (silu)|{$base,\"gated_mlp\":true,\"activation\":\"silu\",\"causal\":true,\"tied\":false}|0"
  "gqa 4/2, head_dim 6|{$modern,\"heads\":4,\"kv_heads\":2,\"head_dim\":6,\"positional\":\"learned\",\"causal\":true,\"tied\":false}|1"
  "qkv_bias + qk_norm|{$modern,\"heads\":3,\"qkv_bias\":true,\"qk_norm\":true,\"positional\":\"rope\",\"causal\":true,\"tied\":false}|0"
  "llama-shaped block|{$modern,\"heads\":4,\"kv_heads\":2,\"head_dim\":4,\"positional\":\"rope\",\"rmsnorm\":true,\"gated_mlp\":true,\"mlp_bias\":false,\"activation\":\"silu\",\"causal\":true,\"tied\":false}|1"
)
declare -a option_labels=() option_files=()
for i in "${!option_rows[@]}"; do
  IFS='|' read -r label json padded <<<"${option_rows[$i]}"
  file="$dir/options-$(printf '%02d' $((i + 1))).json"
  if ! build/attn_grad_dump "$json" $((11 + i)) 3 6 "$padded" >"$file" 2>"$file.err"; then
    echo "attn_grad_dump failed for option row $((i + 1)) ($label):" >&2
    cat "$file.err" >&2
    exit 1
  fi
  option_labels+=("$label")
  option_files+=("$file")
  n=$((n + 1))
done

# One Python process for every dump (PyTorch's import takes a second).
set +e
"$PYTHON" bench/torch_model.py --check "${files[@]}" "${option_files[@]}" --quiet --tolerance "$tolerance" >"$dir/check.log" 2>&1
status=$?
set -e
grep -q '^RESULT' "$dir/check.log" || { cat "$dir/check.log" >&2; exit 1; }

# result, rel, worst, lrel of one dump, from its RESULT line in check.log.
result_of() {
  local line
  line=$(grep "file=$1\$" "$dir/check.log" || true)
  if [ -z "$line" ]; then
    result="FAIL"; rel="—"; worst="(no result)"; lrel="—"
  else
    result=$(awk '{print $2}' <<<"$line")
    rel=$(sed -E 's/.*max_rel=([^ ]+).*/\1/' <<<"$line")
    worst=$(sed -E 's/.* worst=([^ ]+).*/\1/' <<<"$line")
    lrel=$(sed -E 's/.* loss_rel=([^ ]+).*/\1/' <<<"$line")
  fi
}

echo
echo " # | task           | L |   C | H |   F | LN  | positional | causal | scale | tied | padded | steps | max rel err | worst              | loss rel err | result"
echo "---|----------------|---|-----|---|-----|-----|------------|--------|-------|------|--------|-------|-------------|--------------------|--------------|-------"
failures=0
for k in "${!files[@]}"; do
  result_of "${files[$k]}"
  [ "$result" = ok ] || failures=$((failures + 1))
  IFS='|' read -r -a f <<<"${labels[$k]}"
  printf '%s|%s|%s|%s|%s|%s|%s|%s| %-6s | %-5s | %-4s | %-6s | %5s | %11s | %-18s | %12s | %s\n' \
    "${f[0]}" "${f[1]}" "${f[2]}" "${f[3]}" "${f[4]}" "${f[5]}" "${f[6]}" "${f[7]}" \
    $(echo "${f[8]}") $(echo "${f[9]}") $(echo "${f[10]}") $(echo "${f[11]}") $(echo "${f[12]}") \
    "$rel" "$worst" "$lrel" "$result"
done
echo
echo " # | architecture option    | max rel err | worst              | loss rel err | result"
echo "---|------------------------|-------------|--------------------|--------------|-------"
for k in "${!option_files[@]}"; do
  result_of "${option_files[$k]}"
  [ "$result" = ok ] || failures=$((failures + 1))
  printf '%2d | %-22s | %11s | %-18s | %12s | %s\n' $((k + 1)) "${option_labels[$k]}" "$rel" "$worst" "$lrel" "$result"
done
echo
if [ "$failures" -gt 0 ] || [ "$status" -ne 0 ]; then
  echo "grad_check: $failures of $n dumps FAILED (tolerance $tolerance). Per-parameter tables of the failures:"
  awk '/^== /{block=$0"\n"; keep=0; next} {block=block $0 "\n"} /^RESULT FAIL/{printf "%s", block}' "$dir/check.log"
  [ -n "$keep" ] || echo "(rerun with --keep DIR to keep the dumps)"
  exit 1
fi
echo "grad_check: all $n dumps agree with PyTorch (tolerance $tolerance)."
backward_check
