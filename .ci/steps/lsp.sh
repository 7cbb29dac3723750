#!/usr/bin/env bash
# Language-server tests: a real editor (headless Neovim from Debian) drives the server in
# tests/lsp/test_neovim.py; nvcc, when present, compiles the sources the quick fixes edit. Idempotent.
set -euo pipefail
if ! command -v nvim >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends neovim >/dev/null
fi
nvim --version | head -n 1
