"""What one collect did, and the step every collector ends with: keep an analysed log's run."""

from __future__ import annotations

from dataclasses import dataclass, field

from sparkprof.analysis import AnalysedApplication
from sparkprof.run_record import JobKeyRule
from sparkprof.store import HistoryStore


@dataclass
class CollectSummary:
    found: int = 0  # application logs seen
    unchanged: int = 0  # already collected in this state: not read again
    stored: list[int] = field(default_factory=list)  # run ids stored or replaced
    not_analysable: list[str] = field(default_factory=list)  # no Spark event could be read
    failed: list[tuple[str, str]] = field(default_factory=list)  # (log, why): retried next time
    deferred: int = 0  # new or grown, left for the next collect by a limit

    def line(self) -> str:
        return (
            f"{self.found} logs: {len(self.stored)} stored, {self.unchanged} unchanged, "
            f"{len(self.not_analysable)} not analysable, {len(self.failed)} failed"
            + (f", {self.deferred} left for the next collect" if self.deferred else "")
        )


def keep(
    store: HistoryStore,
    summary: CollectSummary,
    collector: str,
    location: str,
    signature: str,
    analysed: AnalysedApplication | None,
    source: str,
    job_keys: JobKeyRule,
) -> None:
    """Stores the run of ``analysed`` (None: nothing readable) and marks ``location`` collected."""
    if analysed is None:
        summary.not_analysable.append(location)
        store.record_log(collector, location, signature, "not-analysable")
        return
    run = store.save_run(analysed, source, job_keys)
    summary.stored.append(run.id)
    store.record_log(collector, location, signature, "stored", run_id=run.id)


def failed(
    store: HistoryStore,
    summary: CollectSummary,
    collector: str,
    location: str,
    error: BaseException,
) -> None:
    """A log that could not be read now (network, permissions): recorded without a signature,
    so the next collect tries it again."""
    message = f"{type(error).__name__}: {error}"
    summary.failed.append((location, message))
    store.record_log(collector, location, "", "failed", message)
