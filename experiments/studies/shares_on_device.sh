#!/usr/bin/env bash
# Shares of a study's seeds on a lent machine's CPU cores (one device call, the repository
# root as cwd; tinygp as a wheel in .whl/): a one-share smoke run first, so that a broken
# stack costs seconds, then run_chunks.py until the deadline; the records come back as one
# archive, $OUT/shares.tar.gz, for merge_records.py.
#   experiments/studies/shares_on_device.sh PLAN DEADLINE_S [study flags...]
source experiments/gpu_env.sh || exit 1
export JAX_PLATFORMS=cpu  # the study's numbers are CPU numbers; the GPU stays idle
PLAN=$1; DEADLINE=$2; shift 2
t0=$(date +%s); S=/tmp/shares; mkdir -p $S
nproc; grep -m1 "model name" /proc/cpuinfo
python3 experiments/studies/robust.py --one forrester ei --seed-list 0 --max-evals 2 --budget 20 --fast \
  --out /tmp/smoke || { echo "smoke run failed"; exit 1; }
echo "[smoke done at $(( $(date +%s) - t0 )) s]"
python3 experiments/studies/run_chunks.py --plan "$PLAN" --out $S --jobs "$(nproc)" \
  --deadline-s $(( DEADLINE - ($(date +%s) - t0) )) -- "$@"
tar -czf "$OUT/shares.tar.gz" -C $S .
echo "[all done at $(( $(date +%s) - t0 )) s]"; ls -la "$OUT"
