#!/usr/bin/env bash
# Generates a benchmark corpus of realistic Pi session files with Pi's own SessionManager
# (shared/tools/gen-sessions.mjs driving the pinned npm @mariozechner/pi-coding-agent).
#
#   bench/gen_corpus.sh OUTDIR [COUNT=20] [SEED=1]     COUNT ordinary branched sessions
#   bench/gen_corpus.sh --big OUTDIR REPEAT [SEED=1]   one deep linear session (--fork-rate 0)
#
# Prints the generated file paths on stdout (one per line); progress and npm output go to stderr.
# shared/ is looked up beside the repo (REPO/../shared); override with SHARED=/path/to/shared.
# A --big file grows linearly with REPEAT, but its size depends a lot on SEED (the seed picks which
# slice of turns is replayed; at REPEAT=120 seeds 0..12 give 12-68 MB). With SEED=1: REPEAT=120 ->
# 22.1 MB / 21,239 entries (1.4 s), REPEAT=136 -> 25.1 MB, REPEAT=543 -> 100.2 MB / 96,249 entries (2.8 s).
set -euo pipefail

usage() {
  grep '^#   bench/gen_corpus.sh' "$0" | sed 's/^#   /usage: /' >&2
  exit 2
}

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
shared="${SHARED:-$here/../../shared}"
[ -d "$shared/tools" ] || { echo "gen_corpus: shared/ not found at $shared (set SHARED=)" >&2; exit 1; }
shared="$(cd "$shared" && pwd)"
source_session="$shared/fixtures/pi-large-session.jsonl"

big=0
if [ "${1:-}" = "--big" ]; then big=1; shift; fi
case "${1:-}" in ""|-h|--help) usage ;; esac
out="$1"
if [ "$big" = 1 ]; then
  repeat="${2:-}"
  seed="${3:-1}"
  [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || usage
else
  count="${2:-20}"
  seed="${3:-1}"
  [[ "$count" =~ ^[1-9][0-9]*$ ]] || usage
fi
[[ "$seed" =~ ^[0-9]+$ ]] || usage

command -v node >/dev/null || { echo "gen_corpus: node is required" >&2; exit 1; }
pi_home="$(bash "$shared/tools/install-pi.sh")"
pkg="$pi_home/node_modules/@mariozechner/pi-coding-agent/dist/index.js"
[ -f "$pkg" ] || { echo "gen_corpus: Pi package not found at $pkg" >&2; exit 1; }

mkdir -p "$out"
gen=(node "$shared/tools/gen-sessions.mjs" --pkg "$pkg" --source "$source_session" --out "$out" --seed "$seed")
if [ "$big" = 1 ]; then
  "${gen[@]}" --count 1 --repeat "$repeat" --fork-rate 0
else
  "${gen[@]}" --count "$count"
fi
