#!/usr/bin/env bash
# Hartmann-6 on a GPU at its paper budget of 6000 (5 seeds) for the default MUMBO, MT-EI and
# MF-GP-UCB, and the NUTS lever (4 samples) at cost 600,
# one process each at once on the one GPU (the compiled loop vmaps the seeds there).
# Each run saves its seeds' curves whenever the buffers grow (--partial), so a run cut
# by the time limit keeps what it made. Everything lands in $OUT/h6_6000.tar.gz;
# unpacked, `python experiments/ablations/merge_gpu_hartmann6.py` merges the runs into the
# file docs/RESULTS.md renders (gpu6kall_hartmann6_b6000_s0-4.json) and draws its figure.
. "$(dirname "$0")/../gpu_env.sh" || exit 1
T=${H6_TIMEOUT:-470}
A="experiments/ablations/ablation_mumbo.py --problems hartmann6 --seeds 5 --partial"
K="--budget 6000 --max-evals 700 --checkpoints 25,50,100,200,600,1000,2000,4000"
L=data/gpu/h6_6000; mkdir -p $L
timeout $T python3 $A $K --levers faces+local+inc_global+cal --tag gpu6k > $L/gpu6k.log 2>&1 &
timeout $T python3 $A $K --levers "" --baselines mt_ei --tag gpu6km > $L/gpu6km.log 2>&1 &
timeout $T python3 $A $K --levers "" --baselines mf_gp_ucb --tag gpu6ku > $L/gpu6ku.log 2>&1 &
timeout $T python3 $A --budget 600 --max-evals 250 --checkpoints 25,50,100,200 \
  --levers faces+local+inc_global+cal+nuts4 --tag gpu6n > $L/gpu6n.log 2>&1 &
wait
nvidia-smi --query-gpu=name,memory.used --format=csv
tar czf "$OUT/h6_6000.tar.gz" $L data/ablations/gpu6k* data/ablations/gpu6n*
tail -n 2 $L/*.log
