#!/usr/bin/env bash
# Run `ansible-test sanity --venv --python 3.11` offline on a throwaway git copy of the collection.
#
# ansible-test wants the collection at .../ansible_collections/hpcnet/rdma/ inside a git repo,
# and its --venv mode bootstraps pip with ~/.ansible/test/cache/get_pip_24_2.py (downloaded from
# the internet by default).  Here HOME is a workspace under build/ whose cache already holds our
# offline get_pip_24_2.py and the pip 24.2 wheel (from PyPI), so the user's home is untouched and
# only PyPI is contacted (for the sanity tests' own requirements, on the first run).
#
# Usage: scripts/sanity.sh [extra ansible-test sanity args]   (called by `make sanity`)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${ROOT}/.venv/bin"
WORK="${ROOT}/build/sanity"
DEST="${WORK}/ansible_collections/hpcnet/rdma"
export HOME="${ROOT}/build/sanity-home"
CACHE="${HOME}/.ansible/test/cache"
PIP_VERSION=24.2

# 1. Offline pip bootstrap for ansible-test's virtual environments.
mkdir -p "${CACHE}"
install -m 0644 "${ROOT}/scripts/get_pip_${PIP_VERSION//./_}.py" "${CACHE}/"
if [[ ! -f "${CACHE}/pip-${PIP_VERSION}-py3-none-any.whl" ]]; then
    "${BIN}/pip" download --quiet --disable-pip-version-check --no-deps "pip==${PIP_VERSION}" -d "${CACHE}"
fi

# 2. A fresh git copy of the working tree: tracked files plus untracked ones that are not ignored.
rm -rf "${DEST}"
mkdir -p "${DEST}"
# Local state is excluded even where .gitignore would miss it (e.g. a .venv that is a symlink).
EXCLUDES=(--exclude /.venv --exclude /build --exclude /.git --exclude /tests/output
          --exclude /lab/cache --exclude /lab/run)
(
    cd "${ROOT}"
    if git rev-parse --git-dir >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard \
            | rsync -a --from0 --files-from=- --ignore-missing-args "${EXCLUDES[@]}" ./ "${DEST}/"
    else
        rsync -a "${EXCLUDES[@]}" ./ "${DEST}/"
    fi
)
cd "${DEST}"
git init -q
git add -A
git -c user.name=sanity -c user.email=sanity@localhost.invalid commit -q -m "sanity snapshot"

# 3. No ignore file: every finding is a failure.
for ignore in tests/sanity/ignore-*.txt; do
    if [[ -s "${ignore}" ]]; then
        echo "sanity: ${ignore} is not empty; this project keeps no sanity ignores" >&2
        exit 1
    fi
done

# 4. Run.  ANSIBLE_COLLECTIONS_PATH from the caller would point at the repo, not this copy.
unset ANSIBLE_COLLECTIONS_PATH
echo "sanity: ansible-test $("${BIN}/ansible-test" --version) in ${DEST}"
exec "${BIN}/ansible-test" sanity --venv --python 3.11 --color no "$@"
