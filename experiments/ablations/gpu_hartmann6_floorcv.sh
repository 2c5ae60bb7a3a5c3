#!/usr/bin/env bash
# target_floor_cv left the library (a dead end, docs/RESULTS.md): this script runs with the
# library at the git tag ablation-levers (git checkout ablation-levers).
# Issue 13 on a lent GPU (session 10), Hartmann-6, 5 seeds: the target floor chosen by
# leave-one-out (BOSettings.target_floor_cv = 0.01) at cost 600, and the recommendation
# among the x evaluated at the target (incumbent_rule = "target", the rule whose regret
# cannot rise on noise-free data) at cost 600 and at the paper budget of 6000
# (--partial: a run cut by the time limit keeps its curves).
# One process each at once on the one GPU. Everything lands in $OUT/h6_floorcv.tar.gz.
. "$(dirname "$0")/../gpu_env.sh" || exit 1
T=${H6_TIMEOUT:-420}
A="experiments/ablations/ablation_mumbo.py --problems hartmann6 --seeds 5"
L=docs/data/gpu/h6_floorcv; mkdir -p $L
K="--budget 600 --max-evals 250 --checkpoints 25,50,100,200"
timeout $T python3 $A $K --levers faces+local+inc_global+cal+floorcv --tag gpu6Lfloorcv > $L/gpu6Lfloorcv.log 2>&1 &
timeout $T python3 $A $K --levers faces+local+inc_target+cal --tag gpu6Ltarget > $L/gpu6Ltarget.log 2>&1 &
timeout $T python3 $A --partial --budget 6000 --max-evals 700 --checkpoints 25,50,100,200,600,1000,2000,4000 \
  --levers faces+local+inc_target+cal --tag gpu6ktarget > $L/gpu6ktarget.log 2>&1 &
wait
tar czf "$OUT/h6_floorcv.tar.gz" $L docs/data/ablations/gpu6Lfloorcv* docs/data/ablations/gpu6Ltarget* docs/data/ablations/gpu6ktarget*
tail -n 1 $L/*.log
