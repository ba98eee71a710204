"""``sparkprof.whatif``: a run replayed through the engine's scheduler model as it was (the
self-prediction) and with other settings, as typed objects and as the exact JSON
``sparkprof whatif --format json`` writes (schema ``sparkprof.whatif/v1``, docs/report-schema.md).

The simulation is the engine's (analyzer/whatif); Python only names the scenario and reads the
answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sparkprof import _native
from sparkprof.analysis import (
    AnalysedApplication,
    Discovery,
    NothingAnalysableError,
    ReadErrorPolicy,
    Source,
    nothing_message,
    resolve,
)
from sparkprof.pricing import CostOptions
from sparkprof.whatif_prediction import (
    SUPPORTED_SETTINGS,
    WHATIF_SCHEMA,
    ClusterFigures,
    ScenarioCost,
    Settings,
    SettingValue,
    StagePrediction,
    WhatifPrediction,
    WhatifReport,
    predict,
    setting_words,
)

# The answer's types live in sparkprof.whatif_prediction (below sparkprof.analysis, which gives
# AnalysedApplication.whatif); they stay importable from here.
__all__ = [
    "SUPPORTED_SETTINGS",
    "WHATIF_SCHEMA",
    "ClusterFigures",
    "ScenarioCost",
    "SettingValue",
    "Settings",
    "StagePrediction",
    "WhatifPrediction",
    "WhatifReport",
    "setting_words",
    "simulate",
    "whatif",
]


def simulate(
    analysed: AnalysedApplication,
    settings: Settings = (),
    fixes: Iterable[str] = (),
    *,
    prepared: bool = True,
) -> WhatifPrediction:
    """The what-if of one analysed application (``ValueError`` for a setting or fix the
    simulator does not know; SUPPORTED_SETTINGS lists the settings). The engine prepares the run
    for its simulator on the first what-if and replays every later scenario against that
    preparation; ``prepared=False`` prepares it again (a baseline for bench/fleet_bench.py)."""
    return predict(analysed.native, settings, fixes, prepared)


def whatif(
    source: Source,
    settings: Settings = (),
    fixes: Iterable[str] = (),
    *,
    name: str | None = None,
    on_read_error: ReadErrorPolicy = "raise",
    cost: CostOptions | None = None,
    **storage_options: Any,
) -> WhatifReport:
    """Replays each application in ``source`` (anything ``sparkprof.analyze`` reads) as it ran
    and with ``settings`` changed (``{"spark.executor.instances": 8}`` or
    ``["spark.executor.instances=8"]``, combined) and ``fixes`` applied (``"skew"``,
    ``"broadcast"``); the answer of ``sparkprof whatif SOURCE --set ... --fix ...``.
    ``cost`` prices it as the CLI's cost flags do (``CostOptions(instance_type="r5.2xlarge")`` is
    ``--instance-type r5.2xlarge``; docs/cost.md).

    Raises ``ValueError`` for an unsupported setting or fix (before any log is read) and
    ``NothingAnalysableError`` when no Spark event could be read."""
    words = setting_words(settings)
    fix_words = [str(fix) for fix in fixes]
    _native.check_scenario(words, fix_words)
    root = resolve(source, name, **storage_options)
    discovery = Discovery(root, on_read_error, right_sizing=False, cost=cost)
    natives = [analysed.native for _, analysed in discovery.analyse() if analysed is not None]
    if not natives:
        raise NothingAnalysableError(
            nothing_message(source, name, discovery.skipped), discovery.warnings, discovery.skipped
        )
    each, document = _native.whatif(natives, words, fix_words)
    return WhatifReport([WhatifPrediction.from_json(t) for t in each], discovery.skipped, document)
