#!/usr/bin/env bash
# One decision (AskTell.ask: fit, g*, maximisation; MUMBO, default settings, Hartmann-3 with
# 3 fidelities) at large n on a GPU: n = 300, 1000, 2000, 3000 from the default
# hyper-parameters, then n = 3000 from a fitted start (two distinct fit starts, as a step
# inside a run). One device call, the repository root as cwd; results under $OUT.
#   experiments/performance/gpu_large_n.sh   (tinygp as a wheel in .whl/)
source experiments/gpu_env.sh || exit 1
t0=$(date +%s)
timeout 330 python3 experiments/performance/bench_decision.py --ns 300,1000,2000,3000 --reps 3 \
  --label gpu_large_n --out "$OUT/decision_gpu.json" 2>&1 | grep -v Warning | tail -12
echo "[defaults done at $(( $(date +%s) - t0 )) s]"
timeout 150 python3 experiments/performance/bench_decision.py --ns 3000 --reps 3 --start fitted \
  --label gpu_large_n_fitted --out "$OUT/decision_gpu.json" 2>&1 | grep -v Warning | tail -6
echo "[all done at $(( $(date +%s) - t0 )) s]"
