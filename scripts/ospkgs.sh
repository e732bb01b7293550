#!/usr/bin/env bash
# The one list of OS packages this checkout needs on the machine that runs it (the Makefile's
# targets and .ci/run both use it).  Presence is probed by what the targets call (a command, a
# Python module, a file), so an equivalent from elsewhere (docker-ce's dockerd) counts.
#
# Usage: scripts/ospkgs.sh ensure GROUP...   install what is missing (as root, apt-get on Debian/
#                                            Ubuntu, dnf on the RHEL family), else print ONE line
#                                            naming the missing packages and the command that
#                                            installs them, and exit 1
#        scripts/ospkgs.sh check GROUP...    only that line (exit 1) or nothing (exit 0)
#        scripts/ospkgs.sh list GROUP...     the Debian package names of the groups, one line
#
# Groups: base (venv, unit - promtool checks the metrics and alert rules -, reliability, lint), sanity, lab (Docker lab nodes), vm (QEMU tier),
# docs (the docs site's check renders every page in headless Chromium; EPEL has it on the RHEL family), all.
# Installer output goes to stderr: stdout carries only the one-line verdict (the Makefile reads it).
set -euo pipefail

# group     Debian/Ubuntu       RHEL family (- : not in its repositories)  probe
TABLE="
base        make                make                 cmd:make
base        git                 git                  cmd:git
base        python3-venv        python3              py:ensurepip
base        iproute2            iproute              cmd:ip
base        ethtool             ethtool              cmd:ethtool
base        prometheus          -                    cmd:promtool
base        openmpi-bin         openmpi              cmd:mpirun
base        python3-mpi4py      python3-mpi4py-openmpi file:/usr/lib/python3/dist-packages/mpi4py/__init__.py
sanity      shellcheck          ShellCheck           cmd:shellcheck
lab         docker.io           -                    cmd:dockerd
lab         debootstrap         debootstrap          cmd:debootstrap
lab         rsync               rsync                cmd:rsync
lab         openssh-client      openssh-clients      cmd:ssh
lab         e2fsprogs           e2fsprogs            cmd:mkfs.ext4
vm          qemu-system-x86     qemu-kvm             cmd:qemu-system-x86_64
vm          qemu-utils          qemu-img             cmd:qemu-img
vm          linux-image-amd64   kernel               file:/boot/vmlinuz-*
vm          initramfs-tools     -                    cmd:mkinitramfs
vm          prometheus          -                    cmd:prometheus
docs        chromium            chromium             cmd:chromium
"
PY=${PYTHON:-python3}
# Tools in sbin count even when the caller's PATH lacks it (a non-root shell on Debian).
PROBE_PATH="${PATH}:/usr/local/sbin:/usr/sbin:/sbin"

die() {
    echo "ospkgs: $*"
    exit 2
}

present() {
    local probe=$1
    case ${probe} in
        cmd:*) PATH=${PROBE_PATH} command -v "${probe#cmd:}" >/dev/null 2>&1 ;;
        py:*) "${PY}" -c "import ${probe#py:}" >/dev/null 2>&1 ;;
        file:*) compgen -G "${probe#file:}" >/dev/null ;;
        *) die "unknown probe ${probe}" ;;
    esac
}

family() {
    local id="" like=""
    if [[ -r /etc/os-release ]]; then
        # shellcheck source=/dev/null
        id=$(. /etc/os-release && echo "${ID:-}")
        # shellcheck source=/dev/null
        like=$(. /etc/os-release && echo "${ID_LIKE:-}")
    fi
    case " ${id} ${like} " in
        *" debian "* | *" ubuntu "*) echo debian ;;
        *" rhel "* | *" fedora "* | *" centos "*) echo rhel ;;
        *) echo other ;;
    esac
}

# rows GROUP... : the table's rows of those groups (all = every row), validated.
rows() {
    local want=" $* "
    awk -v want="${want}" 'NF == 4 && (index(want, " all ") || index(want, " " $1 " "))' <<<"${TABLE}"
}

main() {
    local action=${1:-}
    shift || true
    [[ $# -gt 0 ]] || die "usage: $0 ensure|check|list GROUP... (base sanity lab vm docs all)"
    local g
    for g in "$@"; do
        case ${g} in base | sanity | lab | vm | docs | all) ;; *) die "unknown group '${g}' (base sanity lab vm docs all)" ;; esac
    done
    local fam col
    fam=$(family)
    local -a table
    mapfile -t table < <(rows "$@")

    if [[ ${action} == list ]]; then
        printf '%s\n' "${table[@]}" | awk '!seen[$2]++ {print $2}' | paste -sd' '
        return 0
    fi
    [[ ${action} == ensure || ${action} == check ]] || die "unknown action '${action}' (ensure check list)"

    # Missing rows, as Debian names (deb) and the family's names (pkgs); rows without a package
    # in the family's repositories (unavailable) are named as what they provide.
    local -a deb=() pkgs=() unavailable=()
    local debname rhname probe row
    for row in "${table[@]}"; do
        read -r _ debname rhname probe <<<"${row}"
        present "${probe}" && continue
        deb+=("${debname}")
        case ${fam} in
            debian) pkgs+=("${debname}") ;;
            rhel) if [[ ${rhname} == - ]]; then unavailable+=("${probe#*:}"); else pkgs+=("${rhname}"); fi ;;
            *) pkgs+=("${debname}") ;;
        esac
    done
    [[ ${#deb[@]} -gt 0 ]] || return 0

    local install
    case ${fam} in
        debian) install="apt-get update && apt-get install -y ${pkgs[*]}" ;;
        rhel) install="dnf install -y ${pkgs[*]}" ;;
        *) install="" ;;
    esac

    if [[ ${action} == ensure && $(id -u) == 0 && ${fam} != other && ${#unavailable[@]} -eq 0 ]]; then
        echo "ospkgs: installing ${pkgs[*]}" >&2
        if [[ ${fam} == debian ]]; then
            export DEBIAN_FRONTEND=noninteractive
            { apt-get update -q && apt-get install -y -q "${pkgs[@]}"; } >&2 \
                || { echo "ospkgs: '${install}' failed (see its output above)"; exit 1; }
        else
            dnf install -y "${pkgs[@]}" >&2 || { echo "ospkgs: '${install}' failed (see its output above)"; exit 1; }
        fi
        # Installed is not enough: what the targets call must now be there.
        local -a still=()
        for row in "${table[@]}"; do
            read -r _ _ _ probe <<<"${row}"
            present "${probe}" || still+=("${probe#*:}")
        done
        [[ ${#still[@]} -eq 0 ]] || { echo "ospkgs: installed ${pkgs[*]}, still missing: ${still[*]}"; exit 1; }
        return 0
    fi

    col="missing OS packages: ${deb[*]}"
    case ${fam} in
        debian) echo "${col} - install them as root with: ${install}" ;;
        rhel)
            if [[ ${#unavailable[@]} -gt 0 ]]; then
                echo "${col} - as root: ${pkgs[*]:+${install}; }and install ${unavailable[*]} (Docker Engine) from its vendor's repository"
            else
                echo "${col} - install them as root with: ${install}"
            fi
            ;;
        *) echo "${col} (Debian names) - install their equivalents with this system's package manager" ;;
    esac
    exit 1
}

main "$@"
