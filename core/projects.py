"""Project names from a session's working directory: the git root when it exists on this machine,
otherwise the folder itself with worktree and generic sub-folders peeled off. Never a user name.

A repository is one project whatever agent worked in it and whatever its clone's folder is called: where
the session names its git remote (Codex records it) or the folder still exists with one, the remote's
repository name is the project.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path, PurePosixPath

_WORKTREE_MARKERS = ("/.worktrees/", "/.claude/worktrees/", "/.git/worktrees/")
_GENERIC_DIRS = {
    "src", "test", "tests", "cmd", "lib", "app", "docs", "scripts", "internal", "pkg", "build", "dist",
    "bin", "e2e", "spec", "source", "code", "workspace", "work", "projects", "repos", "repositories",
    "dev", "devenv", "git", "github",
}
_HOME_PARENTS = {"Users", "home"}


def _git_root(cwd: str) -> str | None:
    try:
        path = Path(cwd)
        for candidate in (path, *path.parents):
            if (candidate / ".git").exists():
                return str(candidate)
    except OSError:
        return None
    return None


_REMOTE_RE = re.compile(r'^\[remote "([^"]+)"\]\s*$|^\s*url\s*=\s*(\S+)\s*$', re.MULTILINE)


def _git_dir(root: Path) -> Path:
    """The folder holding the repository's config: `.git`, or for a worktree (`.git` a file) its main one."""
    marker = root / ".git"
    if marker.is_file():
        text = marker.read_text(encoding="utf-8", errors="replace")
        if text.startswith("gitdir:"):
            gitdir = (root / text[len("gitdir:"):].strip()).resolve()
            common = gitdir / "commondir"
            return (gitdir / common.read_text().strip()).resolve() if common.is_file() else gitdir
    return marker


def _remote(root: str) -> str:
    """The URL of the repository's `origin` remote (else its first), from its config; "" when none."""
    try:
        text = (_git_dir(Path(root)) / "config").read_text(encoding="utf-8", errors="replace")[:100_000]
    except OSError:
        return ""
    remotes: dict[str, str] = {}
    current = None
    for name, url in _REMOTE_RE.findall(text):
        if name:
            current = name
        elif current is not None:
            remotes.setdefault(current, url)
    return remotes.get("origin") or next(iter(remotes.values()), "")


def repository_name(url: str) -> str:
    """`https://github.com/acme/widgets.git`, `git@host:acme/widgets` -> "widgets"; "" when it names none."""
    tail = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return normalize_project(tail.removesuffix(".git"))


def projects_of(cwd: str, repository: str = "") -> tuple[str, ...]:
    """A session's project: its repository's name (the remote it recorded, or the one of its folder's git
    root), else `projects_from_cwd`."""
    name = repository_name(repository) if repository else ""
    if not name and cwd.startswith("/"):
        root = _git_root(cwd)
        name = repository_name(_remote(root)) if root else ""
    return (name,) if name else projects_from_cwd(cwd)


def normalize_project(name: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")


@lru_cache(maxsize=4096)
def projects_from_cwd(cwd: str) -> tuple[str, ...]:
    """`/Users/alex/workspace/cli/.worktrees/2` -> ("cli",); `/Users/alex` -> ()."""
    if not cwd:
        return ()
    root = _git_root(cwd) if cwd.startswith("/") else None
    path = root or cwd
    for marker in _WORKTREE_MARKERS:
        if marker in path:
            path = path.split(marker, 1)[0]
    parts = [p for p in PurePosixPath(path).parts if p not in ("/", "")]
    # /Users/<name> and /home/<name> are a person, not a project.
    while parts and root is None and parts[-1].lower() in _GENERIC_DIRS and len(parts) > 1:
        parts.pop()
    if not parts or (len(parts) <= 2 and parts[0] in _HOME_PARENTS):
        return ()
    name = normalize_project(parts[-1])
    return (name,) if name else ()
