"""Shared test fixtures.

No test may send DNS queries anywhere but the servers the tests start on loopback. As a guard,
the system resolver is replaced for the whole session by a loopback port where nothing listens:
a test that forgets to pass its own nameserver fails fast instead of leaking a query.
"""

from __future__ import annotations

import os

os.environ["URLVET_NAMESERVERS"] = "127.0.0.1:1"
