"""The Kubernetes manifests, checked by reading what the overlays render.

Every overlay renders (kustomize), every object is valid against the
Kubernetes schemas (kubernetes-validate, strict: unknown fields are errors),
and the operational policies hold: limits, probes, non-root, read-only root,
a disruption budget per workload, pinned images, gRPC load balancing that
spreads calls, a 3-node JetStream cluster, a cache that evicts, network
policies that let only the right pods reach NATS and Redis.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest

from tests.deploy.manifests import (
    OVERLAYS,
    RENDERED,
    Obj,
    Peer,
    containers,
    env_of,
    find,
    ingress_allowed,
    one,
    pod_template,
    render,
    render_text,
    selector_matches,
    workloads,
)
from tests.deploy.quantities import parse_quantity, parse_redis_bytes

# The oldest Kubernetes minor we claim to support, and the newest the
# validator ships schemas for (both bundled in the wheel: no network).
K8S_VERSIONS = ("1.31", kubernetes_validate.latest_version())

SERVICES = ("rules", "match", "matchmaking", "tournaments", "bots", "gateway")
GRPC_SERVICES = {
    "rules": "tabletop.rules.v1.RulesService",
    "match": "tabletop.match.v1.MatchService",
    "matchmaking": "tabletop.matchmaking.v1.MatchmakingService",
    "tournaments": "tabletop.tournaments.v1.TournamentService",
}
# The services that serve Prometheus metrics (all of them).
METRICS = ("rules", "match", "matchmaking", "tournaments", "bots", "gateway")
NAMESPACE = "tabletop"

overlay = pytest.mark.parametrize("overlay", OVERLAYS)


# ------------------------------------------------------------------ rendering
@overlay
def test_checked_in_rendering_is_current(overlay: str) -> None:
    """`make k8s` output is checked in under k8s/rendered/ and matches the sources."""
    checked_in = (RENDERED / f"{overlay}.yaml").read_text()
    assert checked_in == render_text(overlay), "k8s/rendered is stale: run `make k8s`"


@overlay
def test_everything_lives_in_one_namespace(overlay: str) -> None:
    objs = render(overlay)
    one(objs, "Namespace", NAMESPACE)
    for o in objs:
        if o["kind"] != "Namespace":
            assert o["metadata"].get("namespace") == NAMESPACE, o["metadata"]["name"]


# ------------------------------------------------------------------- schemas
@overlay
@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_object_is_valid_against_the_schemas(overlay: str, version: str) -> None:
    errors = []
    for o in render(overlay):
        try:
            kubernetes_validate.validate(o, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            errors.append(f"{o['kind']}/{o['metadata']['name']}: {path}: {e.message}")
    assert not errors, "\n".join(errors)


def test_the_validator_rejects_what_it_should() -> None:
    """The schema check is live: an unknown field and a wrong type both fail."""
    deployment = one(render("prod"), "Deployment", "rules")
    typo = copy.deepcopy(deployment)
    typo["spec"]["template"]["spec"]["containers"][0]["resource"] = {}
    wrong_type = copy.deepcopy(deployment)
    wrong_type["spec"]["replicas"] = "three"
    for bad in (typo, wrong_type):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(bad, K8S_VERSIONS[0], strict=True)


# -------------------------------------------------------- container policies
@overlay
def test_every_container_has_requests_and_limits(overlay: str) -> None:
    for c in containers(render(overlay)):
        res = c.spec.get("resources", {})
        for what in ("cpu", "memory"):
            request = res.get("requests", {}).get(what)
            limit = res.get("limits", {}).get(what)
            assert request and limit, f"{c.where}: {what} request and limit required"
            assert parse_quantity(request) <= parse_quantity(limit), f"{c.where}: {what}"


@overlay
def test_every_container_has_probes(overlay: str) -> None:
    for c in containers(render(overlay), init=False):
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            assert probe in c.spec, f"{c.where}: no {probe}"


@overlay
def test_every_container_runs_as_non_root_with_a_read_only_root(overlay: str) -> None:
    """The restricted Pod Security Standard, and a read-only root filesystem."""
    for c in containers(render(overlay)):
        pod_sc = c.pod.get("securityContext", {})
        sc = {**pod_sc, **c.spec.get("securityContext", {})}
        assert sc.get("runAsNonRoot") is True, c.where
        assert isinstance(sc.get("runAsUser"), int) and sc["runAsUser"] > 0, c.where
        assert sc.get("readOnlyRootFilesystem") is True, c.where
        assert sc.get("allowPrivilegeEscalation") is False, c.where
        assert sc.get("capabilities", {}).get("drop") == ["ALL"], c.where
        assert not sc.get("capabilities", {}).get("add"), c.where
        assert sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", c.where
        assert c.pod.get("automountServiceAccountToken") is False, c.where
        assert not c.pod.get("hostNetwork") and not c.pod.get("hostPID"), c.where


@overlay
def test_images_are_pinned(overlay: str) -> None:
    for c in containers(render(overlay)):
        image = c.spec["image"]
        name, _, digest = image.partition("@")
        tag = name.rsplit("/", 1)[-1].partition(":")[2]
        assert digest or tag, f"{c.where}: {image} has no tag"
        assert tag != "latest", f"{c.where}: {image}"
        assert c.spec.get("imagePullPolicy") != "Always" or digest, c.where


@overlay
def test_every_workload_has_a_disruption_budget(overlay: str) -> None:
    objs = render(overlay)
    pdbs = find(objs, "PodDisruptionBudget")
    for w in workloads(objs):
        labels = pod_template(w)["metadata"]["labels"]
        matching = [p for p in pdbs if selector_matches(p["spec"]["selector"], labels)]
        assert len(matching) == 1, f"{w['kind']}/{w['metadata']['name']}: {len(matching)} PDBs"
        spec = matching[0]["spec"]
        replicas = w["spec"].get("replicas", 1)
        hpas = [
            h
            for h in find(objs, "HorizontalPodAutoscaler")
            if h["spec"]["scaleTargetRef"]["name"] == w["metadata"]["name"]
        ]
        if hpas:
            replicas = hpas[0]["spec"]["minReplicas"]
        # A budget that never allows an eviction blocks node drains forever.
        if "minAvailable" in spec:
            assert spec["minAvailable"] < replicas, w["metadata"]["name"]
        else:
            assert spec["maxUnavailable"] >= 1, w["metadata"]["name"]


# ---------------------------------------------------------------- the services
@overlay
def test_the_four_services_run_from_the_one_image(overlay: str) -> None:
    objs = render(overlay)
    images = set()
    for name in SERVICES:
        (c,) = pod_template(one(objs, "Deployment", name))["spec"]["containers"]
        assert c["args"][0] == name
        images.add(c["image"])
    assert len(images) == 1, images


@overlay
@pytest.mark.parametrize("name", sorted(GRPC_SERVICES))
def test_grpc_probes_use_the_health_service(overlay: str, name: str) -> None:
    (c,) = pod_template(one(render(overlay), "Deployment", name))["spec"]["containers"]
    grpc_port = next(p["containerPort"] for p in c["ports"] if p["name"] == "grpc")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"]["port"] == grpc_port, probe
    # Ready = this service is SERVING (it goes NOT_SERVING first on SIGTERM);
    # alive = the server answers at all.
    assert c["readinessProbe"]["grpc"]["service"] == GRPC_SERVICES[name]
    assert c["livenessProbe"]["grpc"].get("service", "") == ""


@overlay
@pytest.mark.parametrize("name", sorted(GRPC_SERVICES))
def test_termination_leaves_time_to_drain(overlay: str, name: str) -> None:
    pod = pod_template(one(render(overlay), "Deployment", name))["spec"]
    (c,) = pod["containers"]
    pause = c["lifecycle"]["preStop"]["sleep"]["seconds"]
    # preStop pause + drain (NOT_SERVING) + the server's grace must fit.
    assert pod["terminationGracePeriodSeconds"] >= pause + 30


@overlay
@pytest.mark.parametrize("name", ["rules", "match"])
def test_rules_and_match_scale_on_cpu(overlay: str, name: str) -> None:
    objs = render(overlay)
    (hpa,) = [
        h
        for h in find(objs, "HorizontalPodAutoscaler")
        if h["spec"]["scaleTargetRef"]["name"] == name
    ]
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["apiVersion"]) == ("Deployment", "apps/v1")
    deployment = one(objs, "Deployment", name)
    # The HPA owns the replica count: a count in the manifest would be reset
    # by every apply.
    assert "replicas" not in deployment["spec"]
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    # Utilization is relative to the request: there must be one.
    (c,) = pod_template(deployment)["spec"]["containers"]
    assert c["resources"]["requests"]["cpu"]


def _container(objs, name):  # type: ignore[no-untyped-def]
    return next(c for c in containers(objs) if c.workload["metadata"]["name"] == name)


# Which container calls which gRPC service, through which variable.
GRPC_TARGETS = [
    ("match", "TABLETOP_RULES_ADDR", "rules"),
    ("matchmaking", "TABLETOP_MATCH_ADDR", "match"),
    ("bots", "TABLETOP_MATCH_ADDR", "match"),
    ("tournaments", "TABLETOP_MATCH_ADDR", "match"),
]


@overlay
@pytest.mark.parametrize(("client", "variable", "service"), GRPC_TARGETS)
def test_grpc_targets_resolve_to_every_pod(
    overlay: str, client: str, variable: str, service: str
) -> None:
    """Service-to-service calls go to `dns:///` names of headless Services, so
    the client's round_robin policy sees (and spreads over) every pod."""
    objs = render(overlay)
    env = env_of(_container(objs, client), objs)
    m = re.fullmatch(
        r"dns:///([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?:(\d+)", env[variable]
    )
    assert m, env[variable]
    svc_name, namespace, port = m.group(1), m.group(2), int(m.group(3))
    assert (svc_name, namespace) == (service, NAMESPACE)
    svc = one(objs, "Service", svc_name)
    assert svc["spec"]["clusterIP"] == "None", "a ClusterIP pins each connection to one pod"
    assert port in [p["port"] for p in svc["spec"]["ports"]]
    deployment = one(objs, "Deployment", service)
    assert selector_matches(
        {"matchLabels": svc["spec"]["selector"]}, pod_template(deployment)["metadata"]["labels"]
    )
    (c,) = pod_template(deployment)["spec"]["containers"]
    assert port in [p["containerPort"] for p in c["ports"]]


@overlay
def test_every_service_selects_pods(overlay: str) -> None:
    objs = render(overlay)
    for svc in find(objs, "Service"):
        sel = {"matchLabels": svc["spec"]["selector"]}
        pods = [
            w
            for w in workloads(objs)
            if selector_matches(sel, pod_template(w)["metadata"]["labels"])
        ]
        assert pods, svc["metadata"]["name"]
        ports = {
            p["name"]
            for w in pods
            for c in pod_template(w)["spec"]["containers"]
            for p in c.get("ports", [])
        }
        for p in svc["spec"]["ports"]:
            assert p["targetPort"] in ports, (svc["metadata"]["name"], p)


# ------------------------------------------------------------------ settings
@overlay
def test_config_and_secret_references_resolve(overlay: str) -> None:
    objs = render(overlay)
    configmaps = {o["metadata"]["name"] for o in find(objs, "ConfigMap")}
    secrets = {o["metadata"]["name"] for o in find(objs, "Secret")}
    # prod takes the token secret from outside the manifests (docs/deploy.md).
    external = {"tabletop-jwt"} if overlay == "prod" else set()
    for c in containers(objs):
        for src in c.spec.get("envFrom", []):
            assert src["configMapRef"]["name"] in configmaps, c.where
        for e in c.spec.get("env", []):
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert ref["name"] in secrets | external, (c.where, ref)
    for w in workloads(objs):
        for v in pod_template(w)["spec"].get("volumes", []):
            if "configMap" in v:
                assert v["configMap"]["name"] in configmaps, w["metadata"]["name"]


def test_prod_carries_no_secret_values() -> None:
    assert find(render("prod"), "Secret") == []
    text = render_text("prod")
    assert "dev-only" not in text


@overlay
def test_services_share_one_settings_map(overlay: str) -> None:
    objs = render(overlay)
    maps = set()
    for name in SERVICES:
        c = _container(objs, name)
        (src,) = c.spec["envFrom"]
        maps.add(src["configMapRef"]["name"])
        env = env_of(c, objs)
        assert env["TABLETOP_LOG_FORMAT"] in ("json", "console")
    assert len(maps) == 1


# ---------------------------------------------------------------- NATS cluster
@overlay
def test_nats_is_a_three_node_jetstream_cluster(overlay: str) -> None:
    objs = render(overlay)
    sts = one(objs, "StatefulSet", "nats")
    replicas = sts["spec"]["replicas"]
    assert replicas == 3
    headless = one(objs, "Service", sts["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    (c,) = pod_template(sts)["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    conf = _nats_conf(objs)
    store_dir = re.search(r"store_dir:\s*(\S+)", conf).group(1)  # type: ignore[union-attr]
    assert mounts[claim["metadata"]["name"]] == store_dir
    routes = re.findall(r"nats://([a-z0-9.-]+):6222", conf)
    service = sts["spec"]["serviceName"]
    assert sorted(routes) == [f"nats-{i}.{service}" for i in range(replicas)]
    # Clients reach any node through the client Service (and learn the others
    # from the cluster, to reconnect to on failure).
    for name in ("match", "matchmaking", "tournaments"):
        env = env_of(_container(objs, name), objs)
        m = re.fullmatch(r"nats://([a-z0-9-]+):(\d+)", env["TABLETOP_NATS_URL"])
        assert m, env["TABLETOP_NATS_URL"]
        client_svc = one(objs, "Service", m.group(1))
        assert selector_matches(
            {"matchLabels": client_svc["spec"]["selector"]}, pod_template(sts)["metadata"]["labels"]
        )
        assert int(m.group(2)) in [p["port"] for p in client_svc["spec"]["ports"]]


def test_the_matches_stream_has_three_replicas_in_prod() -> None:
    objs = render("prod")
    env = env_of(_container(objs, "match"), objs)
    assert env["TABLETOP_MATCH_STREAM_REPLICAS"] == "3"
    assert one(objs, "StatefulSet", "nats")["spec"]["replicas"] >= 3


@overlay
def test_stream_replicas_fit_the_cluster(overlay: str) -> None:
    objs = render(overlay)
    env = env_of(_container(objs, "match"), objs)
    replicas = int(env["TABLETOP_MATCH_STREAM_REPLICAS"])
    assert replicas in (1, 3, 5)  # JetStream wants an odd count
    assert replicas <= one(objs, "StatefulSet", "nats")["spec"]["replicas"]


def _nats_conf(objs):  # type: ignore[no-untyped-def]
    sts = one(objs, "StatefulSet", "nats")
    (vol,) = [v for v in pod_template(sts)["spec"]["volumes"] if "configMap" in v]
    return one(objs, "ConfigMap", vol["configMap"]["name"])["data"]["nats.conf"]


@overlay
def test_nats_server_accepts_the_rendered_config(overlay: str, tmp_path: Path) -> None:
    """The real nats-server parses the config with the container's environment."""
    objs = render(overlay)
    conf = tmp_path / "nats.conf"
    conf.write_text(_nats_conf(objs))
    (c,) = pod_template(one(objs, "StatefulSet", "nats"))["spec"]["containers"]
    env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    env["POD_NAME"] = "nats-0"  # the downward API fills it in the cluster
    binary = Path(sys.executable).parent / "nats-server"
    done = subprocess.run(
        [str(binary), "-c", str(conf), "-t"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Without the variable the server refuses to start: the check above is live.
    del env["JS_MAX_FILE_STORE"]
    bad = subprocess.run(
        [str(binary), "-c", str(conf), "-t"],
        env={k: v for k, v in {**os.environ, **env}.items() if k != "JS_MAX_FILE_STORE"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert bad.returncode != 0


@overlay
def test_nats_drains_clients_before_stopping(overlay: str) -> None:
    objs = render(overlay)
    sts = one(objs, "StatefulSet", "nats")
    pod = pod_template(sts)["spec"]
    (c,) = pod["containers"]
    assert "ldm=" in " ".join(c["lifecycle"]["preStop"]["exec"]["command"])
    conf = _nats_conf(objs)
    duration = int(re.search(r"lame_duck_duration:\s*(\d+)s", conf).group(1))  # type: ignore[union-attr]
    assert pod["terminationGracePeriodSeconds"] > duration


# ----------------------------------------------------------------------- Redis
def _redis_options(workload: Obj) -> tuple[dict[str, str], Obj]:
    (c,) = pod_template(workload)["spec"]["containers"]
    env = {e["name"]: e["value"] for e in c.get("env", [])}
    args = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
    return dict(zip(args[1::2], args[2::2], strict=False)), c


def _fits(opts: dict[str, str], c: Obj) -> None:
    maxmemory = parse_redis_bytes(opts["--maxmemory"])
    limit = parse_quantity(c["resources"]["limits"]["memory"])
    # Room for the server's own overhead and fragmentation above maxmemory.
    assert 0 < maxmemory <= 0.8 * limit, (opts["--maxmemory"], limit)


@overlay
def test_the_projection_cache_evicts_within_its_limit(overlay: str) -> None:
    opts, c = _redis_options(one(render(overlay), "Deployment", "redis-cache"))
    assert opts["--maxmemory-policy"].startswith(("allkeys-", "volatile-"))
    assert opts["--save"] == "" and opts["--appendonly"] == "no"
    _fits(opts, c)


@overlay
def test_matchmaking_data_is_kept_not_evicted(overlay: str) -> None:
    """Tickets, ratings and bot jobs are data: no eviction, an fsynced
    append-only file on a persistent volume."""
    sts = one(render(overlay), "StatefulSet", "redis-state")
    opts, c = _redis_options(sts)
    assert opts["--maxmemory-policy"] == "noeviction"
    assert opts["--appendonly"] == "yes" and opts["--appendfsync"] in ("everysec", "always")
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == opts["--dir"]
    _fits(opts, c)


@overlay
@pytest.mark.parametrize(
    ("client", "redis"),
    [
        ("match", "redis-cache"),
        ("matchmaking", "redis-state"),
        ("bots", "redis-state"),
        ("tournaments", "redis-state"),
    ],
)
def test_each_service_uses_the_right_redis(overlay: str, client: str, redis: str) -> None:
    objs = render(overlay)
    env = env_of(_container(objs, client), objs)
    m = re.fullmatch(r"redis://([a-z0-9-]+):(\d+)/\d+", env["TABLETOP_REDIS_URL"])
    assert m and m.group(1) == redis, env["TABLETOP_REDIS_URL"]
    svc = one(objs, "Service", redis)
    assert int(m.group(2)) in [p["port"] for p in svc["spec"]["ports"]]


# ------------------------------------------------------------ network policies
def _pods(objs):  # type: ignore[no-untyped-def]
    return {w["metadata"]["name"]: pod_template(w)["metadata"]["labels"] for w in workloads(objs)}


def _reachers(overlay: str, target: str, port: int) -> set[str]:
    objs = render(overlay)
    policies = find(objs, "NetworkPolicy")
    ns_labels = {
        **one(objs, "Namespace", NAMESPACE)["metadata"].get("labels", {}),
        "kubernetes.io/metadata.name": NAMESPACE,
    }
    pods = _pods(objs)
    peers = [Peer(name, ns_labels, labels) for name, labels in pods.items()]
    peers += [
        Peer("other-namespace", {"kubernetes.io/metadata.name": "default"}, {}),
        Peer("monitoring", {"kubernetes.io/metadata.name": "monitoring"}, {}),
        Peer("internet", None, {}),
    ]
    return {p.name for p in peers if ingress_allowed(policies, ns_labels, pods[target], port, p)}


@overlay
def test_only_match_matchmaking_and_tournaments_reach_nats(overlay: str) -> None:
    assert _reachers(overlay, "nats", 4222) == {"match", "matchmaking", "tournaments", "nats"}
    assert _reachers(overlay, "nats", 6222) == {"nats"}  # routes


@overlay
def test_only_the_match_service_reaches_the_cache(overlay: str) -> None:
    assert _reachers(overlay, "redis-cache", 6379) == {"match"}


@overlay
def test_only_matchmaking_bots_and_tournaments_reach_their_redis(overlay: str) -> None:
    assert _reachers(overlay, "redis-state", 6379) == {"matchmaking", "bots", "tournaments"}


@overlay
def test_the_rules_service_is_internal(overlay: str) -> None:
    assert _reachers(overlay, "rules", 50051) == {"match", "gateway"}


@overlay
def test_public_apis_and_metrics_are_reachable(overlay: str) -> None:
    for name in ("match", "matchmaking", "tournaments"):
        assert {"internet", "bots"} <= _reachers(overlay, name, 50051)
    assert set(METRICS) == set(SERVICES)
    for name in METRICS:
        assert _reachers(overlay, name, 9090) == {"monitoring"}
        pod = pod_template(one(render(overlay), "Deployment", name))
        assert pod["metadata"]["annotations"]["prometheus.io/port"] == "9090"


def test_the_policy_model_is_not_trivially_permissive() -> None:
    """Without the default deny, a pod no policy selects is open to all."""
    objs = [o for o in render("prod") if o["metadata"]["name"] != "default-deny-ingress"]
    policies = find(objs, "NetworkPolicy")
    ns = {"kubernetes.io/metadata.name": NAMESPACE}
    bots = Peer("bots", ns, _pods(objs)["bots"])
    assert not ingress_allowed(policies, ns, _pods(objs)["redis-cache"], 6379, bots)
    assert ingress_allowed(policies, ns, {"app.kubernetes.io/name": "debug"}, 8080, bots)


@overlay
def test_jetstream_store_limit_fits_the_volume(overlay: str) -> None:
    sts = one(render(overlay), "StatefulSet", "nats")
    (c,) = pod_template(sts)["spec"]["containers"]
    env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    limit = parse_quantity(env["JS_MAX_FILE_STORE"])  # nats-server: decimal units, as here
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    volume = parse_quantity(claim["spec"]["resources"]["requests"]["storage"])
    assert limit <= 0.9 * volume, (env["JS_MAX_FILE_STORE"], volume)


# ------------------------------------------------------------------ the gateway
@overlay
def test_the_gateway_is_public_over_an_ingress_with_http_probes(overlay: str) -> None:
    objs = render(overlay)
    assert "internet" in _reachers(overlay, "gateway", 8080)
    (c,) = pod_template(one(objs, "Deployment", "gateway"))["spec"]["containers"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    env = {e["name"]: e.get("value") for e in c["env"]}
    for name in ("MATCH", "MATCHMAKING", "TOURNAMENTS", "RULES"):
        assert env[f"TABLETOP_{name}_ADDR"].startswith("dns:///"), name
    ingress = one(objs, "Ingress", "gateway")
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["backend"]["service"] == {"name": "gateway", "port": {"name": "http"}}
    service = one(objs, "Service", "gateway")
    assert {p["name"] for p in service["spec"]["ports"]} >= {"http"}
    hpa = one(objs, "HorizontalPodAutoscaler", "gateway")
    assert hpa["spec"]["minReplicas"] >= (3 if overlay == "prod" else 1)
    if overlay == "prod":
        assert ingress["spec"]["tls"], "TLS at the Ingress in prod"
