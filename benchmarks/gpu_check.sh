#!/usr/bin/env bash
# Single-GPU check where a GPU machine is lent: short tic-tac-toe MuZero training on CUDA, then
# learner steps/s and self-play positions/s (see benchmarks/gpu_check.py). Run from anywhere:
#
#   bash benchmarks/gpu_check.sh                 # exit 0: figures printed; 77: no GPU (skipped)
#   bash benchmarks/gpu_check.sh --device cpu    # the same figures on CPU for comparison
#
# PYTHON selects the interpreter (default: python3, or .venv/bin/python when present). Needs a torch
# built with CUDA; the native extensions are built in place first when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
  if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi
echo "== gpu_check: $(date -u +%FT%TZ) on $(hostname), interpreter $PY"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total,utilization.gpu \
  --format=csv,noheader || echo "nvidia-smi: not found"
if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "gpu_check: FAILED: '$PY' cannot import torch; set PYTHON=/path/to/python with torch installed" >&2
  exit 2
fi
if ! "$PY" -c "import lzlite.mcts.ctree._ctree, zoo._zoo, zoo._bots" 2>/dev/null; then
  echo "== building the native extensions (python setup.py build_ext --inplace)"
  "$PY" setup.py build_ext --inplace -q
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" benchmarks/gpu_check.py "$@"
