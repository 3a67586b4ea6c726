"""Compressed inputs: rotated logs (gzip, bzip2, xz, zstd) are read decompressed, known by
their first bytes, in the streaming, process-pool and split paths alike; the line limits
apply to the decompressed text, damaged data is reported and never passes, and a
decompression bomb costs time, never memory."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from urlvet.audit import AuditOptions, Source, split
from urlvet.audit.sources import compression_of
from urlvet.cli import main

ROOT = Path(__file__).resolve().parents[2]

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}

LOG = (
    b"".join(
        b'10.0.0.%d - - [01/Jan/2026] "GET /r?to=https://svc%d.example.com/p/%d HTTP/1.1" 302\n'
        % (i % 250, i % 40, i)
        for i in range(3000)
    )
    + b'10.0.0.9 - - "GET /r?to=http://169.254.169.254/latest/meta-data/ HTTP/1.1" 302\n'
)


def audit(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--no-dns", *args], input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def objects(out: str) -> list[dict[str, object]]:
    found = [json.loads(line) for line in out.splitlines()]
    for obj in found:
        obj.pop("path")
    return found


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_rotated_log_reads_as_the_plain_log(in_tmp: Path, fmt: str, jobs: str) -> None:
    (in_tmp / "access.log").write_bytes(LOG)
    # Named as logrotate names them, and once with no telling suffix at all: known by content.
    (in_tmp / "access.log.1").write_bytes(COMPRESSORS[fmt](LOG))
    plain = audit("--format", "jsonl", "access.log")
    for name in ("access.log.1",):
        got = audit("--format", "jsonl", "--jobs", jobs, name)
        assert got[0] == plain[0] == 1
        assert got[2] == ""
        assert objects(got[1]) == objects(plain[1])
        assert len(objects(got[1])) == 3001


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_compressed_stdin(fmt: str) -> None:
    code, out, err = audit("--format", "jsonl", "-", stdin=COMPRESSORS[fmt](LOG))
    assert code == 1
    assert err == ""
    assert len(out.splitlines()) == 3001


def test_the_name_without_its_compression_suffix_says_what_the_text_is(in_tmp: Path) -> None:
    rpc = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://10.0.0.1/", "message": "m", "elicitationId": "e"},
    }
    (in_tmp / "traffic.jsonl.gz").write_bytes(gzip.compress(json.dumps(rpc).encode() + b"\n"))
    code, out, _ = audit("--format", "jsonl", "traffic.jsonl.gz")
    assert code == 1
    assert json.loads(out)["input"].startswith("mcp:")


def test_concatenated_gzip_members_read_as_one_file(in_tmp: Path) -> None:
    half = LOG.index(b"\n", len(LOG) // 2) + 1
    (in_tmp / "both.gz").write_bytes(gzip.compress(LOG[:half]) + gzip.compress(LOG[half:]))
    code, out, _ = audit("--format", "jsonl", "both.gz")
    assert code == 1
    assert [o["line"] for o in objects(out)] == list(range(1, 3002))


def test_a_plain_file_named_gz_is_read_as_text(in_tmp: Path) -> None:
    (in_tmp / "misnamed.gz").write_bytes(b"https://10.0.0.1/\n")
    code, out, err = audit("--format", "jsonl", "misnamed.gz")
    assert (code, err) == (1, "")
    assert json.loads(out)["url"] == "https://10.0.0.1/"


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_damaged_compressed_data_is_an_input_error(in_tmp: Path, fmt: str) -> None:
    data = COMPRESSORS[fmt](LOG)
    (in_tmp / "cut.log.1").write_bytes(data[: len(data) // 2])
    code, _out, err = audit("--format", "jsonl", "cut.log.1")
    assert code == 2  # never a clean run: the rest of the log went unaudited
    assert "cut.log.1:" in err
    assert f"{fmt} data is damaged or cut short" in err


def test_binary_data_inside_the_compression_is_refused_as_binary(in_tmp: Path) -> None:
    (in_tmp / "image.gz").write_bytes(gzip.compress(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 10))
    code, _out, err = audit("image.gz")
    assert code == 2
    assert "binary file" in err


def test_the_line_limit_applies_to_the_decompressed_text(in_tmp: Path) -> None:
    body = b"https://ok.example.com/\n" + b"https://x.example.com/" + b"a" * 5000 + b"\n"
    (in_tmp / "long.gz").write_bytes(gzip.compress(body))
    code, out, err = audit("--format", "jsonl", "--max-line-bytes", "1024", "long.gz")
    assert code == 2
    assert "long.gz:2: line is 5,022 bytes, over the 1,024-byte limit" in err
    assert [o["type"] for o in objects(out)] == ["url", "diagnostic"]


def test_zstd_without_the_extra_names_the_extra(tmp_path: Path) -> None:
    (tmp_path / "app.log.1").write_bytes(COMPRESSORS["zstd"](LOG))
    # The real ImportError, as an environment without the package raises it.
    hide = "import sys; sys.modules['zstandard'] = None; from urlvet.cli import console; console()"
    done = subprocess.run(
        [sys.executable, "-c", hide, "audit", "--no-dns", "app.log.1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "zstd-compressed input needs the zstandard package" in done.stderr
    assert "pip install zstandard" in done.stderr


def _bomb(path: Path, size: int) -> None:
    # One line of `size` bytes, compressed in pieces: the test never holds it either.
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    piece = b"https://bomb.example.com/" + b"a" * ((1 << 20) - 25)
    with path.open("wb") as out:
        for _ in range(size // len(piece)):
            out.write(squeeze.compress(piece))
        out.write(squeeze.compress(b"\nhttps://10.0.0.1/\n") + squeeze.flush())


def test_a_decompression_bomb_costs_time_never_memory(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.gz"
    _bomb(bomb, 256 << 20)  # 256 MiB of text in a file of about 250 KiB
    assert bomb.stat().st_size < 1 << 20
    script = (
        # VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss across execve, so a child
        # of a large pytest process would report the parent's size.
        "import re, sys\n"
        "from urlvet.cli import main\n"
        "try:\n"
        "    main(['audit', '--no-dns', '--format', 'jsonl', 'bomb.gz'])\n"
        "except SystemExit as exc:\n"
        "    status = open('/proc/self/status').read()\n"
        "    peak = re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1)\n"
        "    print(exc.code, peak, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=300,
        check=False,
    )
    *diagnostics, last = done.stderr.strip().splitlines()
    code, peak_kib = (int(x) for x in last.split())
    assert code == 2  # the over-long line is reported; the URL after it is still vetted
    assert any("bomb.gz:1: line is 268,435,456 bytes" in d for d in diagnostics), done.stderr
    found = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o.get("url") for o in found if o["type"] == "url"] == ["https://10.0.0.1/"]
    assert peak_kib < 400 * 1024, f"peak RSS {peak_kib} KiB"  # a fraction of the 256 MiB


def test_a_split_audit_takes_compressed_files_whole(in_tmp: Path) -> None:
    names = []
    for i in range(4):  # four rotated logs: each a piece of its own, never cut
        name = f"access.log.{i}.gz"
        (in_tmp / name).write_bytes(gzip.compress(LOG.replace(b"svc", b"s%d-" % i)))
        names.append(name)
    sources = [Source(n, str(in_tmp / n)) for n in names]
    shares = split.plan_split(sources, "jsonl", AuditOptions(jobs=2), offline=True, min_share=64)
    assert shares is not None
    assert len(shares) >= 2
    assert all(piece.span is None for share in shares for piece in share)
    assert compression_of((in_tmp / names[0]).read_bytes()[:16]) == "gzip"


def test_a_split_audit_of_rotated_logs_is_the_one_process_audit(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from urlvet.audit import command

    for i, fmt in enumerate(sorted(COMPRESSORS)):
        (in_tmp / f"access.log.{i + 1}").write_bytes(
            COMPRESSORS[fmt](LOG.replace(b"svc", b"s%d-" % i))
        )
    one = audit("--format", "jsonl", ".")
    monkeypatch.setattr(split, "MIN_SHARE_BYTES", 64)  # small files, still split
    splits: list[int] = []
    real_split = command.run_split

    def counted(*args: object, **kwargs: object) -> object:
        splits.append(1)
        return real_split(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(command, "run_split", counted)
    two = audit("--format", "jsonl", "--jobs", "2", ".")
    assert splits == [1]  # the split path, with compressed files as whole pieces
    assert two == one
    assert one[0] == 1
    assert len(one[1].splitlines()) == 4 * 3001


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_progress_counts_the_compressed_bytes_against_the_files_size(
    tmp_path: Path, fmt: str
) -> None:
    from urlvet.audit.sources import Meter, Reader

    path = tmp_path / "access.log.1"
    path.write_bytes(COMPRESSORS[fmt](LOG))
    meter = Meter()
    found = list(Reader(AuditOptions(), meter).read([Source("access.log.1", str(path))]))
    assert len(found) == 3001
    assert meter.bytes == path.stat().st_size  # the progress line ends at 100%, not past it
