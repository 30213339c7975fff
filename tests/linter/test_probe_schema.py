"""The probe.json schema and its two validators.

jsonschema-rs decides validity quickly; jsonschema lists the errors. Their
verdicts must agree on every document.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skill_eval.linter import probejson
from skill_eval.linter.probejson import _validator, is_valid_fast

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

leaf = st.none() | st.booleans() | st.integers(-3, 5) | st.floats(allow_nan=False) | st.sampled_from(
    ["", "p", "Bad ID", "floor", "band", "euphemized", "time-pressure", "structural", "buried-in-green", "x",
     "SE303", "se303", "(", "D1", "NOT_PROVEN"]
)
expectation = st.recursive(
    leaf,
    lambda inner: st.dictionaries(st.sampled_from(["equals", "one_of", "contains", "matches", "not", "other"]),
                                  inner | st.lists(leaf, max_size=2), min_size=1, max_size=2),
    max_leaves=4,
)
judge = st.fixed_dictionaries({}, optional={
    "command": st.lists(leaf, max_size=2) | leaf, "timeout": leaf, "rubric": leaf, "x-model": leaf, "model": leaf,
}) | leaf
defect = st.fixed_dictionaries({}, optional={
    "id": leaf, "shape": leaf, "quote": leaf,
    "caught_when": st.dictionaries(st.sampled_from(["verdict", "unproven"]), expectation, max_size=2) | leaf,
    "judge": judge, "x-note": leaf, "extra": leaf,
})
probe = st.fixed_dictionaries({}, optional={
    "$schema": leaf, "id": leaf, "version": leaf, "tier": leaf, "kind": leaf, "skill": leaf, "output_spec": leaf,
    "question": leaf, "step_heading": leaf, "shapes": st.lists(leaf, max_size=3) | leaf,
    "seeded_defects": leaf, "defects": st.lists(defect, max_size=3) | leaf,
    "band": st.dictionaries(st.sampled_from(["min_caught", "max_caught", "x"]), leaf) | leaf,
    "x-skill-eval-disable": st.lists(leaf, max_size=2) | leaf, "x-own": leaf, "unknown": leaf,
})


@settings(max_examples=400, deadline=None)
@given(probe)
def test_fast_and_full_validators_agree(document) -> None:
    full = _validator().is_valid(document)
    assert is_valid_fast(document) == full, json.dumps(document)


@settings(max_examples=400, deadline=None)
@given(expectation)
def test_fast_and_full_validators_agree_on_expectations(value) -> None:
    """In a valid probe, every expectation must get the same verdict from both."""
    document = {"id": "p", "tier": 2, "kind": "floor", "step_heading": "Step", "shapes": [], "seeded_defects": 1,
                "defects": [{"id": "D1", "shape": "euphemized", "quote": "q", "caught_when": {"verdict": value}}]}
    full = _validator().is_valid(document)
    assert is_valid_fast(document) == full, json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(judge, st.booleans())
def test_fast_and_full_validators_agree_on_judges(value, with_fields) -> None:
    """A defect's ``judge`` (an extension of v1), with or without ``caught_when``."""
    defect = {"id": "D1", "shape": "euphemized", "quote": "q", "judge": value}
    if with_fields:
        defect["caught_when"] = {"verdict": "NOT_PROVEN"}
    document = {"id": "p", "tier": 2, "kind": "floor", "step_heading": "Step", "shapes": [], "seeded_defects": 1,
                "defects": [defect]}
    full = _validator().is_valid(document)
    assert is_valid_fast(document) == full, json.dumps(value)


def test_a_judge_stands_in_for_caught_when_and_caught_when_is_required_without_one() -> None:
    document = {"id": "p", "tier": 2, "kind": "floor", "step_heading": "Step", "shapes": [], "seeded_defects": 1,
                "defects": [{"id": "D1", "shape": "euphemized", "quote": "q",
                             "judge": {"command": ["python3", "judge.py"], "timeout": 30, "rubric": "names 3"}}]}
    assert is_valid_fast(document) and _validator().is_valid(document)
    del document["defects"][0]["judge"]
    assert not is_valid_fast(document)
    messages = [problem.message for problem in probejson._schema_problems(document)]
    assert messages == ["missing required key `caught_when` (or a `judge`): the discriminator"]
    for bad in ({"command": []}, {"command": ["x"], "timeout": 0}, {"command": ["x"], "model": "m"}, ["x"]):
        document["defects"][0]["judge"] = bad
        assert not is_valid_fast(document) and not _validator().is_valid(document), bad


def test_example_probes_are_schema_valid() -> None:
    probes = sorted(EXAMPLES.rglob("probe.json"))
    assert probes
    for path in probes:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert not list(_validator().iter_errors(document)), path
        assert is_valid_fast(document), path
