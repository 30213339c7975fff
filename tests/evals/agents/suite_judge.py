"""A stand-in judge: an expectation passes when the answer says it used the
openalex skill; the evidence quotes the answer. Logs each verdict."""

import json
import sys

payload = json.load(sys.stdin)
passed = "used the openalex skill" in payload["answer"]
if len(sys.argv) > 1:
    with open(sys.argv[1], "a", encoding="utf-8") as log:
        log.write(json.dumps({"expectation": payload["defect"]["expectation"], "passed": passed}) + "\n")
print(json.dumps({"caught": passed, "reason": "answer: " + payload["answer"].strip()}))
