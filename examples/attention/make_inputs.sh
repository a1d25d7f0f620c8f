#!/usr/bin/env bash
# Regenerates q.npy, k.npy and v.npy (bf16[64,64], values in [-2.5, 2.5] like the QKV FPGA data)
# with tacit itself: inputs.hlo computes them deterministically from iota and sine (in f32,
# rounded to bf16). Usage: examples/attention/make_inputs.sh [TACIT_BINARY]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tacit="${1:-$here/../../build/tools/tacit/tacit}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$tacit" hlo eval "$here/inputs.hlo" --output-dir "$tmp"
mv "$tmp/qkv.0.npy" "$here/q.npy"
mv "$tmp/qkv.1.npy" "$here/k.npy"
mv "$tmp/qkv.2.npy" "$here/v.npy"
