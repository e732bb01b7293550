# hpcnet.rdma — developer and CI entry points.  Run as root on Debian 12: every goal first
# installs the OS packages it needs (scripts/ospkgs.sh, the one list .ci/run uses too) or, not
# as root, stops with one line naming them.  Only PyPI and Debian's mirror are needed; nothing
# talks to Galaxy or to a container registry.
#
#   make venv      .venv from requirements.txt
#   make unit      pytest tests/unit tests/lab (collection importable as ansible_collections.hpcnet.rdma)
#   make reliability  pytest tests/reliability: kill -9 at every write, concurrent runs, partial
#                  rollback, untrusted journal directories (real module runs on temp trees, seconds)
#   make sanity    ansible-test sanity --venv --python 3.11, offline, on a git copy under build/
#   make lint      ansible-lint --profile production (offline)
#   make docs      the docs site (antsibull-docs + Sphinx, warnings fatal) in build/docs/html, then every page
#                  loaded in headless Chromium: module/role/filter pages hold their options, links and anchors
#                  resolve (scripts/docsite.py, scripts/docsite_check.py, tests/docs)
#   make dockerd   make sure a Docker engine answers (starts one if needed, never a second)
#   make image     lab images hpcnet-rdma-lab[-RECIPE]:<recipe-hash> (+ :latest), cached in lab/cache/
#   make molecule  molecule test -s S for each S in SCENARIOS (default: default profiles rdma_core health topology)
#   make vm-image  lab VM disk image lab/cache/vm-<recipe-hash>/ (debootstrap + host kernel modules)
#   make molecule-vm  molecule test -s vm: two QEMU VMs, real kernel, reboots (fails without QEMU)
#   make bench     untuned vs the mpi profile on two lab VMs: iperf3, sockperf, ib_write_bw, ib_send_lat, mpi
#                  (benchmarks/tuning_gain.py; report in build/bench/tuning-gain/report)
#   make vm-demo   two lab VMs + tune-rdma.yml (playbooks/tune_rdma.yml) against them; `make vm-down` stops them
#   make test      unit, reliability, sanity, lint, docs, molecule + summary; fails if a tier fails or runs nothing
#   make demo      two lab nodes + tune-rdma.yml (playbooks/tune_rdma.yml) against them, showing what changed
#   make lab-down  remove the lab nodes of `make demo` / `lab/labctl.py up`

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

# OS packages before anything else: the groups of scripts/ospkgs.sh each goal needs are checked
# when make starts; as root the missing ones are installed (apt-get, or dnf on the RHEL family),
# otherwise make stops with one line naming them and the command that installs them.
# `make -n` and OSPKGS=skip (your own equivalents elsewhere) skip the check.
ospkgs_for = $(strip $(if $(filter test,$(1)),base sanity lab vm docs) \
	$(if $(filter demo dockerd image molecule,$(1)),base lab) \
	$(if $(filter vm-image molecule-vm vm-demo bench,$(1)),base lab vm) \
	$(if $(filter sanity,$(1)),base sanity) \
	$(if $(filter docs,$(1)),base docs) \
	$(if $(filter venv unit reliability lint,$(1)),base))
OSPKG_GROUPS := $(sort $(call ospkgs_for,$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))))
ifneq ($(OSPKG_GROUPS),)
ifneq ($(OSPKGS),skip)
ifeq ($(findstring n,$(firstword -$(MAKEFLAGS))),)
OSPKG_VERDICT := $(shell PYTHON="$(or $(PYTHON),python3)" "$(CURDIR)/scripts/ospkgs.sh" ensure $(OSPKG_GROUPS))
ifneq ($(.SHELLSTATUS),0)
$(error $(OSPKG_VERDICT))
endif
endif
endif
endif

PYTHON     ?= python3
VENV       := $(CURDIR)/.venv
BIN        := $(VENV)/bin
STAMP      := $(VENV)/.requirements-installed
BUILD      := $(CURDIR)/build
RESULTS    := $(BUILD)/results
COLLECTIONS := $(BUILD)/collections
COLL_LINK  := $(COLLECTIONS)/ansible_collections/hpcnet/rdma
LABCTL     := $(PYTHON) $(CURDIR)/lab/labctl.py
RESULT     := $(PYTHON) $(CURDIR)/scripts/results.py
SCENARIOS  ?= default profiles rdma_core health topology
# Lab image recipes the container scenarios use (lab/labctl.py image build --recipe R):
# default for `default`, rdma-bookworm + rdma-trixie (offline apt cache of the RDMA stack) for rdma_core.
IMAGE_RECIPES ?= default rdma-bookworm rdma-trixie
NODES      ?= 2
# Lab nodes are containers: kernel-global sysctls cannot be set there, so report them instead.
DEMO_ARGS  ?= -e rdma_profile=mpi

# Every tool runs from the venv; ansible finds this collection through the symlink tree.
TOOLS_ENV  := PATH="$(BIN):$$PATH" ANSIBLE_COLLECTIONS_PATH="$(COLLECTIONS)"

.PHONY: venv collections unit reliability sanity lint docs dockerd image molecule vm-image molecule-vm test demo lab-down \
	vm-demo vm-down clean bench

venv: $(STAMP)

$(STAMP): requirements.txt
	rm -rf "$(VENV)"
	$(PYTHON) -m venv "$(VENV)"
	"$(BIN)/pip" install --quiet --disable-pip-version-check -r requirements.txt
	touch "$@"

collections:
	mkdir -p "$(dir $(COLL_LINK))"
	ln -sfn "$(CURDIR)" "$(COLL_LINK)"

unit: venv collections
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/unit.json" "$(RESULTS)/unit.xml"
	rc=0; $(TOOLS_ENV) PYTHONPATH="$(COLLECTIONS)" "$(BIN)/pytest" tests/unit tests/lab -p no:cacheprovider \
	    --junitxml="$(RESULTS)/unit.xml" || rc=$$?; \
	$(RESULT) record unit --rc $$rc --junit "$(RESULTS)/unit.xml"

# Its own tier: exit code 5 (no tests collected) fails it like any other non-zero exit.
reliability: venv collections
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/reliability.json" "$(RESULTS)/reliability.xml"
	rc=0; $(TOOLS_ENV) PYTHONPATH="$(COLLECTIONS)" "$(BIN)/pytest" tests/reliability -p no:cacheprovider \
	    --junitxml="$(RESULTS)/reliability.xml" || rc=$$?; \
	$(RESULT) record reliability --rc $$rc --junit "$(RESULTS)/reliability.xml"

sanity: venv
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/sanity.json"
	rc=0; $(TOOLS_ENV) scripts/sanity.sh 2>&1 | tee "$(RESULTS)/sanity.log" || rc=$$?; \
	$(RESULT) record sanity --rc $$rc --log "$(RESULTS)/sanity.log"

lint: venv collections
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/lint.json"
	rc=0; $(TOOLS_ENV) "$(BIN)/ansible-lint" --profile production --offline 2>&1 \
	    | tee "$(RESULTS)/lint.log" || rc=$$?; \
	$(RESULT) record lint --rc $$rc --log "$(RESULTS)/lint.log"

# Build, then check the real site and prove the check fails on a broken copy (tests/docs); the tier
# counts the pages Chromium rendered and fails on any problem the check names.
docs: venv collections
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/docs.json" "$(RESULTS)/docs-check.json" "$(RESULTS)/docs.xml"
	rc=0; ( set -e; $(TOOLS_ENV) "$(BIN)/python" scripts/docsite.py build --out "$(BUILD)/docs"; crc=0; \
	    $(TOOLS_ENV) "$(BIN)/python" scripts/docsite_check.py --site "$(BUILD)/docs/html" \
	        --json "$(RESULTS)/docs-check.json" || crc=$$?; \
	    $(TOOLS_ENV) DOCSITE="$(BUILD)/docs/html" "$(BIN)/pytest" tests/docs -p no:cacheprovider \
	        --junitxml="$(RESULTS)/docs.xml" || crc=$$?; exit $$crc ) 2>&1 | tee "$(RESULTS)/docs.log" || rc=$$?; \
	$(RESULT) record docs --rc $$rc --check "$(RESULTS)/docs-check.json" --junit "$(RESULTS)/docs.xml"

dockerd:
	$(LABCTL) dockerd

image: dockerd
	for r in $(IMAGE_RECIPES); do $(LABCTL) image build --recipe "$$r"; done

molecule: venv collections image
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/molecule.json"
	rc=0; logs=(); for s in $(SCENARIOS); do \
	    logs+=(--log "$(RESULTS)/molecule-$$s.log"); \
	    $(TOOLS_ENV) NO_COLOR=1 MOLECULE_COMMAND_BORDERS=false molecule test -s "$$s" 2>&1 | tee "$(RESULTS)/molecule-$$s.log" || rc=$$?; \
	done; \
	$(RESULT) record molecule --rc $$rc "$${logs[@]}"

vm-image:
	$(LABCTL) vm image build

# The VM tier records its own result (molecule-vm.json); no QEMU means the tier fails, loudly.
# scripts/molecule_vm.sh: one retry only when a guest stopped answering ssh, said in the result.
molecule-vm: venv collections vm-image
	mkdir -p "$(RESULTS)"; rm -f "$(RESULTS)/molecule-vm.json"
	$(TOOLS_ENV) PYTHON="$(PYTHON)" bash scripts/molecule_vm.sh "$(RESULTS)"

# All tiers run even if an earlier one fails, so the summary shows every tier's state.
# unit, reliability, sanity, lint and docs (one process at a time: mostly one core) run beside the
# container scenarios (ansible-playbook and docker exec leave a core idle much of the time), their
# output printed after the molecule tier's; the VM tier runs alone, last: its two TCG guests keep
# both cores busy, and a guest starved of CPU is how its timeouts begin.
TIERS := unit reliability sanity lint docs molecule molecule-vm
BESIDE := $(filter-out molecule molecule-vm,$(TIERS))
test:
	rm -rf "$(RESULTS)"; mkdir -p "$(RESULTS)"
	tier() { local t=$$SECONDS; $(MAKE) --no-print-directory "$$1" || true; echo $$((SECONDS - t)) > "$(RESULTS)/$$1.seconds"; }; \
	( for b in $(BESIDE); do tier "$$b" > "$(RESULTS)/$$b.out" 2>&1; done ) & beside=$$!; \
	echo "make test: $(BESIDE) run beside the molecule tier; their output follows it"; \
	$(if $(filter molecule,$(TIERS)),tier molecule;) \
	wait $$beside; \
	for b in $(BESIDE); do echo; echo "==== $$b ($$(cat "$(RESULTS)/$$b.seconds")s, beside the molecule tier) ===="; \
	    cat "$(RESULTS)/$$b.out"; done; \
	$(if $(filter molecule-vm,$(TIERS)),tier molecule-vm;) true
	$(RESULT) summary $(TIERS)

demo: venv collections image
	$(LABCTL) up --nodes $(NODES)
	@echo "== tune-rdma.yml on the lab (diffs of every change, then the per-host 'What changed' summary) =="
	$(TOOLS_ENV) ANSIBLE_DISPLAY_SKIPPED_HOSTS=false \
	    "$(BIN)/ansible-playbook" -i inventories/lab tune-rdma.yml --diff $(DEMO_ARGS)
	@echo "== verify: the same run again in check mode must find nothing to change =="
	mkdir -p "$(BUILD)"
	set -o pipefail; $(TOOLS_ENV) ANSIBLE_DISPLAY_OK_HOSTS=false ANSIBLE_DISPLAY_SKIPPED_HOSTS=false \
	    "$(BIN)/ansible-playbook" -i inventories/lab tune-rdma.yml --check $(DEMO_ARGS) \
	    | tee "$(BUILD)/demo-verify.log"
	@if grep -Eq ' (changed|failed|unreachable)=[1-9]' "$(BUILD)/demo-verify.log"; then \
	    echo "demo: FAILED - the check-mode rerun would still change something (see above)"; exit 1; fi
	@echo "demo: verified - every node is tuned as asked (check-mode rerun: changed=0 on every node)"
	@echo "lab is still up: 'make lab-down' removes it; '.venv/bin/ansible-playbook playbooks/rollback_rdma.yml' undoes the tuning"

lab-down:
	$(LABCTL) down

vm-demo: venv collections vm-image
	$(LABCTL) vm up --nodes 2
	@echo "== tune-rdma.yml on the lab VMs (only changed/failed tasks and their diffs are shown) =="
	$(TOOLS_ENV) ANSIBLE_DISPLAY_OK_HOSTS=false ANSIBLE_DISPLAY_SKIPPED_HOSTS=false \
	    "$(BIN)/ansible-playbook" -i inventories/lab-vm tune-rdma.yml --diff -e rdma_profile=mpi
	@echo "lab VMs are still up: 'make vm-down' stops them"

vm-down:
	$(LABCTL) vm down

bench: venv collections vm-image
	$(TOOLS_ENV) "$(BIN)/python" benchmarks/tuning_gain.py

clean:
	rm -rf "$(BUILD)" tests/output
