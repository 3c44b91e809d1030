"""Project names from a session's working directory: the git root when it exists on this machine,
otherwise the folder itself with worktree and generic sub-folders peeled off. Never a user name.
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
