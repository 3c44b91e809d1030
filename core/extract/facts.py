"""The state a session leaves behind, read from what it did (its tool calls and their output), for any agent: the
files edited after its last commit, the commits after its last push, a pull request opened or only drafted, the
last run of each kind of check (tests, lint, build, type check) and whether it passed, Go integration tests edited
after their last run, and what of a plan it carried out no edit or command stands behind (its files to change, its
steps: core/extract/plan_steps.py). These facts become open threads in plain words, hold a session's status at
`partial`, and show in What Happened.

Edits count as uncommitted only in a session that committed itself or printed a `git status` listing them (it says
which are left): in one that did neither, the person commits, and its edits are no thread (the labelled sessions of
both trees agree)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from eywa.core.archive.renderer import relative_path, tool_target
from eywa.core.extract import commands, marks
from eywa.core.extract.claude_words import sentences
from eywa.core.extract.key_files import DOC_FILE_RE, TEMP_FOLDERS
from eywa.core.extract.open_threads import (
    ACTION_WORDS,
    LEFT_TO_PERSON_RE,
    MAX_THREADS,
    Thread,
    named_words,
)
from eywa.core.extract.plan_steps import (
    about_tests,
    ended_on,
    last_plan,
    step_threads,
    steps_left,
    tests_asked_left,
)
from eywa.core.extract.said_left import (
    clause,
    commands_after,
    commit_put_forward,
    last_prompt_index,
    refusal_words,
)
from eywa.core.extract.terms import commits_in
from eywa.core.handoffs.fixed_words import (
    ANSWER,
    BEFORE_IT,
    CHECKS,
    COMMITTED,
    DROPPED_TODO,
    FAILED_NOT_RERUN,
    FAILING,
    INTEGRATION_LEFT,
    KIND_WORDS,
    LEFT_IN_CODE,
    LEFT_OUT,
    LEFT_TO_COMMIT,
    LEFT_UNCOMMITTED,
    MERGE_IN_PROGRESS,
    MERGE_LEFT,
    MERGE_NOT_STAGED,
    NO_COMMIT,
    NOT_COMMITTED,
    NOT_PUSHED,
    NOT_RERUN,
    NOT_RUN,
    OFFER_NOT_TAKEN,
    OFFERED,
    OPENED_PR,
    PASSED_AFTER,
    PASSED_BEFORE,
    PLAN_NOT_BUILT,
    PLAN_NOT_CARRIED,
    PLAN_REFUSED,
    PR_NOT_OPENED,
    QUESTION,
    REVIEW_FILE_LEFT,
    STASH_LEFT,
    STEP_LEFT,
    STILL_RUNNING,
    SWITCHED,
    TEMPORARY_DEBUG,
    TEMPORARY_FILE,
    TESTS_LEFT,
    UNCOMMITTED,
)
from eywa.core.handoffs.model import parse_sections
from eywa.core.retrieval.query_tokens import STOPWORDS, content_words
from eywa.core.session import WRITE_TOOLS, Session, ToolCall
from eywa.core.sources import agent
from eywa.core.sources.comments import written

# "Your branch is ahead of 'origin/main' by 2 commits", `git status -sb`'s "## main...origin/main [ahead 2]"
_AHEAD_RE = re.compile(r"Your branch is ahead of '([^']+)' by (\d+) commits?|^## \S+?\.\.\.(\S+) \[ahead (\d+)",
                       re.MULTILINE)
# "do NOT push, I'll push after I look at it": the person keeps the push (their last word on pushing says so)
_NO_PUSH_RE = re.compile(r"\b(?:do not|don't|dont|no need to|without) push(?:ing)?\b|\bi(?:'ll| will) push\b",
                         re.IGNORECASE)
_PUSH_RE = re.compile(r"\bpush", re.IGNORECASE)
# "no, leave it uncommitted, I'll review the diff tomorrow": the person keeps the commit
_NO_COMMIT_RE = re.compile(r"\bleave (?:it|them|this|these|the changes) uncommitted\b|"
                           r"\b(?:do not|don't|dont|no need to) commit\b|\bi(?:'ll| will) commit\b", re.IGNORECASE)
_COMMIT_RE = re.compile(r"commit", re.IGNORECASE)  # "uncommitted" too
# "[main 5fddc49] Fix x"; "[detached HEAD e1a0f76] Fix x": a rebase's commit, its branch named when the rebase ends
_COMMITTED_RE = re.compile(r"^\[([^\]\s]+|detached HEAD)(?: \([^)]*\))? ([0-9a-f]{7,40})\] ", re.MULTILINE)
_DETACHED = "detached HEAD"
_REBASED_RE = re.compile(r"^Successfully rebased and updated refs/heads/(\S+?)\.?$", re.MULTILINE)
# "Switched to a new branch 'x'" (`git checkout -b x`), "Switched to branch 'x'": a command that changed branch; a new
# one "set up to track" a remote one is that branch's local copy (`gh pr checkout 68`), not a branch the session made
_SWITCHED_RE = re.compile(r"^Switched to (a new )?branch '([^'\n]+)'", re.MULTILINE)
_TRACKS_RE = re.compile(r"\bset up to track\b")
_DEFAULT_BRANCHES = ("main", "master")  # a branch the edits were made on that says nothing of the work
_TEMPORARY_ASK_RE = re.compile(r"\b(?:temporary|temp|throwaway|scratch)\b(?: \w+)? (?:file|one|copy|script|note)\b",
                               re.IGNORECASE)
_TEMPORARY_NAME_RE = re.compile(r"^(?:tmp|temp|scratch)[-_.]|[-_.](?:tmp|temp|scratch)\.\w+$", re.IGNORECASE)
_REMOVE_RE = re.compile(r"(?:^|[;&|]\s*)(?:git\s+)?(?:rm|unlink|trash)\b")
# A line of debug code written to look into a problem, not to stay: a message marked DEBUG (`print("DEBUG: x")`,
# `console.log("[debug] ...")`), a log to a debug file in /tmp (`LOG="/tmp/index-debug.log"`), a line marked so
# (`// DEBUG`, `# TEMP: remove`); not a log level (`logger.debug(...)`, `level: "DEBUG"`), which the code keeps.
_DEBUG_LINE_RE = re.compile(r"^.*(?:[\"'`]\s*(?:\[?DEBUG\b\]?|(?i:\[debug\]))\s*(?:[:=-]\s*)?\w|"
                            r"/tmp/[\w.-]*debug[\w.-]*|(?://|#)\s*(?:DEBUG|TEMP(?:ORARY)?)\b).*$", re.MULTILINE)
# A file put back or removed: the debug code with it
_RESTORE_RE = re.compile(rf"\bgit\s+(?:checkout|restore|stash)\b|{_REMOVE_RE.pattern}")
# Claude Code's background shell ("Command running in background with ID: dce0af"), stopped by KillShell (KillBash)
_BACKGROUND_ID_RE = re.compile(r"running in background with ID: (\w+)")
# A repository made to try something out: created by the command itself, or in a temporary folder.
_SCRATCH_RE = re.compile(r"\bgit\s+init\b")
# `git rebase --continue` (cherry-pick, merge, am, revert): the step that commits what a conflict held back
_CONTINUED_RE = re.compile(r"^(?:rebase|cherry-pick|merge|am|revert)\b.*\s--continue\b")
# Claude Code's shell put back in the project after a `cd` out of it: later commands run there, not in the folder left
_CWD_RESET_RE = re.compile(r"^Shell cwd was reset to (\S+)$", re.MULTILINE)
_IN_SYNC_RE = re.compile(r"Your branch is up to date with")
_ON_BRANCH_RE = re.compile(r"^On branch (\S+)", re.MULTILINE)
# `git merge --no-commit x`, `--squash`, or a merge that stopped on conflicts: its result waits for a commit
_MERGE_LEFT_TO_COMMIT_RE = re.compile(r"(?:^|\s)--(?:no-commit|squash)\b|^Automatic merge failed|^CONFLICT \(",
                                      re.MULTILINE)
_MERGE_VALUED = frozenset("-m --message -s --strategy -X --strategy-option -F --file".split())  # options with a value
_MERGE_ENDED_RE = re.compile(r"(?:^|\s)--(?:abort|quit|continue)\b")
# Untracked files alone do not make it dirty: a session that never committed leaves new files to the person.
_DIRTY_RE = re.compile(r"^(?:Changes not staged for commit|Changes to be committed):", re.MULTILINE)
_UNSTAGED_RE = re.compile(r"^Changes not staged for commit:", re.MULTILINE)
_CLEAN_RE = re.compile(r"nothing to commit|working tree clean")
# A path's line of a long `git status` ("\tdeleted:    a.go", "\ta.go" under "Untracked files:") and of a short one
# ("?? a.go", " D a.go", "R  a.go -> b.go"): what the status says of it
_LONG_LINE_RE = re.compile(r"^\t(?:([a-z ]+):\s+)?(?:.+ -> )?(.+)$")
_SHORT_LINE_RE = re.compile(r"^([ MADRU?]{2}|[MADRU](?= )) (?:.+ -> )?(\S+)$")  # "M a.go": " M a.go" stripped
_UNSTAGED_HEADINGS = ("Changes not staged for commit:", "Unmerged paths:", "Untracked files:")
# `git diff --stat` lines: "cmd/a.go | 12 +++--", "logo.png | Bin 0 -> 1234 bytes"; a rename, "{old => new}/a.go"
_STAT_COUNT_RE = re.compile(r"^(?:\d+\b|Bin\b)")
_RENAMED_RE = re.compile(r"\{[^{}]* => ([^{}]*)\}|^.* => (.*)$")
_SUBJECT_CHARS = 60  # of a commit's subject in a thread that names it
_SHORT_ARGS_RE = re.compile(r"(?:^|\s)(?:-s\w*|--short|--porcelain)\b")
_PR_CHECKOUT_RE = re.compile(r"^gh\s+pr\s+checkout\s+#?(\d+)\b")  # `gh pr checkout 2`: a pull request's branch
_UNTICKED_RE = re.compile(r"^\s*[-*] \[ \] (.+)$", re.MULTILINE)  # "- [ ] Verify telemetry is off without settings"
_BOXES = 3  # unticked checks a thread names: what each checks is the thread
# "Verify that ...": the thread's lead ("checks unticked") already says each box is a check
_CHECK_VERB_RE = re.compile(r"^(?:verify|check|confirm|ensure|test)(?: that)?\s+(?=\S)", re.IGNORECASE)
_PR_URL_RE = re.compile(r"https://github\.com/\S+/pull/\d+")
# "To get started with GitHub CLI, please run:  gh auth login", "You are not logged into any GitHub hosts"
_GH_AUTH_RE = re.compile(r"\bgh auth login\b|not logged in(?:to any GitHub hosts)?|\bHTTP 401\b", re.IGNORECASE)
_GH_LOGGED_OUT = "gh is not logged in (not authenticated: `gh auth login`)"
_PR_DRAFT_RE = re.compile(r"(?:^|/)(?:pr|pull[-_]?request)[-_.]?(?:body|description|desc|message|text)?\.(?:md|txt)$",
                          re.IGNORECASE)
_CD_RE = re.compile(r"^cd\s+(\S+)\s*(?:&&|;|$)")
_GIT_C_RE = re.compile(r"^git\s+-C\s+(\S+)")
# a conflict the session then committed through
_GIT_RESUMED = frozenset("merge rebase pull cherry-pick revert am".split())
# `go run /dev/stdin <<'EOF'`, `python -c "<newline>import ...`: an experiment fed inline, a script of several lines
_STDIN_PROGRAM_RE = re.compile(r"(?:/dev/stdin|\s-)\s*<<|\s-[ce]\s+[\"']\s*\n")
_FAIL_MARK_RE = re.compile(r"✗|\bFAIL")  # a check's own verdict line, before any error it explains
_SAID_FAILED_RE = re.compile(r"[Ee]rror\b|\bfatal\b|\bdenied\b|\bnot found\b|No such file|did not|cannot|can't")
_LONG_PATH_RE = re.compile(r"(?<!\S)\S*[/\\]\S*[/\\]\S+")  # a word tried from its start only: linear on a long one
# A check's verdict mark before its words ("✗ FAIL: extra.js should not exist"): the thread already says it failed
_MARK_LEAD_RE = re.compile(r"^(?:✗\s*)?(?:(?:FAIL(?:ED)?|ERROR):\s*)?(?=\S)")
# A program or module missing, or the command mistyped: the agent turns to another (`ModuleNotFoundError`, exit 127,
# `unknown option`), nothing is left
_MISSING_RE = re.compile(r"^Exit code 12[79]\b|command not found|No module named|is not installed|"
                         r"unknown (?:option|flag)")
# The command's end already reached (nothing to commit, the PR or branch there, the file gone), or a run bounded by
# `timeout` on purpose (a dev server's start-up): nothing is left
_ALREADY_RE = re.compile(r"nothing to commit|no changes added to commit|already exists|cannot remove .*No such file",
                         re.IGNORECASE)
_HELD_RE = re.compile(r"requires approval|was blocked\. For security")  # the permission rules held it: never run
HELD = "held by the permission rules"  # a held command's verdict: it never ran, so it is "Not run", not "Failed"
_TIMED_OUT_RE = re.compile(r"^Exit code:? 124\b", re.IGNORECASE)
# "This is actually expected behavior", "The YAML parse error is expected —", "by design": the agent's verdict on a
# failure it leaves; not "is expected to pass" (what should come)
_EXPECTED_RE = re.compile(r"\b(?:is|was|are|were)(?: \w+)? expected\b(?! to\b)|"
                          r"\bexpected (?:behaviou?r|failure|result)\b|\bby design\b", re.IGNORECASE)
_ANNOUNCED_RE = re.compile(r"^(?:let me|let's|i'll|i will|now)\b", re.IGNORECASE)  # the next step, not a reason
_JUDGED_WORDS = 20  # of the agent's verdict on a failure: its sentence and the reason after it
# a location or symbol before an error's words; its first mark taken once (atomic): linear on a long word
_CODE_LEAD_RE = re.compile(r"^(?>\S*?[#()<>'\"])\S*:\s+")
_EXIT_RE = re.compile(r"^Exit code \d+\s*")
MAX_FAILED = 2  # threads of commands that failed and never ran through
MAX_VERDICT = 120  # characters of a failed command's verdict line: one long word (a blob, a minified line) is cut
MAX_BULLETS = 5  # of What Happened
_FIXED_BULLETS = (*COMMITTED, OPENED_PR, ANSWER)  # What Happened's bullets a check line never takes the place of
_NAMED_CHECKS = 3  # commands on the line of checks that passed
_FAILED_NAMED = 2  # tests named of a failed run
_NAMES_CHARS = 56  # of the two: a second long name is left to "and 1 more"
_SUMMARY_HEADING_RE = re.compile(r"^#+\s*Summary\s*$", re.MULTILINE)
_PR_WORD_RE = re.compile(r"\b(?:PR|pull request)\b", re.IGNORECASE)
# A reply that says it holds a PR's text ("Here's the PR description:", "a summary for the pull request"), not one
# that names a PR in passing ("I haven't opened a PR — want me to?")
_PR_TEXT_RE = re.compile(r"\b(?:PR|pull request)(?:'s)? (?:description|body|summary|text|title|message)\b|"
                         r"\b(?:for|of) the (?:PR|pull request)\b", re.IGNORECASE)
_TITLE_LINE_RE = re.compile(r"^(?:```\s*)?Title:", re.MULTILINE)
# A prompt about a PR that is there already ("golangci bot left this on the PR", "Aisha's comments on the parser PR",
# "PR #42's review"): its report is no PR text to open
_PR_THERE_RE = re.compile(r"\b(?:on|in|to|of|from) (?:the|this|that|my|our|your) (?:[\w-]+ )?(?:PR|pull request)\b"
                          r"(?! (?:description|body|summary|text|title|message))|\b(?:PR|pull request) #?\d+|"
                          # "push it to a branch and I'll PR it": the person opens it, from the branch
                          r"\b(?:i'll|i will|let me) (?:open (?:the |a )?PR|PR it|raise (?:the |a )?PR)\b",
                          re.IGNORECASE)
# A plan's list of the files it will change ("## Files to Modify", "**Critical files:**"), and its items.
_PLAN_FILES_RE = re.compile(
    r"^(?:#+\s*|\*\*)?(?:Files?|Critical files?) (?:to )?(?:modify|change|create|update|edit|touch)\b", re.IGNORECASE)
_PLAN_ITEM_RE = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+(?:\*\*)?`([^`\s]+\.\w{1,6})`")
# A plan's section of how to check the work ("## Verification", "## Testing"), and its steps marked manual.
_VERIFY_HEADING_RE = re.compile(
    r"^#+\s*(?:\d+\.\s*)?(?:verification|verify|testing|test plan|how to (?:test|verify))\b", re.IGNORECASE)
_STEP_ITEM_RE = re.compile(r"^(?:[-*]|\d+[.)])\s+(.+)$")
_MANUAL_RE = re.compile(r"^\W*manual(?:ly)?\b|\bmanual (?:test|check|verification)", re.IGNORECASE)
_MANUAL_MARK_RE = re.compile(r"^\W*manual(?:ly)?(?: (?:test|testing|check|verification))?\s*[:—–-]\s*", re.IGNORECASE)
_CODE_RE = re.compile(r"`([^`]{4,})`")
_COMMAND_RE = re.compile(r"^[a-z][\w.-]* [\w-]")  # "entire enable --agent x", "git show ref": a program and its words
# "by verifying the resume integration tests pass", "lint is clean": the kind of check a step says in words
_KIND_SAID = {"tests": re.compile(r"\btests? (?:pass|succeed|are green)", re.IGNORECASE),
              "lint": re.compile(r"\blint(?:er|ing)? (?:is clean|passes)", re.IGNORECASE),
              "build": re.compile(r"\b(?:builds|compiles) (?:cleanly|successfully)\b", re.IGNORECASE)}
_NAMED_FILES = 4  # files named in one thread
_NAMED_ENTRIES = 2  # of each kind of the working tree's other paths (untracked, deleted, not the session's)
# Go's integration or end-to-end tests, by folder or name (`integration_test/hooks_test.go`): a build tag keeps them out
# of `go test ./...`; only a run naming them (`-tags integration`, `test:integration`, a CI task) runs them. Read from
# the path's last "integration"/"e2e" only (atomic): the same paths match, in linear time on a long one.
_INTEGRATION_TEST_RE = re.compile(r"^(?>(?s:.*)(?:integration|e2e))[^/]*(?:/.*)?_test\.go$", re.IGNORECASE)
_RUNS_INTEGRATION_RE = re.compile(r"integration|e2e|-tags\b|\bci\b", re.IGNORECASE)
_INTEGRATION_ONLY_RE = re.compile(r"integration|e2e", re.IGNORECASE)  # a run of the integration tests alone
# How a fact's thread begins: an LLM handoff keeps every thread that does (`merge_threads`).
BLOCKING_PREFIXES = (UNCOMMITTED, MERGE_IN_PROGRESS, *(f"{w}{FAILING}" for w in KIND_WORDS.values()))
FACT_PREFIXES = (*BLOCKING_PREFIXES, *(f"{w}{NOT_RERUN}" for w in KIND_WORDS.values()), LEFT_UNCOMMITTED,
                 LEFT_TO_COMMIT, LEFT_OUT, LEFT_IN_CODE, MERGE_LEFT, REVIEW_FILE_LEFT, NOT_PUSHED, PR_NOT_OPENED,
                 NOT_RUN, FAILED_NOT_RERUN, TEMPORARY_FILE, TEMPORARY_DEBUG, STILL_RUNNING, INTEGRATION_LEFT,
                 DROPPED_TODO, STEP_LEFT, TESTS_LEFT, PLAN_NOT_BUILT)


@dataclass(frozen=True)
class CheckRun:
    kind: str
    command: str
    passed: bool
    failures: int  # counted in its output (0: not said)
    edits: int = 0  # the session's edits of code before it: a run after its last edit checked the code it left
    failed_tests: tuple[str, ...] = ()  # the tests its output names failed (`--- FAIL: TestX`, `FAILED a.py::test_y`)


@dataclass
class Facts:
    uncommitted: list[str] = field(default_factory=list)  # paths, relative to the session's folder
    committed: bool = True  # False: the session never committed, its own `git status` named them (a note)
    staged: bool = False  # that `git status` listed them as staged only ("Changes to be committed")
    offered: bool = False  # no `git status` showed them, but the agent called them ready to commit or offered to
    unpushed: dict[str, list[str]] = field(default_factory=dict)  # repository folder -> commits after its last push
    pushed: set[str] = field(default_factory=set)  # the repository folders the session pushed
    branch: dict[str, str] = field(default_factory=dict)  # repository folder -> the branch of its last commit
    ahead: tuple[str, int] | None = None  # (upstream, commits) by the session's own git status, and its commits after
    pr: str = ""  # created | drafted | failed
    pr_note: str = ""  # the draft's file, or the error
    pr_titled: bool = False  # the draft in the reply opens with its "Title:" line
    runs: list[CheckRun] = field(default_factory=list)  # every check run, in order
    plan_left: list[str] = field(default_factory=list)  # the plan's files to change that no later edit touched
    manual_left: list[str] = field(default_factory=list)  # the plan's manual verification steps not run
    checks_left: list[str] = field(default_factory=list)  # its other verification steps naming a command not run
    steps_left: list[str] = field(default_factory=list)  # the plan's steps no edit or command stands behind
    tests_asked: str = ""  # a prompt's request for tests no test file written after it answers
    integration_left: list[str] = field(default_factory=list)  # integration tests edited after their last run
    stopped: dict[str, str] = field(default_factory=dict)  # a check the user stopped, never run after -> what they said
    temporary: list[str] = field(default_factory=list)  # files written as temporary and never removed
    debugging: dict[str, str] = field(default_factory=dict)  # file -> a line of debug code no later edit took out
    running: list[str] = field(default_factory=list)  # commands started in the background and never stopped
    unticked: list[str] = field(default_factory=list)  # the test plan's unchecked boxes of the PR it opened or drafted
    failed: list[tuple[str, str]] = field(default_factory=list)  # (command, what it said) failed, never run through
    merging: str = ""  # the branch a merge brought in that no commit closed: what the uncommitted files are
    merge_added: bool = False  # a `git add` ran after that merge: the resolved files may be staged
    stashed: str = ""  # the last `git stash` of the session's repository that no later pop or apply took back
    never_committed: list[str] = field(default_factory=list)  # edits of a session that never committed nor said so
    cwd: str = ""  # the session's folder: a check's paths spelled from the root are its paths
    on: str = ""  # the branch of the last edit of a session that never committed, but the default (main, master)
    switched: str = ""  # the branch a command of the session switched to, that no commit line said after
    new_branch: bool = False  # the session made that branch (`on` or `switched`): `git checkout -b`, `git switch -c`
    edits: int = 0  # the session's edits of code (not of docs or plans): `CheckRun.edits` of a run after the last
    # The working tree by the session's last `git status` after its last commit: the untracked entries holding its
    # edits (a folder -> its files of the session's), the paths its commands deleted or moved away, the changed
    # paths it never touched
    untracked: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)
    pr_branch: tuple[str, str] = ("", "")  # (branch, number) of a pull request `gh pr checkout` switched to
    # The changed paths a `git status` or `git diff --stat` listed before a commit that took only some, none taken or
    # put back since, none the session's own edits (those read "Uncommitted"); and that commit, by hash and subject
    left_out: list[str] = field(default_factory=list)
    left_out_of: str = ""
    parted: dict[int, list[str]] = field(default_factory=dict)  # event index of each such commit -> what it left out

    def failing(self) -> list[CheckRun]:
        """The last run of each kind of check (tests, lint, ...) when it failed: a later pass of the same kind
        (`mise run lint` after a one-file `golangci-lint run`) covers an earlier failure, and a build's, a later pass
        of the tests that compile what it did (`cargo test` after `cargo build`)."""
        last = {run.kind: at for at, run in enumerate(self.runs)}
        return [self.runs[at] for at in last.values() if not self.runs[at].passed and not (
            self.runs[at].kind == "build" and any(later.kind == "tests" and later.passed and commands.compiles(
                later.command, self.runs[at].command) for later in self.runs[at + 1:]))]

    def checked_after_edit(self) -> frozenset[str]:
        """The kinds of check that ran after the session's last edit of code (every kind run, when it edited none)."""
        return frozenset(run.kind for run in self.runs if run.edits == self.edits)

    def _by_kind(self) -> list[list[CheckRun]]:
        """The runs of each kind of check, in order, the kinds in the order first run."""
        return [[run for run in self.runs if run.kind == kind] for kind in dict.fromkeys(run.kind for run in self.runs)]

    def _plain(self, runs: list[CheckRun]) -> list[str]:
        """The runs' commands with the session's folder left out of their paths: one command however spelled."""
        folder = self.cwd.rstrip("/")  # "" at the root: every path is already written from it
        return [run.command.replace(folder + "/", "") if folder else run.command for run in runs]

    def not_rerun(self) -> list[tuple[CheckRun, CheckRun]]:
        """(the failed run, the last run of its kind) of each kind whose last run passed, for a failed run that no
        later run of the same command, nor a later pass of the whole check that covers it, followed (`golangci-lint
        run ./cmd/cli/` after `mise run lint` failed; `mise run test` after `mise run test:integration` failed): the
        whole one when several. (`threads` leaves out one the user stopped: their words say why.)"""
        left = []
        for runs in self._by_kind():
            if not runs[-1].passed:
                continue  # `failing` says it
            plain = self._plain(runs)
            open_ = [run for at, run in enumerate(runs) if not run.passed and not any(
                later == plain[at] or (runs[after].passed and _covers(later, plain[at]))
                for after, later in enumerate(plain[at + 1:], at + 1))]
            if open_:
                left.append((next((run for run in reversed(open_) if not commands.scoped(run.command)), open_[-1]),
                             runs[-1]))
        return left

    def threads(self) -> list[Thread]:
        """Uncommitted work and a failing check block `done`; a commit not pushed or a PR not opened is a note
        (the person may push and open it themselves)."""
        found = []
        for run in self.failing():  # with the tests it names failed: what a successor looks at first
            named = f": {_tests_named(run.failed_tests)}" if run.failed_tests else ""
            found.append(Thread(f"{KIND_WORDS[run.kind]}{FAILING} `{marks.command(run.command)}` last run "
                                f"failed{_counted(run)}{named}", True))
        for run, last in [(run, last) for run, last in self.not_rerun() if run.command not in self.stopped]:
            found.append(Thread(f"{KIND_WORDS[run.kind]}{NOT_RERUN} `{marks.command(run.command)}` failed"
                                f"{_counted(run)}; only `{marks.command(last.command)}` passed after", False))
        found += [Thread(f"{NOT_RUN} `{command}`, {HELD}" if said == HELD else f"{FAILED_NOT_RERUN} `{command}`" +
                         (f": {said}" if said else ""), False) for command, said in self.failed]
        found += [Thread(f"{TEMPORARY_FILE} `{path}`", False) for path in self.temporary]
        if self.debugging:
            line = next(iter(self.debugging.values()))
            named = ", ".join(f"`{path}`" for path in _short_names(list(self.debugging), _NAMED_FILES))
            found.append(Thread(f"{TEMPORARY_DEBUG} {named}: `{marks.command(line)}`", False))
        if self.integration_left:
            named = ", ".join(f"`{path}`" for path in _short_names(self.integration_left, _NAMED_FILES))
            found.append(Thread(f"{INTEGRATION_LEFT} {named}", False))
        found += [Thread(f"{STILL_RUNNING} `{marks.command(command)}`, started in the background and never stopped",
                         False) for command in self.running]
        for command, said in self.stopped.items():
            found.append(Thread(f"{NOT_RUN} `{marks.command(command)}`, {said}", False))
        if checks := self.manual_left + self.checks_left:
            step = _CODE_RE.sub(_short_code, checks[0])
            manual = "manual " if not self.checks_left else ""
            found.append(Thread(f"{NOT_RUN} the plan's {manual}verification step{_more(checks)}: {clause(step)}",
                                False))
        if self.plan_left:
            named = ", ".join(f"`{path}`" for path in self.plan_left[:_NAMED_FILES])
            found.append(Thread(f"{PLAN_NOT_CARRIED} {named} not edited, though the plan lists "
                                f"{'it' if len(self.plan_left) == 1 else 'them'} to change", True))
        found += [Thread(text, False) for text in step_threads(self.steps_left)]
        if self.tests_asked:
            found.append(Thread(f"{TESTS_LEFT} {self.tests_asked}", False))
        if self.uncommitted and self.merging:  # the repository is mid-merge: the step that closes it, whatever was said
            paths = " ".join(_relative(path, self.cwd) for path in self.uncommitted)
            staged = "" if self.merge_added else f"{MERGE_NOT_STAGED} "  # no `git add` since the merge
            found.append(Thread(f"{MERGE_IN_PROGRESS} {staged}`git add {paths} && git commit` (the merge of "
                                f"`{self.merging}`)", True))
        elif self.uncommitted:  # the files by their shortest names: a reader knows them by name
            named, parts = self._worktree(self.uncommitted)
            if self.committed:
                edited = f"{named} edited after the last commit" if named else ""
                found.append(Thread(f"{UNCOMMITTED} {'; '.join(filter(None, [edited, *parts]))}", True))
            elif self.offered:  # the agent left the commit to the person in so many words
                found.append(Thread(f"{LEFT_TO_COMMIT} {'; '.join(filter(None, [named, *parts]))}", False))
            else:  # the person may commit: a note, in the words of the `git status` that showed it
                branch = self.branch.get("", "")
                on = f" on {branch}{self._pr_of(branch)}" if branch else ""
                kind = "staged" if self.staged else "unstaged"
                said = f", {kind} changes: {'; '.join([named, *parts])}" if named else f": {'; '.join(parts)}"
                found.append(Thread(f"{LEFT_UNCOMMITTED}{on}{said}", False))
        if self.left_out:  # another's changes, or the session's choice: a note
            of = f" {self.left_out_of}" if self.left_out_of else ""
            found.append(Thread(f"{LEFT_OUT}{of}: {''.join(_named(self.left_out))}", False))
        if self.ahead:  # the session's own `git status` counts what is not pushed best
            upstream, count = self.ahead
            commits = f"{count} commit{'s' if count > 1 else ''}"
            found.append(Thread(f"{NOT_PUSHED} branch ahead of '{upstream}' by {commits}", False))
        for folder, made in self.unpushed.items():
            if folder or not self.ahead:
                found.append(Thread(f"{NOT_PUSHED} {self._commits(folder, made)}", False))
        if self.stashed:
            found.append(Thread(f"{STASH_LEFT} `{marks.command(self.stashed)}`", False))
        if self.pr == "drafted":
            where = f"written to `{self.pr_note}`" if self.pr_note else "drafted in the last reply"
            what = "title and description were" if self.pr_titled else "description was"  # a reader names both
            found.append(Thread(f"{PR_NOT_OPENED} its {what} {where}", False))
        elif self.pr == "failed":  # gh's own words for a login it lacks say little to a reader: in plain words
            why = _GH_LOGGED_OUT if _GH_AUTH_RE.search(self.pr_note) else marks.first_line(self.pr_note, 120)
            found.append(Thread(f"{PR_NOT_OPENED} `gh pr create` failed: {why}", False))
        if self.unticked:
            boxes = f"{len(self.unticked)} check{'s' if len(self.unticked) > 1 else ''}"
            steps = "; ".join(clause(_CHECK_VERB_RE.sub("", step), 10).rstrip(".…") for step in self.unticked[:_BOXES])
            found.append(Thread(f"{NOT_RUN} the PR's test plan, {boxes} unticked: {steps}"
                                f"{_more(self.unticked[_BOXES - 1:])}", False))
        return found

    def _worktree(self, paths: list[str]) -> tuple[str, list[str]]:
        """("`root.go`", ["new, never added: `help.go`", "deleted: `commands/help.go`", "not from this session:
        `mise.toml`"]): the session's uncommitted files as its last `git status` showed them, those of an untracked
        entry apart (a `git add` is due: `git commit -a` leaves them out), then what its commands deleted, then the
        changes that are not its work; each by its shortest name among them all, the rest counted."""
        plain = [path for path in paths if not any(matches(path, entry) for entry in self.untracked)]
        groups = [("new, never added", self.untracked), ("deleted", self.deleted),
                  ("not from this session", dict.fromkeys(self.foreign, 1))]
        every = plain + [entry.rstrip("/") for _, entries in groups for entry in entries]
        short = dict(zip(every, _short_names(every, len(every)), strict=True))
        said = [f"{what}: {_counted_entries(entries, short)}" for what, entries in groups if entries]
        return marks.counted([f"`{short[path]}`" for path in plain], _NAMED_FILES), said

    def _commits(self, folder: str, made: list[str]) -> str:
        """"commit 5fddc49 on dipree/wingman", "2 commits on main after the last push, the last 5fddc49"."""
        last = next((ref for ref in reversed(made) if ref), "")
        what = f"commit {last}" if len(made) == 1 and last else f"{len(made)} commit{'s' if len(made) > 1 else ''}"
        on = f" on {self.branch[folder]}" if self.branch.get(folder) else ""
        after = " after the last push" if folder in self.pushed else ""
        where = f" in `{folder}`" if folder else ""
        return f"{what}{on}{after}{where}" + (f", the last {last}" if len(made) > 1 and last else "")

    def happened(self) -> list[str]:
        """The checks as a successor needs them: a line for each kind whose last run failed, for a failed run no later
        run covers ("`mise run test:integration` failed (11), not run again"), and for the tests named failing on the
        way to a pass; then one line of the commands whose last run passed, after the session's last edit of code or
        before it; last, a failed command that passed when run again, no test named ("`make` failed, then passed")."""
        lines: list[str] = []
        after: list[str] = []  # the commands whose last pass came after the last edit
        before: list[str] = []
        not_rerun = [run for run, _ in self.not_rerun()]
        fixed: list[str] = []  # a failure a later run fixed, no test named: last, the first line a short handoff drops
        failing = self.failing()
        for runs in self._by_kind():
            word, last, plain = KIND_WORDS[runs[0].kind], runs[-1], self._plain(runs)
            if not last.passed and last not in failing:  # a build the tests compiled after it
                lines.append(f"{word}: `{marks.command(plain[-1])}` failed{_times(last)}, then the tests passed")
                continue
            if not last.passed:
                when = " on its last run" if len(runs) > 1 else ""
                named = f": {_tests_named(last.failed_tests)}" if last.failed_tests else ""
                lines.append(f"{word}: `{marks.command(plain[-1])}` failed{'' if named else _times(last)}{when}{named}")
                continue
            left = [run for run in not_rerun if run.kind == runs[0].kind]
            if left:
                lines.append(f"{word}: `{marks.command(left[0].command)}` failed{_times(left[0])}, not run again")
            elif names := tuple(dict.fromkeys(name for run in runs if not run.passed for name in run.failed_tests)):
                lines.append(f"{word}: {_tests_named(names)} failed on the way, then passed")
            elif failed := [at for at, run in enumerate(runs) if not run.passed and any(
                    runs[later].passed and plain[later] == plain[at] for later in range(at + 1, len(runs)))]:
                again = runs[failed[-1]]
                fixed.append(f"{word}: `{marks.command(plain[failed[-1]])}` failed{_times(again)}, then passed")
            kept = [at for at, run in enumerate(runs) if at == len(runs) - 1 or run.passed and _whole(plain[at])
                    and not any(runs[later].passed and _passes_again(plain[later], plain[at])
                                for later in range(at + 1, len(runs)))]
            for at in kept:
                (after if runs[at].edits == self.edits else before).append(
                    f"`{marks.command(plain[at])}`")
        if not after and not before:
            return lines[:2] + fixed[:1]
        if not self.edits:
            said = ", ".join((after + before)[:_NAMED_CHECKS]) + " passed"
        elif not before or not after:
            said = f"{', '.join((after or before)[:_NAMED_CHECKS])} {PASSED_AFTER if after else PASSED_BEFORE}"
        else:
            said = f"{', '.join(after[:_NAMED_CHECKS])} {PASSED_AFTER}; {', '.join(before[:2])} {BEFORE_IT}"
        return lines[:2] + [f"{CHECKS} {said}"] + fixed[:1]

    def left(self) -> list[str]:
        """The edits of a session that never committed, named with the branch they are on (no thread says them: the
        person commits); else the branch a command switched to, when no commit line names it."""
        new = "new branch " if self.new_branch else ""
        if not self.never_committed:
            return [f"{SWITCHED} {new or 'branch '}`{self.switched}`"] if self.switched else []
        named, parts = self._worktree(self.never_committed)
        on = f" on {new}`{self.on}`{self._pr_of(self.on)}" if self.on else ""
        return [f"{NOT_COMMITTED.removesuffix(':')}{on}: {'; '.join(filter(None, [named, *parts]))} {NO_COMMIT}"]

    def _pr_of(self, branch: str) -> str:
        """" (PR #2)" after the branch `gh pr checkout 2` switched to: a push of its commits updates that PR."""
        return f" (PR #{self.pr_branch[1]})" if branch and branch == self.pr_branch[0] else ""


def _covers(later: str, failed: str) -> bool:
    """Whether a passing check covers a failed one: it runs the whole project and the failed one ran a part of it,
    or every word of the failed one (`pytest` does not cover `pytest --cov-fail-under=99`, nor `mise run test`
    `mise run test:integration`); or it runs a part that holds the failed one's (`commands.within`); or both run the
    same integration suite, the later all of it however spelled (`go test -tags=integration ./cli/integration_test/`;
    `go test -tags e2e -c ./e2e_test/...` compiles what `go build -tags e2e ./e2e_test/...` did, the test files too)."""
    if _suites(failed) & _suites(later) and not commands.filtered(later):
        return True
    if commands.scoped(later):
        return commands.within(failed, later)
    return commands.scoped(failed) or set(failed.split()) <= set(later.split())


def _suites(command: str) -> set[str]:
    """The integration suites a check names, in lower case (`-tags E2E`: e2e); an e2e run covers no integration one."""
    return {word.lower() for word in _INTEGRATION_ONLY_RE.findall(command)}


def _whole(command: str) -> bool:
    """Whether a passing check is worth naming beside its kind's last run: it ran the whole project, or the whole
    integration suite (`go test -tags=integration ./cmd/cli/integration_test/`)."""
    return not commands.scoped(command) or bool(_INTEGRATION_ONLY_RE.search(command)) and not commands.filtered(command)


def _passes_again(later: str, earlier: str) -> bool:
    """Whether a later pass says again what an earlier one did: the same command, or one covering it that runs the
    integration tests too when the earlier one ran them (`mise run test` does not run `mise run test:integration`)."""
    return later == earlier or _covers(later, earlier) and (
        not _INTEGRATION_ONLY_RE.search(earlier) or bool(_RUNS_INTEGRATION_RE.search(later)))


def _times(run: CheckRun) -> str:
    """" (2)" after a failed run's command in What Happened, when its output counted its failures."""
    return f" ({run.failures})" if run.failures else ""


def _counted(run: CheckRun) -> str:
    """" (2 failures)" after a failed run's command, when its output counted them."""
    return f" ({run.failures} failure{'s' if run.failures != 1 else ''})" if run.failures else ""


def _tests_named(names: tuple[str, ...]) -> str:
    """"`TestA`, `TestB` and 3 more": the tests failed runs named."""
    shown = names[:1] + tuple(name for name in names[1:_FAILED_NAMED] if len(names[0]) + len(name) <= _NAMES_CHARS)
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    return f"{', '.join(f'`{name}`' for name in shown)}{more}"


def _more(items: list[str]) -> str:
    """" (and 2 more)" after a thread that names the first of `items`."""
    return f" (and {len(items) - 1} more)" if len(items) > 1 else ""


def _folder(command: str, current: str, cwd: str, workdir: str, keeps: bool) -> tuple[str, str]:
    """(the repository a command works in, the folder later commands start in): a `cd` stays for the calls
    after it when the agent's shell `keeps` its folder (Claude Code's), else for its command only, as `git -C` and
    the folder the call names to run in (Codex's `workdir`, Gemini CLI's `dir_path`) are. "" is the session's own."""
    command = commands.unwrapped(command)
    moved = _CD_RE.match(command)
    here = _relative(moved.group(1), cwd) if moved else _relative(workdir, cwd) if workdir else current
    named = _GIT_C_RE.match(command)
    return (_relative(named.group(1), cwd) if named else here), (here if moved and keeps else current)


def _relative(folder: str, cwd: str) -> str:
    folder = folder.strip("'\"").rstrip("/")
    return "" if folder in ("", ".", cwd.rstrip("/")) else relative_path(folder, cwd)


def _holds_session(repo: str, cwd: str) -> bool:
    """Whether a command's repository may hold the session's folder: its own, a folder in it (maybe of the same
    repository) or one above it; not a sibling (`git -C ../tools`), whose commits take none of the session's edits."""
    if repo.startswith("/"):
        return cwd.startswith(repo.rstrip("/") + "/")
    return not repo.startswith("..") or set(repo.split("/")) == {".."}


def _path(call: ToolCall, cwd: str) -> str | None:
    """The edited file relative to the session's folder; None for one outside it (plans, memory, /tmp)."""
    path = relative_path(tool_target(call, cwd), cwd)
    if not path or path.startswith(("/", "~")) or "/plans/" in f"/{path}":
        return None
    return path


def matches(path: str, named: str) -> bool:
    """Whether a path and a path a command or `git status` names are one file, or the file is under the folder named."""
    named = named.strip("'\"").removeprefix("./")
    return path == named or path.endswith("/" + named) or named.endswith("/" + path) or path.startswith(
        named.rstrip("/") + "/")


def not_in(paths: list[str], named: list[str]) -> list[str]:
    """The paths none of the named paths or folders takes."""
    return [path for path in paths if not any(matches(path, name) for name in named)]


def within(paths: list[str], named: list[str]) -> list[str]:
    """The paths one of the named paths or folders takes."""
    return [path for path in paths if any(matches(path, name) for name in named)]


def _diff_stat(args: str, output: str) -> list[str] | None:
    """The paths a `git diff --stat` of the working tree lists (`git diff HEAD --stat` too; renamed: the new path);
    None for another diff (of commits, of the index, of some paths: it says nothing of the rest)."""
    words = args.split()
    if not any(word == "--stat" or word.startswith("--stat=") for word in words) or not all(
            word == "HEAD" or word.startswith("--stat") for word in words):
        return None
    found = []
    for line in output.splitlines():
        name, bar, count = line.rpartition(" | ")
        if bar and _STAT_COUNT_RE.match(count.strip()):
            name = name.strip().removeprefix(".../")
            found.append(_RENAMED_RE.sub(r"\1\2", name) if " => " in name else name)
    return found


def _commit_named(ref: str, subject: str) -> str:
    """"`46815aeb` (`Fix x`)": a commit by its hash and subject, each as far as the session printed it."""
    said = f"`{marks.first_line(subject, _SUBJECT_CHARS)}`" if subject.strip() else ""
    return f"`{ref}` ({said})" if ref and said else f"`{ref}`" if ref else said


def _stash_left(args: str, stashed: str, output: str) -> str:
    """The stash the session left after a `git stash` step (`args`, its call's `output`): the command that pushed
    it, none after a pop, apply or drop; `stashed` unchanged after a step that only reads the stash or had nothing to
    stash ("No local changes to save")."""
    verb = next(iter(args.split()), "push")
    if verb in ("pop", "apply", "drop", "clear"):
        return ""
    if verb in ("list", "show", "branch") or "No local changes to save" in output:
        return stashed
    return f"git stash {args.strip()}".strip()


def _discarded(step: commands.GitStep, edited: list[str]) -> list[str]:
    """The edits a git step throws away: `stash`, `reset --hard`, `restore <files>`, `checkout -- <files>`."""
    words = step.args.split()
    if (step.verb == "stash" and (not words or words[0] in ("push", "save", "-u", "--include-untracked"))) or (
            step.verb == "reset" and "--hard" in words):
        return edited
    named = commands.restored(step)
    return [path for path in edited if any(matches(path, n) for n in named)]


def _after_status(edited: dict[str, None], output: str, listed: dict[str, str], scope: list[str]) -> dict[str, None]:
    """The session's edits still uncommitted by what `git status` printed (`listed`: its paths, `status_entries`):
    only those it lists, none when the tree is clean (the person may have committed in between). A status of some
    paths (`scope`: `git status docs/`) says nothing of the edits outside them."""
    if _CLEAN_RE.search(output) and not _DIRTY_RE.search(output):
        kept: set[str] = set()
    else:
        kept = {path for path in edited if any(matches(path, named) for named in listed)} if listed else set(edited)
    return {path: None for path in edited if path in kept or scope and not any(matches(path, s) for s in scope)}


def status_entries(output: str, short: bool) -> list[tuple[str, str, bool]]:
    """Each path a `git status` output lists, in order: (the path, what it says of it: "new" (untracked), "deleted" or
    "changed" (any other change, staged or not), whether a commit of the index leaves it as it is (a long output's
    sections after their heading, not "to be committed")); `short`: read as `--short`/`--porcelain` output."""
    found: list[tuple[str, str, bool]] = []
    untracked, unstaged = False, short  # a short status has no sections: each line says if the index holds it
    for line in output.splitlines():
        if not short and not line.startswith(("\t", " ")):
            untracked = line.startswith("Untracked files:")
            unstaged = line.startswith(_UNSTAGED_HEADINGS)
        if (long := _LONG_LINE_RE.match(line)) is not None:
            said = long.group(1) or ""
            found.append((long.group(2).strip(), "new" if untracked and not said else "deleted" if said == "deleted"
                          else "changed", unstaged))
        elif short and (brief := _SHORT_LINE_RE.match(line)) is not None and brief.group(1).strip():
            code = brief.group(1)  # "M  a.go" is in the index only; "M a.go" is " M a.go" stripped of its space
            found.append((brief.group(2), "new" if code == "??" else "deleted" if "D" in code else "changed",
                          code[1:] != " "))
    return found


def _worktree_facts(facts: Facts, status: dict[str, str], paths: list[str], touched: list[str],
                    ever: dict[str, None]) -> None:
    """The working tree beside the session's uncommitted `paths`, by the last `git status` after its last commit: the
    untracked entries that hold some of them, the deleted paths a command of the session named (`rm -rf pkg`, `mv
    a b`: by what it named when that holds several), the changed ones no edit or command of the session touched."""
    for entry, kind in status.items():  # an untracked folder as git names it: its files wait for one `git add`
        if kind == "new" and (held := [path for path in paths if matches(path, entry)]):
            facts.untracked[entry] = len(held)
    gone: dict[str, list[str]] = {}
    for entry, kind in status.items():
        named = next((t for t in touched if matches(entry, t)), None)
        if kind == "deleted" and named is not None:
            gone.setdefault(named, []).append(entry)
        elif kind != "new" and named is None and not any(matches(path, entry) for path in ever):
            facts.foreign.append(entry)
    facts.deleted = {held[0] if len(held) == 1 else f"{named.rstrip('/')}/": len(held) for named, held in gone.items()}


def _drafted_in_reply(session: Session) -> str:
    """A PR description in the last turn's replies ("Here's the PR description: ## Summary ..."), asked for
    or titled as one: the reply that holds it, else ""."""
    start = last_prompt_index(session.events)
    prompt = session.events[start].text if start >= 0 else ""
    asked = _PR_WORD_RE.search(prompt) and not _PR_THERE_RE.search(prompt)
    return next((e.text for e in session.events[start + 1:] if e.kind == "assistant" and _SUMMARY_HEADING_RE.search(
        e.text) and (asked or _PR_TEXT_RE.search(e.text[:300]) or _TITLE_LINE_RE.search(e.text[:300]))), "")


def _plan_files(plan: str) -> list[str]:
    """The files a plan lists to change, but those it marks done (✅, DONE)."""
    files, listing = [], False
    for line in plan.splitlines():
        if _PLAN_FILES_RE.search(line.strip()):
            listing = True
        elif listing and (item := _PLAN_ITEM_RE.match(line)):
            files += [] if "✅" in line or "DONE" in line else [item.group(1)]
        elif listing and line.strip() and not line.startswith(" "):
            listing = False
    return files


def _plan_left(session: Session, plan: str, after: int) -> list[str]:
    """The files the last plan lists to change that no edit after it touched."""
    edited = {_name(tool_target(e.tool, session.cwd)) for e in session.events[after:]
              if e.tool is not None and e.tool.name in WRITE_TOOLS and not e.tool.is_error}
    return [path for path in _plan_files(plan) if _name(path) not in edited]


def _manual_checks_left(session: Session, plan: str, after: int) -> tuple[list[str], list[str]]:
    """(the steps of the plan's verification marked manual ("2. Manual: run `echo ... | go run ...`", the items under
    "Manual testing:"), the others naming a command to run) whose command no later command ran, when the plan's work
    is what the session ended on: no prompt after it but a short one ("commit this"); a new request is new work."""
    if not plan or not ended_on(session, after):  # no plan: no steps, and no commands to read for them
        return [], []
    run = commands_after(session.events, after)  # the plan's own event is no command
    ran, kinds = " ".join(run), {check.kind for command in run for check in commands.checks(command)}
    left: list[str] = []
    commands_left: list[str] = []
    section, manual = False, False
    for line in plan.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            section, manual = bool(_VERIFY_HEADING_RE.match(stripped)), False
            continue
        if not section or not stripped:
            continue
        item = _STEP_ITEM_RE.match(stripped)
        if item is None:
            manual = bool(_MANUAL_RE.search(stripped))  # a lead-in ("Manual testing:") for the items after it
            continue
        step = item.group(1)
        command = _CODE_RE.search(step)
        if command and command.group(1)[:30] in ran:
            continue
        if manual or _MANUAL_RE.match(step):
            left.append(_MANUAL_MARK_RE.sub("", step))
        elif _runs_command(command, kinds):
            commands_left.append(step)
    return left, commands_left


def _runs_command(code: re.Match[str] | None, kinds: set[str]) -> bool:
    """Whether a verification step names a command to run (`entire enable --agent openclaw`), not a name to look
    for (`CondenseSession`) nor a check a later run of its kind stands for (`go test ./pkg/...` after `mise run
    test`; "... by verifying the resume integration tests pass" after `mise run test:integration`)."""
    if code is None or not _COMMAND_RE.match(code.group(1)):
        return False
    said = {kind for kind, pattern in _KIND_SAID.items() if pattern.search(code.string)}
    return not any(check.kind in kinds for check in commands.checks(code.group(1))) and not said & kinds


def _short_code(code: re.Match[str]) -> str:
    """A long command in a thread: its first words name it."""
    words = code.group(1).split()
    return code.group(0) if len(words) <= 4 else f"`{' '.join(words[:4])} …`"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _named(paths: list[str]) -> tuple[str, str]:
    """("`a.go`, `b.go`", " and 2 more"): the first files by their shortest names, the rest counted."""
    named = ", ".join(f"`{path}`" for path in _short_names(paths, _NAMED_FILES))
    return named, f" and {len(paths) - _NAMED_FILES} more" if len(paths) > _NAMED_FILES else ""


def _counted_entries(entries: dict[str, int], short: dict[str, str]) -> str:
    """"`summarize/` (4 files), `help.go` and 1 more": a folder with how many of its files it holds."""
    return marks.counted([f"`{short[entry.rstrip('/')]}/` ({count} file{'s' if count > 1 else ''})"
                          if entry.endswith("/") else f"`{short[entry]}`" for entry, count in entries.items()],
                         _NAMED_ENTRIES)


def _short_names(paths: list[str], keep: int) -> list[str]:
    """The first `keep` paths, each by its shortest ending no other of `paths` shares (`help.go`, `commands/help.go`):
    the folders before a name only tell two apart."""
    parts = [path.split("/") for path in paths]
    found = []
    for own in parts[:keep]:
        size = 1
        while size < len(own) and any(other != own and other[-size:] == own[-size:] for other in parts):
            size += 1
        found.append("/".join(own[-size:]))
    return found


def _temporary_left(session: Session) -> list[str]:
    """Files written as temporary that no later command removed: named so (`tmp_notes.md`, `scratch.py`), or the
    first file written after a prompt asking for a temporary one ("write this into a markdown file (just a
    temporary one in the root)")."""
    found: dict[str, None] = {}
    asked = False
    for event in session.events:
        if event.kind == "user":
            asked = bool(_TEMPORARY_ASK_RE.search(event.text))
        call = event.tool
        if call is None or call.is_error:
            continue
        if call.name == "Write" and (path := _path(call, session.cwd)) is not None:
            if asked or _TEMPORARY_NAME_RE.search(_name(path)):
                found[path] = None
            asked = False
        elif call.name == "Bash" and _REMOVE_RE.search(command := str(call.input.get("command", ""))):
            _forget_named(found, command)
    return list(found)


def _forget_named(found: dict[str, Any], command: str) -> None:
    """Drops from `found` the files `command` names (by their names: a command names them from anywhere)."""
    for path in [p for p in found if _name(p) in command]:
        del found[path]


def _debug_left(session: Session) -> dict[str, str]:
    """Debug code the session wrote into code of its folder or repository (`echo "DEBUG ..." >> /tmp/index-debug.log`
    in a git hook) that no later edit took out and no command put back: file -> its first such line. (Only Claude
    Code's writes keep their text, cut at `INPUT_KEEP`: the other agents' show none.)"""
    found: dict[str, str] = {}
    for event in session.events:
        call = event.tool
        if call is None or call.is_error:
            continue
        if call.name == "Bash":
            command = str(call.input.get("command", ""))
            if _RESTORE_RE.search(command):
                _forget_named(found, command)
            continue
        path = tool_target(call, session.cwd) if call.name in WRITE_TOOLS else ""
        if not path or "/plans/" in path or DOC_FILE_RE.search(path) or path.startswith(TEMP_FOLDERS):
            continue  # code of its folder (relative here) or repository (`.git/hooks/...`), not a document or /tmp
        texts = written(call.input)
        new, replaced = "\n".join(text for _, text in texts), "\n".join(text for text, _ in texts)
        if path in found and (found[path] in replaced or "content" in call.input) and found[path] not in new:
            del found[path]
        added = [m.group(0).strip() for m in _DEBUG_LINE_RE.finditer(new) if m.group(0).strip() not in replaced]
        if added and path not in found:
            found[path] = added[0]
    return found


def _still_running(session: Session) -> list[str]:
    """Commands the session started in the background whose shell no later call stopped (a dev server left up); one
    moved there for running long (no `run_in_background`) ends by itself."""
    started: dict[str, str] = {}
    for call in session.tool_calls:
        if call.name == "Bash" and call.input.get("run_in_background") and (
                found := _BACKGROUND_ID_RE.search(call.output)) is not None:
            started[found.group(1)] = str(call.input.get("command", ""))
        elif call.name in ("KillShell", "KillBash") and not call.is_error:
            started.pop(str(call.input.get("shell_id", "")), None)
    return list(started.values())


def _failed_left(session: Session) -> list[tuple[str, str]]:
    """(the command, the line of its output that says so) of the last commands that failed and that no later command
    of the same program ran through (a project's own harness step, `verify-rewind`, whose "✗ FAIL" the agent
    explained and left): not a check (the runs say those), a probe that reads (`ls`, `git show`), an experiment fed
    on stdin, a scratch folder's, a conflict the session committed through, nor a call the user or tools stopped."""
    calls = [c for c in session.tool_calls if c.name == "Bash" and not c.rejected and not c.denied]
    ran: dict[int, list[str]] = {}  # the programs of a call, read only for a call that failed and those after it

    def programs_of(at: int) -> list[str]:
        if at not in ran:
            ran[at] = commands.programs(_text(calls[at]))
        return ran[at]

    left: list[tuple[str, str]] = []
    for at, call in enumerate(calls):
        if not call.is_error:
            continue
        command, programs = _text(call), programs_of(at)
        if not programs or "tool_use_error" in call.error or commands.checks(command) or commands.opens_pr(command) or \
                _STDIN_PROGRAM_RE.search(command) or _scratch_command(command, programs[-1]) or \
                _MISSING_RE.search(call.error) or _ALREADY_RE.search(call.error + "\n" + call.output):
            continue
        steps = [step for step in commands.program_steps(command) if commands.program(step)]
        program, git = programs[-1], commands.git_steps(steps[-1])
        if commands.probe(steps[-1]) or steps[-1].startswith("timeout ") and _TIMED_OUT_RE.match(call.error):
            continue
        later, name = [i for i in range(at + 1, len(calls)) if not calls[i].is_error], commands.named(program)
        resumed = git and git[0].verb in _GIT_RESUMED
        if any(name in map(commands.named, programs_of(i)) for i in later) or (resumed and any(
                s.verb in ("commit", git[0].verb) for i in later for s in commands.git_steps(_text(calls[i])))):
            continue
        said = HELD if _HELD_RE.search(call.error) else _verdict(call)
        probes = {commands.program(step).split()[0] for step in steps[:-1] if commands.probe(step)}
        if probes and (not said or said.split(":")[0] in probes):
            continue  # a probe before the last step failed (`test -f x && ./run.sh`): the last never ran
        judged = _judged_expected(session, call)
        left.append((name, f"{said}; the agent said: {judged}" if judged else said))
    return left[-MAX_FAILED:]


def _judged_expected(session: Session, call: ToolCall) -> str:
    """The agent's own verdict that a failure is expected, in the first message it wrote after the call ("This is
    actually expected behavior for auto-commit strategy! The `git reset --hard` command does NOT delete untracked
    files."): its sentence and the one after, unless that one only announces a step; "" when it said none."""
    at = next(i for i, event in enumerate(session.events) if event.tool is call)
    for event in session.events[at + 1:]:
        if event.kind == "user":
            return ""
        if event.kind == "assistant" and event.text.strip():
            found = sentences(event.text)
            index = next((i for i, sentence in enumerate(found) if _EXPECTED_RE.search(sentence.text)), None)
            if index is None:
                return ""
            said = [found[index].text] + [s.text for s in found[index + 1:index + 2] if not _ANNOUNCED_RE.match(s.text)]
            return clause(" ".join(said), _JUDGED_WORDS)
    return ""


def _verdict(call: ToolCall) -> str:
    """The line of a failed command's output that says so, in a few words: a check's own verdict line, else the last
    line naming an error, else the first."""
    lines = [ln for ln in (_LONG_PATH_RE.sub("", _EXIT_RE.sub("", ln)).strip()
                           for ln in (call.error + "\n" + call.output).splitlines()) if ln]
    said = next((ln for ln in lines if _FAIL_MARK_RE.search(ln)), None) or next(
        (ln for ln in reversed(lines) if _SAID_FAILED_RE.search(ln)), lines[0] if lines else "")
    while (code := _CODE_LEAD_RE.match(said)) is not None:  # "'Psych::Parser#parse': (<unknown>): did not ..."
        said = said[code.end():]
    said = _MARK_LEAD_RE.sub("", said, count=1)
    return marks.first_line(clause(said, 12), MAX_VERDICT)


def _text(call: ToolCall) -> str:
    command = call.input.get("command")
    return command if isinstance(command, str) else ""


def commit_line(subject: str, output: str, branch: str, pushed: bool) -> tuple[str, str]:
    """(What Happened's line of a commit, its branch): "Committed `5baba5e8` on `fix/x`, pushed: Add y" when the
    `git commit` output names them (`branch`: the one said last, not said again); else "Committed: Add y"."""
    made = _COMMITTED_RE.search(output)
    if made is None:
        return f"{COMMITTED[0]}{marks.first_line(subject, 160)}", branch
    on = f" on `{made.group(1)}`" if made.group(1) != branch else ""
    said = marks.first_line(subject, 120)
    return f"{COMMITTED[1]}{made.group(2)}`{on}{', pushed' if pushed else ''}: {said}", made.group(1)


def scratch_repository(command: str) -> bool:
    """A command in a repository made or entered to try something out (`git init`, `cd /tmp && ...`): its commits are
    no work of the session's."""
    return bool(_SCRATCH_RE.search(command)) or _scratch_command(command, "")


def _scratch_command(command: str, program: str) -> bool:
    """A command run in a temporary folder, or of a program built there (`/tmp/entire-test enable`)."""
    return bool(re.search(r"(?:^|[\s;&|])cd\s+(?:/private)?/tmp\b", command)) or program.startswith(TEMP_FOLDERS)


def session_facts(session: Session) -> Facts:
    facts = Facts(cwd=session.cwd)
    edited: dict[str, None] = {}  # since the last commit, in order
    # Go integration test files edited that no later run of the integration tests ran (the unit run, `go test ./...`,
    # skips them): never compiled after the edit; a run that failed ran them too (the failing check says the rest)
    integration: dict[str, None] = {}
    staged: list[str] = []
    committed, last_commit = False, -1
    shown = False  # the session's own `git status` listed its edits as changed since its last commit
    current = ""  # the folder the agent's shell is in, when not the session's
    keeps = agent(session.agent).shell_keeps_folder
    switches: list[tuple[int, str, bool]] = []  # (event index, branch, made by it) of each command that changed branch
    last_edit = -1
    status: dict[str, str] = {}  # the last `git status` after the last commit: path -> new | deleted | changed
    touched: list[str] = []  # the paths the session's commands deleted, moved or wrote (`rm -rf pkg`, `mv a b`)
    ever: dict[str, None] = {}  # every file the session edited
    listed: list[str] = []  # the changed paths of the last `git status` or `git diff --stat`, less those committed
    for at, event in enumerate(session.events):
        if (call := event.tool) is None:
            continue
        if call.name in WRITE_TOOLS and not call.is_error:
            path = _path(call, session.cwd)
            if path is not None:
                edited[path], ever[path], last_edit = None, None, at
                if not DOC_FILE_RE.search(path) and "/plans/" not in path:
                    facts.edits += 1
                if _INTEGRATION_TEST_RE.search(path):
                    integration[path] = None
                if _PR_DRAFT_RE.search(path) and facts.pr != "created":
                    facts.pr, facts.pr_note = "drafted", path
            continue
        command = call.input.get("command") if call.name == "Bash" else None
        if isinstance(command, str) and call.rejected:
            refused = _refused(session, call, at)
            facts.stopped |= {check.command: refused for check in commands.checks(command)
                              if refused and check.kind == "tests"}
        if not isinstance(command, str) or call.rejected:
            continue
        ok = not call.is_error
        repo, current = _folder(command, current, session.cwd, str(call.input.get("workdir") or ""), keeps)
        output = call.output or call.error
        if reset := _CWD_RESET_RE.search(output):
            current = _relative(reset.group(1), session.cwd)
        # a repository made to try something out: its commits are no work of the session's
        scratch = scratch_repository(command) or f"{repo}/".startswith(TEMP_FOLDERS)
        made = _COMMITTED_RE.finditer(output)  # lazy: read only when a commit step asks for its hash
        if ok and not scratch and (switch := _last(_SWITCHED_RE.finditer(output))):
            switches.append((at, switch.group(2), bool(switch.group(1)) and not _TRACKS_RE.search(output)))
            if pr := next(filter(None, map(_PR_CHECKOUT_RE.match, commands.steps(command))), None):
                facts.pr_branch = (switch.group(2), pr.group(1))
        if ok and not scratch:
            ops, removed = commands.file_ops(command), commands.folders_removed(command)
            touched += [_relative(path, session.cwd) for path in [path for path, _ in ops] + removed]
            gone = [path for path, deleted in ops if deleted] + removed
            listed, facts.left_out = not_in(listed, gone), not_in(facts.left_out, gone)
        for step in [] if scratch else commands.git_steps(command):
            if step.verb == "add" and ok:
                facts.merge_added = True
                staged += ["."] if commands.stages_all(step) else commands.paths_in(step.args)
                status = {path: "changed" if kind == "new" and any(matches(path, s) for s in staged) else kind
                          for path, kind in status.items()}
            elif (step.verb == "commit" or _CONTINUED_RE.search(f"{step.verb} {step.args}")) and ok:
                committed, last_commit = True, at
                everything = commands.commits_all(step) or not staged or "." in staged
                listed = listed if repo else [] if everything else not_in(listed, staged)
                for path in list(edited) if _holds_session(repo, session.cwd) else []:
                    if everything or any(matches(path, s) for s in staged):
                        del edited[path]
                staged, shown, facts.merging, status = [], False, "", {}
                branch, ref = hashed.groups() if (hashed := next(made, None)) else ("", "")
                if not repo:
                    subject = output[hashed.end():].partition("\n")[0] if hashed else next(iter(commits_in(command)),
                                                                                             "")
                    facts.left_out, facts.left_out_of = listed, _commit_named(ref, subject)
                    if listed:
                        facts.parted[at] = listed
                if branch == _DETACHED:  # the branch the rebase updated, when its output says it
                    branch = rebased.group(1) if (rebased := _REBASED_RE.search(output)) else ""
                facts.unpushed.setdefault(repo, []).append(ref)
                if branch:
                    facts.branch[repo] = branch
                if facts.ahead:
                    facts.ahead = (facts.ahead[0], facts.ahead[1] + 1)
            elif step.verb == "push" and ok:
                facts.pushed.add(repo)
                facts.unpushed.pop(repo, None)
                facts.ahead = None
            elif step.verb in ("status", "log") and ok:
                ahead = _AHEAD_RE.search(output)
                if ahead or (step.verb == "status" and _IN_SYNC_RE.search(output)):
                    facts.ahead = (ahead.group(1) or ahead.group(3), int(ahead.group(2) or ahead.group(4))) \
                        if ahead else None
                    if not ahead:  # up to date with its upstream: the person pushed in between
                        facts.unpushed.pop(repo, None)
                if step.verb == "status":
                    short = bool(_SHORT_ARGS_RE.search(step.args))
                    scope = commands.paths_in(step.args)
                    entries = status_entries(output, short)
                    kinds = {path: kind for path, kind, _ in entries}
                    edited = _after_status(edited, output, kinds, scope)
                    status = kinds if not repo else status
                    if not repo and not scope:
                        unstaged = {path: kind for path, kind, left in entries if left}
                        listed = [path for path, kind in unstaged.items() if kind != "new"]
                        facts.left_out = within(facts.left_out, listed)
                    shown = bool(edited) and bool(_DIRTY_RE.search(output))
                    facts.staged = shown and not _UNSTAGED_RE.search(output)
                    if on := _ON_BRANCH_RE.search(output):
                        facts.branch[repo] = on.group(1)
            elif step.verb == "diff" and ok and not repo and (stat := _diff_stat(step.args, output)) is not None:
                listed, facts.left_out = stat, within(facts.left_out, stat)
            elif step.verb == "merge":
                facts.merging = _merged(step.args, output) if not _MERGE_ENDED_RE.search(step.args) else ""
                facts.merge_added = False
            elif step.verb in ("stash", "restore", "checkout", "reset") and ok:
                if step.verb == "stash" and not repo:
                    facts.stashed = _stash_left(step.args, facts.stashed, output)
                dropped = _discarded(step, list(edited))
                for path in dropped:
                    del edited[path]
                put_back = _discarded(step, listed + facts.left_out)
                listed, facts.left_out = not_in(listed, put_back), not_in(facts.left_out, put_back)
        if commands.opens_pr(command):
            if ok or _PR_URL_RE.search(output):
                facts.pr, facts.pr_note = "created", ""
                facts.unticked = _UNTICKED_RE.findall(command)
                facts.unpushed.pop(repo, None)  # a pull request opened: its branch is on the remote
            elif facts.pr != "created":
                facts.pr, facts.pr_note = "failed", call.error
        found = [] if call.running else commands.checks(command)  # a run with no end: neither passed nor failed
        if any(check.kind == "tests" and _RUNS_INTEGRATION_RE.search(check.command) for check in found):
            integration.clear()
        for check in found:  # run after all, with or without a verdict: the user stopped the rest of the command
            facts.stopped.pop(check.command, None)
        for check, passed in commands.verdicts(found, output, call.is_error):
            facts.runs.append(CheckRun(check.kind, check.command, passed, 0 if passed else commands.failures(output),
                                       facts.edits, () if passed else commands.failed_tests(output)))
    facts.offered = not committed and not shown and commit_put_forward(session.events)
    if committed or shown or facts.offered:
        facts.uncommitted, facts.committed = list(edited), committed
    else:
        facts.never_committed = list(edited)
    _branch_facts(facts, session, switches, last_edit, last_commit)
    if _kept_by_person(session, _PUSH_RE, _NO_PUSH_RE):  # the commits wait for the person's push, as they asked
        facts.unpushed, facts.ahead = {}, None
    if _kept_by_person(session, _COMMIT_RE, _NO_COMMIT_RE):  # the edits wait for the person's commit, as they asked
        facts.never_committed = facts.never_committed or ([] if committed else facts.uncommitted)
        facts.uncommitted, facts.offered = [], False
    plan, after = last_plan(session)
    facts.plan_left = _plan_left(session, plan, after)
    facts.manual_left, facts.checks_left = _manual_checks_left(session, plan, after)
    facts.steps_left = steps_left(session, plan, after)
    facts.tests_asked = tests_asked_left(session)
    facts.temporary = _temporary_left(session)
    facts.debugging = _debug_left(session)
    facts.running = _still_running(session)
    facts.integration_left = list(integration)
    facts.failed = _failed_left(session)
    if not facts.pr and (draft := _drafted_in_reply(session)):
        facts.pr, facts.unticked = "drafted", _UNTICKED_RE.findall(draft)
        facts.pr_titled = bool(_TITLE_LINE_RE.search(draft[:300]))
    if facts.pr == "drafted" and any(p == facts.pr_note for p in facts.uncommitted):
        facts.uncommitted.remove(facts.pr_note)  # a PR body is a note, not work to commit
    _worktree_facts(facts, status, facts.uncommitted or facts.never_committed, touched, ever)
    facts.left_out = not_in(facts.left_out, list(ever))  # the session's own edits: its uncommitted line says them
    facts.foreign = not_in(facts.foreign, facts.left_out)
    return facts


def _kept_by_person(session: Session, step: re.Pattern[str], kept: re.Pattern[str]) -> bool:
    """Whether the person's last prompt that names a step (a push, a commit) keeps it for themselves."""
    asked = [e.text for e in session.events if e.kind == "user" and step.search(e.text)]
    return bool(asked) and bool(kept.search(asked[-1]))


def _last(found: Iterator[re.Match[str]]) -> re.Match[str] | None:
    """The last of the matches: a command of several switches ends on the branch of its last."""
    return next(reversed(list(found)), None)


def _branch_facts(facts: Facts, session: Session, switches: list[tuple[int, str, bool]], last_edit: int,
                  last_commit: int) -> None:
    """The branch of the edits never committed (`on`), as the records name it at the last edit, or the command that
    switched to it after; else the branch a command switched to after the last commit (`switched`)."""
    if facts.never_committed:
        start, branch = next(((start, branch) for start, branch in reversed(session.branches) if start <= last_edit),
                             (-1, ""))
        switch = next((switch for switch in reversed(switches) if start <= switch[0] < last_edit), None)
        branch = switch[1] if switch else branch
        facts.new_branch = any(made and name == branch for _, name, made in switches)
        facts.on = branch if facts.new_branch or switch or branch not in _DEFAULT_BRANCHES else ""
    elif switches and switches[-1][0] > last_commit:
        facts.switched, facts.new_branch = switches[-1][1], switches[-1][2]


def _refused(session: Session, call: ToolCall, at: int) -> str:
    """What the user said stopping a test run (the `call` of event `at`): their words, else the prompt they sent in its
    place ("Commit"); "" for a run the permission rules held (no one refused it)."""
    if said := refusal_words(call):
        return f"stopped by the user: \"{clause(said, 16)}\""
    if call.denied:
        return ""
    prompt = next((event.text for event in session.events[at + 1:] if event.kind == "user" and event.text.strip()), "")
    return f"refused by the user, who asked next: \"{clause(prompt, 16)}\"" if prompt else "refused by the user"


def _merged(args: str, output: str) -> str:
    """The branch a `git merge` brings in when it leaves its result to a commit (`--no-commit`, conflicts), else ""."""
    if not _MERGE_LEFT_TO_COMMIT_RE.search(f"{args}\n{output}"):
        return ""
    words = args.split()
    return next((word for at, word in enumerate(words) if not word.startswith(("-", "2>", ">", "'", '"'))
                 and (not at or words[at - 1] not in _MERGE_VALUED)), "")


def merge_threads(facts: list[str], threads: list[str], limit: int = MAX_THREADS) -> list[str]:
    """The facts' threads first, then the others not already among them, at most `limit`. The tests asked for are
    left to a refused plan of tests: that plan is how the agent meant to write them, and names them better."""
    if any(thread.startswith(PLAN_REFUSED) and about_tests(thread.split(";", 1)[0]) for thread in threads):
        facts = [fact for fact in facts if not fact.startswith(TESTS_LEFT)]
    facts, threads = _with_said(*_with_cause(facts, threads))
    return list(dict.fromkeys([*facts, *threads]))[:max(limit, len(facts))]


# A fact of a step the session did not take, by how its thread begins, and that step ("Left uncommitted" is no such
# fact: the `git status` the session ran showed the edits, it left nothing to the person)
_FACT_STEPS = (("Uncommitted", "commit"), (MERGE_IN_PROGRESS, "commit"), (NOT_PUSHED, "push"), (PR_NOT_OPENED, "pr"),
               (PLAN_NOT_BUILT, "implement"))
_STEP_SAID = {**ACTION_WORDS, "implement": r"\bimplement"}  # a step by the words that name it
_STEP_WORDS = re.compile("|".join(_STEP_SAID.values()), re.IGNORECASE)
# The threads of the agent's closing that put a step to the person, and how a fact's line says them
_SAID_STEP = {"Next: ": 'the agent: "{}"', "Asked whether to ": "the agent asked whether to {}, no answer",
              f"{OFFERED} ": "the agent offered to {}, no answer",
              f"{OFFER_NOT_TAKEN} ": "the agent offered to {}, not taken"}
_QUESTION = f"{QUESTION} "  # "Question: Ready to commit?": the line that asks the person stays one of its own
_OWN_WORDS = 4  # of a thread restating a fact: "create the actual PR using `gh pr create`" names no more


def _with_said(facts: list[str], threads: list[str]) -> tuple[list[str], list[str]]:
    """A fact of a step not taken and the threads of the closing that put only that step to the person, as one line
    ("Uncommitted, left for the person to commit: `a.go`; the agent offered to commit these changes, no answer"), or
    beside the question that asks it: each open thing said once."""
    facts = list(facts)
    for at, fact in enumerate(facts):
        step = next((step for lead, step in _FACT_STEPS if fact.startswith(lead)), None)
        if step is None:
            continue
        said = [thread for thread in threads if _restates(thread, fact, step)]
        asked = [thread for thread in said if thread.startswith(_QUESTION)]
        if said and not asked:
            kind = next(kind for kind in _SAID_STEP if said[0].startswith(kind))
            # what the agent said of a merge its commands left unstaged ("The merge is staged") is marked as its word
            against = ", against its commands" if MERGE_NOT_STAGED in fact else ""
            facts[at] = f"{fact}; {_SAID_STEP[kind].format(said[0][len(kind):])}{against}"
        threads = [thread for thread in threads if thread not in said or thread in asked]
    return facts, threads


def _restates(thread: str, fact: str, step: str) -> bool:
    """Whether a thread of the closing ("Next: Ready to push and deploy!") puts the fact's step to the person and
    names little else ("ready", "deploy"; not "commit, push, and reply to the bugbot comment"), nor says that the step
    is left to the person's will ("Ready for `git push` when you want to publish!") when the fact does not."""
    kind = next((kind for kind in [*_SAID_STEP, _QUESTION] if thread.startswith(kind)), None)
    if kind is None or not re.search(_STEP_SAID[step], thread, re.IGNORECASE) or (
            LEFT_TO_PERSON_RE.search(thread) and not fact.startswith((LEFT_TO_COMMIT, MERGE_IN_PROGRESS))):
        return False
    own = named_words(thread[len(kind):]) - STOPWORDS - content_words(fact, 2)
    return len({word for word in own if not _STEP_WORDS.match(word)}) <= _OWN_WORDS


# "Caveat: Pre-existing issue: The lint error in `x.go:488` is a bug ...": a failure the agent found there before it
_PRE_EXISTING_RE = re.compile(r"\bpre-?existing\b", re.IGNORECASE)
_CAVEAT_RE = re.compile(r"^Caveat: (?:pre-?existing (?:issue|bug|problem|error|failure)s?:\s+)?", re.IGNORECASE)
_KIND_SAID_AS = {"tests": re.compile(r"\btests?\b", re.IGNORECASE), "lint": re.compile(r"\blint", re.IGNORECASE),
                 "types": re.compile(r"\btype (?:check|error)", re.IGNORECASE),
                 "build": re.compile(r"\bbuild", re.IGNORECASE)}


def _with_cause(facts: list[str], threads: list[str]) -> tuple[list[str], list[str]]:
    """A failing check's fact and the caveat that says its failure was there before the session, as one line
    ("Lint failing: ... last run failed; pre-existing: the lint error in `x.go:488` is a bug ...")."""
    facts = list(facts)
    for at, fact in enumerate(facts):
        kind = next((kind for kind, word in KIND_WORDS.items() if fact.startswith(f"{word}{FAILING}")), None)
        if kind is None:
            continue
        cause = next((thread for thread in threads if _CAVEAT_RE.match(thread) and _PRE_EXISTING_RE.search(thread)
                      and _KIND_SAID_AS[kind].search(thread)), None)
        if cause is not None:
            said = _CAVEAT_RE.sub("", cause)
            facts[at] = f"{fact}; pre-existing: {said[:1].lower()}{said[1:]}"
            threads = [thread for thread in threads if thread != cause]
    return facts, threads


def with_checks(bullets: list[str], facts: Facts, limit: int = MAX_BULLETS, tests: Sequence[str] = ()) -> list[str]:
    """What Happened with a line for each check that failed on the way and one for those that passed, in place of its
    last report bullets (commits and pull requests stay), and the edits never committed on a line past `limit`; the
    line of the `tests` the session added (`tests_added.tests_line`) past it too, before the checks'."""
    kept = list(bullets)
    lines = facts.happened()[:max(limit - sum(1 for b in kept if b.startswith(_FIXED_BULLETS)), 0)]
    while len(kept) + len(lines) > limit:
        del kept[next(i for i in range(len(kept) - 1, -1, -1) if not kept[i].startswith(_FIXED_BULLETS))]
    return kept + list(tests) + lines + facts.left()


def facts_in(body: str) -> list[str]:
    """The fact threads of a stored handoff's sections (ingest drafted them; an LLM handoff kept them)."""
    return [line for line in parse_sections(body)["open_threads"] if line.startswith(FACT_PREFIXES)]


def status_with(status: str | None, facts: list[str]) -> str | None:
    """An LLM's status given the facts: uncommitted work or a failing check is never `done`."""
    return "partial" if status == "done" and any(f.startswith(BLOCKING_PREFIXES) for f in facts) else status
