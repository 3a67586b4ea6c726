"""Findings and their evidence are immutable: shared verdicts are safe to hand out."""

from __future__ import annotations

import json
import pickle

import pytest

from support import OFFLINE
from urlvet import Finding, Verdict
from urlvet.findings import FrozenEvidence, FrozenList

URL = "https://www.google.com/url?q=http://10.0.0.1/&q=http://10.0.0.1/"


def test_a_callers_edit_of_evidence_is_refused_and_later_verdicts_keep_theirs() -> None:
    first = OFFLINE.vet(URL)
    evidence = first.findings[0].evidence
    before = json.dumps(first.to_json_dict(), sort_keys=True)
    with pytest.raises(TypeError, match="immutable"):
        evidence["destination"] = "https://example.org/"  # type: ignore[index]
    with pytest.raises(TypeError, match="immutable"):
        evidence.update(destination="x")
    with pytest.raises(TypeError, match="immutable"):
        evidence["destination_findings"].append({"code": "UV000"})
    with pytest.raises(TypeError, match="immutable"):
        evidence["destination_findings"][0]["code"] = "UV000"
    assert json.dumps(OFFLINE.vet(URL).to_json_dict(), sort_keys=True) == before


def test_validated_findings_freeze_their_evidence_and_equal_plain_data() -> None:
    f = Finding(code="UV999", name="x", severity="low", message="m", evidence={"a": [1, {"b": 2}]})
    assert isinstance(f.evidence, FrozenEvidence)
    assert isinstance(f.evidence["a"], FrozenList)
    assert f.evidence == {"a": [1, {"b": 2}]}
    assert f.model_dump(mode="json")["evidence"] == {"a": [1, {"b": 2}]}
    with pytest.raises(TypeError):
        f.evidence["a"].pop()


def test_frozen_evidence_survives_json_pickle_and_validation_round_trips() -> None:
    v = OFFLINE.vet(URL)
    assert pickle.loads(pickle.dumps(v)) == v
    assert Verdict.model_validate_json(v.model_dump_json()) == v
    again = json.loads(json.dumps(v.findings[0].evidence))
    assert again == v.findings[0].evidence
    assert isinstance(pickle.loads(pickle.dumps(v)).findings[0].evidence, FrozenEvidence)
