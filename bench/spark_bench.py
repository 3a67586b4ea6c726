"""urlvet on a local Spark (`local[2]`): URLs per second over 1,000,000 distinct URLs, and what
one Python worker pays to set up (build its Vetter from the shipped policy).

The input is bench/mix.py's scale mix: `--lines` distinct URLs over 20,000 hosts, one a line
(the worst case for a cache of URLs: only hosts repeat). Configurations, each run `--runs` times:
- `passthrough`: read the file and send it through a `mapInPandas` that returns its input,
  the floor Spark and Arrow cost before any vetting;
- `vet_dataframe`: `vet_dataframe(spark.read.text(FILE))` written to Spark's `noop` sink;
- `job parquet` / `job jsonl`: the job `python -m urlvet.spark` (in process), reading the
  file and writing Parquet or JSON Lines to a scratch directory.

Besides wall time, the workers report the CPU time they spent in the tasks (Arrow in and
out included): URLs per worker CPU-second do not depend on the load, and two idle cores
would approach twice that figure. The first run of the session starts the Python workers and builds their Vetters; the setups
are reported separately (per worker: policy parsed, compiled, one URL vetted), with the time
a fresh Python takes to import what a worker imports. On a shared machine the figures move
with the load: the script prints the load average and how much faster two CPU-bound
processes finish than one, right before the runs.

Run: python bench/spark_bench.py [--lines 1000000] [--runs 2] [--only passthrough,vet,parquet]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from audit_bench import RESULTS, machine_now
from mix import urls as mixed_urls


def write_distinct(path: Path, lines: int) -> int:
    """Write ``lines`` distinct URLs of the scale mix, one a line; returns how many."""
    with path.open("w", encoding="utf-8") as out:
        for url in mixed_urls(lines):
            out.write(url + "\n")
    return lines


def session(master: str) -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master(master)
        .appName("urlvet-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.pyspark.python", sys.executable)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def import_seconds() -> float:
    """What a fresh Python pays to import what a worker imports to vet."""
    code = (
        "import time; t = time.perf_counter(); import urlvet.spark, pandas, pyarrow; "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--only", help="comma-separated: run only configurations whose label contains one"
    )
    opts = parser.parse_args()

    from urlvet.spark import JobOptions, audit_frame, stats_accumulator, vet_dataframe

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "spark_distinct.urls"
    urls = write_distinct(path, opts.lines)
    print(
        f"input: {urls:,} distinct URLs, {path.stat().st_size / 1e6:.1f} MB; "
        f"{os.cpu_count()} CPUs; master {opts.master}",
        flush=True,
    )
    print(f"import in a fresh Python (urlvet.spark, pandas, pyarrow): {import_seconds():.2f} s")
    start = time.perf_counter()
    spark = session(opts.master)
    print(f"Spark session started in {time.perf_counter() - start:.1f} s", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="urlvet-spark-bench-"))

    def lines() -> Any:
        return spark.read.text(str(path)).where("value != '' AND NOT startswith(value, '#')")

    def passthrough(stats: Any) -> None:
        # The floor: Spark reads the file and sends it through Python and back, unvetted.
        df = lines().withColumnRenamed("value", "url")
        df.mapInPandas(lambda frames: frames, df.schema).write.format("noop").mode(
            "overwrite"
        ).save()

    def vet(stats: Any) -> None:
        df = lines().withColumnRenamed("value", "url")
        vet_dataframe(df, stats=stats).write.format("noop").mode("overwrite").save()

    def job(fmt: str) -> Any:
        def run(stats: Any) -> None:
            frame = audit_frame(
                spark, str(path), JobOptions(input_kind="urls", fmt=fmt), stats=stats
            )
            writer = frame.write.mode("overwrite")
            out = str(scratch / fmt)
            writer.text(out) if fmt == "jsonl" else writer.parquet(out)

        return run

    configs = [
        ("passthrough", passthrough),
        ("vet_dataframe", vet),
        ("job parquet", job("parquet")),
        ("job jsonl", job("jsonl")),
    ]
    print(f"partitions of the input: {lines().rdd.getNumPartitions()}")
    print(machine_now(), flush=True)
    setups: list[tuple[int, float]] = []
    try:
        for label, fn in configs:
            if opts.only and not any(o.strip() in label for o in opts.only.split(",")):
                continue
            rates: list[float] = []
            cpu_rates: list[float] = []
            for i in range(opts.runs):
                stats = stats_accumulator(spark)
                load = os.getloadavg()[0]
                start = time.perf_counter()
                fn(stats)
                secs = time.perf_counter() - start
                rates.append(urls / secs)
                setups.extend(stats.value.setups)
                value = stats.value
                cpu = value.cpu_seconds
                extra = ""
                if label != "passthrough":
                    per_cpu = urls / cpu if cpu else 0.0
                    cpu_rates.append(per_cpu)
                    extra = (
                        f"  workers' CPU {cpu:6.1f} s = {per_cpu:,.0f} URLs per CPU-second"
                        f"  {len(value.setups)} Vetter(s) built"
                    )
                print(
                    f"  {label:<14} run {i + 1}: {secs:7.1f} s  {urls / secs:>9,.0f} URLs/s  "
                    f"load {load:.1f}{extra}",
                    flush=True,
                )
            line = f"  {label:<14} range: {min(rates):,.0f} - {max(rates):,.0f} URLs/s"
            if cpu_rates:
                line += (
                    f"; {min(cpu_rates):,.0f} - {max(cpu_rates):,.0f} URLs per worker CPU-second"
                )
            print(line, flush=True)
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    if setups:
        secs = sorted(s for _, s in setups)
        print(
            f"per-worker setup (Vetter from the shipped policy + one URL): {len(secs)} worker(s), "
            f"{secs[0]:.2f} - {secs[-1]:.2f} s"
        )


if __name__ == "__main__":
    main()
