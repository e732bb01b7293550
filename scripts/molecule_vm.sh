#!/usr/bin/env bash
# The VM tier: `molecule test -s vm`, recorded by scripts/results.py.
#
# One retry, for one cause only: a lab VM stopped answering ssh for good during a verify step
# (molecule/vm/conftest.py names it in lab/run/molecule-vm/lost-ssh after a 60 s fresh-login
# probe failed).  That is a TCG guest that hung, not a check that failed; the first attempt's
# log and the VMs' serial consoles are kept in build/results/ and the tier's result says that
# it needed a second attempt and why.  Any other failure - an assertion, an unreachable host in
# converge, a reboot that does not come back - fails the tier at once.
set -uo pipefail

RESULTS=${1:?usage: molecule_vm.sh RESULTS_DIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNDIR=${MOLECULE_VM_RUN_DIR:-"${ROOT}/lab/run/molecule-vm"}  # overridden by tests/lab/test_molecule_vm_retry.py only
LOST="${RUNDIR}/lost-ssh"
PY=${PYTHON:-python3}
note=()

attempt() {  # attempt N: one `molecule test -s vm`, its log in RESULTS/molecule-vm.log, and the
    # wall time of each step (scripts/steptimes.py) printed at its end and in RESULTS/molecule-vm.steps
    rm -f "${LOST}"
    NO_COLOR=1 MOLECULE_COMMAND_BORDERS=false molecule test -s vm 2>&1 \
        | "${PY}" "${ROOT}/scripts/steptimes.py" --table "${RESULTS}/molecule-vm.steps" \
        | tee "${RESULTS}/molecule-vm.log"
}

rc=0
attempt || rc=$?
if [[ ${rc} != 0 && -s ${LOST} ]]; then
    lost=$(paste -sd';' "${LOST}")
    mv "${RESULTS}/molecule-vm.log" "${RESULTS}/molecule-vm.attempt1.log"
    mv "${RESULTS}/molecule-vm.steps" "${RESULTS}/molecule-vm.attempt1.steps"
    for log in "${RUNDIR}"/*.console.log; do
        [[ -e ${log} ]] && cp "${log}" "${RESULTS}/molecule-vm.attempt1.$(basename "${log}")"
    done
    echo
    echo "molecule-vm: attempt 1 LOST A VM (stopped answering ssh for good): ${lost}"
    echo "molecule-vm: its log and the VMs' consoles are in ${RESULTS}/molecule-vm.attempt1.*; running the scenario once more"
    note=(--note "attempt 2 of 2: attempt 1 lost ${lost} (guest stopped answering ssh; see molecule-vm.attempt1.*)")
    rc=0
    attempt || rc=$?
fi
HPCNET_RESULTS_DIR=${RESULTS} "${PY}" "${ROOT}/scripts/results.py" record molecule-vm --rc "${rc}" --log "${RESULTS}/molecule-vm.log" "${note[@]}"
