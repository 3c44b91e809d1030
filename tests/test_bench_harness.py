from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT


def test_quick_benchmark_run_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    subprocess.run([sys.executable, "bench/run.py", "--quick", "--out", str(out)], cwd=ROOT, check=True,
                   capture_output=True, timeout=600)
    text = out.read_text(encoding="utf-8")
    for heading in ("## Ingest", "## Query latency and index size", "## Telegram bot latency", "## Retrieval quality"):
        assert heading in text
    assert "| ingest, real corpus | 252 |" in text
    assert "| commits.tsv (193) | hybrid |" in text
