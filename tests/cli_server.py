"""The process :mod:`cli_runner` forks ``memhost`` commands from (run as a script, not imported).

It imports memhost's command-line modules once, then reads one request per line on the
protocol descriptor it is given: ``{"args", "env", "cwd", "stdin", "stdout", "stderr"}``. For
each it forks a child, answers ``{"pid": …}``, waits for the child and answers
``{"status": …}`` (the exit code; minus the signal number for a killed child). A request with
``"handoff": SOCKET`` instead of the environment, folder and files is for a client that starts
its server itself (:func:`cli_runner.stdio_command`): the server answers ``{"listening": true}``
once it listens at SOCKET, takes the streams, environment and folder of the process that
connects there (:mod:`stdio_handoff`), and tells that process the pid and status too.

The child becomes the command as the console script would run it: it takes the request's
environment, working folder and ``sys.argv``, puts the request's files on descriptors 0, 1 and
2, runs ``memhost.cli.main`` (or, for ``python -c CODE``, the code) and leaves as the
interpreter's exit would (:func:`leave`): the non-daemon threads are joined, the ``atexit``
handlers run and the streams are flushed, as at the end of any process.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import socket
import sys
from typing import Any

# What the console script's sys.path starts with (its own folder), not this file's folder: a
# command must not import the suite's modules, nor anything in the folder it runs in.
sys.path[0] = os.path.dirname(sys.executable)

# Modules a command imports lazily, imported here once. Never the secret detector's engine
# library: its Go runtime does not survive a fork, so each child loads it, as each process would
# (the betterleaks package itself only binds to the library on its first scan).
PRELOAD = ("memhost.config", "memhost.manager", "memhost.builtin_providers.store",
           "memhost.builtin_providers.tool", "memhost.security.scorer", "memhost.security.redact",
           "memhost.discovery.scan", "memhost.discovery.pathload", "memhost.discovery.requirements",
           "memhost.review.approval", "memhost.review.curator", "memhost.schema",
           "memhost.schema.settings", "memhost.schema.envstore", "memhost.recall.provider",
           "memhost.recall.tools", "memhost.authoring.checks", "memhost.authoring.availability",
           "betterleaks", "pydantic", "sqlite3", "asyncio", "importlib_metadata",
           # The invisible-character tables (read for any line that is not ASCII: doctor's and
           # the listings' dashes) and the lock library (the outbox, doctor's lock probes).
           "regex", "filelock")
# The postgres provider's driver, where the suite has it: importing it opens nothing.
OPTIONAL = ("psycopg", "psycopg_pool")
# What the server commands import when they start (the MCP SDK alone is ~0.4 s of CPU): imported
# here before the first such command is forked, so the later ones find it imported, as every
# command finds PRELOAD. Not before: a worker that never starts a server does not pay for them.
SERVER_MODULES = {
    "mcp": ("memhost.mcp.server", "memhost.mcp.serving"),
    "settings": ("memhost.web.server", "memhost.web.app", "memhost.web.slowclients", "uvicorn"),
}


def preload() -> None:
    import memhost.cli
    from memhost.discovery.scan import bundled_root, load_path

    for module in PRELOAD:
        importlib.import_module(module)
    for module in OPTIONAL:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    for info in pkgutil.iter_modules(memhost.cli.__path__, "memhost.cli."):
        importlib.import_module(info.name)
    # The bundled providers' code, which every command that opens a manager loads by path;
    # a child finds it under the same package name and does not import it again.
    for folder in sorted(bundled_root().iterdir()):
        if (folder / "plugin.toml").is_file():
            try:
                load_path(folder)
            except Exception:  # a provider that cannot load here fails in the child, as it would
                pass
    # What most commands build on first use, built once here: the risk scorer's tables and
    # its anchor index, which every command that reads a memory file needs for its snapshot.
    # And the secret rules' patterns, which each command that prints or reads a line holding a
    # credential word compiles on first use (~3 ms for all of them).
    from memhost.security import scorer, secret_rules

    scorer.assess("Prefers tea; the deploy script lives in ~/bin/deploy.sh")
    from memhost.security.text import strip_invisible

    strip_invisible("fullness: 0% \u2014 0/2,200 chars")  # the pattern, compiled once
    for rule in secret_rules.RULES:
        rule.pattern.compiled  # noqa: B018  # compiled and kept by the pattern
    _check_no_engine()


def _check_no_engine() -> None:
    if os.path.exists("/proc/self/maps"):  # Linux: what this process has mapped
        with open("/proc/self/maps", encoding="utf-8") as maps:
            if "libbetterleaks" in maps.read():
                raise RuntimeError("the secret detector's engine library was loaded before forking")


def import_for(args: list[str]) -> None:
    """Import what the server command ``args`` runs will import, once (see SERVER_MODULES)."""
    from memhost.cli import command_named

    modules = SERVER_MODULES.pop(command_named(args) or "", ())
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:  # an extra that is not installed: the command says so itself
            pass
    if modules:
        _check_no_engine()


def become_command(request: dict, streams: list[int] | None = None) -> None:
    """In the child: the command's process state, then the command. Never returns.
    ``streams``: descriptors for 0, 1 and 2, where the request names no files for them."""
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    if streams is None:
        streams = [os.open(request["stdin"], os.O_RDONLY), os.open(request["stdout"], os.O_WRONLY),
                   os.open(request["stderr"], os.O_WRONLY)]
    for fd, opened in enumerate(streams):
        if opened != fd:
            os.dup2(opened, fd)
    for opened in set(streams) - {0, 1, 2}:
        os.close(opened)
    if request["env"].get("PYTHONUNBUFFERED"):
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
    from memhost.builtin_providers import crashpoints

    crashpoints.arm(os.environ.get("MEMHOST_CRASH_AT", ""))  # read at import, in the server
    args = request["args"]
    try:
        if request["script"] == sys.executable and args[:1] == ["-c"]:
            status = run_code(args[1], args[2:])
        else:
            sys.argv = [request["script"], *args]
            from memhost.cli import main

            status = main()
    except SystemExit as exc:
        status = exc.code
    # Anything else (a crash, an interrupt) goes up through serve() to the interpreter's own
    # exit, which prints it and sets the exit code as for any process.
    leave(status)


def run_code(code: str, args: list[str]) -> None:
    """``python -c code *args``: the code runs as ``__main__`` with ``sys.argv`` and the first
    entry of ``sys.path`` as that command line gives them."""
    sys.argv = ["-c", *args]
    sys.path[0] = ""
    exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})


def leave(status: object) -> None:
    """End the child the way the interpreter's exit ends a process, in what a command can see:
    ``sys.exit``'s status becomes the exit code, the non-daemon threads are joined, then the
    ``atexit`` handlers run (``logging.shutdown``, ``weakref.finalize``), then the standard
    streams are flushed. What it skips is the teardown of every module the child inherited
    from this server: that writes to almost every object, so it copies almost every page the
    fork shared (about 90 ms a command, more than most commands take), and a process started
    from the script tears down only what it imported itself."""
    import atexit
    import threading

    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:  # sys.exit("message"): printed, exit code 1
        print(status, file=sys.stderr)
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_Finalize calls first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # the interpreter's code when flushing stdout fails at exit
    os._exit(code & 0xFF)


def answer(writer: Any, message: dict) -> None:
    writer.write(json.dumps(message) + "\n")
    writer.flush()


def handed_streams(path: str, writer: Any) -> tuple[socket.socket | None, list[int], dict]:
    """Listen at ``path`` (answering ``{"listening": true}`` once it can be connected to) for
    the process a client started (:mod:`stdio_handoff`) to hand over its standard streams,
    environment and working folder: (its connection, the three descriptors, what it said).
    No connection where it brought no descriptors (the runner connects itself when the client
    never started that process)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(1)
        answer(writer, {"listening": True})
        conn, _ = listener.accept()
    os.unlink(path)
    try:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        while data and not data.endswith(b"\n"):
            more = conn.recv(1 << 16)
            if not more:
                break
            data += more
    except OSError:
        data, fds = b"", []
    if len(fds) != 3 or not data:
        for fd in fds:
            os.close(fd)
        conn.close()
        return None, [], {}
    return conn, fds, json.loads(data)


def serve(requests: int, answers: int) -> None:
    reader = os.fdopen(requests, "r", encoding="utf-8")
    writer = os.fdopen(answers, "w", encoding="utf-8")
    for line in reader:
        request = json.loads(line)
        import_for(request["args"])
        conn, streams = None, None
        if "handoff" in request:
            conn, streams, said = handed_streams(request["handoff"], writer)
            if conn is None:
                answer(writer, {"pid": None})
                answer(writer, {"status": None})
                continue
            request.update(env=said["env"], cwd=said["cwd"])
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            reader.close()
            writer.close()
            if conn is not None:
                conn.close()
            become_command(request, streams)
        for fd in streams or ():
            os.close(fd)
        answer(writer, {"pid": pid})
        tell(conn, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        ended = {"status": os.waitstatus_to_exitcode(status)}
        tell(conn, ended)
        answer(writer, ended)
        if conn is not None:
            conn.close()


def tell(conn: socket.socket | None, message: dict) -> None:
    """Send ``message`` to the process that handed its streams over, if it is still there."""
    if conn is not None:
        try:
            conn.sendall((json.dumps(message) + "\n").encode("utf-8"))
        except OSError:
            pass


if __name__ == "__main__":
    preload()
    serve(int(sys.argv[1]), int(sys.argv[2]))
