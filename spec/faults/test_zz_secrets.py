"""Runs last (file order): everything every server wrote during the fault suite."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from test_zz_logs import SECRETS  # noqa: E402


def test_no_secrets_in_any_log(workdir, figure):
    logs = sorted(workdir.glob("*.log"))
    figure("logs read", len(logs))
    for log in logs:
        text = log.read_text(errors="replace")
        for what, pattern in SECRETS:
            m = pattern.search(text)
            assert m is None, f"{log.name} contains {what}: ...{text[max(0, m.start() - 80):m.end() + 20]}..."
