"""What a session leaves that its agent said in passing or its commands show, on the blind scripted sweeps of
bench/scripted/ (each read as a Claude Code, a Codex and a Gemini session): each rule on the session it came from,
and on a session of the same sweeps labelled done that it must not fire on."""

from __future__ import annotations

import sys
from zoneinfo import ZoneInfo

import pytest

from eywa.core.extract import commands
from eywa.core.extract.deterministic import draft

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import scripted

AGENTS = ("claude-code", "codex", "gemini")


def _handoff(name: str, number: int, agent: str) -> tuple[str | None, list[str]]:
    scripts, _ = scripted.sessions(name)
    handoff = draft(scripted.session_of(agent, scripts[number - 1]), ZoneInfo("UTC"))
    return handoff.status, handoff.open_threads


# (sweep, session, the start of a thread it must name): a caveat said mid-session that nothing later resolved
SAID_LEFT = [
    # "haven't been exercised against real Postgres timestamps ... I can't check that here": the later passing
    # SQLite run checks nothing of what needs a real database
    ("midway_a", 1, "Caveat: So the cursor encoding"),
    # "So the constraint is a follow-up migration, not part of this change."
    ("midway_a", 5, "Caveat: "),
    # "it needs to be deleted once the fix is confirmed": a throwaway file, never deleted
    ("midway_a", 9, "Caveat: "),
    # "I'm leaving that for a separate PR since it touches the job runner" (its words hold "run": no check resolves it)
    ("midway_a", 19, "Caveat: The right fix is for `scheduler/jobs.py`"),
    # "Keep it until we've seen a green CI run, then drop it."
    ("midway_a", 26, "Caveat: Keep it until we've seen a green CI run, then drop it."),
    # "worth checking prod logs / APM for slow or timed-out `/webhooks/stripe` requests"
    ("midway_a", 32, "Caveat: Worth checking prod logs"),
    # "I will leave that as is for now, since choosing a fallback ... is a product decision": put off, not announced,
    # with what it leaves, the sentence before
    ("midway_a", 33, "Caveat: For those users with no nickname, `displayName()` currently returns an empty string: I "
                     "will leave that as is for now"),
    # "... so soft-deleted comments will still be counted on posts. I'll leave the counter cache alone for now ...":
    # the last clause before says what that leaves
    ("midway_f", 4, "Caveat: Soft-deleted comments will still be counted on posts: I'll leave the counter cache alone"),
    # "I will keep it out of this migration and it can go in a separate one": the clause that says so, not the
    # sentence's start
    ("midway_c", 15, "Caveat: I will keep it out of this migration"),
    # "...; should come out before this ships": the debug line in the commit, with what it is
    ("midway_c", 26, "Caveat: The queue-depth `log.Printf` I added at `hub.go:109` is still in the commit: Should come "
                     "out before this ships."),
    # "I will add temporary `Rails.logger.debug` lines ... and remove them once I have the cause": a later report
    # that "removed the early return" removed no debug line
    ("midway_d", 6, "Caveat: I will add temporary `Rails.logger.debug` lines"),
    # "... so the real confirmation is watching worker RSS on staging ... Not something I can do from here."
    ("midway_d", 14, "Caveat: The real confirmation is watching worker RSS on staging for an hour with the "
                     "prod-sized bucket: Not something I can do from here."),
    # "I will do v1 in this pass and leave the v2 routers on the old middleware for now."
    ("midway_d", 15, "Caveat: I will do v1 in this pass and leave the v2 routers"),
    # "... so it should go through the same JS config, but iOS behaviour is unverified."
    ("midway_e", 11, "Caveat: `ios/TrailApp/AppDelegate.mm` already forwards"),
    # "Proper DMA-backed transfers stay as a TODO."
    ("midway_e", 16, "Caveat: Proper DMA-backed transfers stay as a TODO."),
    # "I've put a temporary `.limit(1000)` on the input read at `sessionize.py:31`; it has to go before this is
    # merged": later edits of that file are no removal of it
    ("midway_e", 35, "Caveat: To iterate quickly on the sample data I've put a temporary `.limit`"),
    # "`examples/settings.toml` still uses `kebab-case` keys and will not load as-is."
    ("midway_d", 18, "Caveat: `examples/settings.toml` still uses `kebab-case` keys and will not load as-is."),
    # "The clean fix is `listCmd.MarkFlagsMutuallyExclusive(...)`, but I have left it as is for now": put off, in the
    # past tense; the long code's start kept where the sentence needs it
    ("midway_k", 3, "Caveat: The clean fix is `listCmd.MarkFlagsMut…`, but I have left it as is for now"),
    # "I'm leaving rotation out of this first version", "so I'm keeping it out of this PR"
    ("midway_k", 10, "Caveat: Since you asked to keep it simple, I'm leaving rotation out of this first version."),
    ("midway_k", 19, "Caveat: BurntSushi/toml can report leftover keys"),
    # "..., and I will not do that in this change."
    ("midway_k", 30, "Caveat: Doing it properly touches the highlight span logic as well, and I will not do that"),
    # "I will leave that for a follow-up so this change stays limited to the flag."
    ("midway_k", 33, "Caveat: Fixing it means making `Candidates()` exclude `wt.Locked` entries: I will leave that "
                     "for a follow-up"),
    # "I will keep this change scoped to the dashboard UI as requested and not touch the hook for now."
    ("midway_l", 3, "Caveat: That means for a real user with zero projects"),
    # "I cannot build the app target or look at the screen in dark mode here." (only a package's tests ran)
    ("midway_l", 21, "Caveat: I cannot build the app target or look at the screen in dark mode here."),
    # "Writing a throwaway repro script ... Scratch only, will delete before wrapping up.": never deleted
    ("midway_l", 23, "Caveat: Scratch only, will delete before wrapping up."),
    # "I'll come back to that after this fix": a promise, with what "that" is (the sentence before), never kept
    ("midway_p", 2, "Caveat: Unrelated, spotted while reading: `ResolveLogPath` at `internal/cli/flags.go:77`"),
    ("midway_g", 13, "Caveat: `Checkout.vue` is the big one — about 30 strings: I'll come back to it"),
    ("midway_n", 7, "Caveat: Users have a `timezone` column"),
    # "..., and will return to it after the lint pass", after "that one test": the sentence before, which says
    # nothing of it but code, is left out
    ("midway_n", 11, "Caveat: I'm marking that one test `.skip` temporarily"),
    # a remark the agent flags ("Something to be aware of:", "Worth flagging:", "One gap in the ctx handling:", "A
    # limit on what this proves:"), without the words that flag it
    ("midway_q", 1, "Caveat: The counters live in each node's own ETS table."),
    ("midway_r", 1, "Caveat: `config/settings/test.py` uses SQLite, and there's no Postgres container running here"),
    ("midway_q", 26, "Caveat: The backoff between attempts in `client.go:34` is still a plain `time.Sleep`"),
    ("midway_r", 10, "Caveat: The dev database has ~42k events, and production has several hundred million"),
    # "I'm not switching the allocator in this change; it touches every allocation in `main.zig` ...": the same
    # turn's edits of `main.zig` are the change it was left out of
    ("midway_q", 22, "Caveat: I'm not switching the allocator in this change"),
    # "... left a `// TODO: honor Retry-After on 429` at `src/sync/pushChanges.ts:27` to handle later": the edit that
    # wrote the TODO, or one of `pushChanges.test.ts`, is no handling of it
    ("midway_d", 32, "Caveat: Left a `// TODO: honor Retry-After on 429`"),
    # "... — that's just a placeholder so the types line up ...; until it's swapped for a real `SELECT count(*)`"
    ("midway_q", 10, "Caveat: That's just a placeholder so the types line up"),
    # "That's the uninstall side, so I'm keeping this change to install.", "..., so I'm keeping this change to the
    # Orders path and leaving the profile code alone": what the sentence before found, left out of the change
    ("midway_o", 1, "Caveat: Now that install creates that backup: That's the uninstall side"),
    ("midway_q", 4, "Caveat: That's the same crash waiting on the Profile screen"),
    # "Note: `k8s/shop/debug-curl.yaml` and the `debug-curl` pod ... exist only for this test. Both should be deleted
    # before this goes in, ...": what "both" are, the sentence before says
    ("midway_s", 27, "Caveat: `k8s/shop/debug-curl.yaml` and the `debug-curl` pod in the cluster exist only for this: "
                     "Both should be deleted"),
    # a choice put to the person with no question mark, that no answer took up
    ("midway_m", 7, "Caveat: I've held off on both the shim and `CHANGELOG.md` until you pick one."),
    ("midway_s", 1, "Caveat: I've left it at 100 until you decide."),
    # a removal promised for later and never made: "I will take it out once the tests are green" (what "it" is, the
    # sentence before), "I'll add a debug print temporarily and take it out before we're done", "It's for inspection
    # only, delete it before merging" (`docker run --rm` removes no file)
    ("midway_g", 21, "Caveat: I have also added a temporary `print(f\"rate-limit key: {key}\")`"),
    ("midway_o", 16, "Caveat: I'll add a debug print temporarily and take it out before we're done."),
    ("midway_i", 22, "Caveat: To see what the remaining weight is afterwards I'm adding a throwaway"),
    # "...; drop it before merging": a later "partial file removed" names `pg_dump`, not the `set -x` it promised gone
    ("midway_u", 11, "Caveat: Adding `set -x` temporarily to trace the failure path with a fake pg_dump; drop it"),
]


# (sweep, session, the start of a thread): a step the plan gave or a check the session ran and left
LEFT_BY_ACTIONS = [
    # "Plan:\n\n1. Extend the `order_counts` CTE ...\n2. Add `lifetime_value` to `models/marts/schema.yml` ...":
    # "Extend" begins a step too, and `schema.yml` was never edited
    ("midway_a", 31, "Plan step not done: Add `lifetime_value` to `models/marts/schema.yml`"),
    # "3. Update `README.md` usage and `.github/workflows/deploy.yml`": the README was edited, the workflow only read
    ("midway_a", 8, "Plan step not done: Update `README.md` usage and `.github/workflows/deploy.yml`"),
    # "4. Add `nickname` to `src/main/resources/openapi/profile.yaml`": `nickname` is in every other step's edits,
    # the file it names never edited
    ("midway_b", 15, "Plan step not done: Add `nickname` to `src/main/resources/openapi/profile.yaml`"),
    # "## Plan" over the list, no colon: step 4 "Run `cargo bench -p lexer` ..." never ran
    ("midway_d", 4, "Plan step not done: Run `cargo bench -p lexer`"),
    # `go build ./... && go vet ./...` failed on Go's compile errors ("c.Fetch undefined"): the build's failure
    ("midway_d", 23, "Build failing: `go build ./...` last run failed"),
    # Gradle's tasks are checks: `./gradlew checkstyleMain spotlessCheck` failed and never ran again
    ("midway_d", 8, "Lint failing: `./gradlew checkstyleMain spotlessCheck` last run failed"),
    ("midway_d", 33, "Tests failing: `./gradlew testDebugUnitTest` last run failed (1 failure): "
                     "`schedulesNextRunAtMidnightLocal`"),
    # dbt's failing test by name: "2 of 4 FAIL 37 not_null_fct_daily_revenue_currency ..."
    ("midway_g", 11, "Tests failing: `dbt build -s fct_daily_revenue` last run failed: "
                     "`not_null_fct_daily_revenue_currency`"),
    # the agent's todo list kept as a markdown checklist in its messages, its last item never ticked
    ("midway_k", 24, 'To do: CHANGELOG entry under "Unreleased"'),
    # a choice put off by the person's last prompt ("separate thing while I think — can you bump Go ..."), and a
    # question ("let me ask her about the slowdown. meanwhile do the rest")
    ("midway_k", 27, "Decide: move the whole package to `pkg/gitexec`"),
    ("midway_h", 25, "Asked whether to turn benchmark off"),
    # a question the person's last prompt passed over, asking something else ("what happens if someone passes --since
    # with a future date?", "we use helm-unittest in the other charts, can you add tests for this one too")
    ("midway_m", 13, "Asked whether to go ahead: I still need to update those two"),
    ("midway_m", 19, "Asked whether to bump `Chart.yaml` to `0.8.0` in this change, or leave it"),
    # Codex's "Plan" line over a numbered list; "4. Run `cargo bench --bench ring` to make sure ..." never ran (a
    # `cargo test ring::` shares its words, not its command)
    ("midway_l", 5, "Plan step not done: Run `cargo bench --bench ring`"),
    # `git stash push -u` to try a clean HEAD, never popped: the person's work sits in the stash
    ("midway_o", 33, 'Stashed, not restored: `git stash push -u -m "wip before integration check"`'),
    # XCTest's verdict behind a pipe: "Executed 21 tests, with 3 failures (0 unexpected) in 1.944 (1.981) seconds"
    ("midway_q", 35, "Tests failing: `xcodebuild test -scheme Checkout"),
    # a question before the turn's last message, put to the person by its label ("Before I write the migration, a
    # question: should existing rows be backfilled ...?"), that no prompt followed
    ("midway_q", 27, "Question: Before I write the migration, a question: should existing rows be backfilled"),
    # a question of an earlier message of the turn, that the person's next prompt passed over ("Also the sort arrow
    # icons look off in dark mode ..."); its own two options, not the plan's list above it
    ("midway_r", 3, "Question: should `legacySelection` stay, or would you like me to remove it"),
    # the whole `bundle exec rspec` failed ("a pre-existing timing flake"); only two spec files passed after it
    ("midway_r", 23, "Tests not rerun: `bundle exec rspec` failed (1 failure); only `bundle exec rspec spec/"),
]


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize(("name", "number", "start"), SAID_LEFT + LEFT_BY_ACTIONS)
def test_a_caveat_said_in_passing_or_a_step_or_check_left_is_an_open_thread(name: str, number: int, start: str,
                                                                            agent: str) -> None:
    _, threads = _handoff(name, number, agent)
    assert any(thread.startswith(start) for thread in threads), threads


# (sweep, session): labelled done by its blind reader, and read so
DONE = [
    ("midway_c", 23),  # "do NOT push, I'll push after I look at it": no "Not pushed" note, said or found
    ("midway_e", 10),  # `shellcheck x.sh && bash harness.sh` exited 0: the shellcheck that failed before passed
    ("midway_e", 17),  # busted's failing spec passed in the full `busted` run after the fix
    ("midway_b", 2), ("midway_a", 2),  # plans carried out whole
    ("midway_h", 9), ("midway_h", 16), ("midway_h", 30),  # "perfect, thanks", "lgtm, thanks" unanswered: no request
    # "Should I commit this?" - "no, leave it uncommitted, I'll review the diff tomorrow morning": turned down, and
    # the edits the person's to commit
    ("midway_h", 18),
    ("midway_g", 5),  # `cargo test --test stats_json` failed, then the whole `cargo test` passed: it ran that target
    ("midway_i", 8),  # "👍 thanks" unanswered
    ("midway_j", 10),  # "write the up/down pair and test it against the local docker db": no tests asked for
    ("midway_j", 22),  # "... throws `BillingSdkError` instead of crashing later": no step put off
    # "3. Run storybook build for the ui package to catch story breakage": `pnpm --filter @acme/ui build-storybook`
    # ran; what the step is for is no part of it
    ("midway_d", 17),
    ("midway_k", 34),  # "Aisha's comments on the parser PR": the report's "## Summary" is no PR text to open
    ("midway_l", 11),  # "Next steps\n1. None needed for deploy: ..."
    # `pnpm --filter @acme/api-client test -- src/retry.test.ts` failed; the whole package's suite, run in a `for`
    # loop's body (`do pnpm --filter @acme/api-client test -- --reporter=dot`), passed 20 times after
    ("midway_m", 8),
    ("midway_g", 19),  # "do you want me to fix this for iOS only, or both platforms?" - "Both please."
    ("midway_n", 8),  # "Not committed; you didn't ask for it."
    # `pytest projects/tests/test_members_api.py` failed, then Django's whole `python manage.py test` passed: the
    # `manage.py` it runs by is no part of the project
    ("midway_n", 12),
    # "1. Add an `OrdersCsvExporter` service ...": `app/services/orders_csv_exporter.rb` is the file of that class
    ("midway_r", 6),
    # "**A concern before planning:** ..." and "**Heads-up:** ..." flag remarks the session then settled
    ("midway_j", 18), ("midway_a", 23),
    # what failed and left a check undone ran through after the person's next prompt: "I couldn't do a server-side
    # dry run" before `kubectl --context kind-staging apply --dry-run=server` (the context names no other program),
    # "The integration test could not run because Docker is not available here" before "started docker, try again"
    ("midway_s", 34), ("midway_s", 18),
    ("midway_s", 4),  # "... the stray `users.stripe_customer_ref` line ... was removed before committing": done
    # a removal promised and reported made: "The temporary timing instrumentation is gone", "The temporary debug
    # `puts` is gone", "the diagnostic `console.log` has been removed"
    ("midway_k", 21), ("midway_l", 7), ("midway_q", 6),
    ("midway_t", 16),  # "good, push it to a branch and I'll PR it": the person opens the PR, no description left
]


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize(("name", "number"), DONE)
def test_a_session_its_reader_calls_done_has_no_open_thread(name: str, number: int, agent: str) -> None:
    assert scripted.sessions(name)[1][number - 1].state == "done"
    status, threads = _handoff(name, number, agent)
    assert (status, threads) == ("done", []), threads


def test_a_check_said_done_before_committing_is_no_step_left() -> None:
    """midway_e 4: "The temporary `[bp]` tracing is gone (checked with grep before committing)." is no "Next:"."""
    for agent in AGENTS:
        _, threads = _handoff("midway_e", 4, agent)
        assert not [thread for thread in threads if not thread.startswith("Not pushed")], threads


@pytest.mark.parametrize("agent", AGENTS)
def test_a_pr_gh_could_not_open_for_want_of_a_login_says_so_once(agent: str) -> None:
    """midway_g 35: `gh pr create` failed with "To get started with GitHub CLI, please run:  gh auth login"."""
    assert _handoff("midway_g", 35, agent) == ("done", [
        "PR not opened: `gh pr create` failed: gh is not logged in (not authenticated: `gh auth login`)"])


def test_a_failed_run_of_tasks_a_later_run_ran_with_more_is_rerun() -> None:
    """midway_i 15: `./gradlew assembleDebug` failed, then `./gradlew assembleDebug testDebugUnitTest` passed: the
    program's own path (`./gradlew`) is no part of the project it ran on."""
    for agent in AGENTS:
        _, threads = _handoff("midway_i", 15, agent)
        assert threads == ["Not pushed: commit 6f2cc09 on main"], threads
    assert not commands.scoped("./gradlew assembleDebug testDebugUnitTest")
    assert commands.scoped("./gradlew test --tests X") and commands.scoped("go test ./cmd/...")


def test_a_scratch_thing_said_removed_is_no_caveat() -> None:
    """midway_g 10: "Stubbed success/failure runs behaved as expected; the scratch directory was removed afterwards"."""
    for agent in AGENTS:
        _, threads = _handoff("midway_g", 10, agent)
        assert not [thread for thread in threads if thread.startswith("Caveat")], threads


def test_a_caveat_resolved_later_stays_resolved() -> None:
    """midway_a's done sessions with a caveat fixed later (an edit of what it names, a check it asked for) say
    nothing of it: no rule of these sweeps reopens one."""
    scripts, labels = scripted.sessions("midway_a")
    for number, label in enumerate(labels, 1):
        if label.state == "done":
            _, threads = _handoff("midway_a", number, "codex")
            assert not [t for t in threads if t.startswith("Caveat")], (number, threads)


def test_the_checks_of_gradle_maven_busted_and_dbt_are_told_by_kind() -> None:
    kinds = {command: [check.kind for check in commands.checks(command)] for command in (
        "./gradlew :app:testDebugUnitTest", "gradle check", "./gradlew checkstyleMain spotlessCheck",
        "./gradlew assembleDebug", "mvn -q -pl core test", "./mvnw clean verify", "mvn checkstyle:check",
        "mvn package -DskipTests", "busted spec/save_spec.lua", "dbt build --select fct_orders", "./gradlew --version",
        "gradle tasks", "dbt run", "./gradlew ktlintCheck test integrationTest",
        "./gradlew wrapper --gradle-version 8.7",
        "./gradlew integrationTest --tests '*PaymentControllerIdempotencyIT*'",
        "./gradlew :app:testDebugUnitTest :app:lintDebug")}
    assert kinds == {
        "./gradlew :app:testDebugUnitTest": ["tests"], "gradle check": ["tests"],
        "./gradlew checkstyleMain spotlessCheck": ["lint"], "./gradlew assembleDebug": ["build"],
        "mvn -q -pl core test": ["tests"], "./mvnw clean verify": ["tests"], "mvn checkstyle:check": ["lint"],
        "mvn package -DskipTests": ["build"], "busted spec/save_spec.lua": ["tests"],
        "dbt build --select fct_orders": ["tests"], "./gradlew --version": [], "gradle tasks": [], "dbt run": [],
        # a Gradle run runs each task it names; a task named for its tests is one (midway_r 7)
        "./gradlew ktlintCheck test integrationTest": ["lint", "tests"], "./gradlew wrapper --gradle-version 8.7": [],
        "./gradlew integrationTest --tests '*PaymentControllerIdempotencyIT*'": ["tests"],
        "./gradlew :app:testDebugUnitTest :app:lintDebug": ["tests", "lint"]}
    assert commands.failed_tests("SyncSchedulerTest > schedulesNextRunAtMidnightLocal FAILED\n") == (
        "schedulesNextRunAtMidnightLocal",)
    assert commands.within('./gradlew test --tests "*BookingValidationTest"', "./gradlew test")
    assert not commands.within("bundle exec rspec", "bundle exec rspec spec/a_spec.rb")  # the whole run, not a part
    assert commands.program("kubectl --context kind-staging apply -k k8s/x") == "kubectl apply"
    assert commands.program("kubectl -n web get pods") == "kubectl get"


def test_a_check_before_only_and_steps_passed_when_the_line_exited_zero() -> None:
    """`shellcheck a.sh && bash t.sh` exited 0: shellcheck passed; after `;` or behind a pipe its status is unknown,
    and a failed line does not say which step failed."""
    def told(command: str, is_error: bool) -> list[tuple[str, bool]]:
        return [(check.command, passed) for check, passed in commands.verdicts(commands.checks(command), "", is_error)]

    assert told("shellcheck a.sh && bash t.sh", False) == [("shellcheck a.sh", True)]
    assert told("shellcheck a.sh; bash t.sh", False) == []
    assert told('go build -o /tmp/x ./cmd/x && /tmp/x aaaa 2>&1; echo "Exit code: $?"', False) == []  # d64b50bb
    assert told("pytest | tail -3 && make docs", False) == []
    assert told("ruff check . && pytest", True) == []


def test_a_pr_descriptions_test_plan_is_no_todo_list() -> None:
    """A checklist is the agent's todo list only outside a PR's test plan: its unticked manual check is the PR's."""
    from eywa.core.session import Event, Session, ToolCall

    session = Session(session_id="c1a5e0de-0000-4000-8000-000000000002", agent="codex", cwd="/tmp/project",
                      first_ts=scripted.T0, last_ts=scripted.T0)
    reply = ("Here is the PR description:\n\n## Summary\n- Retry on 429\n\n## Test plan\n- [x] unit tests\n"
             "- [ ] try it against staging")
    session.events = [Event("user", scripted.T0, text="Add retries and write the PR description"),
                      Event("tool", scripted.T0, tool=ToolCall("e1", "Edit", {"file_path": "/tmp/project/retry.py"})),
                      Event("assistant", scripted.T0, text=reply)]
    assert not [t for t in draft(session, ZoneInfo("UTC")).open_threads if t.startswith("To do")]


@pytest.mark.parametrize(("session_id", "reply"), [
    ("45ba035c-93ee-46e8-b83c-9d8a3a1cb05b", "Adress them but be careful not to screw over existing functionality."),
    ("b5f6af67-9cd0-42bb-8323-9ac99badee2d", "remote it completeley, no need to deprecated it"),
])
def test_a_question_the_next_prompt_answers_in_other_words_is_answered(session_id: str, reply: str) -> None:
    """The corpus: "Want me to go ahead and fix those?" answered "Adress them ...", "deprecate it or remove it
    entirely?" answered "remote it completeley, no need to deprecated it": no question left."""
    from .test_extractor import corpus_session

    session = corpus_session(session_id)
    assert any(e.kind == "user" and e.text.startswith(reply) for e in session.events)
    assert not [t for t in draft(session, ZoneInfo("UTC")).open_threads if t.startswith(("Asked", "Decide"))]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_failure_a_later_run_of_more_checks_or_of_the_compiling_tests_passed_is_no_thread(agent: str) -> None:
    """midway_r 7: `./gradlew integrationTest --tests '*IT*'` failed, then `./gradlew ktlintCheck test
    integrationTest` passed; midway_r 4: `cargo build` failed, then `cargo test` (which builds the crate) passed.
    Both sessions committed and were not asked to push: the note is all that is left."""
    assert _handoff("midway_r", 7, agent) == ("done", [
        "Not pushed: 2 commits on feature/idempotency, the last 0c93a1d"])
    assert _handoff("midway_r", 4, agent) == ("done", ["Not pushed: commit a91f03c on main"])
    scripts, _ = scripted.sessions("midway_r")
    happened = draft(scripted.session_of(agent, scripts[3]), ZoneInfo("UTC")).what_happened
    assert "Build: `cargo build` failed, then the tests passed" in happened, happened


def test_a_test_run_compiles_what_a_build_of_its_toolchain_did() -> None:
    assert commands.compiles("cargo test", "cargo build") and commands.compiles("go test ./...", "go build ./cmd/x")
    assert commands.compiles("swift test", "swift build -c debug")
    assert not commands.compiles("go test ./pkg/a", "go build ./...")  # one package compiles no other
    assert not commands.compiles("pytest", "make build") and not commands.compiles("npm test", "npm run build")


def test_xctests_summary_says_whether_the_run_passed() -> None:
    """midway_q 35: `xcodebuild test ... | grep -E "Test Case|Executed"`: the pipe hides the exit status."""
    assert commands.failed("\t Executed 21 tests, with 3 failures (0 unexpected) in 1.944 (1.981) seconds\n")
    assert commands.failed("\t Executed 6 tests, with 0 failures (0 unexpected) in 0.009 (0.009) seconds\n") is False
    assert commands.failed("Executed 1 test, with 1 failure (0 unexpected) in 0.2 (0.2) seconds")


def test_dbts_summary_and_test_lines_say_whether_a_run_passed() -> None:
    """midway_t 12: `dbt build ... | tail -n 3` ended "Done. PASS=19 WARN=0 ERROR=0 SKIP=0 TOTAL=19": the failing
    test of the run before passed, so no check is left failing; a test's own "FAIL 37" line is a failure whatever the
    summary says (midway_i 30)."""
    assert commands.failed("20:41:05  Done. PASS=19 WARN=0 ERROR=0 SKIP=0 TOTAL=19") is False
    assert commands.failed("20:31:52  Done. PASS=17 WARN=0 ERROR=1 SKIP=1 TOTAL=19")
    assert commands.failed("15:02:17  5 of 5 FAIL 37 relationships_fct_orders_customer_id [FAIL 37 in 0.40s]\n"
                           "15:02:17  Done. PASS=4 WARN=0 ERROR=0 SKIP=0 TOTAL=5")
    for agent in AGENTS:
        assert _handoff("midway_t", 12, agent) == ("done", ["Not pushed: commit 1e8b7c2 on refactor/fct-subscriptions"])
