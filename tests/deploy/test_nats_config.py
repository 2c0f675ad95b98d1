"""The NATS config the StatefulSet ships forms a JetStream cluster.

The rendered ``nats.conf`` is run by three real nats-server processes, with
only what differs on one machine rewritten: the pods' stable names become
127.0.0.1 with a port each, ``/data`` and the pid file a temp folder. Everything
else (server names from ``$POD_NAME``, the cluster block and its routes, the
JetStream limits from the container's environment) is the shipped config.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

from services.common.servers import NatsServer, ServerError, free_port, nats_server_binary
from tests.deploy.manifests import OVERLAYS, one, pod_template, render


class ConfiguredNats(NatsServer):
    """nats-server run from a config file (plus the log file option)."""

    def __init__(self, conf: Path, env: dict[str, str], port: int, data_dir: Path) -> None:
        super().__init__(port=port, data_dir=data_dir)
        self.conf = conf
        self.env = env

    def _command(self) -> list[str]:
        return [str(nats_server_binary()), "-c", str(self.conf), "--log", str(self.log_path)]

    def start(self, timeout: float = 15.0):  # type: ignore[no-untyped-def]
        saved = dict(os.environ)
        os.environ.update(self.env)  # the config reads $POD_NAME etc.
        try:
            return super().start(timeout)
        finally:
            os.environ.clear()
            os.environ.update(saved)


def _conf_and_env(overlay: str) -> tuple[str, dict[str, str], int]:
    objs = render(overlay)
    sts = one(objs, "StatefulSet", "nats")
    (vol,) = [v for v in pod_template(sts)["spec"]["volumes"] if "configMap" in v]
    conf = one(objs, "ConfigMap", vol["configMap"]["name"])["data"]["nats.conf"]
    (c,) = pod_template(sts)["spec"]["containers"]
    env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    return conf, env, sts["spec"]["replicas"]


def _local(conf: str, i: int, ports: list[dict[str, int]], folder: Path) -> str:
    me = ports[i]
    out = conf
    out = re.sub(r"(?m)^listen: 0\.0\.0\.0:4222$", f"listen: 127.0.0.1:{me['client']}", out)
    out = re.sub(r"(?m)^http: 0\.0\.0\.0:8222$", f"http: 127.0.0.1:{me['monitor']}", out)
    out = re.sub(
        r"(?m)^(\s+)listen: 0\.0\.0\.0:6222$", rf"\g<1>listen: 127.0.0.1:{me['cluster']}", out
    )
    for k, p in enumerate(ports):
        out = out.replace(f"nats://nats-{k}.nats-headless:6222", f"nats://127.0.0.1:{p['cluster']}")
    out = out.replace("store_dir: /data", f"store_dir: {folder / 'data'}")
    out = out.replace("pid_file: /var/run/nats/nats.pid", f"pid_file: {folder / 'nats.pid'}")
    assert "0.0.0.0" not in out and "nats-headless" not in out and "store_dir: /data\n" not in out
    return out


def _get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return 0, b""


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_shipped_nats_config_forms_a_jetstream_cluster(overlay: str, tmp_path: Path) -> None:
    import time

    conf, env, replicas = _conf_and_env(overlay)
    nodes: list[ConfiguredNats] = []
    try:
        for attempt in range(3):
            ports = [
                {"client": free_port(), "cluster": free_port(), "monitor": free_port()}
                for _ in range(replicas)
            ]
            try:
                for i in range(replicas):
                    folder = tmp_path / f"try-{attempt}" / f"nats-{i}"
                    folder.mkdir(parents=True)
                    path = folder / "nats.conf"
                    path.write_text(_local(conf, i, ports, folder))
                    env_i = {**env, "POD_NAME": f"nats-{i}"}
                    nodes.append(ConfiguredNats(path, env_i, ports[i]["client"], folder).start())
                break
            except ServerError as e:
                # A "free" port taken meanwhile by a test running in parallel.
                if "address already in use" not in str(e) or attempt == 2:
                    raise
                for node in nodes:
                    node.close()
                nodes = []
        deadline = time.monotonic() + 30
        while True:  # every node healthy and agreeing on a JetStream meta leader
            health = [_get(p["monitor"], "/healthz?js-enabled-only=true")[0] for p in ports]
            metas = [json.loads(_get(p["monitor"], "/jsz")[1] or b"{}") for p in ports]
            leaders = {m.get("meta_cluster", {}).get("leader") for m in metas}
            # A node can report the leader before it counts every peer.
            sizes = [m.get("meta_cluster", {}).get("cluster_size") for m in metas]
            one_leader = len(leaders) == 1 and None not in leaders
            if health == [200] * replicas and one_leader and sizes == [replicas] * replicas:
                break
            assert time.monotonic() < deadline, f"not one cluster: {health} {leaders} {sizes}"
            time.sleep(0.2)
        assert leaders <= {f"nats-{i}" for i in range(replicas)}
        varz = json.loads(_get(ports[1]["monitor"], "/varz")[1])
        assert varz["server_name"] == "nats-1"
        assert varz["cluster"]["name"] == "tabletop"
        # The file store limit comes from the overlay's environment.
        limit = env["JS_MAX_FILE_STORE"]
        units = {"M": 1000**2, "G": 1000**3}  # nats-server: decimal units
        assert varz["jetstream"]["config"]["max_storage"] == int(limit[:-1]) * units[limit[-1]]
        routez = json.loads(_get(ports[2]["monitor"], "/routez")[1])
        peers = {r.get("remote_name") for r in routez["routes"]}
        assert peers == {"nats-0", "nats-1"}
    finally:
        for node in nodes:
            node.close()
