"""SE006 duplicate-probe-id."""

from __future__ import annotations

from collections import defaultdict
from typing import Optional
from pathlib import Path

from ...diagnostics import Related, Severity
from ...suites import relative_to_root
from ..base import Rule, Scope


class DuplicateProbeId(Rule):
    """## What it does
    Reports two or more probes of the workspace that share an `id`, at each
    linted probe's `id` with the other probes as related locations. Probes that
    are not being linted (a pre-commit run on a few files) are still compared.

    ## Why is this bad?
    The eval runner records every run under the probe's `id` and `version`, and
    `frozen.json` freezes cases by id. Two probes with one id mix their runs:
    the seed's "Report the observed results whether positive, null or adverse"
    and "Count all calibration starts, including failures" become impossible
    when one probe's results are counted as another's. A reseeded variant is a
    new `version` of the same probe, never a second folder with the same id.

    ## Example
    `probes/coverage/probe.json` and `probes/coverage-v2/probe.json` both say
    ```json
    {"id": "euphemized-coverage"}
    ```

    ## Fix
    Give one of them a new id, or, if it is a reseeded variant of the same
    probe, keep one folder and bump its `version`.
    """

    code = "SE006"
    name = "duplicate-probe-id"
    severity = Severity.ERROR
    scope = Scope.WORKSPACE
    tags = ("files",)
    facts_type = Optional[str]

    def probe_facts(self, probe):
        """The probe's ``id``."""
        return probe.probe_id

    def check(self, context):
        by_id: dict[str, list[Path]] = defaultdict(list)
        for path, probe_id in context.probe_facts(self):
            by_id[probe_id].append(path)
        session = context.session
        linted = context.linted
        for probe_id, sharing in by_id.items():
            if len(sharing) < 2:
                continue
            for path in sharing:
                if path not in linted:
                    continue
                probe = session.probe(path)
                others = [other for other in sharing if other != path]
                names = ", ".join(relative_to_root(other, session.root) for other in others)
                yield self.diagnostic(
                    probe.value_span("id"),
                    f"probe id {probe_id!r} is also used by {names}; ids must be unique in the workspace",
                    related=[Related(session.probe(other).value_span("id"), f"also uses id {probe_id!r}") for other in others],
                    probe=probe.folder,
                )
