"""The reference every shortcut is held to: verdicts with every memo off, module-level ones
included, computed in a process of its own (``URLVET_MEMOS=off``, read when urlvet is
imported; see ``urlvet.memo``).

In the test's own process the functools caches of the URL, address and lookalike modules are
warm and shared by every Vetter, so a Vetter with ``host_cache_size=0`` is not a reference
for them. :func:`reference_verdicts` runs this module as a script: it reads a job as JSON on
stdin and writes each verdict's JSON on stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parent.parent
_SRC = _TESTS.parent / "src"


def reference_verdicts(
    policy: dict[str, Any] | str | Path,
    urls: list[str],
    servers: list[str | None],
) -> dict[str | None, list[dict[str, Any]]]:
    """Per server, the offline verdict on each of ``urls`` (``Verdict.to_json_dict()``) under
    ``policy`` (a Policy's data, or a policy file), with every memo off."""
    job = {
        "policy": str(policy) if isinstance(policy, str | Path) else policy,
        "file": isinstance(policy, str | Path),
        "urls": urls,
        "servers": servers,
    }
    env = {
        **os.environ,
        "URLVET_MEMOS": "off",
        "PYTHONPATH": os.pathsep.join([str(_SRC), str(_TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "support.reference"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the reference run failed:\n{done.stderr[-4000:]}")
    answer: dict[str | None, list[dict[str, Any]]] = {}
    for server, verdicts in zip(servers, json.loads(done.stdout), strict=True):
        answer[server] = verdicts
    return answer


def _main() -> None:
    from urlvet import Policy, Vetter
    from urlvet.memo import MEMOS_ON
    from urlvet.policy import load_policy

    assert not MEMOS_ON, "the reference runs with every memo off"
    job = json.load(sys.stdin)
    policy = load_policy(job["policy"]) if job["file"] else Policy.model_validate(job["policy"])
    vetter = Vetter(policy)
    out = [
        [vetter.vet_offline(url, server).to_json_dict() for url in job["urls"]]
        for server in job["servers"]
    ]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    _main()
