"""What a stdio server is started with: a small environment, not the playground's.

The playground's own environment holds its secrets (PLAYGROUND_SECRET_KEY, DATABASE_URL, a
password); a server inherits only the variables the official SDKs pass (their
`get_default_environment`), plus the ones configured for it. Inheriting everything is an
explicit per-server choice. The command is found on the playground's own PATH (absolute
entries only), never on a PATH the server's settings supply.
"""

from __future__ import annotations

import os
import shutil
import sys

# As the official SDKs: enough for a shell, a home directory and finding programs.
INHERITED = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)


def default_environment() -> dict[str, str]:
    """The inherited variables this process has (values starting "()", shell functions, are skipped)."""
    return {
        name: value for name in INHERITED if (value := os.environ.get(name)) is not None and not value.startswith("()")
    }


def server_environment(configured: dict[str, str], inherit: bool = False) -> dict[str, str]:
    """A stdio server's environment: the default one (or, with `inherit`, all of this process's),
    then the server's configured variables."""
    base = dict(os.environ) if inherit else default_environment()
    return base | configured


def resolve_command(command: str) -> str:
    """The program `command` names, found on this process's PATH (absolute entries only: a
    relative one would make the working directory choose). A path is kept as given; a name not
    found is kept too (starting it fails with a clear error)."""
    if os.sep in command or (os.altsep and os.altsep in command):
        return command
    path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p))
    return shutil.which(command, path=path) or command
