# Every target bootstraps what it needs: a virtualenv in .venv with memhost installed (editable)
# and its test extras. The stamp is rebuilt when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.memhost-installed
# The suite runs on every core (pytest-xdist), two workers per core: many tests spend much of
# their time waiting on a child process, a socket, a disk sync or a timeout, and one worker per
# core left the cores idle through those waits. Tests that share one costly fixture carry an
# xdist_group mark and stay on one worker. XDIST= runs it in one process.
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(2 * (os.cpu_count() or 1))')
XDIST  ?= -n $(WORKERS) --dist loadgroup

.PHONY: demo test bench soak clean

# The install goes through uv when it can be had (pip install uv): it resolves and installs the
# same packages from the same index about four times faster than pip, which is a tenth of a
# fresh clone's `make test`. Where uv can't be installed or fails, pip does the same install.
# pip stays in the venv either way, upgraded: the packaging tests drive it.
# Bytecode is compiled at install, as pip does and uv does when asked (--compile-bytecode), for
# the packages and for memhost's own folders (the editable install leaves them where they are):
# otherwise the suite's first processes, starting together, each compile the same modules. A
# fresh clone's first run took ~140 s of pytest (~122 s for a second run); compiled here, which
# adds ~4 s, it takes ~130 s.
# The venv is made without pip, and uv is put in it by the pip of $(PYTHON) (`pip --python`):
# seeding a venv with its own pip took ~3 s of a fresh clone's bootstrap, and uv installs pip
# into it anyway. Where that pip cannot (older than 22.3), the venv gets its own pip first.
$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

$(STAMP): pyproject.toml setup.py | $(BIN)/python
	@if { $(PYTHON) -m pip --python $(BIN)/python install -qq uv 2>/dev/null || \
	      { $(BIN)/python -m ensurepip >/dev/null && $(BIN)/python -m pip install -qq uv; }; } && \
	    $(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python \
	        --upgrade pip -e '.[test]'; \
	then :; else \
	    echo "make: installing with pip instead of uv"; \
	    $(BIN)/python -m pip --version >/dev/null 2>&1 || $(BIN)/python -m ensurepip >/dev/null; \
	    $(BIN)/python -m pip install --quiet --upgrade pip && \
	    $(BIN)/python -m pip install --quiet -e '.[test]'; \
	fi
	@$(BIN)/python -m compileall -q -j 0 __init__.py core schema builtin_providers plugins >/dev/null
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/memhost demo

# Bytecode is cached for the run even where the environment says not to (PYTHONDONTWRITEBYTECODE):
# otherwise each of the suite's processes (the workers, hundreds of commands and scripts)
# compiles memhost, and each worker its test modules, from source again: ~3 s a worker to
# collect, ~80 ms a process to import memhost. The test modules are compiled first, once, split
# over the cores (tests/precompile.py): on a fresh clone every worker compiled them all itself.
# A failure there only costs that time again: the run goes on.
test: $(STAMP)
	-@env -u PYTHONDONTWRITEBYTECODE $(BIN)/python tests/precompile.py
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(if $(QUICK),--quick,) $(BENCH_ARGS)

soak: $(STAMP)
	$(BIN)/python -m benchmarks.soak --minutes $(or $(MINUTES),2)

clean:
	rm -rf $(VENV) build dist *.egg-info
