"""The what-if answer: the scenario's words for the engine (``KEY=VALUE`` settings, fixes) and
its JSON (schema ``sparkprof.whatif/v1``, docs/report-schema.md) read into typed objects.

Below both ``sparkprof.analysis`` (``AnalysedApplication.whatif``) and ``sparkprof.what_if`` (the
source-level ``whatif``): it knows the native analysis, not how a source is found or analysed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sparkprof import _native
from sparkprof.report import from_dict

WHATIF_SCHEMA: str = _native.WHATIF_SCHEMA
SUPPORTED_SETTINGS: str = _native.WHATIF_SETTINGS

SettingValue = str | int | float | bool
Settings = Mapping[str, SettingValue] | Iterable[str]


@dataclass(frozen=True)
class ClusterFigures:
    """Wall time and executor core-hours of the run, its replay or the scenario; the executor
    shape where the JSON carries it (not for the replay, which is the run's)."""

    wall_ms: int
    core_hours: float
    executors: int = 0
    cores_per_executor: int = 0
    executor_memory_mb: int = 0


@dataclass(frozen=True)
class ScenarioCost:
    """The run, its replay and the scenario priced like the run's executors (when a price is
    known; else ``reason`` says why not)."""

    available: bool
    currency: str = ""
    actual: float = 0.0
    baseline: float = 0.0
    predicted: float = 0.0
    current_cluster: str = ""
    reason: str = ""


@dataclass(frozen=True)
class StagePrediction:
    """One stage attempt's task span (first launch to last end): in the run, replayed, and with
    the scenario; ``removed`` when the scenario removes the stage (a join made a broadcast)."""

    stage_id: int
    attempt: int
    actual_ms: int
    baseline_ms: int
    predicted_ms: int
    actual_tasks: int
    predicted_tasks: int
    removed: bool


@dataclass(frozen=True)
class WhatifPrediction:
    """One application's what-if answer."""

    app_id: str
    app_name: str
    changes: list[str]  # what the scenario changed, in words
    actual: ClusterFigures
    baseline: ClusterFigures  # the run replayed unchanged (the self-prediction)
    predicted: ClusterFigures
    self_prediction_error: float  # |baseline - actual| / actual wall time
    cost: ScenarioCost
    stages: list[StagePrediction]
    assumptions: list[str]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    json: str = field(default="", repr=False, compare=False)

    @property
    def speedup(self) -> float:
        """Replayed wall time over predicted (> 1: the scenario is faster); compares the model
        with itself, so its own error cancels as far as it can."""
        return self.baseline.wall_ms / self.predicted.wall_ms if self.predicted.wall_ms else 0.0

    @classmethod
    def from_json(cls, text: str) -> WhatifPrediction:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("schema") != WHATIF_SCHEMA:
            schema = data.get("schema") if isinstance(data, dict) else None
            raise ValueError(f"not a {WHATIF_SCHEMA} object: schema={schema!r}")
        prediction = from_dict(cls, data)
        object.__setattr__(prediction, "raw", data)
        object.__setattr__(prediction, "json", text)
        return prediction


@dataclass(frozen=True)
class WhatifReport:
    """The result of ``whatif``: one prediction per analysable application of the source;
    ``json`` is what ``sparkprof whatif SOURCE ... --format json`` writes (without its final
    newline): one object, or ``{"applications": [...]}`` for several."""

    predictions: list[WhatifPrediction]
    skipped: list[str]  # logs in which no Spark event could be read
    json: str = field(default="", repr=False, compare=False)

    @property
    def prediction(self) -> WhatifPrediction:
        """The prediction when the source held exactly one application."""
        if len(self.predictions) != 1:
            raise ValueError(f"the source holds {len(self.predictions)} applications")
        return self.predictions[0]


def setting_words(settings: Settings) -> list[str]:
    """``KEY=VALUE`` words for the engine from a mapping (booleans as true/false) or words."""
    if isinstance(settings, Mapping):
        return [f"{key}={_word(value)}" for key, value in settings.items()]
    if isinstance(settings, str):
        raise TypeError("settings: a mapping or a list of KEY=VALUE strings, not one string")
    return [str(word) for word in settings]


def _word(value: SettingValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def predict(
    native: _native.Analysis,
    settings: Settings = (),
    fixes: Iterable[str] = (),
    prepared: bool = True,
) -> WhatifPrediction:
    """The what-if of one analysed application, from its native result (``ValueError`` for a
    setting or fix the simulator does not know); ``sparkprof.what_if.simulate`` says more."""
    return WhatifPrediction.from_json(
        native.whatif(setting_words(settings), [str(fix) for fix in fixes], prepared)
    )
