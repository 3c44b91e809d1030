"""What every command line of Eywa shares: colour only on a terminal, `--version`, shell completion.

Nothing here is imported by a command unless it uses it, so `eywa get` and the hooks start as light as before.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from eywa.core.errors import EywaError

_STYLES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
SHELLS = ("bash", "zsh", "fish")


def colour_on(stream: TextIO) -> bool:
    """Colour for a terminal only: never when piped or redirected, nor with NO_COLOR set (no-color.org), nor on
    a terminal that says it is dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    """`text` in `style` (bold, dim, red, green, yellow, cyan) when `stream` (stdout by default) gets colour."""
    if not text or not colour_on(stream or sys.stdout):
        return text
    return f"\033[{_STYLES[style]}m{text}\033[0m"


def fail(program: str, message: str) -> int:
    """One error line on stderr, `program:` in red on a terminal; exit code 1."""
    print(f"{paint(program + ':', 'red', sys.stderr)} {message}", file=sys.stderr)
    return 1


def flushed(command: Callable[[], int]) -> int:
    """`command`'s exit code once its output is flushed; 0 when the reader of the output (head, less) has gone:
    nothing went wrong here."""
    try:
        code = command()
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush raises nothing
        code = 0
    return code


def reported(program: str, command: Callable[[], int], data_dir: Path) -> int:
    """`command`'s exit code, or 1 with one line (`fail`) for what it raised that a person can act on."""
    try:
        return command()
    except (EywaError, FileNotFoundError) as exc:
        return fail(program, str(exc))
    except BrokenPipeError:
        raise
    except OSError as exc:
        return fail(program, _unexpected(exc, data_dir))
    except KeyboardInterrupt:
        return fail(program, "interrupted; what was done is kept, run the command again to finish")


def _unexpected(exc: OSError, data_dir: Path) -> str:
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; check the data directory {data_dir}"
    return f"{exc.strerror or exc}: {exc.filename or ''} (data directory {data_dir})"


class VersionAction(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked (importlib.metadata is not free)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("eywa")
        except PackageNotFoundError:  # run from a folder that was never installed
            number = "unknown (not installed)"
        print(f"{parser.prog} {number}")
        parser.exit()


def complete(parser: argparse.ArgumentParser) -> None:
    """Answer a shell's completion request and exit, when the shell asked (argcomplete sets _ARGCOMPLETE);
    otherwise return at once without importing anything."""
    if "_ARGCOMPLETE" in os.environ:
        import argcomplete

        argcomplete.autocomplete(parser)


def completion_script(program: str, shell: str) -> str:
    """The script that teaches `shell` to complete `program` (it asks the program itself, through argcomplete)."""
    import argcomplete

    return argcomplete.shellcode([program], shell=shell)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples in an epilog keep their lines; defaults are said in each help text. The width is the terminal's
    as `shutil.get_terminal_size` finds it, without importing shutil (bench/RESULTS.md)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("width") is None and len(args) < 4:  # argparse's own default asks shutil
            kwargs["width"] = _columns() - 2
        super().__init__(*args, **kwargs)


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def examples(*lines: str) -> str:
    """An epilog of example command lines, one a line."""
    return f"example{'s' if len(lines) > 1 else ''}:\n" + "\n".join(f"  {line}" for line in lines)


def program(prog: str, description: str, *example_lines: str) -> argparse.ArgumentParser:
    """A command's top-level parser with what both of Eywa's commands share: examples, --version, --config."""
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=examples(*example_lines),
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="YAML config file (default: $EYWA_CONFIG, else ~/.eywa/config.yaml)")
    return parser
