"""The run history (SQLAlchemy; Alembic migrations)."""

from sparkprof.store.history_store import (
    HistoryStore,
    RunNotFoundError,
    StoreBusyError,
    default_store_url,
)
from sparkprof.store.schema import Feedback, FindingRow, Run, StageFigures

__all__ = [
    "Feedback",
    "FindingRow",
    "HistoryStore",
    "Run",
    "RunNotFoundError",
    "StageFigures",
    "StoreBusyError",
    "default_store_url",
]
