#!/usr/bin/env bash
# Hartmann-6 at cost 600 (5 seeds) on a GPU for extra levers on top of today's
# default, one process per lever at once: LEVERS="disc floor" bash experiments/ablations/gpu_hartmann6_levers.sh
# Results: data/ablations/gpu6L<lever>_hartmann6_b600_s0-4.json, in $OUT/h6_levers.tar.gz.
. "$(dirname "$0")/../gpu_env.sh" || exit 1
T=${H6_TIMEOUT:-200}
L=data/gpu/h6_levers; mkdir -p $L
for lv in ${LEVERS:-disc floor}; do
  timeout $T python3 experiments/ablations/ablation_mumbo.py --problems hartmann6 --seeds 5 --budget 600 --max-evals 250 \
    --checkpoints 25,50,100,200 --levers faces+local+inc_global+cal+$lv --tag gpu6L$lv > $L/gpu6L$lv.log 2>&1 &
done
wait
tar czf "$OUT/h6_levers.tar.gz" $L data/ablations/gpu6L*
tail -n 1 $L/*.log
