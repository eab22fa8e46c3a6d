#!/usr/bin/env bash
# Regenerates the PTR paper's privacy figures (Figures 1–5: PNG + CSV of the
# plotted numbers + README.md with every figure's parameters) into the given
# directory (default out/privacy-figures) and lists the files written.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/privacy-figures}"
go run ./cmd/trainer experiment privacy-figures --out "$out"
ls -l "$out"
