"""The newcomer's first hour, timed on a fresh clone: the README's install command, pairing the bot
(`eywa-bot setup`), `eywa ingest` of the shared corpus, and a first `/recall` on the phone.

Method: `git clone` of this repository's HEAD into a temporary folder; there, the README's first command
without its last step (`python3 -m venv .venv && .venv/bin/pip install -q -e .`, pip's own cache as the
machine has it); `.venv/bin/eywa-bot setup` against the fake Bot API of the tests (tests/fake_telegram.py, real
HTTP on 127.0.0.1; Telegram's own network is not in it), the token pasted and the owner's `/start CODE` sent
as soon as the code is printed; `.venv/bin/eywa ingest` of both corpus trees (now pinned to 2026-02-17); then
`.venv/bin/eywa-bot` started as a process and the owner's `/recall rewind gemini` sent once it polls: timed
to the first result. Each step is a whole process, as a person runs it. The README's second command (the
test suite) is timed apart: docs/reliability.md.

Usage: python bench/newcomer.py [--skip-install VENV]   (VENV: reuse an installed .venv, time the rest)
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "corpus"
OWNER = 4242


def timed(step: str, results: list[tuple[str, float]], command: list[str], **kwargs: object) -> str:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    results.append((step, time.perf_counter() - start))
    if done.returncode != 0:
        raise SystemExit(f"{step} failed: {done.stderr[-2000:]}")
    return done.stdout


def pair(eywa_bot: Path, env: dict[str, str], fake: object, token: str) -> float:
    """`eywa-bot setup` until paired; the seconds it took, the owner's typing aside."""
    start = time.perf_counter()
    setup = subprocess.Popen([str(eywa_bot), "setup"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert setup.stdin is not None and setup.stdout is not None
    setup.stdin.write(token + "\n")
    setup.stdin.flush()
    for line in setup.stdout:
        found = re.search(r"/start (\d{6})$", line.rstrip("\n"))
        if found:
            fake.send_text(OWNER, f"/start {found.group(1)}")  # type: ignore[attr-defined]
            break
    if setup.wait(timeout=120) != 0:
        raise SystemExit(f"setup failed: {setup.stderr.read() if setup.stderr else ''}")
    return time.perf_counter() - start


def first_recall(eywa_bot: Path, env: dict[str, str], fake: object) -> tuple[float, float]:
    """(start of `eywa-bot` to its first poll, `/recall` to its first result), in seconds."""
    start = time.perf_counter()
    bot = subprocess.Popen([str(eywa_bot)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        polls = fake.get_updates_calls  # type: ignore[attr-defined]
        while fake.get_updates_calls <= polls:  # type: ignore[attr-defined]
            if bot.poll() is not None:
                raise SystemExit("eywa-bot exited before it polled")
            time.sleep(0.01)
        ready = time.perf_counter() - start
        mark = fake.mark()  # type: ignore[attr-defined]
        sent = time.perf_counter()
        fake.send_text(OWNER, "/recall rewind gemini")  # type: ignore[attr-defined]
        fake.wait_messages(1, mark, OWNER, timeout=120)  # type: ignore[attr-defined]
        return ready, time.perf_counter() - sent
    finally:
        bot.send_signal(signal.SIGINT)
        bot.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-install", type=Path, metavar="VENV", help="use this installed .venv")
    args = parser.parse_args()
    from tests.fake_telegram import TOKEN, FakeTelegram

    results: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="eywa-newcomer-") as scratch, FakeTelegram() as fake:
        clone, home = Path(scratch) / "eywa", Path(scratch) / "home"
        home.mkdir()
        timed("git clone", results, ["git", "clone", "-q", str(ROOT), str(clone)])
        venv = args.skip_install or clone / ".venv"
        if args.skip_install is None:
            timed("install (README's first command, without starting the bot)", results,
                  ["bash", "-c", "python3 -m venv .venv && .venv/bin/pip install -q -e ."], cwd=clone)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_", "TELEGRAM_"))}
        env.update(HOME=str(home), EYWA_PROJECTS_DIR=str(CORPUS), EYWA_NOW="2026-02-17",
                   EYWA_TELEGRAM__API_BASE_URL=fake.base_url, EYWA_TELEGRAM__FILE_BASE_URL=fake.base_file_url)
        results.append(("eywa-bot setup: token checked, code shown, /start CODE, config written",
                        pair(venv / "bin" / "eywa-bot", env, fake, TOKEN)))
        summary = timed("eywa ingest (both corpus trees)", results, [str(venv / "bin" / "eywa"), "ingest"], env=env)
        ready, recall = first_recall(venv / "bin" / "eywa-bot", env, fake)
        results += [("eywa-bot start to its first poll", ready), ("first /recall to its first result", recall)]
    for step, seconds in results:
        print(f"| {step} | {seconds:.2f} s |")
    print(f"| total | {sum(s for _, s in results):.1f} s |")
    print(f"\ningest said: {summary.strip()}")


if __name__ == "__main__":
    main()
