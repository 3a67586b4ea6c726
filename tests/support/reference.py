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

TESTS = Path(__file__).resolve().parent.parent
"""The tests directory (the reference imports this module from there)."""
SRC = TESTS.parent / "src"
"""The sources the reference runs: this checkout's."""


Case = tuple[str, str | None, str | None, str | None]
"""A URL to vet: (url, server, the server's configured name, the server's message)."""


def reference_verdicts(
    policy: dict[str, Any] | str | Path,
    urls: list[str],
    servers: list[str | None],
) -> dict[str | None, list[dict[str, Any]]]:
    """Per server, the offline verdict on each of ``urls`` (``Verdict.to_json_dict()``) under
    ``policy`` (a Policy's data, or a policy file), with every memo off."""
    groups = [(policy, [(url, server, None, None) for url in urls]) for server in servers]
    answer = reference_case_verdicts(groups)
    return dict(zip(servers, answer, strict=True))


def reference_case_verdicts(
    groups: list[tuple[dict[str, Any] | str | Path, list[Case]]],
) -> list[list[dict[str, Any]]]:
    """For each group of a policy (data, or a policy file) and its cases, the offline verdict
    on each case (``Verdict.to_json_dict()``), with every memo off: one process for all."""
    job = [
        {
            "policy": str(policy) if isinstance(policy, str | Path) else policy,
            "file": isinstance(policy, str | Path),
            "cases": cases,
        }
        for policy, cases in groups
    ]
    env = {
        **os.environ,
        "URLVET_MEMOS": "off",
        "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS), os.environ.get("PYTHONPATH", "")]),
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
    answer: list[list[dict[str, Any]]] = json.loads(done.stdout)
    return answer


def _main() -> None:
    from urlvet import Policy, Vetter
    from urlvet.memo import MEMOS_ON
    from urlvet.policy import load_policy
    from urlvet.server import as_server

    assert not MEMOS_ON, "the reference runs with every memo off"
    out = []
    for group in json.load(sys.stdin):
        source = group["policy"]
        policy = load_policy(source) if group["file"] else Policy.model_validate(source)
        vetter = Vetter(policy)
        out.append(
            [
                vetter.vet_offline(
                    url, as_server(server, name=name) if server else None, message=message
                ).to_json_dict()
                for url, server, name, message in group["cases"]
            ]
        )
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    _main()
