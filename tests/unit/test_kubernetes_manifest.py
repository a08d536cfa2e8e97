"""deploy/kubernetes/lookout.yaml is valid Kubernetes (checked offline against the API's own schemas with
kubernetes-validate) and says what docs/operations.md promises: a StatefulSet with the data dir on a volume,
the token from a Secret, readiness on /healthz, the port and data dir the daemon is told, and no Service
beyond the cluster."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from lookout.config import Settings

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "lookout.yaml"
KUBERNETES = "1.30.0"


def _docs() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc]


def _kind(kind: str) -> dict[str, Any]:
    (found,) = [doc for doc in _docs() if doc["kind"] == kind]
    return found


@pytest.mark.parametrize("doc", _docs(), ids=lambda d: d["kind"])
def test_every_resource_is_valid_against_the_kubernetes_schemas(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def test_a_broken_resource_would_be_caught() -> None:
    broken = _kind("StatefulSet")
    broken["spec"]["replicas"] = "one"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


def test_the_statefulset_runs_the_daemon_as_the_docs_say() -> None:
    spec = _kind("StatefulSet")["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    settings = Settings(**{name.removeprefix("LOOKOUT_").lower(): e["value"] for name, e in env.items()
                           if name.startswith("LOOKOUT_") and "value" in e and "$(" not in e["value"]})  # fmt: skip
    assert env["LOOKOUT_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "lookout-token", "key": "token"}
    assert "value" not in env["LOOKOUT_TOKEN"], "no token in the manifest"
    (port,) = container["ports"]
    assert port["containerPort"] == settings.port
    (mount,) = container["volumeMounts"]
    assert Path(mount["mountPath"]) == settings.data_dir
    assert [t["metadata"]["name"] for t in spec["volumeClaimTemplates"]] == [mount["name"]]
    probe = container["readinessProbe"]["httpGet"]
    assert probe["path"] == "/healthz" and probe["port"] == port["name"]
    assert spec["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_nothing_is_exposed_beyond_the_cluster() -> None:
    kinds = {doc["kind"] for doc in _docs()}
    assert kinds == {"Service", "StatefulSet"}, "no Ingress, no Gateway"
    service = _kind("Service")["spec"]
    assert service.get("type", "ClusterIP") == "ClusterIP" and service["clusterIP"] == "None"
    assert _kind("StatefulSet")["spec"]["serviceName"] == _kind("Service")["metadata"]["name"]
