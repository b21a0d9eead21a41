"""The differential tests' summary: agree / refused / disagree counts by construct, the
refusals (SQLSTATE 0A000) grouped by message, and the disagreements' minimal queries, at the
end of the run; the full list of refused and disagreeing queries goes to
.pytest_cache/d/differential/report.txt."""

from __future__ import annotations

import sys


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    mod = sys.modules.get("differential_compare")
    if mod is None or not mod.STATS.records:
        return
    terminalreporter.section("differential: agree / refused / disagree by construct")
    for line in mod.STATS.summary().splitlines():
        terminalreporter.write_line(line)
    cache = getattr(config, "cache", None)
    if cache is not None:
        path = cache.mkdir("differential") / "report.txt"
        path.write_text(mod.STATS.report())
        terminalreporter.write_line(f"every refused and disagreeing query: {path}")
