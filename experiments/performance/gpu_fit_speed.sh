#!/usr/bin/env bash
# The fit-speed checks on a GPU, one script for one device call (the repo's root as cwd, $OUT for
# results): (c) one hyper-parameter fit, 8 restarts, n = 100 (target 100 ms), starts one
# after another and in lock-step; the 20-seed Hartmann-3 paper-budget sweep of MUMBO-10
# (target 60 s), from an empty persistent compilation cache and again from the filled one;
# one decision at n = 40 and n = 300. tinygp travels as a wheel in .whl/ (the image has
# jax, optax, equinox, scipy, matplotlib, scikit-learn, tqdm).
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/device.txt"
python3 -c "import jax, optax, tinygp; print('jax', jax.__version__, 'optax', optax.__version__, jax.devices())" | tee -a "$OUT/device.txt"
t0=$(date +%s)
timeout 150 python3 experiments/performance/bench_acquisition.py --repeats 20 --fit-batching both --out "$OUT/speed_gpu.json" 2>&1 | tee "$OUT/acq.log"
echo "[acq done at $(( $(date +%s) - t0 )) s]"
SWEEP="experiments/paper/bench_bo.py regret --problem hartmann3 --budget 1500 --seeds 20 --max-evals 1500 --refit-every 20 --batching vmap --min-buffer 256 --print-every 100"
export JAX_COMPILATION_CACHE_DIR=/tmp/xla_cache JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1
timeout 210 python3 $SWEEP --jsonl "$OUT/bench_bo_gpu.jsonl" --partial "$OUT/h3_cold_partial.json" > "$OUT/h3_cold.log" 2>&1
tail -4 "$OUT/h3_cold.log"
echo "[cold sweep done at $(( $(date +%s) - t0 )) s]"
timeout 150 python3 $SWEEP --jsonl "$OUT/bench_bo_gpu.jsonl" --partial /tmp/h3_warm_partial.json > "$OUT/h3_warm.log" 2>&1
tail -4 "$OUT/h3_warm.log"
echo "[warm sweep done at $(( $(date +%s) - t0 )) s]"
timeout 90 python3 experiments/performance/bench_decision.py --ns 40,300 --reps 3 --label gpu --out "$OUT/decision_gpu.json" 2>&1 | tail -8
echo "[all done at $(( $(date +%s) - t0 )) s]"
