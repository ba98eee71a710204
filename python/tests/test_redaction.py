"""Credentials among a run's Spark properties are withheld before the run history stores them
and whenever ``serve`` answers: Spark's own rule (spark.redaction.regex's default, key or value)
plus the cloud storage keys Spark's default misses, and the log's own spark.redaction.regex."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from synthetic_runs import make_run

import sparkprof
from sparkprof.redaction import REDACTED, redact_properties
from sparkprof.server import create_app
from sparkprof.store import HistoryStore
from sparkprof.store.schema import Run

# Each value is unique, so finding it anywhere (database file, answers) is a leak.
SECRETS = {
    # Missed by Spark's default pattern: the Azure storage account key itself, a SAS token.
    "spark.hadoop.fs.azure.account.key.prodlake.dfs.core.windows.net": "AZKEY0xq9Hn2+Zk3w==",
    "spark.hadoop.fs.azure.sas.logs.prodlake.blob.core.windows.net": "sv=2022&SASTOKEN77",
    "spark.hadoop.fs.gs.auth.service.account.private.key": "GCSPRIVATE-abc123",
    "spark.hadoop.fs.gs.auth.service.account.private.key.id": "GCSKEYID-5521",
    "spark.hadoop.google.cloud.auth.service.account.json.keyfile": "/secrets/GCSKEYFILE.json",
    "spark.hadoop.fs.s3a.server-side-encryption.key": "SSECKEY-4f4f4f",
    "spark.kafka.sasl.jaas.config": "PlainLoginModule username=u JAASPW=x1;",
    # Caught by Spark's default (key): secret, password, token, access key.
    "spark.hadoop.fs.s3a.secret.key": "S3SECRET-wJalrXUtnFEMI",
    "spark.hadoop.fs.s3a.access.key": "S3ACCESS-AKIDX",
    "spark.hadoop.fs.s3a.session.token": "S3SESSION-IQoJb3",
    "spark.ssl.keyStorePassword": "KEYSTOREPW-1",
    # Caught by the value: Spark's pattern, or a credential's shape whatever the key.
    "spark.driver.extraJavaOptions": "-Ddb.password=JAVAOPTPW-9",
    "spark.myapp.jdbc.url": "jdbc:postgresql://etl:URLPW-77@db:5432/sales",
    "spark.myapp.aws.id": "AKIAIOSFODNN7EXAMPLE",
    "spark.myapp.tls": "-----BEGIN RSA PRIVATE KEY-----PEMBODY-----END RSA PRIVATE KEY-----",
    # The job's own spark.redaction.regex (set below) names this one.
    "spark.mycorp.ticket": "CORPTICKET-31",
}
KEPT = {
    "spark.executor.memory": "4g",
    "spark.sql.shuffle.partitions": "400",
    "spark.eventLog.dir": "s3a://logs-bucket/spark/",
    "spark.master": "spark://master:7077",
}
# Its value matches Spark's own pattern ("secret"): Spark withholds it too, after it is read.
JOB_PATTERN = {"spark.redaction.regex": "(?i)secret|password|token|access[.]?key|mycorp[.]ticket"}


@pytest.fixture()
def secret_log(demo_logs: dict[str, Path], tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    return make_run(demo_logs["plain"], folder, 1, settings={**SECRETS, **KEPT, **JOB_PATTERN})


def test_the_rule() -> None:
    redacted = redact_properties({**SECRETS, **KEPT, **JOB_PATTERN})
    assert {k: v for k, v in redacted.items() if k in SECRETS} == dict.fromkeys(SECRETS, REDACTED)
    assert {k: v for k, v in redacted.items() if k in KEPT} == KEPT
    assert redacted["spark.redaction.regex"] == REDACTED
    # Redacting what was stored redacted changes nothing (the job's pattern is gone by then).
    assert redact_properties(redacted) == redacted
    # Spark's rule on its own: without the job's pattern the ticket stays.
    assert redact_properties({"spark.mycorp.ticket": "x"}) == {"spark.mycorp.ticket": "x"}
    # A job pattern Python cannot read withholds every value rather than risk one.
    assert redact_properties({"spark.redaction.regex": "(?<bad", "a": "b"})["a"] == REDACTED


def test_never_stored_never_served(secret_log: Path, tmp_path: Path) -> None:
    database = tmp_path / "history.sqlite"
    store = HistoryStore(f"sqlite:///{database}")
    analysed = next(sparkprof.iter_applications(secret_log))
    assert analysed.spark_properties["spark.mycorp.ticket"] == "CORPTICKET-31"  # the log has it
    run = store.save_run(analysed, str(secret_log))
    stored = json.loads(run.settings_json)
    assert {k: stored[k] for k in SECRETS} == dict.fromkeys(SECRETS, REDACTED)
    assert {k: stored[k] for k in KEPT} == KEPT
    # Nowhere in the database: every table's raw bytes, and the gzip'd HTML report inside it.
    with sqlite3.connect(database) as raw:
        dump = "\n".join(raw.iterdump())
        html = gzip.decompress(raw.execute("select html_gzip from run_html").fetchone()[0])
    for value in SECRETS.values():
        assert value not in dump and value.encode() not in html

    client = TestClient(create_app(store), base_url="http://127.0.0.1")
    served = client.get(f"/applications/{run.id}")
    assert served.status_code == 200
    assert (
        served.json()["settings"]["spark.hadoop.fs.azure.account.key.prodlake.dfs.core.windows.net"]
        == REDACTED
    )
    for path in (f"/applications/{run.id}", f"/applications/{run.id}/report", "/applications"):
        answer = client.get(path).text
        assert not [v for v in SECRETS.values() if v in answer], path
    with open(secret_log, "rb") as log:
        analysed_upload = client.post("/analyze", files={"log": ("a.log", log)}).text
    assert not [v for v in SECRETS.values() if v in analysed_upload]

    # A run stored before the history redacted (its settings as the log had them) is served
    # redacted all the same.
    with store.session() as session, session.begin():
        row = session.get(Run, run.id)
        assert row is not None
        row.settings_json = json.dumps({**SECRETS, **KEPT, **JOB_PATTERN})
        cluster = json.loads(row.cluster_json)
        cluster["settings"]["spark.master"] = "spark://admin:MASTERPW-3@master:7077"
        row.cluster_json = json.dumps(cluster)
    answer = client.get(f"/applications/{run.id}")
    assert not [v for v in [*SECRETS.values(), "MASTERPW-3"] if v in answer.text]
    assert answer.json()["settings"]["spark.executor.memory"] == "4g"
    store.close()
