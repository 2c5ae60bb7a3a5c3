#!/usr/bin/env bash
# The sweeps behind docs/RESULTS.md.
#  * paper-sized (paper budgets and caps; 20 seeds, 10 on Hartmann-3 and continuous Currin):
#    currin_full, borehole_full, hartmann3_full, currin_continuous_full. 1 to 75 minutes per strategy on one core of the 2-core development CPU (see
#    RESULTS.md); not in the default list. Every strategy of a config:
#    mumbo-jax compare configs/compare_<problem>.toml
#  * reduced (2-5 seeds, reduced budgets, sized for a shared 2-core CPU, each a few to ~15 minutes):
#    the rest.
#
# Usage: experiments/paper/run_sweeps.sh [overhead] [currin] [currin_budget200] [hartmann3] [currin_continuous] [borehole]
#                                  [hartmann6] [rosenbrock]        (default: these, in this order)
#        experiments/paper/run_sweeps.sh currin_full borehole_full hartmann3_full currin_continuous_full
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python}
run() { echo "== $*"; "$PY" -m mumbo_jax compare "$@"; }
one() {
  case "$1" in
    overhead) "$PY" experiments/paper/overhead_mumbo_vs_mtbo.py --samples 1 10 50 200 ;;
    currin) run configs/compare_currin.toml --seeds 3 --budget 100 --max-evals 80 --out docs/results/currin \
        --strategies mumbo-1,mumbo-10,mumbo-50,mumbo-10-exact,ei,mes,mt-ei,mf-gp-ucb,mtbo-50,random ;;
    currin_budget200) run configs/compare_currin.toml --seeds 5 --budget 200 --max-evals 150 \
        --out docs/results/currin_budget200 --strategies mumbo-10,ei,mes,mt-ei,mf-gp-ucb,mtbo-50 ;;
    hartmann3) run configs/compare_hartmann3.toml --seeds 3 --budget 300 --max-evals 50 --out docs/results/hartmann3 \
        --strategies mumbo-1,mumbo-10,mumbo-10-exact,ei,mes,mt-ei,mf-gp-ucb,mtbo-50 ;;
    currin_continuous) run configs/compare_currin_continuous.toml --seeds 3 --budget 20 --max-evals 50 \
        --out docs/results/currin_continuous --strategies mumbo-10,ei,mt-ei,boca,mtbo-50,random ;;
    borehole) run configs/compare_borehole.toml --seeds 3 --budget 100 --max-evals 40 --out docs/results/borehole \
        --strategies mumbo-10,ei,mes,mt-ei,mf-gp-ucb,mtbo-50 ;;
    hartmann6) run configs/compare_hartmann6.toml --seeds 2 --budget 2000 --max-evals 30 --out docs/results/hartmann6 \
        --strategies mumbo-10,ei,mt-ei,mf-gp-ucb,mtbo-50 ;;
    rosenbrock) run configs/compare_rosenbrock.toml --seeds 3 --budget 3000 --max-evals 40 --out docs/results/rosenbrock \
        --strategies mumbo-10,ei,mes,mt-ei,mtbo-50 ;;
    currin_full) run configs/compare_currin.toml --out docs/results/currin_full \
        --strategies mumbo-10,ei,mt-ei,mf-gp-ucb,mes,random,mumbo-1,mumbo-50,mtbo-50 ;;
    borehole_full) run configs/compare_borehole.toml --out docs/results/borehole_full \
        --strategies mumbo-10,ei,mt-ei,mf-gp-ucb,mes,random,mumbo-1 ;;
    hartmann3_full) run configs/compare_hartmann3.toml --seeds 10 --out docs/results/hartmann3_full \
        --strategies mumbo-10,ei,mes,mt-ei,mf-gp-ucb ;;
    currin_continuous_full) run configs/compare_currin_continuous.toml --seeds 10 \
        --out docs/results/currin_continuous_full --strategies mumbo-10,ei,mes,mt-ei,boca,random ;;
    *) echo "unknown sweep $1" >&2; exit 2 ;;
  esac
}
if [ $# -eq 0 ]; then set -- overhead currin currin_budget200 hartmann3 currin_continuous borehole hartmann6 rosenbrock; fi
for w in "$@"; do one "$w"; done
