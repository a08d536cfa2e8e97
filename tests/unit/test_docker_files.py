"""The Dockerfile and compose.yaml, checked by reading them: no Docker engine runs where the tests run, so
the image is never built here (see docs/operations.md, "Docker", for what this does and does not cover)."""
from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from lookout.cli import is_loopback
from lookout.config import Settings
from lookout.daemon.supervisor import BACKOFF_S, STABLE_S
from tests.conftest import REPO


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


def _instructions() -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    text = (REPO / "Dockerfile").read_text()
    logical = re.sub(r"\\\n", "", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    found = []
    for line in logical.splitlines():
        if line.strip():
            keyword, _, args = line.strip().partition(" ")
            found.append(Instruction(keyword.upper(), args.strip()))
    return found


def _all(keyword: str) -> list[str]:
    return [i.args for i in _instructions() if i.keyword == keyword]


def _stages() -> dict[str, list[Instruction]]:
    """Each stage's instructions after its FROM, by the stage's name (`AS name`; the last stage is "final")."""
    stages: dict[str, list[Instruction]] = {}
    current: list[Instruction] = []
    for instruction in _instructions():
        if instruction.keyword == "FROM":
            words = instruction.args.split()
            current = stages.setdefault(words[2] if len(words) == 3 and words[1].upper() == "AS" else "final", [])
        else:
            current.append(instruction)
    return stages


def _final(keyword: str) -> list[str]:
    return [i.args for i in _stages()["final"] if i.keyword == keyword]


def _env() -> dict[str, str]:
    """ENV key=value pairs, in order."""
    pairs: dict[str, str] = {}
    for args in _all("ENV"):
        pairs.update(item.split("=", 1) for item in shlex.split(args))
    return pairs


def _compose_service() -> dict:
    compose = yaml.safe_load((REPO / "compose.yaml").read_text())
    assert list(compose["services"]) == ["lookout"]
    return compose["services"]["lookout"]


def _dockerignore() -> set[str]:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_base_is_slim_python_311() -> None:
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", _all("FROM")[-1])


def test_every_copy_source_exists_and_is_in_the_build_context() -> None:
    copies = [shlex.split(args) for args in _all("COPY")]
    assert copies
    ignored = _dockerignore()
    for words in copies:
        if any(w.startswith("--from=") for w in words):
            continue  # from a build stage, not from the context
        for source in [w for w in words[:-1] if not w.startswith("--")]:
            assert (REPO / source).exists(), source
            assert source not in ignored, f"{source} is in .dockerignore"


def test_the_inline_python_compiles() -> None:
    snippets = [words[2] for words in map(shlex.split, _all("RUN")) if words[:2] == ["python", "-c"]]
    assert snippets, "the dependencies are read from pyproject.toml"
    for code in snippets:
        compile(code, "Dockerfile", "exec")


def _install() -> tuple[str, str]:
    """The final stage's RUN that installs lookout, and the directory it runs in."""
    workdir, install = "/", None
    for instruction in _stages()["final"]:
        if instruction.keyword == "WORKDIR":
            workdir = instruction.args
        elif instruction.keyword == "RUN" and "pip install --no-deps" in instruction.args:
            install = instruction.args
            break
    assert install is not None, "lookout is installed in the final stage"
    return install, workdir


def test_lookout_is_installed_from_a_wheel_built_in_a_stage_of_its_own() -> None:
    """pip builds a source tree in place (build/, lookout.egg-info): the wheel is built in a throwaway stage,
    and the image gets the wheel alone, from a directory the same step removes."""
    wheel_stage = _stages()["wheel"]
    assert any(i.keyword == "RUN" and "pip wheel --no-deps --wheel-dir /wheels ." in i.args for i in wheel_stage)
    install, workdir = _install()
    assert workdir.startswith("/tmp/") and install.startswith("pip install --no-deps wheels/*.whl")
    assert " ".join(install.split()).endswith(f"&& cd / && rm -rf {workdir}")
    assert "--from=wheel /wheels ./wheels" in _final("COPY")


def test_the_image_holds_no_sources_and_no_build_leftovers() -> None:
    """From the build context the final stage takes the files the install reads (into the directory the
    install removes) and the web UI's static files: never lookout/ or lookout/clients/ whole, never a `pip install .`."""
    _install_run, workdir = _install()
    workdirs = [i.args for i in _stages()["final"] if i.keyword == "WORKDIR"]
    for args in _final("COPY"):
        words = shlex.split(args)
        if words[0].startswith("--from="):
            continue
        target = words[-1]
        assert words[:-1] == ["lookout/web"] or (target.startswith("./") and workdirs[0] == workdir), args
    assert not any(re.search(r"pip install (--no-deps )?\.(\s|$)", run) for run in _final("RUN"))
    assert _env()["LOOKOUT_WEB_DIR"] == "/opt/lookout/web"
    assert any(shlex.split(args) == ["lookout/web", "./web"] for args in _final("COPY"))


def test_system_parts_are_installed() -> None:
    apt = next(run for run in _all("RUN") if "apt-get install" in run)
    packages = set(apt.split())
    assert {"bash", "zsh", "chromium", "adb", "tini"} <= packages
    assert "libatomic1" in packages, "Playwright's bundled Node.js cannot start without libatomic.so.1"
    assert any(p.startswith("fonts-") for p in packages)


def test_an_agents_shell_finds_the_everyday_tools_and_the_docs_say_what_they_cost() -> None:
    installs = [set(run.split()) for run in _final("RUN") if "apt-get install" in run]
    packages = set().union(*installs)
    assert {"git", "curl", "less", "jq", "procps", "openssh-client"} <= packages
    assert packages & {"vim-tiny", "nano", "vim"}, "an editor"
    operations = " ".join((REPO / "docs/operations.md").read_text().split())
    assert re.search(r"git, curl, less, jq, procps, vim-tiny and openssh-client[^.]*\b\d+ MB", operations)


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version.strip())
    return pins


def test_every_dependency_is_pinned_in_the_lock_and_both_installs_use_it() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = _pins()
    for spec in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not pinned in requirements.lock (run `make lock`)"
        assert pins[name] in requirement.specifier, f"{name}=={pins[name]} does not meet {spec}"
    deps_step = next(run for run in _all("RUN") if "'dependencies'" in run)
    assert "'-c', 'requirements.lock'" in deps_step
    assert "requirements.lock" in next(args for args in _final("COPY") if "pyproject.toml" in args)
    makefile = (REPO / "Makefile").read_text()
    assert "LOCK   := requirements.lock" in makefile and "pip install -q --disable-pip-version-check -c $(LOCK)" in makefile


def test_the_build_imports_every_module_with_the_runtime_dependencies_alone() -> None:
    """deploy/check_imports.py, the check `make check` runs in a venv without the test extra, runs right
    after the install, where no sources are (it refuses to check a source tree)."""
    install, _workdir = _install()
    assert "pip install --no-deps wheels/*.whl && python check_imports.py &&" in " ".join(install.split())
    assert any(shlex.split(args) == ["deploy/check_imports.py", "./"] for args in _final("COPY"))
    makefile = (REPO / "Makefile").read_text()
    assert "deploy/check_imports.py" in makefile and "runtime-check" in makefile.split("\ncheck:", 1)[1].split("\n\n")[0]
    assert "deploy/check_imports.py" in (REPO / "tests/support/runtime_install.py").read_text()


def test_the_build_starts_the_browser_with_the_daemons_own_launch_code() -> None:
    runs = _all("RUN")
    check = next(run for run in runs if "BrowserHost" in run)
    assert ".check()" in check and runs.index(check) > runs.index(_install()[0])
    assert "/usr/bin/chromium" in check and _env()["LOOKOUT_BROWSER_EXECUTABLE"] == "/usr/bin/chromium"


def test_runs_lookout_supervised_as_a_non_root_user_on_all_interfaces() -> None:
    instructions = _instructions()
    keywords = [i.keyword for i in instructions]
    assert json.loads(_all("CMD")[-1]) == ["lookout", "supervise"]  # the daemon, started again when it dies
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["lookout"] == "lookout.launch:main"
    user = _all("USER")[-1]
    assert user not in ("root", "0") and keywords.index("USER") < keywords.index("CMD")
    env = _env()
    settings = Settings(host=env["LOOKOUT_HOST"], port=env["LOOKOUT_PORT"], data_dir=env["LOOKOUT_DATA_DIR"])
    assert not is_loopback(settings.host), "reachable from outside the container, so a token is required"
    assert "LOOKOUT_TOKEN" not in env, "the token is never baked into the image"


def test_port_volume_and_healthcheck_match_the_settings() -> None:
    env = _env()
    port = Settings(port=env["LOOKOUT_PORT"]).port
    assert port == Settings.model_fields["port"].default
    assert _all("EXPOSE") == [str(port)]
    assert _all("VOLUME") == [env["LOOKOUT_DATA_DIR"]]
    health = _all("HEALTHCHECK")[-1]
    assert f"http://127.0.0.1:{port}/healthz" in health and "CMD" in health


def test_compose_builds_the_dockerfile_with_port_volume_and_token() -> None:
    service = _compose_service()
    env = _env()
    assert service["build"]["dockerfile"] == "Dockerfile" and (REPO / service["build"]["context"]).resolve() == REPO
    assert [p.rsplit(":", 1)[1] for p in service["ports"]] == [env["LOOKOUT_PORT"]]
    volumes = yaml.safe_load((REPO / "compose.yaml").read_text())["volumes"]
    assert [v.split(":") for v in service["volumes"]] == [[next(iter(volumes)), env["LOOKOUT_DATA_DIR"]]]
    assert service["env_file"] == ["lookout.env"] and "lookout.env" in _dockerignore()
    assert "LOOKOUT_TOKEN" not in service.get("environment", {})


def test_compose_reaches_the_hosts_adb_server() -> None:
    service = _compose_service()
    assert "host.docker.internal:host-gateway" in service["extra_hosts"]
    assert service["environment"]["LOOKOUT_ADB_HOST"] == "host.docker.internal"
    assert service["environment"]["LOOKOUT_ADB_PORT"] == "5037"


def test_a_ui_package_is_built_in_a_node_stage() -> None:
    """The image builds the UI's npm assets exactly when the UI has a package (lookout/web/package.json)."""
    froms = _all("FROM")
    has_node_stage = any(f.startswith("node:") for f in froms[:-1])
    copies_ui_assets = any("--from=" in args and "./web/node_modules" in args for args in _all("COPY"))
    has_ui_package = (REPO / "lookout/web/package.json").exists()
    assert has_node_stage == has_ui_package and copies_ui_assets == has_ui_package


def test_the_docs_say_when_the_images_supervisor_starts_a_dead_daemon_again() -> None:
    """docs/operations.md gives the supervisor's own figures: at once after STABLE_S, else the pauses of BACKOFF_S."""
    operations = " ".join((REPO / "docs/operations.md").read_text().split())
    pauses = ", ".join(f"{pause:g}" for pause in BACKOFF_S[:-1]) + f", then {BACKOFF_S[-1]:g} s"
    assert f"A daemon that had run {STABLE_S:g} s is started again at once" in operations
    assert f"({pauses})" in operations
