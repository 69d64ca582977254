#!/usr/bin/env bash
# Build the one-folder bundle dist/network-inspector/ with PyInstaller (docs/bundle.md).
#   bash packaging/build.sh                         # CUDA wheel: GPU-capable bundle
#   NI_BUNDLE_CUDA=minimal bash packaging/build.sh  # drop the CUDA libraries only a GPU run opens
# Extra arguments go to pyinstaller (e.g. --clean).
set -euo pipefail
cd "$(dirname "$0")/.."
for f in resources/demo/demo.safetensors resources/demo/demo.json resources/demo/detector.safetensors resources/demo/detector.json; do
  if [ ! -s "$f" ]; then
    echo "error: $f is missing: train the demo first (uv run python -m inspector.demo.train)" >&2
    exit 2
  fi
done
if ! ls resources/samples/*.png >/dev/null 2>&1; then
  echo "error: resources/samples/ has no images (uv run python -m inspector.demo.make_samples)" >&2
  exit 2
fi
# The bundle takes ~4.2 GB (dist/ plus build/pyinstaller; ~3 GB minimal): say so before PyInstaller
# fails half-way through copying with a traceback.
need_gb=5
[ "${NI_BUNDLE_CUDA:-full}" = minimal ] && need_gb=4
free_kb=$(df -Pk . | awk 'NR==2 {print $4}')
if [ "$free_kb" -lt $(( need_gb * 1024 * 1024 )) ]; then
  echo "error: the bundle needs about ${need_gb} GB of free disk here; $(( free_kb / 1024 )) MB is free" >&2
  exit 2
fi
start=$(date +%s)
uv run --group packaging pyinstaller packaging/network-inspector.spec \
  --noconfirm --distpath dist --workpath build/pyinstaller "$@"
seconds=$(( $(date +%s) - start ))
echo "built dist/network-inspector in ${seconds} s ($(du -sh dist/network-inspector | cut -f1))"
