"""Shared test fixtures.

No test may send DNS queries anywhere but the servers the tests start on loopback. As a guard,
the system resolver is replaced for the whole session by a loopback port where nothing listens:
a test that forgets to pass its own nameserver fails fast instead of leaking a query.
"""

from __future__ import annotations

import os
import tempfile

os.environ["URLVET_NAMESERVERS"] = "127.0.0.1:1"
# Compiled feeds go to a directory of this run, never to the user's cache.
os.environ["URLVET_CACHE_DIR"] = tempfile.mkdtemp(prefix="urlvet-test-cache-")
# The shipped HSTS preload list ages with the calendar: the warning about it has its own tests
# (tests/test_config.py), and would otherwise land in every command's stderr that tests read.
os.environ["URLVET_NO_HSTS_AGE_WARNING"] = "1"
# A policy named in the environment running the tests must not change what they vet.
os.environ.pop("URLVET_POLICY", None)


# --- DNS servers on loopback (tests/support/dnsserver.py) ---------------------------------------------

from collections.abc import Iterator

import pytest

from support.dnsserver import NSD_INSTALL_HINT, Blackhole, NsdServer, find_nsd, in_ci


@pytest.fixture(scope="session")
def nsd() -> Iterator[tuple[str, int]]:
    """NSD serving tests/dns/zone/ on 127.0.0.1: (host, port).

    A missing NSD fails the test, in CI and locally alike: skipping would turn the DNS rules'
    tests green without running them.
    """
    if find_nsd() is None:
        where = "CI must install it before the tests (.ci/run). " if in_ci() else ""
        pytest.fail(where + NSD_INSTALL_HINT, pytrace=False)
    with NsdServer() as server:
        yield server.address


@pytest.fixture(scope="session")
def blackhole_ns() -> Iterator[tuple[str, int]]:
    """A UDP socket on 127.0.0.1 that never answers: (host, port), for the timeout path."""
    hole = Blackhole()
    try:
        yield hole.address
    finally:
        hole.close()


# --- a local Spark session (tests/test_spark.py) -------------------------------------------------

SPARK_INSTALL_HINT = (
    "the Spark tests need pyspark, pandas and pyarrow (pip install -e '.[spark]') and Java 17 "
    "or later (Debian: apt-get install openjdk-17-jre-headless; tests/run installs it)"
)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local Spark session (``local[2]``) for the whole run; its workers run this Python.

    Missing pyspark or Java fails the test, as a missing NSD does: skipping would turn the
    Spark tests green without running them.
    """
    import shutil
    import sys

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail(SPARK_INSTALL_HINT, pytrace=False)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        pytest.fail(SPARK_INSTALL_HINT, pytrace=False)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("urlvet-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "512m")
        .config("spark.pyspark.python", sys.executable)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
