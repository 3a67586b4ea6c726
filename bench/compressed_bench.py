"""What reading a compressed log costs an audit: the same URL list (the scale mix) read by the
audit's one line reader plain and gzip-, bzip2-, xz- and zstd-compressed, without vetting
(reading is all that compression changes), best of three; then one whole offline audit of
the plain and the gzip file, for scale.

    python bench/compressed_bench.py [N]   # N URLs, default 200,000
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import mix

from urlvet.audit.options import AuditOptions
from urlvet.audit.sources import Meter, Reader, Source


def _compressors() -> dict[str, Callable[[bytes], bytes]]:
    found: dict[str, Callable[[bytes], bytes]] = {
        "": lambda data: data,
        ".gz": gzip.compress,
        ".bz2": bz2.compress,
        ".xz": lzma.compress,
    }
    try:
        import zstandard
    except ImportError:
        print("zstandard is not installed: no zstd figure (pip install 'urlvet[zstd]')")
    else:
        found[".zst"] = zstandard.ZstdCompressor().compress
    return found


def _read(path: Path) -> tuple[int, float]:
    best = float("inf")
    count = 0
    for _ in range(3):
        started = time.perf_counter()
        reader = Reader(AuditOptions(input_kind="urls"), Meter())
        count = sum(1 for _ in reader.read([Source(path.name, str(path))]))
        best = min(best, time.perf_counter() - started)
    return count, best


def _audit(path: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "urlvet", "audit", "--no-dns", "--no-progress", "--format",
         "jsonl", str(path)],
        stdout=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    text = ("\n".join(mix.urls(n)) + "\n").encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="urlvet-compressed-") as folder:
        print(f"{n:,} URLs, {len(text) / 1e6:.1f} MB of text")
        print(f"{'format':<7} {'file MB':>8} {'read s':>7} {'MB/s of text':>13}")
        for suffix, compress in _compressors().items():
            path = Path(folder, f"urls{suffix}")
            path.write_bytes(compress(text))
            count, seconds = _read(path)
            assert count == n, (suffix, count)
            print(
                f"{suffix or 'plain':<7} {path.stat().st_size / 1e6:>8.2f} {seconds:>7.2f} "
                f"{len(text) / 1e6 / seconds:>13.0f}"
            )
        for suffix in ("", ".gz"):
            print(
                f"whole audit, {suffix or 'plain'}: {_audit(Path(folder, f'urls{suffix}')):.2f} s"
            )


if __name__ == "__main__":
    main()
