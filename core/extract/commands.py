"""What a shell command line does, as the session facts read it: the git steps it takes (add, commit, push), a pull
request it opens, the checks it runs (tests, lint, build, type check) and what their output says of them, the
programs it runs and whether a step only reads or probes."""

from __future__ import annotations

import itertools
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from eywa.core.session import ToolCall

# the spaces before a separator read from their run's start only: linear on a long run, the same parts; split keeps
# the separator (`&&`: the step after it runs only when the one before passed)
_SEPARATOR_RE = re.compile(r"(?:(?<!\s)\s+)?(&&|\|\||;|\n)\s*")
# A command line handed whole to a shell (`bash -lc 'pytest -q'`, Codex's older `shell` tool's form, which models
# still write in its `exec_command`): the script is what runs.
_WRAPPER_RE = re.compile(r"^(?:/\S*/)?(?:ba|z|da)?sh\s+-[il]*c[il]*\s+\S")
# (`uv run`'s options before its command: `--with pytest`, `-p 3.12` take a value, `--frozen` none; `hatch run test`
# is hatch's test script, its words kept for `_CHECKS`)
_PREFIX_RE = re.compile(r"^(?:(?:[A-Z_][A-Z0-9_]*=\S*|sudo|time|timeout\s+\S+|env|command|poetry run|pipenv run|"
                        r"uv run(?:\s+(?:(?:--with|--extra|--group|--package|--python|-p)[\s=]\S+|--[a-z][\w-]*))*|"
                        r"hatch run(?! test\b)|pdm run|rye run|bundle exec|npx|pnpm exec|bunx|(?:\S*/)?python[\d.]* -m|"
                        r"go tool)\s+)+")
# Django's script, the program its runner's checks run by; its test labels (`shop.tests.test_x`) name folders in dots
_MANAGE_PY = r"(?:python[\d.]*\s+)?(?:\./)?manage\.py"
_DJANGO_TEST_RE = re.compile(rf"^{_MANAGE_PY} test\b")
# A runner run from an environment's folder of programs (`.venv/bin/pytest`, `node_modules/.bin/jest`): the runner
_BIN_PATH_RE = re.compile(r"^(?:\S*/)?(?:bin|\.bin|Scripts)/(?=[\w.-]+(?:\s|$))")
_GIT_RE = re.compile(r"^git(?:\s+-C\s+\S+|\s+-c\s+\S+|\s+--no-pager)*\s+([a-z-]+)\b(.*)$", re.DOTALL)
_COMPILE_ONLY_RE = re.compile(r"\s(?:-c|--no-run)\b")  # a test run that only builds
# A check asked for its help, version, markers or list of tests (`pytest --markers`, `pytest --co`): it runs none
_NO_RUN_RE = re.compile(r"\s(?:--help|-h|--version|-V|--markers|--fixtures|--collect-only|--co|--list(?:Tests)?|-list)"
                        r"(?=[\s=]|$)")
_PR_CREATE_RE = re.compile(r"^gh\s+pr\s+create\b")
_FILE_OPS_RE = re.compile(r"^(git\s+(?:rm|mv)|rm|mv|cp)\s+(.+)$", re.DOTALL)
_SUBMODULE_ADD_RE = re.compile(r"^git(?:\s+-C\s+\S+)?\s+submodule\s+add\b")
_RECURSIVE_RE = re.compile(r"^(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive|--cached)$")
_ADD_ALL = frozenset((".", "-A", "--all"))  # `git add .`, `git add -A`: every change, whatever else is named
# `git commit -a`, `-am "..."`, `--all`: every tracked change (`[A-Zb-z]*` up to the first `a`: no backtracking)
_COMMIT_ALL_RE = re.compile(r"^(?:-[A-Zb-z]*a[A-Za-z]*|--all)$")
# A command that reads or probes (its failure says what is there, no work left): the first word of its last step
_PROBES = frozenset("ls cat grep rg find fd head tail less which type command test [ diff cmp wc file stat echo printf "
                    "pwd tree sort uniq xargs jq yq curl wget open realpath readlink du df ps pgrep lsof env printenv "
                    "true false sleep kill pkill mkdir touch cd for while if".split())
_GIT_READS = frozenset("status log show diff cat-file rev-parse config branch ls-files ls-tree blame fetch remote "
                       "describe reflog shortlog grep ls-remote check-ignore for-each-ref show-ref merge-base worktree "
                       "stash".split())
# A tool's step that reads, whose exit status is its answer (no PR yet, a check pending, a package missing), or a
# step negated (`! grep -q TODO`): a probe as well
_PROBE_STEP_RE = re.compile(r"^(?:!\s|gh (?:pr|run|issue|repo|release|workflow) (?:view|checks|status|list|diff|"
                            r"watch)\b|gh (?:api|auth status|search)\b|pip3? (?:show|list|freeze)\b|"
                            r"(?:npm|pnpm|yarn) (?:ls|list|view|info|outdated|why)\b|"
                            r"docker (?:ps|inspect|logs|images)\b|kubectl (?:get|describe|logs)\b|"
                            r"systemctl (?:status|is-active)\b|(?i:(?:get|test|select|resolve|measure)-[a-z]+)\b|"
                            r"\S+ (?:--version|-V|--help|-h)$)")
# `python3 scripts/gen.py`, `bash ./gen.sh`: the script is the program, whichever interpreter or path runs it
_SCRIPT_RUN_RE = re.compile(r"^(?:python[\d.]*|bash|sh|zsh|node|ruby|perl|bun|tsx|ts-node)\s+"
                            r"(?=\S+\.(?:py|sh|[cm]?js|ts|rb|pl)(?:\s|$)|\.{0,2}/)")
# The options before a cluster's or a cloud's CLI's command that say where it runs, not what (`kubectl --context
# kind-staging apply`, `aws --profile prod s3 ls`)
_TARGETED = frozenset(("kubectl", "helm", "oc", "aws", "gcloud", "az"))
_TARGET_OPTION_RE = re.compile(r"^(?:\s*(?:--(?:context|namespace|kubeconfig|kube-context|profile|region|project)"
                               r"(?:=|\s+)|-n\s+)\S+)+\s*")
_REDIRECT_RE = re.compile(r"\s\d?>&\d\b|\s\d?>{1,2}\s*[^\s;&|]+")
_WINDOWS_PATH_RE = re.compile(r"(?:^|[\s'\"])(?:[A-Za-z]:)?\.{0,2}\\\w")  # `C:\tools\x.exe`, `.\src`: no escapes
# A command line's words as POSIX shlex reads them (which it does a character at a time in Python): text with no
# quote, escape or comment splits at its whitespace and between runs of punctuation and the rest, as `_PLAIN_WORDS`
# does; other text is read by segments, `_SEGMENTS` (tests/test_extractor.py holds both to shlex's words).
_QUOTED_RE = re.compile(r"['\"\\#]")
_PLAIN_WORDS: dict[str, re.Pattern[str]] = {
    "": re.compile(r"[^ \t\r\n]+"), ";&|": re.compile(r"[;&|]+|[^ \t\r\n;&|]+"),
    "();<>|&": re.compile(r"[();<>|&]+|[^ \t\r\n();<>|&]+")}


def _segments(punctuation: str) -> re.Pattern[str]:
    """What a word is made of (bare text, a quoted string, an escaped character) and what ends one (whitespace, a run
    of `punctuation`, and with punctuation a comment, as `shlex.shlex`'s; `shlex.split` has none)."""
    ends = [r"(?P<space>[ \t\r\n]+)"] + ([r"(?P<comment>#[^\n]*)", f"(?P<punct>[{re.escape(punctuation)}]+)"]
                                          if punctuation else [])
    special = "'\"\\\\" + ("#" + re.escape(punctuation) if punctuation else "")
    return re.compile("|".join([*ends, r"'(?P<single>[^']*)'", r'"(?P<double>(?:[^"\\]|\\.)*)"', r"\\(?P<escape>.)",
                                f"(?P<plain>[^ \\t\\r\\n{special}]+)", r"(?P<open>['\"\\])"]), re.DOTALL)


_SEGMENTS = {punctuation: _segments(punctuation) for punctuation in _PLAIN_WORDS}
_QUOTED_ESCAPE_RE = re.compile(r'\\(["\\])')  # in double quotes a backslash escapes only these
# A test file or test script run by its interpreter or its path (`python3 test_widget.py`, `node widget.test.js`,
# `./run_tests.sh`): what an agent runs where no runner is installed
_TEST_SCRIPT = (r"(?:(?:python[\d.]*|node|bash|sh|zsh|ruby|bun|tsx|ts-node|deno run)\s+)?(?:\S*/)?"
                r"(?:test_\w+\.py|\w+_test\.(?:py|rb|sh)|[\w.-]+\.(?:test|spec)\.[cm]?[jt]sx?|(?:run[_-])?tests?\.sh)"
                r"(?=\s|$)")
# Gradle's and Maven's tasks, after their options: `./gradlew :app:testDebugUnitTest`, `./mvnw -q -pl core verify`
_GRADLE = r"(?:\./)?gradlew?(?:\s+-[-\w.=]+)*\s+(?:[\w-]*:)*"
# The toolchains whose test run builds the code first, as their build does
_COMPILED = frozenset(("cargo", "go", "swift", "dotnet"))
_GRADLE_RUNNER_RE = re.compile(r"(?:\./)?gradlew?\s")
# Gradle's options and their values, around its tasks (`--tests '*IT*'`, `-Pkey=value`, `-x lint`)
_GRADLE_OPTION_RE = re.compile(r"(?:^|\s)(?:--(?:tests|exclude-task|project-dir)|-[xp])\s+(?:'[^']*'|\"[^\"]*\"|\S+)|"
                               r"(?:^|\s)-\S*")
_MAVEN = r"(?:\./)?mvnw?(?:\s+-(?:pl|P|f)\s+\S+|\s+-[-\w.=]+)*\s+(?:clean\s+)?"
# A package manager's script, in a workspace of a monorepo too (`pnpm -r test`, `pnpm --filter web lint`, `yarn
# workspace api test`, `npm -w api run build`), or a monorepo's task runner (`turbo run test`, `nx run-many -t lint`)
_SCRIPT = (r"(?:(?:npm|pnpm|yarn|bun)(?:\s+(?:-r|--recursive|--parallel|"
           r"(?:-w|--workspace|--filter|-F|-C|--dir)[=\s]\S+|workspace\s+\S+))*(?: run)? |"
           r"turbo (?:run )?|nx (?:(?:run-many|affected) (?:-t|--targets?)[= ])?)")
# The runner words of each kind of check, at the start of a step (after `uv run`, `npx`, `python -m`).
_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tests", re.compile(r"^(?:pytest|py\.test|unittest|tox|nox|go test|cargo (?:test|nextest)|"
                         r"(?:(?:pnpm|yarn|bun) )?(?:jest|vitest|mocha)|" + _SCRIPT + r"test(?::\S+)?|"
                         r"npm t|node --test|rspec|(?:\./)?(?:vendor/bin/)?phpunit|dotnet test|mix test|swift test|"
                         r"deno test|bats|ctest|make (?:test|check)\S*|"
                         r"just test\S*|mise (?:run )?test\S*|playwright test|rake (?:test|spec)|bazel test|"
                         r"rails test|xcodebuild\s(?:[^\n&|;]*\s)?test(?=\s|$)|"
                         rf"{_MANAGE_PY} test|hatch (?:run )?test\S*|rye test|zig build test|"
                         r"(?:flutter|dart|sbt|lein|stack|cabal) test|ava|gotestsum|busted|dbt (?:test|build)|"
                         rf"{_GRADLE}(?:test\w*|\w+Test|check)|{_MAVEN}(?:test|verify))"
                         r"\b|" + _TEST_SCRIPT)),
    ("types", re.compile(r"^(?:mypy|pyright|tsc|vue-tsc|deno check|basedpyright|ty check|"
                         + _SCRIPT + r"(?:typecheck|tsc|"
                         r"type-check|check-types)|mise (?:run )?typecheck|just typecheck)\b")),
    # `ruff format` rewrites files, it checks none (unless `--check`, `--diff`)
    ("lint", re.compile(r"^(?:ruff(?! format\b(?!.*\s--(?:check|diff)\b))(?: check)?|flake8|pylint|eslint|"
                        r"biome (?:check|lint)|golangci-lint|go vet|staticcheck|cargo clippy|shellcheck|rubocop|"
                        + _SCRIPT + r"lint\S*|make lint\S*|just lint\S*|mise (?:run )?lint\S*|"
                        r"lint-imports|(?:black|isort|prettier)\s.*--check\b|cargo fmt\s.*--check\b|stylelint|yamllint|"
                        r"actionlint|hadolint|markdownlint(?:-cli2)?|deno lint|pre-commit run|terraform validate|"
                        r"tflint|helm lint|"
                        rf"{_GRADLE}(?:ktlint\w*|detekt\w*|spotless\w*Check|checkstyle\w*|lint\w*)|"
                        rf"{_MAVEN}(?:checkstyle|spotless|pmd|spotbugs):check)\b")),
    ("build", re.compile(r"^(?:go build|cargo (?:build|check)|" + _SCRIPT + r"build\S*|make(?: build|"
                         r" all)?$|just build\S*|mise (?:run )?build\S*|"
                         rf"{_GRADLE}(?:build|assemble\w*|compile\w*)|{_MAVEN}(?:package|compile|install)|"
                         r"dotnet build|swift build|next build|vite build|cmake --build|bazel build|ninja|"
                         r"(?:pyproject-)?build(?=\s|$))\b")),
)
# A test run's summary of failures: mix's and rspec's nonzero count, PHPUnit's verdict, bun's count, Minitest's
# (`rails test`), xcodebuild's, XCTest's (`swift test` too), dbt's
_TESTS_FAILED = (r"^\d+ (?:tests?|examples?), [1-9]\d* failures?\b|^(?:FAILURES|ERRORS)!$|^[ \t]*[1-9]\d* fail$|"
                 r"^\d+ runs, \d+ assertions, (?:[1-9]\d* failures|\d+ failures, [1-9]\d* errors)\b|"
                 r"^\*\* TEST FAILED \*\*$|\bExecuted \d+ tests?, with [1-9]\d* failures?\b|"
                 r"\bDone\. PASS=\d+ WARN=\d+ ERROR=[1-9]|\bof \d+ FAIL \d+ \w")  # dbt's summary, a test's line
# A lint run's: terraform's errors (drawn in a box), tflint's count, helm's charts failed, a turbo or nx task failed
_LINT_FAILED = (r"^│ Error: |^[1-9]\d* issue\(s\) found:|\b[1-9]\d* chart\(s\) failed|^\s*Failed:\s+\S+#\S+|"
                r"Running target \S+ for \d+ projects? failed")
# Output of a check that failed, whatever its exit status (a pipe through `tail` hides the status).
_FAILED_RE = re.compile(r"^(?:FAIL\b|--- FAIL|FAILED\b|ERROR:? )|\b\d+ (?:failed|failing|errors?)\b|"
                        r"test result: FAILED|Tests?:\s+\d+ failed|\berror(?:\[E\d+\]|TS\d+):|"
                        r"Found \d+ errors?|\d+ problems? \(\d+ errors?|make: \*\*\*|Build failed|"
                        r"npm ERR!|ELIFECYCLE|^\d+ issues?:|^(?:#|ℹ) fail [1-9]|\b[1-9]\d* tests? failed\b|"
                        + _TESTS_FAILED + "|" + _LINT_FAILED, re.MULTILINE)
# A kind's own words of failure: which check of several on one command line failed (`mise run test && mise run lint`)
_KIND_FAILED = {
    "tests": re.compile(r"^(?:--- FAIL|FAIL\b|FAILED\b)|\b\d+ (?:failed|failing)\b|test result: FAILED|"
                        r"Tests?:\s+\d+ failed|^(?:#|ℹ) fail [1-9]|\b[1-9]\d* tests? failed\b|" + _TESTS_FAILED,
                        re.MULTILINE),
    "lint": re.compile(r"^(?:\[[\w:-]+\] )?\d+ issues?:|\d+ problems? \(\d+ errors?|^Found \d+ errors?\.|"
                       + _LINT_FAILED, re.MULTILINE),
    "types": re.compile(r"\berror TS\d+:|^Found \d+ errors? in \d+ files?|^\d+ errors?, \d+ warnings?", re.MULTILINE),
    # Go's compile errors ("cmd/edge/main.go:88:17: c.Fetch undefined (type ...)"), not `go vet`'s findings
    "build": re.compile(r"make: \*\*\*|Build failed|npm ERR!|\berror\[E\d+\]:|"
                        r"^\S+\.go:\d+:\d+: (?:undefined:|.+ undefined \(|cannot use\b|syntax error\b|"
                        r"declared and not used\b|.+ imported and not used|too many|not enough|missing return|"
                        r"invalid operation\b)", re.MULTILINE),
}
# The shell's exit status for a program it did not find, as Claude Code's error output opens
_EXIT_127_RE = re.compile(r"Exit code:? 127\b")
# A check that found nothing to run: no test selected (pytest's summary of exit 5, jest's, vitest's), the path it was
# given not found (pytest's, ruff's E902, eslint's), or a form it cannot read (golangci-lint's exit 3 on a `./x/...`
# named beside files: it loaded no package)
_NOTHING_TO_RUN_RE = re.compile(r"^=+ (?:no tests ran|no tests collected|\d+ deselected in)\b|^No tests found, exiting|"
                                r"^No test files found|^ERROR: file or directory not found:|"
                                r"\bE902 No such file or directory|^No files matching the pattern|"
                                r"\bnamed files must be \.go files\b", re.MULTILINE)
# go test's packages with no test run (`[no test files]`, `-run X` matching none) and a line of one that ran tests: the
# run ran none when its whole output (no leading `…`: not cut) shows the first and not the second
_GO_NO_TESTS_RE = re.compile(r"\[no test(?:s to run| files)\]")
_GO_RAN_RE = re.compile(r"^(?:=== RUN|--- |FAIL\b|ok\s(?!.*\[no tests to run\]))", re.MULTILINE)
_CLEAN_RE = re.compile(r"\b0 (?:failed|errors?)\b")
_FAILURES_RE = re.compile(r"\b(\d+) (?:failed|failing|failures?)\b|Tests?:\s+(\d+) failed|Found (\d+) errors?|"
                          r"\((\d+) errors?|^(?:#|ℹ) fail (\d+)|\b(\d+) tests? failed\b|\(failures=(\d+)|"
                          r", Failures: (\d+)|^[ \t]*(\d+) fail$",
                          re.MULTILINE)  # node --test's summary, ctest's and ava's, unittest's, PHPUnit's, bun's
_GO_FAIL_RE = re.compile(r"^--- FAIL", re.MULTILINE)
# A test a run's output names as failed: Go's verdict line of a test, not its subtests' (`TestX` of `--- FAIL: TestX`,
# not `    --- FAIL: TestX/case`), pytest's summary line (not deno's `FAILED | 1 passed`), unittest's heading of one,
# cargo's, PHPUnit's, mix's, jest's, vitest's, bun's; an id's last part (`tests::fails`, `demo > fails`) is the name,
# a name of several words is left out (its last word is no name)
_FAILED_TEST_RE = re.compile(r"^--- FAIL: (\w+)|^FAILED ([^\s(|]\S*)|^(?:FAIL|ERROR): (\w+) \(|"
                             r"^---- (\S+) stdout ----$|^\d+\) ([\w\\]+::\w+)(?= with data set|$)|"
                             r"^[ \t]+\d+\) test (\S+) \([\w.]+\)$|^[ \t]+● .+ › (\S+)$|^ FAIL  \S+ (?:> .+ )?> (\S+)$|"
                             r"^\(fail\) (?:.+ > )?(\S+)(?: \[[\d.]+m?s\])?$|"
                             # Gradle's "SyncSchedulerTest > schedulesNextRunAtMidnightLocal() FAILED", dbt's
                             # "2 of 4 FAIL 37 not_null_fct_daily_revenue_currency ....." after its clock time
                             r"^\w+ > (\w+)(?:\(\))? FAILED$|^[\d:]+ +\d+ of \d+ (?:FAIL \d+|ERROR) (\S+) \.|"
                             # Minitest's "UserTest#test_valid [test/models/user_test.rb:8]:", xcodebuild's
                             # "Test Case '-[AppTests.LoginTests testLogin]' failed"
                             r"^\w+#(test\w*) \[\S+\]:$|^Test Case '-\[[\w.]+ (\w+)\]' failed",
                             re.MULTILINE)
_OUTPUT_FLAG_RE = re.compile(r"^(?:\d?>&?\d?\S*|-v+|--verbose|-count=\d+|-q|--quiet|--tb=\S+|-x|--exitfirst|"
                             r"-failfast|--no-header|--color=\S+|--reporter=\S+)$")
_LOOP_WORD_RE = re.compile(r"^(?:do|then|else)\s+")  # the shell's word before a loop's or a branch's body
# A check's words that narrow it to a part: a filter flag, a test id, arguments after `--`, a path or source file
# (nx's `run-many -t test` names its task, no test)
_SCOPE_RE = re.compile(r"(?<!run-many|affected)\s-(?:run|k|m|p|t|-filter|-testNamePattern|-grep|-package|-tests?)"
                       r"(?:[=\s])|::|\s--\s+\S|"
                       r"\s\.{0,2}/?(?:[\w.-]+/)+[\w.*-]*(?=\s|$)|\s[\w./-]+\.(?:go|py|[jt]sx?|rs|rb|java|kt)(?=\s|$)")
# The program run by its path (`./gradlew`, `bin/rails`, `/usr/bin/make`), or Django's `python manage.py`
_PROGRAM_PATH_RE = re.compile(rf"^(?:\.{{0,2}}/?(?:[\w.-]+/)+[\w.-]+|{_MANAGE_PY})(?=\s|$)")
# A check's filter to test names or markers, and a test id's name (`-run TestX`, `-k 'a or b'`, `::test_y`)
_FILTER_RE = re.compile(r"(?<!run-many|affected)\s-(?:run|k|m|t|-filter|-testNamePattern|-grep|-tests?)(?:=|\s+)"
                        r"(?:'[^']*'|\"[^\"]*\"|\S+)|"
                        r"::\S*")  # Gradle's `--tests "*BookingTest"`, cargo's `--test stats_json` too
# Output of a check that passed ("[lint:go] 0 issues.": a mise task's output lines carry its name); the last lines':
# ctest's, unittest's, mocha's, bun's, ava's, mix's and rspec's, PHPUnit's
_PASSED_RE = re.compile(r"\b\d+ passed\b|^ok\s+\S+|^PASS$|test result: ok|All checks passed|\bTests?:\s+\d+ passed|"
                        r"no issues found|Success: no issues|^(?:\[[\w:.-]+\] )?0 issues\.|Build succeeded|"
                        r"Compiled successfully|^(?:#|ℹ) pass [1-9]|\b100% tests passed|^OK(?: \(skipped=\d+\))?$|"
                        r"^[ \t]*[1-9]\d* (?:passing \(\d+m?s\)|pass|tests? passed)$|"
                        r"^\d+ (?:tests?|examples?), 0 failures\b|^OK \(\d+ tests?,|"
                        # Minitest's, xcodebuild's, XCTest's, dbt's, terraform's, helm's, turbo's and nx's
                        r"^\d+ runs, \d+ assertions, 0 failures, 0 errors\b|^\*\* TEST SUCCEEDED \*\*$|"
                        r"\bExecuted \d+ tests?, with 0 failures\b|\bDone\. PASS=\d+ WARN=\d+ ERROR=0\b|"
                        r"^Success! The configuration is valid\.|\b\d+ chart\(s\) linted, 0 chart\(s\) failed|"
                        r"^\s*Tasks:\s+(\d+) successful, \1 total$|Successfully ran target \S+ for", re.MULTILINE)


@dataclass(frozen=True)
class Check:
    kind: str  # tests | types | lint | build
    command: str  # the step that runs it, as typed
    last: bool  # the command line's last step, unpiped: its exit status is the check's
    gated: bool = False  # after another step on an `&&` chain: a failed exit may be that step's, the check never run
    upheld: bool = False  # unpiped, every later step on its `&&` chain: an exit 0 says it passed


@dataclass(frozen=True)
class GitStep:
    verb: str  # add | commit | push | status | log | stash | restore | checkout | reset | ...
    args: str


def unwrapped(command: str) -> str:
    """The script a shell wrapper runs (`bash -lc 'git add -A && git commit'` -> `git add -A && git commit`), the
    command line itself when it is none."""
    command = command.strip()
    words = _words(command) if _WRAPPER_RE.match(command) else None
    return words[2].strip() if words and len(words) == 3 else command


@lru_cache(maxsize=256)  # the facts, the caveats and the plan's steps ask the checks, git steps and PR of one line
def _parts(command: str) -> tuple[tuple[str, bool, bool, bool], ...]:
    """(step, piped, gated, upheld) of a command line's `&&`, `;`, `||` parts, each without its pipe's later stages,
    `cd`s and `echo`s left out; `gated`: a step before it on its `&&` chain, whose failure would have ended the line
    first; `upheld`: unpiped, and only `&&` after it (an `echo` after a `;` too), so that the line's exit 0 says it
    passed."""
    found = []
    pieces = _SEPARATOR_RE.split(unwrapped(command))
    joiners = pieces[1::2]
    chained = False  # a step kept since the last separator other than `&&`
    for at, (joiner, part) in enumerate(zip(["", *joiners], pieces[::2], strict=True)):
        chained = chained and joiner == "&&"
        step = _step(part)
        if step and not step.startswith(("cd ", "echo ", "#")):
            piped = " | " in part
            found.append((step, piped, chained, not piped and all(later == "&&" for later in joiners[at:])))
            chained = True
    return tuple(found)


def steps(command: str) -> list[str]:
    return [step for step, *_ in _parts(command)]


def bare(step: str) -> str:
    """The step without environment assignments and wrappers (`CI=1 uv run pytest` -> `pytest`); Django's test labels
    as the folders they name (`manage.py test shop.tests` -> `manage.py test shop/tests/`)."""
    step = _BIN_PATH_RE.sub("", _PREFIX_RE.sub("", step), count=1)
    if (django := _DJANGO_TEST_RE.match(step)) is None:
        return step
    labels = (f"{word.replace('.', '/')}/" if not word.startswith("-") else word
              for word in step[django.end():].split())
    return " ".join([step[:django.end()], *labels])


def git_steps(command: str) -> list[GitStep]:
    return [GitStep(m.group(1), m.group(2).strip()) for step in steps(command) if (m := _GIT_RE.match(step))]


def pushed(call: ToolCall | None) -> bool:
    """Whether a tool call is a shell command that pushed and went through."""
    return call is not None and call.name == "Bash" and not call.is_error and any(
        step.verb == "push" for step in git_steps(str(call.input.get("command", ""))))


def opens_pr(command: str) -> bool:
    return any(_PR_CREATE_RE.match(step) for step in steps(command))


_ESCAPED_RE = re.compile(r"\\([`\"'$\\])")  # a shell string's escapes: \` -> `


def unescaped(text: str) -> str:
    """A double-quoted shell string's text as the shell hands it on: its backslash escapes undone."""
    return _ESCAPED_RE.sub(r"\1", text)


def checks(command: str) -> list[Check]:
    """The checks a command line runs, in order; `last` marks the one whose exit status is the command's."""
    found = []
    parts = _parts(command)
    for position, (step, piped, gated, upheld) in enumerate(parts):
        for kind in _kinds(bare(step)):
            if not _NO_RUN_RE.search(step):
                kind = "build" if kind == "tests" and _COMPILE_ONLY_RE.search(step) else kind
                found.append(Check(kind, _label(step), position == len(parts) - 1 and not piped, gated, upheld))
    return found


def _kinds(step: str) -> list[str]:
    """The kinds of check a step runs: one, or each kind among the tasks of a Gradle run, which runs every task it
    names (`./gradlew ktlintCheck test integrationTest`: lint, then tests)."""
    runner = _GRADLE_RUNNER_RE.match(step)
    tasks = [step] if runner is None else [f"gradle {task}" for task in _GRADLE_OPTION_RE.sub(
        " ", step[runner.end():]).split()]
    return list(dict.fromkeys(kind for task in tasks for kind, pattern in _CHECKS if pattern.match(task)))


def _label(step: str) -> str:
    """The check as a reader names it: without redirections and output flags (`2>&1`, `-v`, `-count=1`)."""
    words = [w for w in step.split() if not _OUTPUT_FLAG_RE.match(w)]
    return " ".join(words[:-1] if words[-1:] == ["--"] else words)  # `test -- --reporter=dot`: nothing passed on


def compiles(tests: str, build: str) -> bool:
    """Whether a test run compiles all a build did: the same compiled toolchain's run of every test (`cargo test`
    after `cargo build`, `go test ./...` after `go build ./cmd/x`), so its pass says the build passes too."""
    toolchain = bare(build).split()[0]
    return toolchain in _COMPILED and bare(tests).split()[0] == toolchain and not scoped(tests)


def scoped(command: str) -> bool:
    """Whether a check runs on part of the project only: a path, a package other than `./...`, a test name or
    marker (`go test ./cmd/cli/...`, `pytest tests/test_x.py::test_y`, `-run TestX`, `-k name`, `mise run test --
    ./redact/...`); `mise run lint`, `go test ./...`, `pytest` run it all."""
    return bool(_SCOPE_RE.search(" " + _own(command).replace("./...", "")))


def _own(command: str) -> str:
    """A check's own words: not its launcher's (`python -m`'s `-m` is no pytest marker, `uv run`), nor the path it
    is run by (`./gradlew assembleDebug`, `bin/rails test`: no part of the project it runs on)."""
    return _PROGRAM_PATH_RE.sub("", bare(command), count=1)


def within(part: str, whole: str) -> bool:
    """Whether a check run on a part is run again by one on a wider part that holds it, without its filters
    (`pytest tests/x.py::test_y` by `pytest tests/x.py`, `go test ./pkg -run TestX` by `go test ./pkg`, `pytest
    tests/x.py` by `pytest tests/`)."""
    if part.startswith(whole + " ") and all(word == "--" or _is_path(word) for word in _FILTER_RE.sub(
            "", part[len(whole):]).split()):
        return True  # the same run narrowed (`pnpm --filter web test -- src/a.test.ts` by `pnpm --filter web test`)
    if filtered(whole):
        return False
    words, wider = _FILTER_RE.sub("", " " + bare(part)).split(), bare(whole).split()
    paths, parts = [word for word in wider if _is_path(word)], [word for word in words if _is_path(word)]
    # a run on no path ran it all: no run on some paths holds it
    return bool(paths) and bool(parts) and [w for w in words if not _is_path(w)] == [
        w for w in wider if not _is_path(w)] and all(any(_holds(path, word) for path in paths) for word in parts)


def filtered(command: str) -> bool:
    """Whether a check runs only the tests a name or marker picks (`-run TestX`, `-k name`, `tests/x.py::test_y`)."""
    return bool(_FILTER_RE.search(" " + _own(command)))


def _is_path(word: str) -> bool:
    return not word.startswith("-") and ("/" in word or bool(re.search(r"\.\w+$", word)))


def _holds(wider: str, path: str) -> bool:
    """Whether the `wider` path holds `path`: a folder holds its files; `./pkg/...` (subpackages too) is not in
    `./pkg`."""
    inner, outer = (p.removeprefix("./").removesuffix("/...").rstrip("/") for p in (path, wider))
    return (inner == outer or inner.startswith(outer + "/")) and (wider.endswith("/...") or not path.endswith("/..."))


def failed(output: str) -> bool | None:
    """What a check's output says: True (failed), False (passed), None (it does not say)."""
    cleaned = _CLEAN_RE.sub("", output)
    if _FAILED_RE.search(cleaned):
        return True
    return False if _PASSED_RE.search(output) else None


def verdicts(found: list[Check], output: str, is_error: bool) -> list[tuple[Check, bool]]:
    """(a check, whether it passed) of each check a call ran (`found`) whose verdict its output or exit status
    tells: the exit status is only the last step's, and the output says of one step only when it ran a single one.
    A check that ran nothing (`_ran_nothing`) has none."""
    found = [check for check in found if not _ran_nothing(check, found, output)]
    verdict = failed(output)
    if (len(found) > 1 or any(check.gated for check in found)) and (is_error or verdict):
        return _one_of_several(found, output, is_error)
    return [(check, not is_error if verdict is None else not verdict) for check in found
            if verdict is not None or check.last or check.upheld and not is_error]


def _ran_nothing(check: Check, found: list[Check], output: str) -> bool:
    """Whether a check's output says it ran nothing: no runner (the shell's `pytest: command not found`, exit 127 of
    the line's last step), or, the line's only check, nothing to run (pytest's `no tests ran`, a path not found, go
    test's packages all `[no test files]`, golangci-lint's `named files must be .go files`)."""
    runner = re.escape(bare(check.command).split()[0])
    missing = re.search(rf"(?:^|[\s`]){runner}`?: (?:command not found|No such file or directory)|"
                        rf"command not found: {runner}\b|Failed to spawn: `{runner}`", output, re.MULTILINE)
    if missing or (check.last and _EXIT_127_RE.match(output)):
        return True
    go_none = check.kind == "tests" and not output.startswith("…") and bool(_GO_NO_TESTS_RE.search(output)) and \
        not _GO_RAN_RE.search(output)
    return len(found) == 1 and (go_none or bool(_NOTHING_TO_RUN_RE.search(output)))


def _one_of_several(found: list[Check], output: str, is_error: bool) -> list[tuple[Check, bool]]:
    """The verdicts of a command line that failed where which step failed is in doubt, several checks or a check
    after other steps on an `&&` chain: a check whose kind's own words of failure its output shows failed (`mise run
    test && mise run lint`: the test run's `--- FAIL`), a check before it passed (the line went on to it), a check
    after it never ran when the line stopped (an error exit) and passed when it went on (a failure behind a pipe); no
    such words: which one failed is unknown (`mise run fmt && mise run test`: fmt's failure, the tests never ran)."""
    kinds = [check.kind for check in found]
    owners = [at for at, check in enumerate(found) if kinds.count(check.kind) == 1
              and _KIND_FAILED[check.kind].search(output)]
    if not owners:
        return []
    return [(check, at not in owners) for at, check in enumerate(found)
            if at in owners or at < owners[0] or (at > owners[-1] and not is_error)]


def failures(output: str) -> int:
    """How many tests or errors the output counts as failed (0: it does not say)."""
    go = len(_GO_FAIL_RE.findall(output))
    counts = [int(n) for match in _FAILURES_RE.findall(output) for n in match if n and n != "0"]
    return max([go, *counts], default=0)


def failed_tests(output: str) -> tuple[str, ...]:
    """The tests a run's output names as failed, each once, in order: `TestX` of `--- FAIL: TestX/case`, `test_y` of
    `FAILED tests/a.py::TestA::test_y[chromium] - AssertionError` and of `FAIL: test_y (test_a.TestA.test_y)`, `fails`
    of `---- tests::fails stdout ----` and of `(fail) demo > fails`."""
    found = ("".join(names).split("::")[-1].split("[")[0] for names in _FAILED_TEST_RE.findall(output))
    return tuple(dict.fromkeys(name for name in found if name))


def paths_in(args: str) -> list[str]:
    """The file arguments of a git step (`git add a.go b.go`): its words that are not options nor redirections."""
    args = _REDIRECT_RE.sub(" ", f" {args}")
    words = _words(args)
    if words is None:
        words = args.split()
    return [w for w in words if not w.startswith("-") and w not in (".", "--")]


def stages_all(step: GitStep) -> bool:
    """Whether a `git add` takes every change: `.`, `-A`, or no file named (`git add -u`)."""
    return not paths_in(step.args) or not _ADD_ALL.isdisjoint(step.args.split())


def commits_all(step: GitStep) -> bool:
    """Whether a `git commit` takes every tracked change, staged or not (`-a`, `-am "..."`, `--all`)."""
    return any(_COMMIT_ALL_RE.match(word) for word in step.args.split())


def restored(step: GitStep) -> list[str]:
    """The files a git step puts back as committed: `restore <files>` (not `--staged` alone), `checkout -- <files>`."""
    words = step.args.split()
    if (step.verb == "restore" and "--staged" not in words) or (step.verb == "checkout" and "--" in words):
        return paths_in(step.args.split(" -- ", 1)[-1])
    return []


# A here-document: the rest of its opening line ("<<'EOF' > notes.md"), its body up to its end word or, stored cut
# short, to the end
HEREDOC_RE = re.compile(r"""<<-?\s*['"]?(\w+)['"]?(?P<rest>[^\n]*)\n(?P<body>.*?)(?:\n\s*\1\b|\Z)""", re.DOTALL)


def files_changed(command: str) -> list[str]:
    """The files a command line deletes, moves, copies or writes (`git rm a.go`, `git mv a.go b/a.go`, `rm a.go`, `cp
    a.go b.go`, `sed -i ... a.go`, `cat > a.md <<EOF`, `... | tee a.log`, `echo x >> a.txt`, `git submodule add`'s
    `.gitmodules`): both ends of a move, a copy's new file; not a recursive removal (a folder, a build's output:
    `folders_removed`), an untracking (`--cached`) or a glob. A file named after `cd elsewhere` is named under that
    folder."""
    return [path for path, _ in file_ops(command)]


def files_deleted(command: str) -> list[str]:
    """Of `files_changed`, the files the command line deletes (`rm a.go`, `git rm a.go`)."""
    return [path for path, deleted in file_ops(command) if deleted]


def file_ops(command: str) -> list[tuple[str, bool]]:
    """(path, whether the step deletes it) of each file `files_changed` names: both at once."""
    found: list[tuple[str, bool]] = []
    for folder, part in _parts_in_folders(command):
        if any(mark in part for mark in (">", "tee ", "sed ")):
            found += [(_under(folder, path), False) for path in _written_by_shell(part)]
        step = bare(_step(part))
        if submodule := _SUBMODULE_ADD_RE.match(step):
            # its `.gitmodules`, and the folder it names, back when an earlier `git rm` deleted it
            args = [w for w in (_words(step[submodule.end():]) or []) if not w.startswith("-")]
            found += [(_under(folder, path), False) for path in [".gitmodules", *args[1:2]]]
            continue
        match = _FILE_OPS_RE.match(step)
        words = _words(match.group(2)) if match else None
        if match is None or not words or any(_RECURSIVE_RE.match(word) for word in words):
            continue
        paths = [w for w in words if not w.startswith("-") and not any(c in w for c in "*?$<>|&")]
        paths = _copied(paths) if match.group(1) == "cp" else [path for path in paths if not path.endswith("/")]
        deletes = match.group(1).split()[-1] == "rm"
        found += [(_under(folder, path), deletes) for path in paths]
    return found


def folders_removed(command: str) -> list[str]:
    """The folders a command line removes recursively (`rm -rf old/`, `git rm -r pkg/commands`)."""
    found: list[str] = []
    for folder, part in _parts_in_folders(command):
        match = _FILE_OPS_RE.match(bare(_step(part)))
        words = _words(match.group(2)) if match and match.group(1).split()[-1] == "rm" else None
        if words and "--cached" not in words and any(_RECURSIVE_RE.match(word) for word in words):
            found += [_under(folder, w.rstrip("/")) for w in words
                      if not w.startswith("-") and not any(c in w for c in "*?$<>|&")]
    return found


def _parts_in_folders(command: str) -> list[tuple[str, str]]:
    """(the folder a `cd` before it moved to, "" for none; the part) of each of a command line's parts but its `cd`s."""
    command = unwrapped(command)
    # a here-document's body is text, not steps (a Go `a > b` in `cat > x.go <<'EOF'` is no redirection)
    command = HEREDOC_RE.sub(lambda m: m.group("rest"), command) if "<<" in command else command
    found: list[tuple[str, str]] = []
    folder = ""
    for part in _SEPARATOR_RE.split(command.strip())[::2]:
        step = _step(part)
        # only a word that starts with `c`, a quote or an escape reads as `cd`: the others are not split
        words = (_words(step) or []) if step[:1] in ("c", "'", '"', "\\") else []
        if words[:1] == ["cd"] and len(words) == 2:
            folder = ("" if words[1].startswith(("/", "~")) else folder) + words[1].rstrip("/") + "/"
        elif part.strip():
            found.append((folder, part))
    return found


def _step(part: str) -> str:
    """A part without its pipe's later stages, its brackets and the shell's word that opens a loop's or a branch's
    body (`for i in 1 2 3; do pnpm test; done`)."""
    return _LOOP_WORD_RE.sub("", part.split(" | ", 1)[0].strip().strip("()").strip())


def _under(folder: str, path: str) -> str:
    return posixpath.normpath(folder + path) if folder and not path.startswith(("/", "~")) else path


def _words(args: str) -> list[str] | None:
    """The words `shlex.split` reads, None for an open quote."""
    try:
        return _lexed(args, "")
    except ValueError:
        return None


def _lexed(text: str, punctuation: str) -> list[str]:
    """The words of a POSIX `shlex.shlex` splitting at whitespace (`whitespace_split`), runs of `punctuation` words
    of their own (`punctuation_chars`); no punctuation: those of `shlex.split`. Raises ValueError for an open quote or
    a last backslash, as shlex does."""
    if not _QUOTED_RE.search(text):
        return _PLAIN_WORDS[punctuation].findall(text)
    found: list[str] = []
    word: list[str] = []
    quoted = False  # a word of quotes alone ('') is a word, empty
    for match in _SEGMENTS[punctuation].finditer(text):
        kind = match.lastgroup
        if kind in ("plain", "escape", "single"):
            word.append(match.group(kind))
            quoted = quoted or kind == "single"
        elif kind == "double":
            word.append(_QUOTED_ESCAPE_RE.sub(r"\1", match.group(kind)))
            quoted = True
        elif kind == "open":
            raise ValueError("No closing quotation")
        else:
            if word or quoted:
                found.append("".join(word))
                word, quoted = [], False
            if kind == "punct":
                found.append(match.group(kind))
    if word or quoted:
        found.append("".join(word))
    return found


def _copied(paths: list[str]) -> list[str]:
    """A copy's new files: the target, or each source's name inside it when it is a folder (several sources, a
    trailing `/`, or a name without an extension for a source with one)."""
    if len(paths) < 2:
        return []
    *sources, target = paths
    into = len(sources) > 1 or target.endswith("/") or ("." not in target.rsplit("/", 1)[-1]
                                                         and "." in sources[0].rsplit("/", 1)[-1])
    return [f"{target.rstrip('/')}/{source.rsplit('/', 1)[-1]}" for source in sources] if into else [target]


def _written_by_shell(part: str) -> list[str]:
    """The files one part of a command line's redirections (`> a`, `>> a`, not `2>` or `>&2`), `tee` and `sed -i`
    write."""
    try:
        words = _lexed(bare(part), "();<>|&")  # shlex's `punctuation_chars=True`
    except ValueError:
        return []
    targets: list[str] = []
    for position, word in enumerate(words):
        before = words[position - 1] if position else ""
        if before in (">", ">>") and not (position > 1 and words[position - 2].isdigit()):
            targets.append(word)
        elif word == "tee":  # `... | tee -a a.log b.log`
            targets += [w for w in itertools.takewhile(lambda w: w not in "|;&><", words[position + 1:])
                        if not w.startswith("-")]
    if words[:1] == ["sed"] and any(w.startswith(("-i", "--in-place")) for w in words):
        # its file arguments: the words after the script (the first word, unless `-e` gives it)
        args = [w for i, w in enumerate(words[1:], 1) if w and not w.startswith("-") and words[i - 1] != "-e"]
        targets += args if "-e" in words else args[1:]
    return [t for t in targets if t != "/dev/null" and not any(c in t for c in "*?$<>|&")]


def program_steps(command: str) -> list[str]:
    """A command line's steps as their words (what programs it runs; `steps` keeps each step as typed, with its
    quotes and pipes, for the checks), split outside quotes (`python3 -c "import yaml; ..."` is one), without `cd`s and
    exports, a shell wrapper's (`bash -lc "..."`) its own."""
    if _WINDOWS_PATH_RE.search(command):
        command = command.replace("\\", "/")
    found: list[list[str]] = [[]]
    try:
        for word in _lexed(_REDIRECT_RE.sub(" ", command), ";&|"):
            if word in (";", "&&", "||", "|", "&", ";;"):
                found.append([])
            else:
                found[-1].append(word)
    except ValueError:
        return [step for step in steps(command) if step.split()[:1] != ["export"]]
    found_steps: list[str] = []
    for words in found:
        if words[:1] in (["bash"], ["sh"], ["zsh"]) and words[1:2] in (["-c"], ["-lc"]):  # Codex's `bash -lc "..."`
            found_steps += program_steps(" ".join(words[2:])) if len(words) > 2 else []
        elif words and words[0] not in ("cd", "export", "echo"):
            found_steps.append(" ".join(words))
    return found_steps


def program(step: str) -> str:
    """A step's program and its first argument (`test-harness.sh verify-rewind`, `git push`, `python3 -c`), a task
    with its name (`npm run migrate`), a script without the interpreter that runs it: what a later step must run
    again."""
    git = git_steps(step)
    first, _, rest = _SCRIPT_RUN_RE.sub("", bare(step)).partition(" ")
    words = [first, *(_TARGET_OPTION_RE.sub("", rest) if first in _TARGETED else rest).split()]
    return f"git {git[0].verb}" if git else " ".join(words[:3 if words[1:2] in (["run"], ["exec"]) else 2])


def programs(command: str) -> list[str]:
    """The program of each step of a command line (`program`), in order."""
    return [name for step in program_steps(command) if (name := program(step))]


def named(program: str) -> str:
    """A program as a thread names it, and as any spelling of it runs it: a script by its file name."""
    first, _, rest = program.partition(" ")
    return f"{first.rsplit('/', 1)[-1]} {rest}".strip()


def probe(step: str) -> bool:
    """Whether a step reads or probes: its failure says what is there, no work is left."""
    git = git_steps(step)
    return program(step).split()[0] in _PROBES or bool(_PROBE_STEP_RE.match(bare(step))) or bool(
        git and git[0].verb in _GIT_READS)
