"""Project names from a session's working directory, by repository where it can be told: the git remote's
name (the one the agent recorded, as Codex does, else the one of the folder's git root), else the git
root's folder, else the folder itself with worktree and generic sub-folders peeled off. Never a user name.
So `~/src/cli` on a laptop and `/srv/work/cli-main` on a server, both clones of `github.com/acme/cli`, are
one project whatever agent worked there; `projects.aliases` names the rest.

A session that ran on another machine (a spoke) is resolved from the map that machine's `eywa push`
made there (core/machines/push.py), since the hub cannot see that machine's folders.
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path, PurePosixPath

_WORKTREE_MARKERS = ("/.worktrees/", "/.claude/worktrees/", "/.git/worktrees/")
_GENERIC_DIRS = {
    "src", "test", "tests", "cmd", "lib", "app", "docs", "scripts", "internal", "pkg", "build", "dist",
    "bin", "e2e", "spec", "source", "code", "workspace", "work", "projects", "repos", "repositories",
    "dev", "devenv", "git", "github",
}
_HOME_PARENTS = {"Users", "home"}


# A working directory's git repository: its root folder and its remote's URL ("" without one). A namedtuple:
# the hooks import this module, and a dataclass, msgspec or typing would cost them milliseconds.
Repository = namedtuple("Repository", ["root", "remote"], defaults=[""])


def _git_root(cwd: str) -> Path | None:
    try:
        path = Path(cwd)
        for candidate in (path, *path.parents):
            if (candidate / ".git").exists():
                return candidate
    except OSError:
        return None
    return None


def _git_config(root: Path) -> Path | None:
    """The config file of the repository at `root`; a worktree's `.git` file names its common folder."""
    dot_git = root / ".git"
    try:
        if dot_git.is_dir():
            return dot_git / "config"
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = (root / text.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
        gitdir = (gitdir / common).resolve()
    except OSError:
        pass
    return gitdir / "config"


def _remote_url(config: Path | None) -> str:
    """origin's URL, else the first remote's, from a git config file; "" when it has none."""
    if config is None:
        return ""
    import configparser  # only for a folder inside a repository

    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(config, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return ""
    remotes = [section for section in parser.sections() if section.startswith('remote "')]
    remotes.sort(key=lambda section: section != 'remote "origin"')
    for section in remotes:
        url = parser.get(section, "url", fallback="").strip()
        if url:
            return url
    return ""


@lru_cache(maxsize=4096)
def local_repository(cwd: str) -> Repository | None:
    """The repository of `cwd` as this machine sees it; None when `cwd` is not inside one here."""
    if not cwd.startswith("/"):
        return None
    root = _git_root(cwd)
    if root is None:
        return None
    return Repository(str(root), _remote_url(_git_config(root)))


def normalize_project(name: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")


def repository_name(url: str) -> str:
    """`https://github.com/acme/widgets.git`, `git@host:acme/widgets` -> "widgets"; "" when it names none."""
    return normalize_project(re.split(r"[/:\\]", url.rstrip("/"))[-1].removesuffix(".git"))


def repository_project(repository: Repository) -> str:
    """`git@github.com:acme/cli.git`, `https://github.com/acme/cli` -> "cli"; no remote: the root's folder."""
    name = repository_name(repository.remote) if repository.remote else ""
    if name:
        return name
    root = repository.root
    for marker in _WORKTREE_MARKERS:
        if marker in root:
            root = root.split(marker, 1)[0]
    parts = [p for p in PurePosixPath(root).parts if p not in ("/", "")]
    if not parts or (len(parts) <= 2 and parts[0] in _HOME_PARENTS):
        return ""  # a home folder kept in git (dotfiles) is a person, not a project
    return normalize_project(parts[-1])


def _folder_project(cwd: str) -> tuple[str, ...]:
    """`/Users/alex/workspace/cli/.worktrees/2` -> ("cli",); `/Users/alex` -> ()."""
    path = cwd
    for marker in _WORKTREE_MARKERS:
        if marker in path:
            path = path.split(marker, 1)[0]
    parts = [p for p in PurePosixPath(path).parts if p not in ("/", "")]
    while parts and parts[-1].lower() in _GENERIC_DIRS and len(parts) > 1:
        parts.pop()
    # /Users/<name> and /home/<name> are a person, not a project.
    if not parts or (len(parts) <= 2 and parts[0] in _HOME_PARENTS):
        return ()
    name = normalize_project(parts[-1])
    return (name,) if name else ()


class ProjectNames:
    """Names a working directory's project: by its repository (found here, or in a spoke's map), then the
    aliases (a project name, or an absolute folder and everything under it, -> the name to use)."""

    def __init__(self, aliases: Mapping[str, str] | None = None,
                 repositories: Mapping[str, Repository] | None = None) -> None:
        aliases = aliases or {}
        self._folders = sorted(((key.rstrip("/") or "/", normalize_project(value)) for key, value in aliases.items()
                                if key.startswith("/")), key=lambda item: -len(item[0]))
        self._names = {normalize_project(key): normalize_project(value) for key, value in aliases.items()
                       if not key.startswith("/")}
        self._repositories = repositories  # None: look on this machine

    def of(self, cwd: str, remote: str = "") -> tuple[str, ...]:
        """`remote`: the git remote the session itself recorded (Codex's session_meta), if any."""
        if not cwd and not remote:
            return ()
        for folder, name in self._folders:
            if cwd == folder or cwd.startswith(folder + "/"):
                return (name,) if name else ()
        repository = Repository(cwd, remote) if remote and repository_name(remote) else (
            self._repositories.get(cwd) if self._repositories is not None else local_repository(cwd))
        names = (repository_project(repository),) if repository is not None else _folder_project(cwd) if cwd else ()
        return tuple(dict.fromkeys(self._names.get(name, name) for name in names if name))


@lru_cache(maxsize=4096)
def projects_from_cwd(cwd: str) -> tuple[str, ...]:
    """The project of a working directory on this machine, without aliases."""
    return ProjectNames().of(cwd)
