"""Every check run Eywa reads in the corpus (core/extract/facts.py: `session_facts` runs), with its verdict and what
told it, to audit the check histories handoffs report against the transcripts' own outputs.

For each run: the session, the call's id, the kind, the command, `passed` or `FAILED`, and the evidence: `output`
(its output's words, `commands.failed`) or `exit` (the exit status of the line's last step), `of N` when the line ran
N checks, `cut` when the transcript's output is longer than the part Eywa keeps. `--failed` lists the failed runs
only, `--raw` adds the last lines of the transcript's full output of each, to read beside the verdict.

Usage: python bench/check_runs.py [--failed] [--raw N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import handoff_quality as hq

from eywa.core.extract import commands
from eywa.core.sources.common import OUTPUT_KEEP


def _outputs(folder: Path) -> dict[str, str]:
    """Each tool call's full output in the transcripts of a folder, by its id."""
    found = {}
    for path in folder.glob("**/*.jsonl"):
        for line in path.read_text(errors="replace").splitlines():
            try:
                message = json.loads(line).get("message")
            except (ValueError, AttributeError):
                continue
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = block.get("content")
                    if isinstance(text, list):
                        text = "\n".join(str(part.get("text", "")) for part in text if isinstance(part, dict))
                    found[str(block.get("tool_use_id"))] = str(text)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--failed", action="store_true")
    parser.add_argument("--raw", type=int, default=0, metavar="N")
    args = parser.parse_args()
    runs = failed = 0
    sessions: set[str] = set()
    for folder, session in hq.corpus_sessions():
        full: dict[str, str] | None = None
        for call in session.tool_calls:
            command = call.input.get("command") if call.name == "Bash" else None
            if not isinstance(command, str) or call.rejected or call.running:
                continue
            found, output = commands.checks(command), call.output or call.error
            for check, passed in commands.verdicts(found, output, call.is_error):
                runs, failed, _ = runs + 1, failed + (not passed), sessions.add(session.session_id)
                if args.failed and passed:
                    continue
                full = _outputs(folder) if full is None else full
                raw = full.get(call.id, "")
                told = "exit" if commands.failed(output) is None else "output"
                print(f"{session.session_id[:8]} {call.id[-6:]} {check.kind:5} {'passed' if passed else 'FAILED'} "
                      f"{told}{f' of {len(found)}' if len(found) > 1 else ''}{' cut' if len(raw) > OUTPUT_KEEP else ''}"
                      f"  {check.command[:100]}")
                for line in [line for line in raw.strip().splitlines() if line.strip()][-args.raw:] if args.raw else []:
                    print(f"    | {line[:160]}")
    print(f"{runs} runs in {len(sessions)} sessions, {failed} failed")


if __name__ == "__main__":
    main()
