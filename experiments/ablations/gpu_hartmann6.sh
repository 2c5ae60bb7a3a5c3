#!/usr/bin/env bash
# Hartmann-6 at cost 600 (5 seeds) on a GPU: the default MUMBO, MUMBO
# as the paper runs it, MT-EI and MF-GP-UCB, one process each at once on the one GPU
# (the compiled loop vmaps the seeds there). Results: data/ablations/gpu6*_hartmann6_b600_s0-4.json, copied to $OUT.
. "$(dirname "$0")/../gpu_env.sh" || exit 1
A="experiments/ablations/ablation_mumbo.py --problems hartmann6 --seeds 5 --budget 600 --max-evals 400 --checkpoints 25,50,100,200"
T=${H6_TIMEOUT:-440}
timeout $T python3 $A --levers faces+local+inc_global --tag gpu6a > "$OUT/gpu6a.log" 2>&1 &
timeout $T python3 $A --levers base --tag gpu6b > "$OUT/gpu6b.log" 2>&1 &
timeout $T python3 $A --levers "" --baselines mt_ei --tag gpu6c > "$OUT/gpu6c.log" 2>&1 &
timeout $T python3 $A --levers "" --baselines mf_gp_ucb --tag gpu6d > "$OUT/gpu6d.log" 2>&1 &
wait
# one file, gpu6_hartmann6_b600_s0-4.json, for a page's <!-- render: ablation gpu6_hartmann6_b600_s0-4.json -->
python3 - <<'PY'
import json, pathlib
root = pathlib.Path("data/ablations")
parts = [json.loads((root / f"gpu6{t}_hartmann6_b600_s0-4.json").read_text()) for t in "bacd"  # base MUMBO first: the tables test every variant against it
         if (root / f"gpu6{t}_hartmann6_b600_s0-4.json").is_file()]
merged = dict(parts[0], variants={v: r for p in parts for v, r in p["variants"].items()})
(root / "gpu6_hartmann6_b600_s0-4.json").write_text(json.dumps(merged))
PY
cp data/ablations/gpu6_hartmann6_b600_s0-4.json "$OUT/" 2>/dev/null
tail -n 3 "$OUT"/gpu6*.log
