"""Spark properties with their credentials withheld, before the run history stores them and
whenever it serves them.

Spark's own rule (``Utils.redact``): a property whose key *or* value matches
``spark.redaction.regex`` (default ``(?i)secret|password|token|access[.]?key``) has its value
replaced by ``*********(redacted)``. Spark writes event logs already redacted with the job's
pattern, but its default misses the cloud storage keys (Azure's ``fs.azure.account.key.<account>``
holds the account key itself), so the patterns below are applied as well, and the log's own
``spark.redaction.regex`` when it records one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "*********(redacted)"  # Spark's REDACTION_REPLACEMENT_TEXT

# spark.redaction.regex's default (core/src/main/scala/org/apache/spark/internal/config).
SPARK_DEFAULT_PATTERN = r"(?i)secret|password|token|access[.]?key"

# Keys Spark's default misses that hold a credential (or say where one is), matched anywhere in
# the key (``spark.hadoop.`` prefixed or not):
# - Azure: fs.azure.account.key.<account> (the storage account key), fs.azure.sas.* (SAS tokens),
#   fs.azure.account.oauth2.client.* / fs.azure.account.oauth.provider ids;
# - AWS: fs.s3a.*secret*, fs.s3a.encryption.key / server-side-encryption.key (SSE-C keys),
#   fs.s3a.assumed.role.credentials, any *credential*;
# - GCS: fs.gs.auth.service.account.private.key(.id), *.json.keyfile / keyfile (a key file path),
#   google.cloud.auth.service.account.json.keyfile;
# - others: *passwd*, *pwd*, *private.key*, *privatekey*, *.sig (a signature), *apikey*/api.key,
#   *encryption.key*, *credential*, *auth.key*, *jaas* (Kafka's sasl.jaas.config holds passwords).
CLOUD_KEY_PATTERN = (
    r"(?i)fs\.azure\.account\.key|fs\.azure\.sas|fs\.azure\.account\.oauth|"
    r"fs\.s3a\..*(secret|encryption\.key|server-side-encryption\.key)|"
    r"private[._-]?key|keyfile|credential|passwd|(^|[._])pwd($|[._])|api[._-]?key|"
    r"encryption\.key|auth\.key|jaas|(^|[._])sig($|[._])"
)

# Values that carry a credential whatever their key: userinfo in a URL
# (jdbc:postgresql://user:pass@host, s3a://AKIA…:secret@bucket), PEM private keys, AWS access key
# ids, Azure connection strings and SAS query strings.
CREDENTIAL_VALUE_PATTERN = (
    r"(?i)[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@|-----BEGIN [A-Z ]*PRIVATE KEY-----|"
    r"\b(AKIA|ASIA)[A-Z0-9]{16}\b|AccountKey=|SharedAccessSignature=|[?&]sig=|"
    r"\"private_key\"\s*:"
)

_BUILT_IN = [
    re.compile(SPARK_DEFAULT_PATTERN),
    re.compile(CLOUD_KEY_PATTERN),
]
_VALUE = re.compile(CREDENTIAL_VALUE_PATTERN)


def _log_pattern(properties: Mapping[str, str]) -> re.Pattern[str] | None:
    """The job's own spark.redaction.regex (Java syntax; the common subset Python reads alike).
    One Python cannot compile withholds every value: better nothing than a credential."""
    configured = properties.get("spark.redaction.regex")
    if not configured or configured in (SPARK_DEFAULT_PATTERN, REDACTED):
        return None  # REDACTED: stored already (its value matches Spark's own pattern)
    try:
        return re.compile(configured)
    except re.error:
        return re.compile("")  # matches everything


def is_credential(key: str, value: str, extra: re.Pattern[str] | None = None) -> bool:
    """Whether Spark's rule (key or value matches), the cloud key patterns or a credential
    shape in the value withhold this property."""
    patterns = [*_BUILT_IN, *([extra] if extra is not None else [])]
    return any(p.search(key) or p.search(value) for p in patterns) or bool(_VALUE.search(value))


def redact_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The properties with every credential's value replaced by Spark's ``*********(redacted)``
    (the key is kept: that a secret was set is worth knowing)."""
    extra = _log_pattern(properties)
    return {
        key: REDACTED if value != REDACTED and is_credential(key, value, extra) else value
        for key, value in properties.items()
    }


def redact_cluster_shape(cluster: dict[str, Any]) -> dict[str, Any]:
    """A stored cluster shape (run_record.cluster_shape) with its settings redacted: for runs
    the history stored before it redacted them."""
    settings = cluster.get("settings")
    if isinstance(settings, dict):
        cluster["settings"] = redact_properties(settings)
    return cluster
