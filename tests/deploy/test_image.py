"""The container image definition and the local compose stack, read as files
(no container engine needed), and the image's entry point, run as a script."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.deploy.manifests import ROOT, one, pod_template, render

DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
ENTRYPOINT = DEPLOY / "entrypoint.sh"
COMPOSE = DEPLOY / "compose.yaml"
SERVICES = ("rules", "match", "matchmaking", "bots", "gateway")


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for ins in _instructions():
        if ins[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(ins)
    return stages


def _args() -> dict[str, str]:
    return dict(
        rest.split("=", 1) for word, rest in _instructions() if word == "ARG" and "=" in rest
    )


def test_the_image_is_multi_stage_from_a_pinned_slim_base() -> None:
    stages = _stages()
    assert len(stages) >= 2
    args = _args()
    for stage in stages:
        base = stage[0][1].split()[0]
        base = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base)
        tag = base.partition(":")[2]
        assert tag and tag != "latest" and re.search(r"\d", tag), base
        assert "slim" in tag or "alpine" in tag or base.startswith("gcr.io/distroless"), base


def test_the_runtime_stage_runs_as_an_unprivileged_user() -> None:
    runtime = _stages()[-1]
    users = [rest for word, rest in runtime if word == "USER"]
    assert users, "the final stage sets no USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "numeric, non-root (runAsNonRoot needs a number)"
    # Matches what the manifests run it as.
    c = pod_template(one(render("prod"), "Deployment", "match"))["spec"]
    assert c["securityContext"]["runAsUser"] == int(uid)


def test_the_runtime_stage_carries_no_build_tools() -> None:
    runtime = _stages()[-1]
    text = " ".join(rest for _, rest in runtime)
    assert "grpcio-tools" not in text and "pip install" not in text
    copies = [rest for word, rest in runtime if word == "COPY"]
    assert all("--from=build" in c or "entrypoint.sh" in c for c in copies), copies


def test_the_entrypoint_picks_the_service() -> None:
    runtime = _stages()[-1]
    (entry,) = [rest for word, rest in runtime if word == "ENTRYPOINT"]
    assert entry == '["tabletop-service"]'
    assert any("entrypoint.sh /usr/local/bin/tabletop-service" in rest for _, rest in runtime)
    env = " ".join(rest for word, rest in runtime if word == "ENV")
    # Nothing is written to a read-only root at run time.
    assert "PYTHONDONTWRITEBYTECODE=1" in env


def test_the_build_context_holds_what_the_image_copies() -> None:
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    kept = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    for word, rest in _instructions():
        if word == "COPY" and "--from=" not in rest:
            sources = [a for a in rest.split()[:-1] if not a.startswith("--")]
            for src in sources:
                assert src in kept, f"COPY {src} is excluded by the dockerignore"
                assert (ROOT / src).exists(), src


def _run_entrypoint(*args: str) -> subprocess.CompletedProcess[str]:
    # The image puts its virtualenv first on PATH; here the project's venv.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_the_entrypoint_refuses_an_unknown_service() -> None:
    done = _run_entrypoint("nonsense")
    assert done.returncode == 64
    assert "unknown service" in done.stderr
    assert _run_entrypoint().returncode == 64
    assert _run_entrypoint("--help").returncode == 0


@pytest.mark.parametrize("service", SERVICES)
def test_the_entrypoint_starts_each_service(service: str) -> None:
    if not (ROOT / "services" / service / "__main__.py").exists():
        pytest.skip(f"services.{service} has no entry point in this tree yet")
    done = _run_entrypoint(service, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower()


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
def test_the_entrypoint_is_posix_sh() -> None:
    done = subprocess.run(["sh", "-n", str(ENTRYPOINT)], capture_output=True, check=False)
    assert done.returncode == 0
    assert ENTRYPOINT.read_text().startswith("#!/bin/sh\n")


# -------------------------------------------------------------------- compose
def _compose() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_runs_each_service_from_the_image() -> None:
    services = _compose()["services"]
    for name in SERVICES:
        s = services[name]
        assert s["command"][0] == name
        assert s["build"]["dockerfile"] == "deploy/Dockerfile"
        assert s["read_only"] is True
        assert int(s["user"].split(":")[0]) != 0
        assert s["cap_drop"] == ["ALL"]


def test_compose_containers_are_hardened_and_pinned() -> None:
    for name, s in _compose()["services"].items():
        assert s["read_only"] is True, name
        assert int(s["user"].split(":")[0]) != 0, name
        tag = s["image"].rsplit("/", 1)[-1].partition(":")[2]
        assert tag and tag != "latest", name


@pytest.mark.parametrize("service", SERVICES)
def test_compose_sets_the_same_settings_as_kubernetes(service: str) -> None:
    objs = render("prod")
    (c,) = pod_template(one(objs, "Deployment", service))["spec"]["containers"]
    configmap = one(objs, "ConfigMap", c["envFrom"][0]["configMapRef"]["name"])
    k8s_names = set(configmap["data"]) | {e["name"] for e in c["env"]}
    compose_names = set(_compose()["services"][service]["environment"])
    assert compose_names == k8s_names


# ------------------------------------------------- the image's build, without an engine
def _run_line(stage: str) -> str:
    """The RUN instruction of a stage, as one shell command."""
    for stage_lines in _stages():
        if stage_lines[0][1].endswith(f"AS {stage}"):
            (run,) = [rest for word, rest in stage_lines if word == "RUN" and "protoc" in rest]
            return run
    raise AssertionError(f"no stage {stage}")


def test_the_image_build_steps_give_a_working_install(tmp_path: Path) -> None:
    """What the image's stages do, done here: the build context (as the
    dockerignore leaves it), the `protos` stage's code generation, a regular
    (non-editable) install of the project, then each service's entry point from
    that install alone, outside the source tree."""
    context = tmp_path / "context"
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    for entry in (line[1:].rstrip("/") for line in ignore if line.startswith("!")):
        src = ROOT / entry
        if src.is_dir():
            shutil.copytree(src, context / entry, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (context / entry).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, context / entry)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["sh", "-c", _run_line("protos")], cwd=context, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    # Build with the environment's setuptools when it has one (no download).
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *isolation,
         "--target", str(site), "."],
        cwd=context, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (site / "tabletop" / "common" / "v1" / "common_pb2.py").exists()
    env["PYTHONPATH"] = str(site)
    for service in SERVICES:
        if not (ROOT / "services" / service / "__main__.py").exists():
            continue
        done = subprocess.run(
            ["sh", str(context / "deploy" / "entrypoint.sh"), service, "--help"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, (service, done.stderr)
        assert "usage" in done.stdout.lower()
