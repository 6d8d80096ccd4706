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
    raise WhiteboxError("the whitebox command was not found (WHITEBOX_BIN is not set and no `whitebox` is on PATH): "
                        "in the repository, `go install ./cmd/whitebox` (into $(go env GOPATH)/bin, which must be on "
                        "PATH), or `go build -o /path/to/whitebox ./cmd/whitebox` and set WHITEBOX_BIN=/path/to/whitebox")
