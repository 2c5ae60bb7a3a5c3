#!/usr/bin/env bash
# Session 10 tables (docs/RESULTS.md, "A floor chosen by leave-one-out"): the floorcv and
# inc_target rows beside the session-9 rows of the same seeds.
cd "$(dirname "$0")/../.."
D=mumbo+faces+local+inc_global+cal
for pb in currin_b200 hartmann3_b150 borehole_b200 forrester_b200 perdikaris_b100 branin_aug_b100; do
  python experiments/ablations/merge_rows.py --out s10m_${pb}_s0-9.json s9fm_${pb}_s0-9.json:$D s9fm_${pb}_s0-9.json:$D+floor1 \
    s10cv_${pb}_s0-9.json:$D+floorcv s10tg_${pb}_s0-9.json:mumbo+faces+local+inc_target+cal \
    s9fm_${pb}_s0-9.json:mt_ei s9fm_${pb}_s0-9.json:mf_gp_ucb
done
python experiments/ablations/merge_rows.py --out s10m_rosenbrock_b3000_s0-9.json s9ho_rosenbrock_b3000_s0-9.json:$D \
  s9ho_rosenbrock_b3000_s0-9.json:$D+floor1 s10cv_rosenbrock_b3000_s0-9.json:$D+floorcv \
  s10tg_rosenbrock_b3000_s0-9.json:mumbo+faces+local+inc_target+cal s9ho_rosenbrock_b3000_s0-9.json:mt_ei
python experiments/ablations/merge_rows.py --out gpu10m_hartmann6_b600_s0-4.json gpu6Lm_hartmann6_b600_s0-4.json:$D \
  gpu6Lfloorcv_hartmann6_b600_s0-4.json:$D+floorcv gpu6Ltarget_hartmann6_b600_s0-4.json:mumbo+faces+local+inc_target+cal
