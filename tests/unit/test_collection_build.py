# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection as a user gets it: ``ansible-galaxy collection build`` of this working tree, its
members against an allow-list, then installed into a temporary path and used from a directory
outside the repository (no ansible.cfg, no PYTHONPATH to the checkout): every module listed and
rendered by ``ansible-doc``, every role's argument specs, every playbook's syntax by its FQCN, and
``module_defaults: group/hpcnet.rdma.all`` reaching a module.

One build and one install for the whole file (module-scoped fixture): about 10-20 s.
"""
from __future__ import annotations

import copy
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from typing import Dict, List

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
GALAXY = yaml.safe_load(open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8"))
FQCN = "%s.%s" % (GALAXY["namespace"], GALAXY["name"])
MODULES = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
                 if not os.path.basename(p).startswith("_"))
ROLES = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, "roles", "*", "tasks")))
# The ansible-core the example execution environment installs is the one CI tests (requirements.txt).
ANSIBLE_CORE = re.search(r"^ansible-core==(\S+)$", open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8").read(),
                         re.M).group(1)
TEMPLATES = sorted(os.listdir(os.path.join(ROOT, "plugins", "plugin_utils", "templates")))
PLAYBOOKS = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))

NAME = r"[a-z][a-z0-9_]*"
# Every member of the tarball must match one of these (directories included).
ALLOWED = [re.compile(r"\A(?:%s)\Z" % p) for p in (
    r"MANIFEST\.json|FILES\.json|README\.md|CHANGELOG\.md|LICENSE|COPYING",
    r"meta|meta/runtime\.yml|meta/execution-environment\.yml",
    r"changelogs|changelogs/changelog\.yaml|changelogs/config\.yaml",
    r"docs(?:/[\w.-]+)*",
    r"examples(?:/[\w.-]+)*",
    r"playbooks(?:/%s\.yml)?" % NAME,
    r"plugins(?:/(?:action|doc_fragments|filter|modules|plugin_utils|test|lookup|callback)"
    r"(?:/_?%s\.(?:py|yml))?)?" % NAME,
    r"plugins/module_utils(?:/%s)?(?:/(?:_?%s|__init__)\.py)?" % (NAME, NAME),   # module_utils: one folder per layer/concern
    r"plugins/plugin_utils/templates(?:/[a-z][a-z0-9-]*\.(?:html|md)\.j2)?",         # the reports' Jinja2 templates
    r"schemas(?:/[a-z][a-z0-9-]*\.schema\.json)?",                                  # the published JSON formats
    r"roles(?:/%s(?:/README\.md|/(?:defaults|files|handlers|meta|tasks|templates|vars)(?:/[\w.@-]+)*)?)?" % NAME,
)]
# Never shipped, wherever they sit (the allow-list would let them through under docs/ or examples/).
FORBIDDEN = re.compile(r"(?:\A|/)(?:__pycache__|\.pytest_cache|\.venv|molecule|tests|lab|build)(?:/|\Z)"
                       r"|\.(?:pyc|tar\.gz)\Z")


def run(argv: List[str], env: Dict[str, str], cwd: str) -> str:
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300, check=False)
    assert proc.returncode == 0, "%s exited %d:\n%s" % (" ".join(argv), proc.returncode, proc.stdout)
    return proc.stdout


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    """Build, install and a user's environment: (tarball, members, env, cwd outside the repo)."""
    tmp = tmp_path_factory.mktemp("collection")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_") and k != "PYTHONPATH"}
    env.update(PATH=BIN + os.pathsep + env.get("PATH", ""), HOME=str(tmp / "home"), ANSIBLE_HOME=str(tmp / "home"),
               ANSIBLE_COLLECTIONS_PATH=str(tmp / "installed"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    os.makedirs(env["HOME"])
    work = tmp / "project"
    work.mkdir()
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp / "dist"), ROOT],
        env, str(work))
    tarball = str(tmp / "dist" / ("%s-%s-%s.tar.gz" % (GALAXY["namespace"], GALAXY["name"], GALAXY["version"])))
    with tarfile.open(tarball) as tar:
        members = tar.getmembers()
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-p", str(tmp / "installed"), tarball],
        env, str(work))
    (work / "inventory.yml").write_text(yaml.safe_dump({"all": {"children": {"rdma_nodes": {"hosts": {
        "node1": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}}}))
    return {"tarball": tarball, "members": members, "env": env, "cwd": str(work), "tmp": tmp}


def test_tarball_holds_runtime_content_only(user):
    names = [m.name for m in user["members"]]
    unexpected = [n for n in names if not any(p.match(n) for p in ALLOWED)]
    forbidden = [n for n in names if FORBIDDEN.search(n)]
    links = [n for n, m in zip(names, user["members"]) if m.issym() or m.islnk()]
    assert (unexpected, forbidden, links) == ([], [], []), \
        "not runtime content (galaxy.yml build_ignore): unexpected %s, forbidden %s, links %s" % (
            unexpected, forbidden, links)
    # ... and all of the runtime content is there.
    for must in (["README.md", "meta/runtime.yml", "meta/execution-environment.yml", "changelogs/changelog.yaml"]
                 + ["plugins/modules/%s.py" % m for m in MODULES] + ["roles/%s/tasks/main.yml" % r for r in ROLES]
                 + ["playbooks/%s.yml" % p for p in PLAYBOOKS] + ["plugins/plugin_utils/templates/%s" % t for t in TEMPLATES]
                 + ["schemas/bench-run.schema.json", "schemas/verify-report.schema.json"]):
        assert must in names


def test_galaxy_readme_is_the_user_page(user):
    """MANIFEST.json's readme (what Galaxy and Automation Hub show) is docs/README-galaxy.md: what the collection
    does, how to install it, every playbook, role and module, no development steps, every relative link to a
    member of the tarball.  README.md stays the checkout's developer page, opening with its two commands."""
    with tarfile.open(user["tarball"]) as tar:
        readme = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]["readme"]
        text = tar.extractfile(readme).read().decode("utf-8")
        names = set(tar.getnames())
    assert readme == GALAXY["readme"] == "docs/README-galaxy.md"
    assert text.startswith("# %s - " % FQCN) and len(text.encode("utf-8")) < 16000
    for needed in ["ansible-galaxy collection install", "## Requirements", "## Playbooks", "## Roles", "LICENSE"] \
            + ["`%s.%s`" % (FQCN, p) for p in PLAYBOOKS] + ["`%s.%s`" % (FQCN, r) for r in ROLES] \
            + ["`%s`" % m for m in MODULES]:
        assert needed in text, "docs/README-galaxy.md does not name %s" % needed
    for dev in ("make ", "tests/", "molecule", "labctl", ".venv", "CONTRIBUTING"):
        assert dev not in text, "docs/README-galaxy.md is the user's page; %r is development" % dev
    links = re.findall(r"\]\(([^)#\s]+)", text)
    assert links
    for target in [t for t in links if "://" not in t]:
        path = os.path.normpath(os.path.join(os.path.dirname(readme), target))
        assert path in names or any(n.startswith(path + "/") for n in names), "%s links %s: not in the tarball" % (
            readme, target)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        first = f.read().split("```sh\n", 1)[1].splitlines()[:2]
    assert first[0].startswith("make demo ") and first[1].startswith("make test "), first


def test_installed_collection_is_the_one_ansible_uses(user):
    out = run([os.path.join(BIN, "ansible-galaxy"), "collection", "list", FQCN], user["env"], user["cwd"])
    assert str(user["tmp"] / "installed" / "ansible_collections") in out
    assert re.search(r"^%s\s+%s\s*$" % (re.escape(FQCN), re.escape(GALAXY["version"])), out, re.M), out


def test_ansible_doc_lists_and_renders_every_module(user):
    listed = run([os.path.join(BIN, "ansible-doc"), "-l", FQCN], user["env"], user["cwd"])
    names = sorted(line.split()[0] for line in listed.splitlines() if line.startswith(FQCN + "."))
    assert names == ["%s.%s" % (FQCN, m) for m in MODULES], listed
    rendered = run([os.path.join(BIN, "ansible-doc")] + ["%s.%s" % (FQCN, m) for m in MODULES],
                   user["env"], user["cwd"])
    for m in MODULES:
        assert "> MODULE %s.%s (" % (FQCN, m) in rendered
    assert "WARNING" not in rendered and "ERROR" not in rendered, rendered


def test_ansible_doc_renders_every_role(user):
    assert ROLES, "no roles found under roles/"
    out = run([os.path.join(BIN, "ansible-doc"), "-t", "role"] + ["%s.%s" % (FQCN, r) for r in ROLES],
              user["env"], user["cwd"])
    for r in ROLES:
        assert "%s.%s" % (FQCN, r) in out
    assert "ERROR" not in out, out


def test_every_playbook_passes_syntax_check_by_fqcn(user):
    assert PLAYBOOKS, "no playbooks under playbooks/"
    bad = [p for p in PLAYBOOKS if not re.fullmatch(NAME, p)]
    assert not bad, "playbooks/%s.yml cannot be called by FQCN (use lower-case letters, digits, _)" % bad
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", "inventory.yml", "--syntax-check"]
              + ["%s.%s" % (FQCN, p) for p in PLAYBOOKS], user["env"], user["cwd"])
    assert "ERROR" not in out, out


def test_action_group_all_is_every_module():
    runtime = yaml.safe_load(open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8"))
    assert sorted(runtime["action_groups"]["all"]) == MODULES


@pytest.mark.parametrize("mode, ok", [
    ("0700", True),
    # A journal others can write is refused by name: the group's journal_dir reached the module.
    ("0777", False),
])
def test_module_defaults_group_all_reaches_a_module(user, mode, ok):
    journal = user["tmp"] / ("journal-%s" % mode)
    journal.mkdir()
    os.chmod(str(journal), int(mode, 8))
    play = [{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"ansible_python_interpreter": sys.executable},
        "module_defaults": {"group/%s.all" % FQCN: {"journal_dir": str(journal)}},
        "tasks": [
            {"name": "status with the group's journal_dir", FQCN + ".tuning_state": {"action": "status"},
             "register": "st", "ignore_errors": True},
            {"ansible.builtin.copy": {"content": "{{ st | to_json }}", "dest": str(journal) + ".json"},
             "check_mode": False},
        ],
    }]
    path = os.path.join(user["cwd"], "defaults-%s.yml" % mode)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(play, f)
    run([os.path.join(BIN, "ansible-playbook"), "--check", path], user["env"], user["cwd"])
    result = yaml.safe_load(open(str(journal) + ".json", encoding="utf-8"))
    if ok:
        assert not result.get("failed"), result
        assert result["changed"] is False and result["generations"] == [], result
    else:
        assert result.get("failed") and str(journal) in result["msg"], result


def test_execution_environment_adds_nothing_to_the_image(user):
    """ansible-builder's introspection of the installed collection: no Python, no system packages
    (meta/execution-environment.yml; without it the checkout's dev requirements.txt would go in)."""
    out = run([os.path.join(BIN, "ansible-builder"), "introspect", str(user["tmp"] / "installed")],
              user["env"], user["cwd"])
    data = yaml.safe_load(out.split("\n", 1)[1] if out.startswith("#") else out)
    assert data == {"python": [], "system": []}, out


def test_example_execution_environment_context(user):
    """ansible-builder create of examples/ee with the built tarball next to it (the build itself
    pulls a base image from a container registry: not done here)."""
    ee = user["tmp"] / "ee"
    shutil.copytree(os.path.join(ROOT, "examples", "ee"), str(ee))
    shutil.copy(user["tarball"], str(ee))
    context = ee / "context"
    run([os.path.join(BIN, "ansible-builder"), "create", "--output-filename", "Containerfile",
         "-f", str(ee / "execution-environment.yml"), "-c", str(context)], user["env"], user["cwd"])
    containerfile = (context / "Containerfile").read_text()
    tarball = os.path.basename(user["tarball"])
    assert (context / "_build" / "collections" / tarball).is_file()
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert requirements == {"collections": [{"name": "/tmp/hpcnet-rdma/" + tarball, "type": "file"}]}
    for line in ('ARG EE_BASE_IMAGE="ee-base:latest"',
                 'ARG ANSIBLE_INSTALL_REFS="ansible-core==%s ansible-runner"' % ANSIBLE_CORE,
                 "COPY _build/collections/ /tmp/hpcnet-rdma/",
                 "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml"):
        assert line in containerfile, containerfile
    # The galaxy stage copies the tarball in before it installs the requirements that name it.
    assert containerfile.index("COPY _build/collections/") < containerfile.index("ansible-galaxy collection install")


def test_changelog_fragments_and_generated_changelog(user, tmp_path):
    """antsibull-changelog lint passes, and CHANGELOG.md is what changelogs/changelog.yaml generates."""
    run([os.path.join(BIN, "antsibull-changelog"), "lint"], user["env"], ROOT)
    out = tmp_path / "CHANGELOG.md"
    run([os.path.join(BIN, "antsibull-changelog"), "generate", "--output", str(out), "--output-format", "md"],
        dict(user["env"], ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections")), ROOT)
    with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as f:
        assert f.read() == out.read_text(), "CHANGELOG.md is stale: run antsibull-changelog generate"


def test_example_project_installs_the_tarball_and_its_vars_fit_the_specs(user):
    """examples/project as a user copies it: requirements-tarball.yml installs the collection into
    its collections/, its ansible.cfg finds it, site.yml and the FQCN playbook pass --syntax-check
    with its inventory, and its group_vars pass the tuning role's and the modules' argument specs."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible_collections.hpcnet.rdma.plugins.modules import nic_tuning, roce_qos

    project = user["tmp"] / "example-project"
    shutil.copytree(os.path.join(ROOT, "examples", "project"), str(project))
    os.chmod(str(project), 0o755)  # ansible ignores an ansible.cfg in a world-writable directory
    shutil.copy(user["tarball"], str(project / "collections"))
    env = {k: v for k, v in user["env"].items() if k != "ANSIBLE_COLLECTIONS_PATH"}
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-r", "collections/requirements-tarball.yml",
         "-p", "collections"], env, str(project))
    out = run([os.path.join(BIN, "ansible-galaxy"), "collection", "list", FQCN], env, str(project))
    assert str(project / "collections" / "ansible_collections") in out, out
    graph = run([os.path.join(BIN, "ansible-inventory"), "--graph", "rdma_nodes"], env, str(project))
    assert "@rdma_nodes:" in graph and "gpu01.cluster.example" in graph, graph
    for playbook in ("site.yml", FQCN + ".tune_rdma"):
        run([os.path.join(BIN, "ansible-playbook"), "--syntax-check", playbook], env, str(project))

    with open(str(project / "inventory" / "group_vars" / "rdma_nodes.yml"), encoding="utf-8") as f:
        group_vars = yaml.safe_load(f)
    with open(os.path.join(ROOT, "roles", "tuning", "meta", "argument_specs.yml"), encoding="utf-8") as f:
        role_spec = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    errors = ArgumentSpecValidator(role_spec).validate(group_vars).error_messages
    # copies: the validator fills a dict default's sub-options in place (nic_tuning's defaults: {}),
    # which would change the module's spec for every later test of this process
    errors += ArgumentSpecValidator(copy.deepcopy(roce_qos.ARGUMENT_SPEC)).validate(
        group_vars["rdma_roce_qos"]).error_messages
    errors += ArgumentSpecValidator(copy.deepcopy(nic_tuning.ARGUMENT_SPEC)).validate(
        {"interfaces": group_vars["rdma_interfaces"]}).error_messages
    assert errors == []
