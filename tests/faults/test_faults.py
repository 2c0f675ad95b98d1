"""The standing fault suite (see ``harness``): faults injected one after the
other under load through two match replicas, then the audit. Short here, all
faults and longer in the slow suite; ``python -m bench.faults`` has the
figures."""

from __future__ import annotations

import pytest

from tests.faults.harness import Report, run_suite


def check(report: Report) -> None:
    print("\n" + report.table())
    audit = report.audit
    assert not report.unexpected, report.unexpected
    assert audit.clean, audit.problems[:20]
    assert audit.acked > 0 and audit.finished > 0
    for phase in report.phases:
        if not phase.name.startswith(("calm", "after")):
            assert phase.recovery_s is not None, f"no recovery after {phase.name}"


async def test_faults_short() -> None:
    check(await run_suite(fault_s=1.2, calm_s=0.5, drivers=4, recover_max_s=15.0))


@pytest.mark.slow
async def test_faults_long(capsys) -> None:
    report = await run_suite(long=True, fault_s=5.0, calm_s=2.0, drivers=12, recover_max_s=30.0)
    with capsys.disabled():  # the figures, in every make test-slow
        check(report)
