"""The extractor's patterns read a long input in linear time (core/extract): a pattern that could be tried from every
position of a 200,000-character line and backtrack over the rest of it is quadratic (minutes). Each test holds the
pattern to the shape that rules that out (read once from one place: anchored and atomic, or from a run's start only)
and reads such an input for the right answer; the same inputs as before match."""

from __future__ import annotations

from eywa.core.extract import (
    checks_said,
    commands,
    deterministic,
    directions,
    facts,
    gist,
    insights,
    marks,
    open_threads,
    review_reply,
    said_left,
)
from eywa.core.extract.facts import session_facts
from eywa.core.session import Event, Session, ToolCall

LONG = 200_000


def _edits(*paths: str) -> Session:
    edits = [ToolCall(f"e{n}", "Edit", {"file_path": path, "old_string": "a", "new_string": "b"})
             for n, path in enumerate(paths)]
    events = [Event("tool", None, tool=call) for call in edits]
    return Session(session_id="s", agent="codex", cwd="/tmp/widgets", events=events)


def test_a_go_integration_test_path_is_read_from_its_last_integration_word_once() -> None:
    assert facts._INTEGRATION_TEST_RE.pattern.startswith("^(?>")  # anchored, its scan atomic: tried from one place
    long_name = "e2e" * (LONG // 3)  # each "e2e" a place the old pattern began again and read to the end
    session = _edits(f"/tmp/widgets/{long_name}.go", f"/tmp/widgets/e2e/{long_name}_test.go",
                     "/tmp/widgets/integration_test/hooks_test.go", "/tmp/widgets/integration/x/hooks_test.go",
                     "/tmp/widgets/cli/hooks_test.go", "/tmp/widgets/e2e_fixtures.go")
    assert session_facts(session).integration_left == [f"e2e/{long_name}_test.go", "integration_test/hooks_test.go",
                                                       "integration/x/hooks_test.go"]


def test_a_wanted_order_first_then_is_read_from_each_first_up_to_the_next_once() -> None:
    # each "first" read up to the next "first" or ", then", possessively: no character read from two of them
    assert r"first\b(?:(?!\bfirst\b|, then\b)[^.?])*+, then" in directions._WANTED_RE.pattern
    firsts = "first " * (LONG // 6)
    assert directions._WANTED_RE.search(firsts) is None
    assert directions._WANTED_RE.search(f"{firsts}, then push")
    assert directions._WANTED_RE.search("First commit the fix, then proceed with the docs")
    assert directions._WANTED_RE.search("first commit the fix. Then, then proceed") is None  # another sentence


def test_a_step_asked_is_cut_at_its_or_and_its_pointing_tail_from_each_run_of_spaces_start_once() -> None:
    for pattern in (open_threads._POINTER_RE, open_threads._OR_RE):
        assert r"(?<!\s)\s++" in pattern.pattern  # tried from a run's start only, the run read whole
    spaces = " " * LONG  # each space a place the old patterns began again and read the run to its end
    assert open_threads._POINTER_RE.sub("", f"proceed{spaces}x") == f"proceed{spaces}x"
    assert open_threads._OR_RE.split(f"proceed{spaces}x", 1) == [f"proceed{spaces}x"]
    assert open_threads._POINTER_RE.sub("", f"proceed{spaces}with  that") == "proceed"
    assert open_threads._OR_RE.split(f"proceed with that{spaces}or leave it", 1) == ["proceed with that", "leave it"]
    assert open_threads._OR_RE.split("do that, or leave it, or not", 1) == ["do that", "leave it, or not"]


def test_an_options_pointing_tail_is_searched_past_its_last_code_span_from_each_run_of_spaces_start() -> None:
    pattern = said_left._POINTING_TAIL_RE.pattern  # no "[^`]*$" read to the end again from each "from this"
    assert pattern.startswith(r"(?<!\s)\s++") and not pattern.endswith("$")
    assert said_left._option_name("remove `omitempty` from these specific fields") == "remove `omitempty`"
    assert said_left._option_name("keep it for this case") == "keep it"
    assert said_left._option_name("add `x` to this `config.go` file") == "add `x` to this `config.go` file"
    code = "x" * LONG
    assert said_left._option_name(f"remove `{code}` from these fields") == f"remove `{code}`"


def test_a_heading_of_findings_settled_is_read_from_each_findings_word_up_to_the_next_once() -> None:
    # each "issues" read up to the next one or a "fixed", possessively: no character read from two of them
    assert r"\b(?:(?!\b(?:issues?|findings?|concerns?|feedback|fixed|" in said_left._SETTLED_FINDINGS_RE.pattern
    assert ").)*+" in said_left._SETTLED_FINDINGS_RE.pattern
    issues = "issues " * (LONG // 7)  # each "issues" a place the old pattern began again and read to the end
    assert not said_left._settled(f"## {issues}")
    assert said_left._settled(f"## {issues} fixed")
    assert said_left._settled("## ✅ All Critical Issues Fixed") and not said_left._settled("## Issues\nfixed")


def test_a_command_lines_separators_are_found_from_each_run_of_spaces_start_once() -> None:
    assert commands._SEPARATOR_RE.pattern.startswith(r"(?:(?<!\s)\s+)?")  # a run tried from its start only
    spaces = " " * LONG  # each space a place the old pattern began again, read the run and looked for a newline in it
    assert commands.steps(f"ls{spaces}-la{spaces}&& pytest -q ;\n  ruff check .") == [f"ls{spaces}-la", "pytest -q",
                                                                                     "ruff check ."]
    assert commands.steps(f"pytest{spaces}\n{spaces}ruff check .") == ["pytest", "ruff check ."]


def test_a_go_test_runs_lines_are_each_read_from_their_start_once() -> None:
    assert commands._GO_RAN_RE.pattern.startswith("^(?:")  # tried at a line's start only, each line read once
    found = commands.checks("go test ./...")
    empty = "?   \tpkg\t[no test files]\n" * (LONG // 24)  # a line each: the lookahead reads one line, not the rest
    assert commands.verdicts(found, empty, False) == []
    assert commands.verdicts(found, f"{empty}ok  \tpkg\t{'x' * LONG}", False) == [(found[0], True)]


def test_a_failed_commands_verdict_line_is_read_from_each_words_start_and_its_first_mark_once() -> None:
    assert facts._LONG_PATH_RE.pattern.startswith(r"(?<!\S)")  # a path tried from its word's start only
    assert facts._CODE_LEAD_RE.pattern.startswith("^(?>")  # the lead's first mark taken once
    minified, marks = "a" * LONG + "/b", "(" * LONG  # one word each: the old patterns began again at each character
    build = ToolCall("b", "Bash", {"command": "./build.sh"}, output=f"bundle {minified}\nError: bundle failed at "
                     "src/app/main.js", is_error=True)
    lead = ToolCall("l", "Bash", {"command": "./lint.sh"}, output=f"{marks}x: bundle failed", is_error=True)
    for call, verdict in ((build, "Error: bundle failed at"), (lead, "bundle failed")):
        session = Session(session_id="s", agent="codex", cwd="/tmp/widgets", events=[Event("tool", None, tool=call)])
        assert session_facts(session).failed == [(call.input["command"].removeprefix("./"), verdict)]


def _said(text: str) -> Event:
    return Event("assistant", None, text=text)


def _ran(command: str) -> Event:
    return Event("tool", None, tool=ToolCall("b", "Bash", {"command": command}))


def test_a_pr_number_is_read_past_its_spaces_once_and_a_merge_from_each_git_up_to_the_next() -> None:
    assert r"\s*+(?:#\s*+)?" in said_left._PR_NUMBER_RE.pattern  # the spaces around a "#" read once
    assert r"\bgit\b(?:(?!\b(?:git|merge)\b).)*+\bmerge\b" in said_left._MERGE_RAN_RE.pattern
    spaces, gits = " " * LONG, "git " * (LONG // 4)  # each a place the old patterns read the rest again from
    verdict = _said(f"PR{spaces}#  68 looks good to merge.")
    assert said_left.merge_left([verdict, _ran(gits)]) == [
        "Not merged: PR #68 (good to merge); merging is left to the user"]
    assert said_left.merge_left([verdict, _ran(f"{gits}merge feature")]) == []
    assert said_left.merge_left([verdict, _ran("git log\nmerge it")])  # a merge on another line than its git
    assert said_left.merge_left([_said(f"PR{spaces}x is good to merge.")]) == []  # no number: no PR named


def test_a_check_handed_over_reads_its_closing_now_from_its_run_of_spaces_start_once() -> None:
    assert r"(?:(?<!\s)\s++now)?" in said_left.CHECK_HANDED_RE.pattern
    spaces = " " * LONG  # each space a place the old pattern read the run again, looking for a "now" after it
    handed = said_left.CHECK_HANDED_RE.search(f"You can run it{spaces}x")
    assert handed is not None and handed.group(1) == f"run it{spaces}x"
    handed = said_left.CHECK_HANDED_RE.search(f"You can rebuild it{spaces}now.")
    assert handed is not None and handed.group(1) == "rebuild it"


def test_an_announced_choices_to_make_is_read_once_then_the_words_after_it() -> None:
    # the head is one anchored pattern with no tail; "to make" found once, then what it makes searched after it
    patterns = insights._ANNOUNCED_RE.pattern + insights._STEP_VERB_RE.pattern + insights._CHOICE_TAIL_RE.pattern
    assert ".*" not in patterns and "to make" not in patterns
    makes = "to make " * (LONG // 8)  # each "to make" a place the old pattern read the rest of the line again
    assert not insights._announced_choice(f"I'll use the helper {makes}")
    assert insights._announced_choice(f"I'll use the helper {makes}it testable")
    assert insights._announced_choice("Let me rewrite it to use ruby elements instead of CSS display properties")
    assert insights._announced_choice("Let me extract the parser to make it testable")
    assert not insights._announced_choice("Let me extract the parser to make it\ntestable")  # another line
    assert not insights._announced_choice("Let me help you use the helper instead")


def test_a_reports_present_change_and_a_runs_failed_tests_are_read_from_one_place() -> None:
    # anchored, each quantifier bounded or stopped by its line: a long word is read once
    assert deterministic._NOW_CHANGE_RE.pattern.startswith("^")
    word = "a" * LONG
    said = f"The parser now {word}s each line it is handed"  # a verb of 200,000 letters: tried once
    assert deterministic._now_change(said) == said
    assert deterministic._now_change(f"The parser now {word} each line it is handed") is None  # no verb
    assert deterministic._now_change(f"`{word}` now compares") is None  # a code span longer than a name
    assert commands.failed_tests(f"--- FAIL: {word}\nFAILED tests/a.py::{word}[x] - boom\n{word}") == (word,)


def test_a_clause_end_is_found_in_one_pass_for_every_cut() -> None:
    # each ", " a clause end whose words and open marks the old cuts counted again from the start: quadratic
    commas = "a, " * (LONG // 3)
    assert marks.clause_end(commas) == len(commas) - 2
    assert marks.clause_end(f"`{commas}") == -1  # all inside the code span the text opens
    assert marks.clause_end(f"x, {commas}", stop=4) == 1
    assert marks.clause_end('one two three, four "five, six', 3) == 13  # a clause end inside a quotation: none
    assert marks.clause_end("one two three, four five, six", 4) == 24 and marks.clause_end("one, two", 2) == -1
    word = "x" * (LONG // 30)
    assert said_left.clause(", ".join([word] * 30)) == ", ".join([word] * 23) + "…"
    assert directions.cut_at_clause(f"keep the docs short; {commas}", 30, ("; ",), 10) == "keep the docs short"
    assert deterministic._cut_headline(f"Look at the changes in this branch, I got this feedback, {commas}") == \
        "Look at the changes in this branch, I got this feedback"
    # a stub clause is looked for in the last words only: a line of 200,000 words is split once
    assert marks.stub_dropped("plan " * LONG + "that incorporates", 6) == " ".join(["plan"] * LONG)


def test_a_review_comments_fetch_is_read_from_each_gh_pr_view_up_to_the_next_once() -> None:
    # each "gh pr view" read up to the next "gh " or "--comments", possessively: no character read from two of them
    assert r"(?:(?!\bgh\s|--comments)[^|\n])*+--comments" in review_reply._FETCHED_RE.pattern
    views = "gh pr view " * (LONG // 11)
    assert review_reply._FETCHED_RE.search(views) is None
    assert review_reply._FETCHED_RE.search(f"{views}--comments")
    assert review_reply._FETCHED_RE.search("gh api repos/o/r/pulls/342/comments --paginate").group(1) == "342"
    assert review_reply._title("\n" * LONG + "Retry never backs off\n\nHigh Severity") == "Retry never backs off"


def test_a_findings_verdict_reads_a_long_body_once() -> None:
    body = ". " * (LONG // 2) + "Minor. Not blocking, worth " * 3 + "considering."
    assert said_left._verdict("x", body) == " (review: minor; not blocking, worth considering)"
    assert said_left._verdict("x (Low)", " " * LONG) == " (review: low)"


def test_a_check_foretold_to_fail_is_read_from_the_lines_start_only() -> None:
    assert insights._FORETOLD_RE.pattern.startswith("^")  # tried from one place, its lookahead and scan read once each
    text = "will " * (LONG // 5) + "will break linting."
    assert insights._FORETOLD_RE.search(text) is not None
    assert insights._FORETOLD_RE.search("if " + text) is None  # a case: not a forecast


def test_conflict_markers_are_read_at_each_line_start_once() -> None:
    # a run of "<" with no line break is tried from its start only: `^` holds the pattern to a line's first character
    marked = ToolCall("e", "Edit", {"file_path": "/tmp/widgets/a.go", "old_string": "<" * LONG + "\n<<<<<<< HEAD\n",
                                    "new_string": "b"})
    session = Session(session_id="s", agent="codex", cwd="/tmp/widgets", events=[Event("tool", None, tool=marked)])
    assert gist.resolution(session, ["a.go"]) == "Resolve conflict in `a.go`"
    assert gist.resolution(_edits("/tmp/widgets/a.go"), ["a.go"]) is None  # no marker edited out


def test_a_linters_directive_is_read_once_on_a_long_line() -> None:
    from eywa.core.sources.comments import SUPPRESSION_RE, added_comments

    assert "*+" in SUPPRESSION_RE.pattern  # its runs possessive: no run is read again from each of its places
    for run in ("a" * LONG, " " * LONG, "a-" * (LONG // 2)):  # a directive with no reason after it: no match, at once
        assert SUPPRESSION_RE.match(f"nolint:{run}") is None
    assert list(added_comments("", f"// nolint:x // {'why ' * (LONG // 4)}\n"))[0].startswith("\n\nnolint:x // why")


def test_a_check_said_not_run_is_read_from_the_start_of_its_sentence_and_its_spaces_once() -> None:
    # each pattern anchored at the sentence's start; a run of spaces read once where two stars met (possessive)
    patterns = (checks_said._NOT_RUN_RE, checks_said._ITEM_RE, checks_said._TO_VERIFY_RE, said_left._WOULD_NEXT_RE)
    assert all(pattern.pattern.startswith("^") for pattern in patterns)
    assert r"\s*+[:—–-]?\s*+" in checks_said._ITEM_RE.pattern
    spaces, words = " " * LONG, "tests " * (LONG // 6)  # each a place an unanchored pattern read the rest again from
    assert checks_said._NOT_RUN_RE.match(f"Tests{spaces}x") is None
    said = checks_said._NOT_RUN_RE.match(f"Tests{spaces}not run")
    assert said is not None and said.group("said") == "Tests"
    assert checks_said._NOT_RUN_RE.match(f"{words}not run") is None
    assert checks_said._ITEM_RE.match(f"Not run{spaces}x") is not None
    assert checks_said._ITEM_RE.match(f"Not run{spaces}none") is None
    assert checks_said.handed_check(f"To verify, run `pytest`{spaces}x") == f"`pytest`{spaces}x to verify"
    assert said_left.labelled_step(f"Next, I would{spaces}x") is None


def test_the_words_of_work_left_are_looked_for_a_bounded_stretch_after_each_cue() -> None:
    # an unbounded `[^.]*` after a cue read the rest of a sentence again from each place the cue stood
    for pattern in (open_threads.NEXT_STEP_RE, open_threads.LATER_RE, open_threads._SAID_DONE_RE):
        assert "[^.]*" not in pattern.pattern
    for cue in ("someone ", "TODO ", "once ", "don't merge "):  # each a cue whose words to follow never come
        run = cue * (LONG // len(cue))
        assert not any(p.search(run) for p in (open_threads.NEXT_STEP_RE, open_threads.LATER_RE,
                                                open_threads._SAID_DONE_RE))
    assert open_threads.NEXT_STEP_RE.search("Someone " + "x " * 20 + "should run the migration")
    assert open_threads.NEXT_STEP_RE.search("Someone " + "x " * (LONG // 2) + "should run it") is None
