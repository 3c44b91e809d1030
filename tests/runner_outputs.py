"""Real test runners' output, passed and failed, for tests/test_runner_outputs.py: for each runner a tiny project with
two tests, `adds` and `fails`, run once with both passing and once with `fails` failing; the combined stdout and
stderr of each run, colours off, is kept in tests/fixtures/runner-outputs/<runner>-passed.txt and -failed.txt, the
project's temporary folder and the timings masked (they change from run to run).

    npm install --prefix /tmp/rr/js jest vitest mocha ava bun deno
    python3 -m venv /tmp/rr/py && /tmp/rr/py/bin/pip install pytest
    apt-get install -y php-cli phpunit ruby ruby-rspec ruby-minitest golang-go elixir
    PATH=/tmp/rr/js/node_modules/.bin:/tmp/rr/py/bin:$PATH python -m tests.runner_outputs [runner ...]

A runner not on PATH is skipped (its fixtures stay); a rerun may order the two tests otherwise (cargo's and mix's run
them concurrently, in random order) or show a short timing or none. The fixtures were made by jest 30.5.2, vitest
4.1.12, mocha 12.0.3, ava 7.0.0, bun 1.4.5, deno 2.9.6 (node 20.20.2), pytest 9.2.0 and unittest (Python 3.11.7), cargo
1.95.0, go 1.19.8, rspec 3.12, PHPUnit 9.6.7, mix (Elixir 1.14.0), Minitest 5.15 (Ruby 3.1).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "runner-outputs"
BAD = "1 + 1 == 3"  # the `fails` test's comparison, `1 + 1 == 2` in the passed run

_JS = """const assert = require('node:assert');
describe('demo', () => {
  it('adds', () => { assert.ok(1 + 1 == 2); });
  it('fails', () => { assert.ok(1 + 1 == 3); });
});
"""
_PY = """def test_adds():
    assert 1 + 1 == 2


def test_fails():
    assert 1 + 1 == 3
"""

# runner -> (its command, its first word the program that must be on PATH; the project's files)
RUNNERS: dict[str, tuple[list[str], dict[str, str]]] = {
    "jest": (["jest", "--ci"], {"demo.test.js": _JS, "package.json": '{"name": "demo"}\n'}),
    "vitest": (["vitest", "run"], {
        "demo.test.js": "import { describe, it, expect } from 'vitest';\n"
                        + _JS.split("\n", 1)[1].replace("assert.ok(", "expect(").replace("); }", ").toBe(true); }"),
        "package.json": '{"name": "demo", "type": "module"}\n'}),
    "mocha": (["mocha"], {"test/demo.test.js": _JS}),
    "ava": (["ava"], {"test.js": "const test = require('ava');\n"
                      "test('adds', t => { t.true(1 + 1 == 2); });\n"
                      "test('fails', t => { t.true(1 + 1 == 3); });\n",
                      "package.json": '{"name": "demo"}\n'}),
    "bun": (["bun", "test"], {"demo.test.js": "import { describe, it, expect } from 'bun:test';\n"
                              + _JS.split("\n", 1)[1].replace("assert.ok(", "expect(")
                              .replace("); }", ").toBe(true); }")}),
    "deno": (["deno", "test"], {"demo_test.ts": "import assert from 'node:assert';\n"
                                "Deno.test('adds', () => { assert(1 + 1 == 2); });\n"
                                "Deno.test('fails', () => { assert(1 + 1 == 3); });\n"}),
    "pytest": (["pytest", "-p", "no:cacheprovider"], {"test_demo.py": _PY}),
    "unittest": ([sys.executable, "-m", "unittest"], {
        "test_demo.py": "import unittest\n\n\nclass DemoTest(unittest.TestCase):\n"
                        "    def test_adds(self):\n        self.assertTrue(1 + 1 == 2)\n\n"
                        "    def test_fails(self):\n        self.assertTrue(1 + 1 == 3)\n"}),
    "cargo": (["cargo", "test", "--color", "never"], {
        "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert!(1 + 1 == 2); }\n\n"
                      "    #[test]\n    fn fails() { assert!(1 + 1 == 3); }\n}\n"}),
    "go": (["go", "test", "./..."], {
        "go.mod": "module demo\n\ngo 1.19\n",
        "demo_test.go": 'package demo\n\nimport "testing"\n\n'
                        'func TestAdds(t *testing.T) {\n\tif 1+1 != 2 {\n\t\tt.Fatal("false")\n\t}\n}\n\n'
                        'func TestFails(t *testing.T) {\n\tif !(1 + 1 == 3) {\n\t\tt.Fatal("false")\n\t}\n}\n'}),
    "rspec": (["rspec", "--no-color"], {
        "spec/demo_spec.rb": "RSpec.describe 'demo' do\n  it('adds') { expect(1 + 1 == 2).to be(true) }\n"
                             "  it('fails') { expect(1 + 1 == 3).to be(true) }\nend\n"}),
    "phpunit": (["phpunit", "--colors=never", "tests"], {
        "tests/DemoTest.php": "<?php\nuse PHPUnit\\Framework\\TestCase;\n\nfinal class DemoTest extends TestCase\n{\n"
                              "    public function testAdds(): void { $this->assertTrue(1 + 1 == 2); }\n\n"
                              "    public function testFails(): void { $this->assertTrue(1 + 1 == 3); }\n}\n"}),
    # Minitest, whose report `rails test` prints too
    "minitest": (["ruby", "test/demo_test.rb"], {
        "test/demo_test.rb": 'require "minitest/autorun"\n\nclass DemoTest < Minitest::Test\n'
                             "  def test_adds\n    assert(1 + 1 == 2)\n  end\n\n"
                             "  def test_fails\n    assert(1 + 1 == 3)\n  end\nend\n"}),
    "mix": (["mix", "test"], {
        "mix.exs": "defmodule Demo.MixProject do\n  use Mix.Project\n\n"
                   '  def project, do: [app: :demo, version: "0.1.0"]\nend\n',
        "test/test_helper.exs": "ExUnit.start()\n",
        "test/demo_test.exs": "defmodule DemoTest do\n  use ExUnit.Case\n\n"
                              '  test "adds", do: assert(1 + 1 == 2)\n  test "fails", do: assert(1 + 1 == 3)\nend\n'}),
}

# timings, a thread's id and a random seed change from run to run: their digits are masked to 0
_TIMING_RE = re.compile(r"\d+(?:\.\d+)?(?: ?(?:ms|µs|s|sec|seconds))\b|\b\d\d:\d\d[:.]\d+\b|"
                        r"(?<=^thread '.{12}' \()\d+|(?<=^Randomized with seed )\d+|(?<=^Run options: --seed )\d+|"
                        r"\d+(?:\.\d+)? (?:runs|assertions)/s\b", re.MULTILINE)
_CARGO_HASH_RE = re.compile(r"(deps/demo-)[0-9a-f]{16}")  # the test binary's name


def run(runner: str, passing: bool) -> str:
    """The combined output of the runner's run on its project, the `fails` test passing or not."""
    command, files = RUNNERS[runner]
    with tempfile.TemporaryDirectory(prefix="runner-") as folder:
        project = Path(folder).resolve()
        for name, text in files.items():
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_text(text.replace(BAD, "1 + 1 == 2") if passing else text)
        # ava's test file requires `ava` from where the runner is installed; a backtrace is not cargo's default
        modules = str(Path(shutil.which(command[0]) or "").parent.parent)
        env = {**{k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}, "NO_COLOR": "1", "CI": "1",
               "MIX_ENV": "test", "TERM": "dumb", "GOFLAGS": "-count=1", "NODE_PATH": modules}
        result = subprocess.run(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=600)
        output = result.stdout.replace(str(project), "/tmp/demo")
    output = _CARGO_HASH_RE.sub(r"\g<1>0123456789abcdef", output)
    return _TIMING_RE.sub(lambda m: re.sub(r"\d+", "0", m.group()), output)


def main(names: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for runner in names or RUNNERS:
        program = RUNNERS[runner][0][0]
        if shutil.which(program) is None:
            print(f"{runner}: {program} not on PATH, skipped")
            continue
        for passing in (True, False):
            path = FIXTURES / f"{runner}-{'passed' if passing else 'failed'}.txt"
            path.write_text(run(runner, passing))
            print(f"{runner}: wrote {path.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
