"""Finds the whitebox command."""

import os
import shutil


class WhiteboxError(Exception):
    """A problem whitebox reports (a module it cannot read, a failed start)."""


def find_binary():
    """The whitebox command: $WHITEBOX_BIN, else `whitebox` on PATH."""
    path = os.environ.get("WHITEBOX_BIN")
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise WhiteboxError("WHITEBOX_BIN=%s is not an executable file" % path)
        return path
    path = shutil.which("whitebox")
    if path:
        return path
    raise WhiteboxError("the whitebox command was not found: build it from the repository with "
                        "`go build -o bin/whitebox ./cmd/whitebox` and put it on PATH, or set WHITEBOX_BIN to it")
