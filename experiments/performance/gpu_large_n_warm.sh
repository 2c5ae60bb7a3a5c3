#!/usr/bin/env bash
# One decision at large n on a GPU, the refit cold (every start, the default) and
# warm-only (fit.warm_from): Hartmann-3, default settings, the fit starting from the
# hyper-parameters fitted on the first n - 1 points (as at a run's next step). One device
# call, the repository root as cwd; results under $OUT.
#   experiments/performance/gpu_large_n_warm.sh [NS]   (tinygp as a wheel in .whl/; NS default 1000,3000)
source experiments/gpu_env.sh || exit 1
NS=${1:-1000,3000}
t0=$(date +%s)
timeout 300 python3 experiments/performance/bench_decision.py --ns "$NS" --reps 3 --start previous \
  --label gpu_cold --out "$OUT/decision_large_n_warm.json" 2>&1 | grep -v "Warning\|AOT" | tail -4
echo "[cold done at $(( $(date +%s) - t0 )) s]"
# the same programs (warm_from changes only a traced flag): loaded from the persistent cache
timeout 200 python3 experiments/performance/bench_decision.py --ns "$NS" --reps 3 --start previous \
  --set fit.warm_from=1 --set fit.cold_every=1000000 \
  --label gpu_warm --out "$OUT/decision_large_n_warm.json" 2>&1 | grep -v "Warning\|AOT" | tail -4
echo "[all done at $(( $(date +%s) - t0 )) s]"
