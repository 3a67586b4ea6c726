#!/usr/bin/env bash
# Run the atheris harness for a fixed number of executions and report executions and crashes.
#
#   tests/fuzz/run_fuzz.sh [RUNS]        (default 20000; FUZZ_RUNS also works)
#
# Seeds come from corpus/*.jsonl (every labelled URL, with its server and message), so the
# fuzzer starts from realistic and adversarial URLs. Exit 0 when no input crashed, 1 when one
# did (the crashing input is kept in $FUZZ_ARTIFACTS, default a temporary folder), 2 when the
# harness could not run (atheris missing).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runs="${1:-${FUZZ_RUNS:-20000}}"
work="$(mktemp -d)"
artifacts="${FUZZ_ARTIFACTS:-$work/artifacts}"
trap 'rm -rf "$work/seeds" "$work/grown"' EXIT
mkdir -p "$work/seeds" "$work/grown" "$artifacts"

if ! python -c 'import atheris' 2>/dev/null; then
    echo "fuzz: atheris is not installed (pip install -e '.[fuzz]')" >&2
    exit 2
fi

python - "$root" "$work/seeds" <<'PY'
import hashlib, json, sys
from pathlib import Path
root, out = Path(sys.argv[1]), Path(sys.argv[2])
servers = [None, "stdio", "https://mcp.example.com/mcp", "http://127.0.0.1:8765/mcp",
           "https://a.github.io/mcp", "https://mcp.xn--mnchen-3ya.de/"]
n = 0
for f in sorted((root / "corpus").glob("*.jsonl")):
    for line in f.read_text(encoding="utf-8").split("\n"):  # not splitlines: U+2028 is data
        if not line.strip():
            continue
        case = json.loads(line)
        s = case.get("server")
        sel = servers.index(s) if s in servers else 2
        flags = 1 if case.get("message") else 0
        body = case["url"] + ("\n\n" + case["message"] if case.get("message") else "")
        data = bytes([sel, flags]) + body.encode("utf-8", "surrogatepass")[:4096]
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
        n += 1
print(f"fuzz: {n} seeds from corpus/", file=sys.stderr)
PY

log="$work/fuzz.log"
start=$(date +%s)
python "$here/fuzz_vet.py" -runs="$runs" -seed=1 -max_len=4096 -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$work/grown" "$work/seeds" >"$log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))

execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
if [ -z "$execs" ]; then
    execs=$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' | tail -1)
fi
crashes=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
    crashes=1  # libFuzzer failed without leaving an artifact: count it, show the log
fi
echo "fuzz: executions=${execs:-0} crashes=${crashes} seconds=${elapsed} (runs requested ${runs})"
if [ "$crashes" -ne 0 ]; then
    tail -60 "$log" >&2
    echo "fuzz: crashing inputs in $artifacts" >&2
    exit 1
fi
exit 0
