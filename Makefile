# The course's commands. `make demo` and `make test` each set up .venv first.
SHELL := /bin/bash
# Supported interpreters, newest first: make uses the first that works, or `make PYTHON=...`.
SUPPORTED_PYTHONS := python3.13 python3.12 python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# Every Jupyter server of the environment loads coursekit.staff.server (pages with learner
# material run no script): the entry `jupyter server extension enable --sys-prefix` writes.
# A wheel of coursekit installs it (pyproject.toml's data-files); an editable install does
# not (setuptools leaves data files out of it), so `make venv` copies it.
SERVER_CONFIG := jupyter_server_config.d/coursekit.json
START_PTH := coursekit/core/coursekit-start.pth
# Targets that need the environment depend on `venv` ($(STAMP) is the older name for it).
# The learners' JupyterLab extension (coursekit/learner/labextension.py), installed by make venv.
LABEXTENSION := @coursekit/learner-panel
STAMP := venv
ASSIGNMENTS := $(notdir $(wildcard source/*))
# Interpreters are looked up on PATH without the project's environment: its own python3.11
# must not stand in for the system's.
HOST_PATH := $(subst $(CURDIR)/$(BIN):,,$(PATH))
# nbgrader runs alembic and kernels by name: the project's environment comes first.
export PATH := $(CURDIR)/$(BIN):$(PATH)

# "Working" means it starts (a pyenv shim whose version is not selected exits 127), it is
# 3.11-3.13, and it can make a venv (Debian's python3.X needs python3.X-venv for ensurepip).
# It prints the real executable, so neither a shim nor .venv/bin stands in for it later.
PYTHON_PROBE := import sys, ensurepip; ok = (3, 11) <= sys.version_info[:2] <= (3, 13); \
  print(sys.executable) if ok else print("Python", sys.version.split()[0], "is not 3.11-3.13", file=sys.stderr); \
  sys.exit(not ok)
probe_python = $(shell PATH='$(HOST_PATH)' $(1) -c '$(PYTHON_PROBE)' 2>/dev/null)
# What a venv is tied to: the interpreter's version and installation.
PYTHON_ID := import sys, platform; print(f"Python {platform.python_version()} ({sys.base_prefix})")
# Evaluated once, and only by targets that need an interpreter.
PYTHON ?= $(eval PYTHON := $(firstword $(foreach p,$(SUPPORTED_PYTHONS),$(call probe_python,$(p)))))$(PYTHON)
PYTHON_EXE = $(eval PYTHON_EXE := $(call probe_python,$(PYTHON)))$(PYTHON_EXE)
define NO_PYTHON
echo "make: no working Python 3.11, 3.12 or 3.13 on PATH (tried $(SUPPORTED_PYTHONS))." >&2; \
echo "  A pyenv shim works only for the version pyenv has selected. Install one" >&2; \
echo "  (Debian/Ubuntu: apt-get install python3 python3-venv) or run make PYTHON=/path/to/python3.X." >&2
endef

.PHONY: help venv test test-fast lint format messages demo sync release lab lock clean report chromium grade bench postgresql bubblewrap slurm

help:  ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

# The system's certificates (as pip's), for a registry behind a proxy of its own.
UV_PIP = $(BIN)/uv pip install --quiet --native-tls --python $(BIN)/python
# Runs every time (a second when nothing changed): .venv/.installed records the interpreter
# and the hash of requirements.txt and pyproject.toml it was installed from. A .venv made by
# another interpreter is never mixed with this one: it is removed and made again, and make
# says so. coursekit is installed editable, from this checkout.
venv:  ## create .venv with the pinned versions (remade when the interpreter changes)
	@exe='$(PYTHON_EXE)'; \
	if [ -z "$$exe" ]; then \
	  if [ "$(origin PYTHON)" = "command line" ] || [ "$(origin PYTHON)" = "environment" ]; then \
	    echo "make: PYTHON=$(PYTHON) does not work:" >&2; PATH='$(HOST_PATH)' $(PYTHON) -c '$(PYTHON_PROBE)'; \
	  else $(NO_PYTHON); fi; exit 1; fi; \
	want="$$("$$exe" -c '$(PYTHON_ID)')"; \
	if [ -e $(VENV) ]; then \
	  have="$$($(BIN)/python -c '$(PYTHON_ID)' 2>/dev/null || echo 'an interpreter that no longer runs')"; \
	  if [ "$$have" != "$$want" ]; then \
	    test -f $(VENV)/pyvenv.cfg || { echo "make: $(VENV) is not a venv; move it away" >&2; exit 1; }; \
	    echo "make: $(VENV) was made with $$have; making it again with $$want"; \
	    rm -rf $(VENV); fi; fi; \
	test -x $(BIN)/python || "$$exe" -m venv $(VENV) || exit 1; \
	installed="$$want $$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)"; \
	if [ "$$(cat $(VENV)/.installed 2>/dev/null)" != "$$installed" ]; then \
	  echo "make: installing requirements.txt and coursekit (editable) into $(VENV)"; \
	  : "uv, pinned in requirements.txt, installs the rest: a fresh clone's set-up takes"; \
	  : "seconds instead of pip's minute. Bytecode is compiled at install: the sandboxed"; \
	  : "kernels' accounts cannot write __pycache__ under .venv."; \
	  $(BIN)/python -m pip install --quiet --disable-pip-version-check \
	    "$$(grep -m1 '^uv==' requirements.txt)" || exit 1; \
	  $(UV_PIP) --compile-bytecode -r requirements.txt || exit 1; \
	  : "The library, from this checkout: its pins are requirements.txt's, so no deps;"; \
	  : "setuptools is among them, so no isolated build environment either."; \
	  $(UV_PIP) --no-deps --no-build-isolation -e . || exit 1; \
	  : "The course (solutions, grader_tests, catalog, tests, bench) is no package:"; \
	  : "the course root on the venv's path imports it in nbgrader, its kernels, Dask"; \
	  : "workers, pytest and the course copies the tests make, whatever their folder."; \
	  $(BIN)/python -c 'import pathlib, site; pathlib.Path(site.getsitepackages()[0], "transformer_peft_course.pth").write_text("$(CURDIR)\n")'; \
	  echo "$$installed" > $(VENV)/.installed; fi; \
	: "The checkout's own modules compiled (only what changed since): where"; \
	: "PYTHONDONTWRITEBYTECODE is set, as on this project's machines, every process would"; \
	: "compile them again (0.26 CPU-s of each make grade run's start)."; \
	: "(By the checkout's owner: another account, the hub's instructor, runs it as it is.)"; \
	if [ -w coursekit ]; then \
	  $(BIN)/python -m compileall -q coursekit catalog solutions grader_tests tests bench \
	    >/dev/null || exit 1; fi; \
	: "Checked every run, so a venv installed before the entry existed gets it too."; \
	cmp -s jupyter-config/$(SERVER_CONFIG) $(VENV)/etc/jupyter/$(SERVER_CONFIG) || \
	  install -D -m 644 jupyter-config/$(SERVER_CONFIG) $(VENV)/etc/jupyter/$(SERVER_CONFIG) || exit 1; \
	: "Every interpreter's start without jsonschema's IRI parser (the file says why)."; \
	site="$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"; \
	cmp -s $(START_PTH) "$$site/coursekit-start.pth" || \
	  install -m 644 $(START_PTH) "$$site/coursekit-start.pth" || exit 1; \
	: "The learners' JupyterLab extension, prebuilt (make labextension), likewise."; \
	diff -rq coursekit/labextension $(VENV)/share/jupyter/labextensions/$(LABEXTENSION) \
	  -x sources.sha256 >/dev/null 2>&1 || \
	  $(BIN)/coursekit labextension install $(VENV) || exit 1; \
	echo "make: $(VENV) runs $$want"


# pytest-xdist on two workers more than cores, one work unit (an xdist_group: one graded
# class) per worker at a time, longest first by tests/durations.json (tests/conftest.py
# orders them). A unit that waits (a hub, a time limit, nbgrader's sleeps) leaves its core to
# the others: on two cores, 4 workers beat 3 and 3 beat 2 (docs/performance.md, 2026-12-07
# and 2026-12-08).
XDIST_WORKERS := $(shell echo $$(( $$(nproc) + 2 )))
PYTEST_XDIST := $(BIN)/python -m pytest -n $(XDIST_WORKERS) --dist loadgroup --no-loadscope-reorder

test: venv lint bubblewrap chromium postgresql slurm  ## lint, then the whole test suite
	@# The 25 slowest steps are printed at the end: where a cut of the suite's time starts.
	$(PYTEST_XDIST) --durations=25

# The tests that grade no whole class and need no browser, hub, SLURM or PostgreSQL: chosen by
# the markers of pyproject.toml, which each test module sets. CI runs them again on 3.13.
FAST_MARKERS := not class_graded and not browser and not hub and not slurm and not postgres
test-fast: venv bubblewrap  ## the tests that grade no whole class (CI runs them on 3.13 too)
	$(PYTEST_XDIST) -m "$(FAST_MARKERS)"

# After a change of the suite's shape (a new module, a class graded another way): the whole
# suite, each work unit's wall time written into tests/durations.json, which orders `make test`.
.PHONY: durations
durations: venv bubblewrap chromium postgresql slurm  ## run the whole suite and record each unit's time in tests/durations.json
	$(PYTEST_XDIST) --record-durations

lint: venv  ## ruff check and format check; coursekit's layers (import-linter, pyproject.toml)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

format: venv  ## ruff fix and format
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# coursekit's one message catalog (coursekit/core/messages.py): the English msgids of its
# Python and templates into coursekit.pot, then each language's .po updated from it and
# compiled to the .mo that is committed (tests/test_messages.py: no drift). No line numbers
# and no creation date, so a diff shows what changed; no fuzzy matching, so a new msgid is
# left untranslated (a test fails on an empty ko msgstr) rather than guessed.
LOCALE := coursekit/locale
messages: venv  ## extract coursekit's messages, update the ko and en catalogs, compile them
	$(BIN)/pybabel --quiet extract -F $(LOCALE)/babel.cfg --sort-output --add-location=file \
	  --project=coursekit --header-comment="# coursekit's messages: written by make messages." \
	  -o $(LOCALE)/coursekit.pot coursekit
	sed -i '/^"POT-Creation-Date: /d' $(LOCALE)/coursekit.pot
	$(BIN)/pybabel --quiet update -D coursekit -i $(LOCALE)/coursekit.pot -d $(LOCALE) \
	  --no-fuzzy-matching --ignore-obsolete --ignore-pot-creation-date
	$(BIN)/pybabel --quiet compile -D coursekit -d $(LOCALE)

demo: venv bubblewrap  ## the whole cycle (release → submit → grade → feedback → export) on a simulated class, then the TA report
	$(BIN)/coursekit demo $(ARGS)

report: venv  ## the TA report (runs no learner code): a terminal table, reports/<assignment>.csv and reports/<assignment>.html
	$(BIN)/coursekit report $(ARGS)

# The LMS's own CSV import format, through nbgrader export's plugin (coursekit/lms/export.py).
.PHONY: export
export: venv  ## grades for Canvas or Moodle: exports/<lms>_grades.csv, or posted by LTI (ARGS="--to canvas|moodle|lti")
	$(BIN)/coursekit export $(ARGS)

# Learner code only ever runs inside a bubblewrap sandbox (coursekit/sandbox/).
# libseccomp2 compiles the sandbox's seccomp filter (coursekit/sandbox/seccomp.py).
bubblewrap:  ## install Debian's bubblewrap and libseccomp2 when missing (needs root)
	@command -v bwrap >/dev/null && ldconfig -p | grep -q libseccomp.so.2 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends bubblewrap libseccomp2; }

# The browser tests drive Debian's Chromium headless shell (Playwright cannot download
# a browser here; tests/support/browser.py says why this build); fonts-nanum lets it
# render Korean.
chromium:  ## install Debian's Chromium headless shell and a Korean font when missing (needs root)
	@test -x /usr/bin/chromium-headless-shell && fc-list :lang=ko | grep -q . || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends chromium-headless-shell fonts-nanum; }

grade: venv bubblewrap  ## grade every collected submission on Dask (a LocalCluster here; ARGS="--help")
	$(BIN)/coursekit grade $(ARGS)

# The live workshop (coursekit/live/): each submission graded as it arrives and its feedback
# released, in the foreground; Ctrl-C or SIGTERM stops it cleanly.
.PHONY: live
live: venv bubblewrap  ## grade each submission as it arrives and release its feedback (ARGS="--help")
	$(BIN)/coursekit live $(ARGS)

# A TLS grading cluster past one machine (README "Past one machine"): a private CA and one
# certificate for the scheduler, the workers and make grade, in build/dask-tls/.
.PHONY: dask-certs
dask-certs: venv  ## certificates for a TLS Dask grading cluster in build/dask-tls (ARGS="--host NAME")
	$(BIN)/coursekit cluster certs $(ARGS)

# The course's measurement tools (bench/, beside tests/): not part of the library.
bench: venv bubblewrap  ## stock autograde vs make grade vs bare nbclient, time budget, sizes (ARGS=--help)
	$(BIN)/python -m bench $(ARGS)

# The PostgreSQL gradebook test starts a throwaway server from Debian's package.
postgresql:  ## install Debian's postgresql when missing (needs root)
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends postgresql; }

# The SLURM grading test (tests/support/slurm_host.py) starts a private one-host SLURM from Debian's
# packages: slurm-wlm (slurmctld, slurmd, the client commands) and munge.
slurm:  ## install Debian's slurm-wlm and munge when missing (needs root)
	@command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
	  && command -v munged >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends slurm-wlm munge; }

# JupyterLab's own builder from the lockfile; the build is committed (coursekit/labextension/)
# with the digest of its sources, which tests/test_labextension.py checks.
.PHONY: labextension
labextension: venv  ## rebuild the learners' JupyterLab extension from labextension/ (needs npm's registry)
	cd labextension && ../$(BIN)/jlpm install --immutable && ../$(BIN)/jlpm build
	$(BIN)/coursekit labextension digest labextension
	$(BIN)/coursekit labextension install $(VENV)

sync: venv  ## copy solutions/ bodies into the source notebooks' solution regions
	$(BIN)/coursekit sync

release: sync  ## regenerate release/ from source/ with nbgrader generate_assignment
	$(BIN)/coursekit release $(ASSIGNMENTS)

# LAB_LANG=ko_KR: JupyterLab in Korean by default (coursekit/learner/lab_language.py); unset: English.
LAB_LANG ?=
lab: venv bubblewrap  ## JupyterLab with nbgrader's formgrader for this course (LAB_LANG=ko_KR: in Korean)
	$(BIN)/jupyter lab --no-browser \
	  $(if $(LAB_LANG),$$($(BIN)/coursekit lab-language build/lab-settings/$(LAB_LANG) --locale $(LAB_LANG)))

# A trial class on one server (coursekit/hub/, run as root): an account per learner and for
# the instructor, JupyterHub on loopback, formgrader for the instructor only.
# ARGS="--help" for options (--learners, --ip, --port); ARGS=down removes the class.
.PHONY: hub
hub: $(STAMP) bubblewrap  ## a local JupyterHub for a trial class (as root; prints the URL and accounts)
	$(BIN)/coursekit hub $(ARGS)

# Pins are made on the oldest supported interpreter found (a newer one would pick releases
# that dropped 3.11, as numpy 2.5 did), then resolved with every other one found (pip
# --dry-run). `freeze --all` keeps setuptools, whose distutils koreanize-matplotlib imports.
LOCK_PYTHON ?= $(firstword $(foreach p,$(call reverse,$(SUPPORTED_PYTHONS)),$(call probe_python,$(p))))
LOCK_CHECK ?= $(foreach p,$(SUPPORTED_PYTHONS),$(call probe_python,$(p)))
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
lock:  ## re-pin requirements.txt from requirements.in (LOCK_CHECK="python ..." to resolve with)
	@test -n "$(LOCK_PYTHON)" || { $(NO_PYTHON); exit 1; }
	rm -rf build/lock && $(LOCK_PYTHON) -m venv build/lock
	build/lock/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.in
	{ echo "# Generated by 'make lock' from requirements.in; do not edit by hand."; \
	  build/lock/bin/python -m pip freeze --all --exclude pip; } > requirements.txt
	@for p in $(filter-out $(LOCK_PYTHON),$(LOCK_CHECK)); do \
	  echo "make: resolving requirements.txt with $$p"; \
	  rm -rf build/lock-check && $$p -m venv build/lock-check && \
	  build/lock-check/bin/python -m pip install --quiet --disable-pip-version-check \
	    --dry-run -r requirements.txt || exit 1; done; rm -rf build/lock-check

clean:  ## remove generated grading state (keeps .venv)
	rm -rf submitted left_out live autograded/*/ feedback exchange gradebook.db gradebook.db-wal gradebook.db-shm grades.csv exports reports demo build
