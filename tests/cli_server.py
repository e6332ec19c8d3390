"""The process :mod:`cli_runner` forks ``memhost`` commands from (run as a script, not imported).

It imports memhost's command-line modules once, then reads one request per line on the
protocol descriptor it is given: ``{"args", "env", "cwd", "stdin", "stdout", "stderr"}``. For
each it forks a child, answers ``{"pid": …}``, waits for the child and answers
``{"status": …}`` (the exit code; minus the signal number for a killed child).

The child becomes the command as the console script would run it: it takes the request's
environment, working folder and ``sys.argv``, puts the request's files on descriptors 0, 1 and
2, runs ``memhost.cli.main`` and leaves through the interpreter's own exit, so non-daemon threads
are joined, ``atexit`` handlers run and the streams are flushed, as at the end of any process.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys

# What the console script's sys.path starts with (its own folder), not this file's folder: a
# command must not import the suite's modules, nor anything in the folder it runs in.
sys.path[0] = os.path.dirname(sys.executable)

# Modules a command imports lazily, imported here once. Never the secret detector's engine:
# its Go runtime does not survive a fork, so each child loads it, as each process would.
PRELOAD = ("memhost.config", "memhost.manager", "memhost.builtin_providers.store",
           "memhost.builtin_providers.tool", "memhost.security.scorer", "memhost.security.redact",
           "memhost.discovery.scan", "memhost.review.approval", "memhost.schema", "pydantic")


def preload() -> None:
    import memhost.cli

    for module in PRELOAD:
        importlib.import_module(module)
    for info in pkgutil.iter_modules(memhost.cli.__path__, "memhost.cli."):
        importlib.import_module(info.name)


def become_command(request: dict) -> None:
    """In the child: the command's process state, then the command. Never returns."""
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    for fd, path, flags in ((0, request["stdin"], os.O_RDONLY),
                            (1, request["stdout"], os.O_WRONLY),
                            (2, request["stderr"], os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    if request["env"].get("PYTHONUNBUFFERED"):
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
    sys.argv = [request["script"], *request["args"]]
    from memhost.cli import main

    sys.exit(main())  # up through serve() to the interpreter's exit


def serve(requests: int, answers: int) -> None:
    reader = os.fdopen(requests, "r", encoding="utf-8")
    writer = os.fdopen(answers, "w", encoding="utf-8")
    for line in reader:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            reader.close()
            writer.close()
            become_command(request)
        writer.write(json.dumps({"pid": pid}) + "\n")
        writer.flush()
        _, status = os.waitpid(pid, 0)
        writer.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")
        writer.flush()


if __name__ == "__main__":
    preload()
    serve(int(sys.argv[1]), int(sys.argv[2]))
