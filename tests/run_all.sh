#!/usr/bin/env bash
# The one test command: installs what is missing, builds everything and runs
# every test suite. Exit code non-zero when anything fails or no test ran.
#   tests/run_all.sh           everything (what CI runs, .ci/run)
#   tests/run_all.sh --quick   the edit loop: native build + ctest, the wasm build, the Node
#                              tests, and a Chromium smoke test of every page
#                              (tests/browser/smoke.test.mjs); no sanitizer build, no fuzzers,
#                              not the full browser suite
# As root it installs Debian 12's packages itself; otherwise it prints the
# apt-get command and stops. It ends with the wall time of each stage.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "run_all.sh: unknown argument $arg (--quick)" >&2; exit 2 ;;
  esac
done
jobs=$(nproc)

# ---- stages and their wall times ---------------------------------------------------
stage_names=()
stage_secs=()
stage_idle=()
stage_name=""
# the machine's idle and total CPU ticks so far (/proc/stat: idle + iowait, and all): "IDLE TOTAL"
cpu_ticks() {
  local _cpu user nice system idle iowait irq softirq steal _rest
  read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
  echo "$((idle + iowait)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}
# the share of the machine's CPU left idle since $1 ("IDLE TOTAL" of cpu_ticks), in %
idle_share() {
  local a b c d
  read -r a b <<<"$1"
  read -r c d <<<"$(cpu_ticks)"
  echo $(((c - a) * 100 / (d > b ? d - b : 1)))
}
stage_t0=$(date +%s)
stage_cpu0=$(cpu_ticks)
run_t0=$stage_t0
run_cpu0=$stage_cpu0
end_stage() {
  [ -n "$stage_name" ] || return 0
  stage_names+=("$stage_name")
  stage_secs+=($(($(date +%s) - stage_t0)))
  stage_idle+=("$(idle_share "$stage_cpu0")")
  stage_name=""
}
stage() {  # stage NAME: ends the previous stage, prints "== NAME"
  end_stage
  stage_name=$1
  stage_t0=$(date +%s)
  stage_cpu0=$(cpu_ticks)
  echo "== $1"
}
# The stages so far: wall seconds, and the share of the machine's CPU left idle (where a stage
# leaves a core idle, running something beside it would shorten the run; where not, only less work).
report_times() {
  end_stage
  echo "== wall time per stage (s), and the machine's CPU left idle in it"
  for i in "${!stage_names[@]}"; do printf '%6d %4d%% idle  %s\n' "${stage_secs[$i]}" "${stage_idle[$i]}" "${stage_names[$i]}"; done
  printf '%6d %4d%% idle  total\n' $(($(date +%s) - run_t0)) "$(idle_share "$run_cpu0")"
}
on_exit() {
  local status=$? failed=$stage_name
  if [ "$status" != 0 ] && [ -n "$failed" ]; then
    report_times
    echo "run_all.sh: FAILED (exit $status) in stage: $failed, after $(($(date +%s) - run_t0)) s" >&2
  fi
}
trap on_exit EXIT

# every Catch2 test must be exactly one ctest test: catch_discover_tests silently
# drops test cases whose names hold '[' or ']' (CMake reads them as list brackets)
# and splits names at ';' into tests that match nothing.
# (Catch2 v2 exits with the number of test cases listed, hence the "|| true".)
check_test_count() {  # $1 build dir
  local in_binary in_ctest
  in_binary=$( ("$1/core_tests" --list-test-names-only || true) | grep -c .)
  in_ctest=$(ctest --test-dir "$1" -N | sed -n 's/^Total Tests: //p')
  if [ "$in_binary" != "$in_ctest" ]; then
    echo "ctest runs $in_ctest of the $in_binary Catch2 test cases in $1: a test name has '[', ']' or ';'" >&2
    exit 1
  fi
}

# ctest of a build dir, $jobs at a time. The training tests ("learning: …", the longest
# by far, and listed last) run in one ctest beside another that runs all the others, so
# the longest does not start last on a fresh machine (ctest orders by the costs it
# recorded on earlier runs, and has none there). The others run $jobs at a time too:
# while the training tests run, the cores are shared three ways, and none idles until
# one of the two ctests is done.
run_ctest() {  # $1 build dir
  local slow='^learning: ' n status=0 pid
  n=$(ctest --test-dir "$1" -N -R "$slow" | sed -n 's/^Total Tests: //p')
  if [ "${n:-0}" = 0 ] || [ "$jobs" -lt 2 ]; then
    ctest --test-dir "$1" --no-tests=error --output-on-failure -j"$jobs"
    return
  fi
  ctest --test-dir "$1" --no-tests=error --output-on-failure -R "$slow" >"$1/ctest-learning.log" 2>&1 &
  pid=$!
  ctest --test-dir "$1" --no-tests=error --output-on-failure -E "$slow" -j"$jobs" || status=1
  wait "$pid" || status=1
  cat "$1/ctest-learning.log"
  return "$status"
}

# The Catch2 suite of a build dir in 8·$jobs processes of core_tests, $jobs at a time, all its test
# cases but those $2 matches. (ctest starts a process per test case; under the sanitizers each start
# costs ~40 ms, 16 CPU s of the stage over 397 test cases.) The test cases are dealt out longest
# first, each to the process with the least work so far, by the times the native ctest recorded
# ($3, its CTestCostData.txt: the native run comes first, and its times are roughly the sanitized
# ones' in proportion; 8 processes a core, so that where they are not, the others make up for it);
# the processes start longest first. Fails when a process fails, or when the processes together
# did not run every test case listed.
run_catch_shards() {  # $1 build dir, $2 the test cases to leave out (an extended regex), $3 ctest's cost file
  local dir=$1 k=$((8 * jobs)) f listed=0 ran=0 n status=0
  rm -f "$dir"/shard-*.txt "$dir"/shard-*.log
  : >"$dir/shard-loads"
  # one name a line, each read as an exact name (Catch2's --input-file quotes it; \, " and , escaped)
  ("$dir/core_tests" --list-test-names-only || true) | grep . | grep -Ev "$2" \
    | awk -v k="$k" -v d="$dir" -v costs="${3:-/dev/null}" '
      BEGIN {  # "NAME RUNS SECONDS" lines, then "---" and the failed tests
        while ((getline line < costs) > 0) {
          if (line ~ /^---/) break
          if (match(line, / [0-9]+ [0-9.eE+-]+$/)) { split(substr(line, RSTART + 1), f, " "); cost[substr(line, 1, RSTART - 1)] = f[2] }
        }
      }
      { name[NR] = $0; w[NR] = 0.05 + (($0 in cost) ? cost[$0] : 0) }  # (+0.05: its share of a start-up)
      END {
        for (i = 1; i <= NR; i++) order[i] = i
        for (i = 2; i <= NR; i++) for (j = i; j > 1 && w[order[j]] > w[order[j - 1]]; j--) { t = order[j]; order[j] = order[j - 1]; order[j - 1] = t }
        for (i = 1; i <= NR; i++) {
          s = 0
          for (j = 1; j < k; j++) if (load[j] < load[s]) s = j
          load[s] += w[order[i]]
          x = name[order[i]]
          gsub(/[\\",]/, "\\\\&", x)
          print x > (d "/shard-" s ".txt")
        }
        for (s = 0; s < k; s++) if (load[s] > 0) printf "%f %s/shard-%d.txt\n", load[s], d, s > (d "/shard-loads")
      }'
  listed=$(cat "$dir"/shard-*.txt | wc -l)
  # shellcheck disable=SC2016 # ($1 and $2 are the inner shell's)
  sort -rn "$dir/shard-loads" | cut -d' ' -f2 \
    | xargs -P "$jobs" -I{} sh -c '"$1/core_tests" --input-file "$2" >"${2%.txt}.log" 2>&1 || echo "exit $?" >>"${2%.txt}.log"' _ "$dir" {}
  for f in "$dir"/shard-*.txt; do
    f=${f%.txt}.log
    # the summary: "All tests passed (A assertions in N test cases)" or "test cases: N | …"
    n=$(grep -E '^(All tests passed|test cases:)' "$f" | grep -oE '[0-9]+ test cases?|test cases: +[0-9]+' | grep -oE '[0-9]+' | head -n 1 || true)
    ran=$((ran + ${n:-0}))
    if ! grep -q '^All tests passed' "$f" || grep -q '^exit ' "$f"; then
      echo "run_all.sh: $(basename "$f" .log) of $dir/core_tests failed (its test cases: ${f%.log}.txt):" >&2
      cat "$f" >&2
      status=1
    fi
  done
  echo "Catch2 under the sanitizers: $ran of $listed test cases ran, in $(wc -l <"$dir/shard-loads") processes"
  if [ "$ran" != "$listed" ] || [ "$listed" = 0 ]; then
    echo "run_all.sh: $ran test cases ran, $listed were listed" >&2
    status=1
  fi
  return "$status"
}

# node --test over test files, $jobs files at a time, in the order given (node's own runner
# takes files in alphabetical order, so a long file could start last and run alone); each
# file's output is printed whole when it ends, and kept in tests/artifacts/logs/SUITE/.
# Fails when a file fails or runs no test; ends with each file's wall time.
# DIR's *.test.mjs files, one a line: the named ones (the longest, measured) first, then the rest
longest_first() {  # $1 dir, then names without .test.mjs
  local dir=$1 n f
  shift
  for n in "$@"; do [ -f "$dir/$n.test.mjs" ] && echo "$dir/$n.test.mjs"; done
  for f in "$dir"/*.test.mjs; do
    n=$(basename "$f" .test.mjs)
    [[ " $* " == *" $n "* ]] || echo "$f"
  done
}

# The CPU seconds a test file costs, Chromium's processes included: bash's `time` (the children node
# waited for) saw about a third of a browser file's, since Chromium's renderers are not node's
# children. So each file runs in a cgroup of its own where this machine lets us make one (root, with
# cgroup v1's cpuacct or cgroup v2); elsewhere its CPU is not measured ('-').
CPU_GROUP=
cpu_group_enter() {  # $1 a name: moves this shell (and so what it starts) into a new cgroup; sets CPU_GROUP
  local base
  CPU_GROUP=
  for base in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/unified /sys/fs/cgroup; do
    [ -f "$base/cpuacct.usage" ] || [ -f "$base/cgroup.procs" ] || continue
    if mkdir "$base/attn-test-$1-$BASHPID" 2>/dev/null; then
      if echo "$BASHPID" >"$base/attn-test-$1-$BASHPID/cgroup.procs" 2>/dev/null; then
        CPU_GROUP=$base/attn-test-$1-$BASHPID
        return 0
      fi
      rmdir "$base/attn-test-$1-$BASHPID" 2>/dev/null
    fi
  done
  return 0
}
cpu_group_leave() {  # prints the group's CPU seconds ('-' without one), moves this shell back, removes the group
  if [ -z "$CPU_GROUP" ]; then echo -; return 0; fi
  if [ -f "$CPU_GROUP/cpuacct.usage" ]; then awk '{ printf "%.0f\n", $1 / 1e9 }' "$CPU_GROUP/cpuacct.usage"
  else awk '$1 == "usage_usec" { u = $2 } END { if (u == "") print "-"; else printf "%.0f\n", u / 1e6 }' "$CPU_GROUP/cpu.stat" 2>/dev/null || echo -; fi
  echo "$BASHPID" >"$(dirname "$CPU_GROUP")/cgroup.procs" 2>/dev/null || true
  rmdir "$CPU_GROUP" 2>/dev/null || true
  CPU_GROUP=
}

run_test_files() {  # $1 suite name, then the files (the longest first)
  local suite=$1 dir="tests/artifacts/logs/$1" f n s status=0
  shift
  mkdir -p "$dir"
  rm -f "$dir"/*.log "$dir"/*.status "$dir"/*.secs "$dir"/*.cpu
  for f in "$@"; do
    # count the files still running: `wait -n` also returns when a process substitution ends
    # (the caller's `mapfile < <(longest_first …)`), so counting the waits ran one file too many
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    (
      n=$(basename "$f" .test.mjs) s=0 t0=$(date +%s)
      # --test-timeout: a test that hangs fails with its name after 15 minutes instead of holding the
      # run (a browser test once sat 24 minutes on a Chromium that never answered, under load 17)
      cpu_group_enter "$n"
      node --test --test-concurrency=1 --test-timeout=900000 "$f" >"$dir/$n.log" 2>&1 || s=$?
      echo $(($(date +%s) - t0)) >"$dir/$n.secs"
      cpu_group_leave >"$dir/$n.cpu"
      echo "$s" >"$dir/$n.status"
      flock "$dir/.print" cat "$dir/$n.log"
    ) &
  done
  wait || true
  echo "== $suite: wall time and CPU time per file (s), $jobs files at a time"
  for f in "$@"; do
    n=$(basename "$f" .test.mjs)
    s=$(cat "$dir/$n.status" 2>/dev/null || echo missing)
    printf '%6s %6s  %s\n' "$(cat "$dir/$n.secs" 2>/dev/null || echo -)" "$(cat "$dir/$n.cpu" 2>/dev/null || echo -)" "$f"
    if [ "$s" != 0 ]; then
      echo "run_all.sh: $f failed (exit $s); its log: $dir/$n.log" >&2
      # the failures again, here at the end, where a CI log's tail shows them (the whole log came above)
      awk '/^not ok / { p = 1 } p { print "  | " $0 } p && /^  \.\.\.$/ { p = 0 }' "$dir/$n.log" | head -n 80 >&2
      status=1
    elif ! awk '/^# Subtest: / && !/\.test\.mjs$/ { found = 1 } END { exit !found }' "$dir/$n.log"; then
      # (node reports a file without tests as one test named by the file's path)
      echo "run_all.sh: $f ran no test; its log: $dir/$n.log" >&2
      status=1
    fi
  done
  return "$status"
}

# ---- 1. what the machine needs ----------------------------------------------------
stage "install what is missing (apt), npm ci (tests/)"
if [ "$quick" = 1 ]; then
  ATTN_DEPS_FOR=run_all.sh .ci/install-deps.sh native wasm browser node
else
  ATTN_DEPS_FOR=run_all.sh .ci/install-deps.sh native wasm fuzz browser node
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node $node_major found; the browser tests (playwright-core) need Node 20 or later." >&2
  exit 1
fi
(cd tests && npm ci --no-audit --no-fund --loglevel=error)

# ---- 2. native: core, CLI, Catch2 tests ---------------------------------------------
stage "native build"
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >build/configure.log 2>&1 || { cat build/configure.log; exit 1; }
cmake --build build -j"$jobs" -- --no-print-directory
stage "ctest (Catch2)"
run_ctest build
check_test_count build

# ---- 2b. the same Catch2 suite under AddressSanitizer + UndefinedBehaviorSanitizer, ----------
# and a short run of each libFuzzer harness (tests/fuzz), from one clang build:
# ATTN_FUZZ=ON implies ATTN_SANITIZE=ON and adds the fuzzers. CMake rebuilds only
# what changed since the last run in build-asan/ (nothing, when the sources are the same).
if [ "$quick" = 0 ]; then
  stage "sanitizer build (clang, ASan + UBSan, with the fuzzers)"
  mkdir -p build-asan
  # (line tables only: the sanitizers' reports name every frame's file and line, and clang
  # compiles about a third faster than with full debug information)
  cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DBUILD_TESTING=ON >build-asan/configure.log 2>&1 || { cat build-asan/configure.log; exit 1; }
  # (the Catch2 suite and the fuzzers: tests/fuzz/CMakeLists.txt's sanitizer_suite)
  cmake --build build-asan -j"$jobs" --target sanitizer_suite -- --no-print-directory >build-asan/build.log 2>&1 \
    || { cat build-asan/build.log; exit 1; }
  stage "Catch2 under ASan + UBSan ($((8 * jobs)) processes, $jobs at a time)"
  # all but the tests whose claims are outcomes the native run checks: the training tests (a model
  # learns its task) and the language model's held-out score against its baselines. Under the
  # sanitizers they would only repeat minutes of the same training steps and forward passes that
  # other tests run instrumented (the trainer's: random settings inside the documented ranges, the
  # memory estimate, same-seed determinism, a checkpoint round trip; the shipped models': their heads).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_catch_shards build-asan '^learning: |^shipped models: the language model beats the unigram and bigram baselines' \
    build/Testing/Temporary/CTestCostData.txt
  stage "fuzzers (every tests/fuzz/fuzz_*.cpp), 10 s of a core each, side by side"
  ATTN_FUZZ_BUILD=build-asan tests/fuzz/run.sh 10
fi

# ---- 3. WebAssembly module and its Node tests ---------------------------------------------
# (--quick too: after a change to web/ alone, the wasm build has nothing to do. The exact flavour
# only: it is what the pages and the package load. The relaxed-SIMD and scalar flavours are the
# benchmark's (bench/run.sh builds them and runs tests/js/relaxed.test.mjs before it times the
# relaxed one); the kernels' plain C++ form is tested natively, test_scalar_kernels.cpp)
stage "wasm build (SIMD, dist/: site + npm package)"
./build_wasm.sh --dist
stage "node tests (engine API, CLI), $jobs files at a time"
mapfile -t node_files < <(longest_first tests/js races models train leak train-memory hub-cli types bundler pretrained package fast \
  | grep -vx tests/js/relaxed.test.mjs)
ATTN_CLI="$root/build/attn" run_test_files node "${node_files[@]}"

# ---- 4. browser tests (Chromium via playwright-core) ---------------------------------------
if [ "$quick" = 1 ]; then
  stage "browser smoke test (chromium): every page"
  run_test_files browser tests/browser/smoke.test.mjs
elif compgen -G "tests/browser/*.test.mjs" >/dev/null; then
  # each file drives its own Chromium (own profile) and its own server (a free port), and
  # writes its own tests/artifacts/ folder. One file more than there are cores at a time
  # (ATTN_BROWSER_JOBS=N for N, 1 for one): a file alone keeps about 1.2 cores busy but waits
  # at times (page loads, its workers' messages), so with as many files as cores the cores were
  # 5% idle (361 s for the stage, AMD EPYC, 2 cores), with one more 1% (337 s, the stage alone).
  # The longest files (measured) start first, so that none starts last and runs alone. The
  # harness's waits poll on a timer, not on animation frames, which a loaded renderer may not
  # run for seconds (harness.mjs launchBrowser), and the training waits allow minutes.
  browser_jobs=${ATTN_BROWSER_JOBS:-$((jobs + 1))}
  stage "browser tests (chromium), $browser_jobs files at a time"
  mapfile -t browser_files < <(longest_first tests/browser train races concepts learn steps security truth phone numbers embed)
  jobs=$browser_jobs run_test_files browser "${browser_files[@]}"
fi
report_times
if [ "$quick" = 1 ]; then
  echo "== quick test suites passed (tests/run_all.sh without --quick runs everything)"
else
  echo "== all test suites passed"
fi
