#!/usr/bin/env bash
# The debiasing study of issue #19 on a 2-core machine: two parts train in parallel (one torch
# thread each) into one shared runs folder; a third call aggregates every finished run.
# Rerun to resume (finished runs are skipped); stop any time: partial results stay valid.
#
#   main arms, seeds 0-9:  none, cda, duplicate (CDA's equal-budget control), hard_debias, anonymize
#   seeds 0-4:             the four combinations, hard_debias[freeze=true], hard_debias[restore_norms=true]
#
# Usage: scripts/study/debias_study.sh [OUT]   (default results/re_debias/study)
#        AGGREGATE_ONLY=1 scripts/study/debias_study.sh   (no training: refresh the report)
set -euo pipefail
WGB=${WGB:-wgb}
OUT=$(realpath -m "${1:-results/re_debias/study}")
RUNS=$(realpath -m --relative-to=. "$OUT/runs")   # relative: committed records name no machine path
A="none,cda,anonymize,anonymize+hard_debias@0-4,hard_debias[freeze=true]@0-4,hard_debias[restore_norms=true]@0-4"
B="duplicate,hard_debias,anonymize+cda@0-4,cda+hard_debias@0-4,anonymize+cda+hard_debias@0-4"
mkdir -p "$OUT/parts"
if [ -z "${AGGREGATE_ONLY:-}" ]; then
  "$WGB" re debias-grid "$OUT/parts/a" --variants "$A" --seeds 0-9 --runs-dir "$RUNS" --threads 1 --quiet \
      > "$OUT/parts/a.log" 2>&1 &
  pa=$!
  "$WGB" re debias-grid "$OUT/parts/b" --variants "$B" --seeds 0-9 --runs-dir "$RUNS" --threads 1 --quiet \
      > "$OUT/parts/b.log" 2>&1 &
  pb=$!
  wait $pa || echo "part a exited with $?"
  wait $pb || echo "part b exited with $?"
fi
"$WGB" re debias-grid "$OUT" --variants "$A,$B" --seeds 0-9 --runs-dir "$RUNS" --no-train --quiet > /dev/null
