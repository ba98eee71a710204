"""Collectors: find Spark event logs where they live, analyse the new or grown ones with the
engine and keep the runs in the history store."""

from sparkprof.collect.event_log_dir import EventLogDirCollector
from sparkprof.collect.history_server import HistoryServerClient, HistoryServerCollector
from sparkprof.collect.summary import CollectSummary

__all__ = [
    "CollectSummary",
    "EventLogDirCollector",
    "HistoryServerClient",
    "HistoryServerCollector",
]
