"""The run history: SQLite by default (a file in the user's data directory), PostgreSQL (or any
SQLAlchemy URL) by ``--store URL`` / ``$SPARKPROF_STORE``. Opening a store migrates it to the
newest schema (Alembic)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import platformdirs
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, and_, create_engine, delete, event, func, or_, select, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, load_only, selectinload, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from sparkprof import advice_record
from sparkprof.analysis import AnalysedApplication
from sparkprof.report import Finding, Stage
from sparkprof.run_record import JobKeyRule, cluster_shape, settings_json
from sparkprof.store.schema import (
    AdviceOutcomeRow,
    CollectedFile,
    CollectedLog,
    Feedback,
    FindingRow,
    Run,
    RunHtml,
    RunMetricsRow,
    StageFigures,
)

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def default_store_url() -> str:
    """``$SPARKPROF_STORE``, else SQLite in the user's data directory."""
    configured = os.environ.get("SPARKPROF_STORE")
    if configured:
        return configured
    folder = Path(platformdirs.user_data_dir("sparkprof", appauthor=False))
    return f"sqlite:///{folder / 'history.sqlite'}"


def _engine_url(url: str) -> str:
    # psycopg (3) is the driver the package installs; to SQLAlchemy postgresql:// means psycopg2.
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def now() -> datetime:
    return datetime.now(timezone.utc)


_MAX_RUN_ID = 2**63 - 1  # the largest id a 64-bit integer column holds


class RunNotFoundError(LookupError):
    pass


class StoreBusyError(RuntimeError):
    """Another writer kept the run history locked longer than a writer waits, or kept winning
    the same rows: the message names the store and what to do."""


# How long a writer waits for the store's write lock (SQLite's; on PostgreSQL the advisory lock
# below, as lock_timeout) held by another collect or upload before giving up, and how
# many times a write is tried again after a concurrent writer stored the same run first (its
# insert won the unique key: the retry finds that row and replaces it).
WRITER_WAIT_S = 60.0
WRITE_ATTEMPTS = 8

_T = TypeVar("_T")
MEMORY_RECORDS_PER_JOB = 5
# PostgreSQL's deadlock_detected and serialization_failure: the transaction was rolled back whole.
_RETRIED_SQLSTATES = ("40P01", "40001")
_MIGRATION_LOCK = 0x5350_4B50  # "SPKP": PostgreSQL advisory lock key of this store's migrations
# PostgreSQL advisory lock key every write transaction takes first ("SPKW"): writers queue one
# after another, as on SQLite, instead of locking a job's neighbouring runs in different orders
# (the advice record of a run reads and updates the runs before and after it) and deadlocking
# again and again. A write holds it for milliseconds; the analysis happens before it.
_WRITE_LOCK = 0x5350_4B57
# PostgreSQL's lock_not_available: the write lock was not granted within the bound.
_LOCK_TIMEOUT_SQLSTATE = "55P03"


class HistoryStore:
    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_store_url()
        engine_url = _engine_url(self.url)
        if engine_url.startswith("sqlite:///") and engine_url != "sqlite:///:memory:":
            Path(engine_url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
        sqlite = engine_url.startswith("sqlite")
        connect_args = {"timeout": WRITER_WAIT_S} if sqlite else {}
        self.engine: Engine = create_engine(engine_url, connect_args=connect_args)
        # Writes on SQLite take the database's write lock when they begin (BEGIN IMMEDIATE), so
        # the look-up of a run and its insert or replacement are one step: concurrent collects
        # and uploads of the same application queue for the lock instead of racing to insert.
        # Reads keep their own engine and never wait for a writer's transaction to begin.
        self._write_engine = self.engine
        if sqlite and engine_url != "sqlite:///:memory:":
            self._write_engine = create_engine(engine_url, connect_args=connect_args)
            event.listen(self._write_engine, "connect", _sqlite_manual_transactions)
            event.listen(self._write_engine, "begin", _sqlite_begin_immediate)
        if sqlite:
            for engine in {self.engine, self._write_engine}:
                event.listen(engine, "connect", _sqlite_foreign_keys)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._write_sessions = sessionmaker(self._write_engine, expire_on_commit=False)
        self.upgrade()

    def upgrade(self) -> None:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        # Several processes may open a new store at once (collects started together): the
        # migration runs under the write lock (SQLite) or an advisory lock (PostgreSQL), so the
        # later ones find it done instead of creating the same tables again.
        with self._write_engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def close(self) -> None:
        self.engine.dispose()
        self._write_engine.dispose()

    def session(self) -> Session:
        return self._sessions()

    def _write(self, work: Callable[[Session], _T]) -> _T:
        """Runs ``work`` in one write transaction, again when a concurrent writer inserted the
        same row first (PostgreSQL: the unique key; the retry then finds and replaces that
        row) or PostgreSQL broke a deadlock by ending it, and turns a lock held too long into a
        StoreBusyError naming the store. On PostgreSQL the transaction first takes the store's
        advisory write lock, waiting at most WRITER_WAIT_S."""
        postgresql = self._write_engine.dialect.name == "postgresql"
        for attempt in range(WRITE_ATTEMPTS):
            try:
                with self._write_sessions() as session, session.begin():
                    if postgresql:
                        session.execute(text(f"SET LOCAL lock_timeout = '{WRITER_WAIT_S:g}s'"))
                        session.execute(text(f"SELECT pg_advisory_xact_lock({_WRITE_LOCK})"))
                    return work(session)
            except (IntegrityError, StaleDataError) as error:
                if attempt + 1 == WRITE_ATTEMPTS:
                    raise StoreBusyError(
                        f"run history {self.url}: {WRITE_ATTEMPTS} concurrent writers stored the "
                        f"same rows first; try again ({type(error).__name__}: {error.args[0]})"
                    ) from error
            except OperationalError as error:
                # PostgreSQL ended this transaction to break a deadlock or a serialization
                # conflict: nothing of it was kept, so it runs again. Writers of this version
                # queue on the write lock and do not deadlock each other; a writer that does
                # not take it (an older sparkprof on the same store) still may.
                sqlstate = getattr(error.orig, "sqlstate", None)
                if sqlstate in _RETRIED_SQLSTATES and attempt + 1 < WRITE_ATTEMPTS:
                    continue
                if postgresql:
                    if sqlstate == _LOCK_TIMEOUT_SQLSTATE:
                        raise StoreBusyError(
                            f"run history {self.url}: another writer held the write lock for "
                            f"more than {WRITER_WAIT_S:g} s; try again"
                        ) from error
                    if sqlstate in _RETRIED_SQLSTATES:
                        raise StoreBusyError(
                            f"run history {self.url}: PostgreSQL ended this write "
                            f"{WRITE_ATTEMPTS} times to break a deadlock or a serialization "
                            f"conflict; try again ({sqlstate})"
                        ) from error
                    raise
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                raise StoreBusyError(
                    f"run history {self.url}: locked by another writer for more than "
                    f"{WRITER_WAIT_S:g} s; try again, or use PostgreSQL for many "
                    "concurrent writers"
                ) from error
        raise AssertionError("not reached")

    # Runs.

    def save_run(
        self, analysed: AnalysedApplication, source: str, job_keys: JobKeyRule | None = None
    ) -> Run:
        """Stores (or replaces, keeping its id and feedback) the run of one analysed application,
        with its HTML report."""
        report = analysed.report
        html_gzip = gzip.compress(analysed.render("html").encode("utf-8"), compresslevel=6)
        info = report.application
        job_key = (job_keys or JobKeyRule()).key_for(report, analysed.spark_properties)

        def store(session: Session) -> int:
            # FOR UPDATE (PostgreSQL): a concurrent save of the same run waits here, then loads
            # the stages and findings this one wrote.
            run = session.scalars(
                select(Run)
                .where(
                    Run.app_id == info.id,
                    Run.attempt_id == info.attempt_id,
                    Run.start_ms == info.start_ms,
                )
                .with_for_update()
            ).one_or_none()
            if run is None:
                run = Run(app_id=info.id, attempt_id=info.attempt_id, start_ms=info.start_ms)
                session.add(run)
            run.job_key = job_key
            run.app_name = info.name
            run.spark_user = info.user
            run.spark_version = info.spark_version
            run.end_ms = info.end_ms
            run.duration_ms = info.duration_ms
            run.complete = info.complete
            run.source = source
            run.settings_json = settings_json(analysed)
            run.cluster_json = json.dumps(cluster_shape(analysed), sort_keys=True)
            run.report_json = report.json
            run.collected_at = now()
            run.stages = [_stage_row(stage) for stage in report.stages]
            run.findings = [_finding_row(index, f) for index, f in enumerate(report.findings)]
            session.flush()
            session.merge(RunHtml(run_id=run.id, html_gzip=html_gzip))
            _record_advice(session, run)
            return run.id

        return self.run(str(self._write(store)))

    # The advisor's own record (advice_record.py).

    def advice_outcomes(
        self, job_key: str | None = None, limit: int = 100
    ) -> list[AdviceOutcomeRow]:
        """The latest ``limit`` recorded outcomes (newest applied run first), of one job or all."""
        with self.session() as session:
            query = select(AdviceOutcomeRow)
            if job_key is not None:
                query = query.where(AdviceOutcomeRow.job_key == job_key)
            query = query.order_by(
                AdviceOutcomeRow.applied_run_id.desc(), AdviceOutcomeRow.id.desc()
            ).limit(limit)
            return list(session.scalars(query).all())

    def memory_advice(
        self, job_keys: list[str] | None = None, per_job: int = MEMORY_RECORDS_PER_JOB
    ) -> list[advice_record.MemoryRecord]:
        """The closed loop on memory advice (advice_record.py): the latest ``per_job`` memory
        findings per job (of ``job_keys``, else of every job) and what the job's next run did
        with each, newest applied run first. One query."""
        with self.session() as session:
            query = (
                select(AdviceOutcomeRow)
                .join(Run, Run.id == AdviceOutcomeRow.applied_run_id)
                .where(AdviceOutcomeRow.memory.is_(True))
            )
            if job_keys is not None:
                query = query.where(AdviceOutcomeRow.job_key.in_(job_keys))
            # Newest by the applied run's start (run ids follow the order of collecting).
            query = query.order_by(
                Run.start_ms.desc(),
                AdviceOutcomeRow.applied_run_id.desc(),
                AdviceOutcomeRow.advised_run_id.desc(),
                AdviceOutcomeRow.id,
            )
            records = advice_record.memory_records(session.scalars(query).all())
        kept: dict[str, int] = {}
        latest = []
        for record in records:
            if kept.get(record.job_key, 0) < per_job:
                kept[record.job_key] = kept.get(record.job_key, 0) + 1
                latest.append(record)
        return latest

    def advice_hit_rates(
        self, by: str = "rule", job_key: str | None = None
    ) -> list[advice_record.HitRate]:
        """How often applied advice helped, per rule or per job (``by``), over every recorded
        outcome (of one job with ``job_key``): counted in the database."""
        by_rule, by_job = self.advice_hit_rates_by_rule_and_job(job_key)
        return by_rule if by == "rule" else by_job

    def advice_hit_rates_by_rule_and_job(
        self, job_key: str | None = None
    ) -> tuple[list[advice_record.HitRate], list[advice_record.HitRate]]:
        """Both views of the record from one grouped query (the serve page's one statement)."""
        with self.session() as session:
            query = select(
                AdviceOutcomeRow.rule,
                AdviceOutcomeRow.job_key,
                AdviceOutcomeRow.verdict,
                AdviceOutcomeRow.within_prediction,
                func.count(AdviceOutcomeRow.id),
            ).group_by(
                AdviceOutcomeRow.rule,
                AdviceOutcomeRow.job_key,
                AdviceOutcomeRow.verdict,
                AdviceOutcomeRow.within_prediction,
            )
            query = query.where(AdviceOutcomeRow.verdict.in_(advice_record.VERDICTS))
            if job_key is not None:
                query = query.where(AdviceOutcomeRow.job_key == job_key)
            rows = [
                (str(rule), str(job), str(verdict), within, int(count))
                for rule, job, verdict, within, count in session.execute(query).all()
            ]
        return (
            advice_record.hit_rates((r, v, w, n) for r, _, v, w, n in rows),
            advice_record.hit_rates((j, v, w, n) for _, j, v, w, n in rows),
        )

    def run_html(self, run_id: int) -> str | None:
        """The run's HTML report as the engine rendered it; None for a run stored before the
        store kept them (collect it again)."""
        with self.session() as session:
            row = session.get(RunHtml, run_id)
            return None if row is None else gzip.decompress(row.html_gzip).decode("utf-8")

    def save_run_metrics(self, run_id: int, prometheus: str, metrics: dict[str, Any]) -> None:
        """Keeps (or replaces) a run's live metrics: ``metrics`` is RunMetrics.to_json()."""
        series = metrics.get("series", [])
        row = RunMetricsRow(
            run_id=run_id,
            prometheus=prometheus,
            series=len(series),
            samples=sum(len(s["points"]) for s in series),
            metrics_gzip=gzip.compress(json.dumps(metrics).encode("utf-8"), compresslevel=6),
            collected_at=now(),
        )
        self._write(lambda session: session.merge(row))

    def run_metrics(self, run_id: int) -> dict[str, Any] | None:
        """A run's live metrics (RunMetrics.to_json()), None when none were collected."""
        with self.session() as session:
            row = session.get(RunMetricsRow, run_id)
            if row is None:
                return None
            metrics: dict[str, Any] = json.loads(gzip.decompress(row.metrics_gzip))
            return metrics

    def runs_without_metrics(self, limit: int) -> list[Run]:
        """The latest ``limit`` runs whose live metrics were not collected, oldest first."""
        with self.session() as session:
            query = (
                select(Run)
                .where(~Run.id.in_(select(RunMetricsRow.run_id)))
                .order_by(Run.start_ms.desc(), Run.id.desc())
                .limit(limit)
            )
            return list(reversed(session.scalars(query).all()))

    def run(self, reference: str) -> Run:
        """A run by its id in the store, or by application id (``app-…`` / ``application_…``,
        optionally ``/attempt``; the latest such run)."""
        with self.session() as session:
            query = select(Run).options(
                selectinload(Run.stages), selectinload(Run.findings), selectinload(Run.feedback)
            )
            if reference.isascii() and reference.isdigit():
                # Ids are 64-bit rows in every database: a larger number names no run (SQLite's
                # driver would raise OverflowError binding it).
                run_id = int(reference)
                run = (
                    session.scalars(query.where(Run.id == run_id)).one_or_none()
                    if run_id <= _MAX_RUN_ID
                    else None
                )
            else:
                app_id, _, attempt_id = reference.partition("/")
                query = query.where(Run.app_id == app_id)
                if attempt_id:
                    query = query.where(Run.attempt_id == attempt_id)
                run = session.scalars(query.order_by(Run.start_ms.desc())).first()
            if run is None:
                raise RunNotFoundError(f"no run {reference!r} in the history")
            return run

    def runs(self, job_key: str | None = None, limit: int | None = None) -> list[Run]:
        """Runs in start order (oldest first); with ``limit``, the latest ``limit`` of them."""
        with self.session() as session:
            query = select(Run).options(selectinload(Run.stages), selectinload(Run.findings))
            if job_key is not None:
                query = query.where(Run.job_key == job_key)
            query = query.order_by(Run.start_ms.desc(), Run.id.desc())
            if limit is not None:
                query = query.limit(limit)
            return list(reversed(session.scalars(query).all()))

    def jobs(self, limit: int | None = None, offset: int = 0) -> list[tuple[str, int, int]]:
        """(job key, runs, latest start ms), most recent first; with ``limit``, that many from
        the ``offset``-th (a page)."""
        with self.session() as session:
            query = (
                select(Run.job_key, func.count(Run.id), func.max(Run.start_ms))
                .group_by(Run.job_key)
                .order_by(func.max(Run.start_ms).desc(), Run.job_key)
                .offset(offset)
            )
            if limit is not None:
                query = query.limit(limit)
            return [(key, count, latest) for key, count, latest in session.execute(query).all()]

    def job_count(self) -> int:
        with self.session() as session:
            return int(session.scalar(select(func.count(func.distinct(Run.job_key)))) or 0)

    def latest_runs_by_job(self, job_keys: Sequence[str], per_job: int) -> dict[str, list[Run]]:
        """The latest ``per_job`` runs of each job (oldest first) in one query, with their
        findings and only the columns a listing shows (never the stored report): the page's
        query, bounded by its jobs, however long the history."""
        if not job_keys:
            return {}
        with self.session() as session:
            ranked = (
                select(
                    Run.id,
                    func.row_number()
                    .over(partition_by=Run.job_key, order_by=(Run.start_ms.desc(), Run.id.desc()))
                    .label("rank"),
                )
                .where(Run.job_key.in_(list(job_keys)))
                .subquery()
            )
            query = (
                select(Run)
                .join(ranked, Run.id == ranked.c.id)
                .where(ranked.c.rank <= per_job)
                .order_by(Run.start_ms, Run.id)
                .options(
                    load_only(
                        Run.id,
                        Run.app_id,
                        Run.attempt_id,
                        Run.job_key,
                        Run.start_ms,
                        Run.duration_ms,
                    ),
                    selectinload(Run.findings).load_only(
                        FindingRow.position, FindingRow.rule, FindingRow.severity
                    ),
                )
            )
            found: dict[str, list[Run]] = {key: [] for key in job_keys}
            for run in session.scalars(query):
                found[run.job_key].append(run)
            return found

    # Feedback.

    def add_feedback(
        self, run: Run, rule: str, stage_ids: Sequence[int], verdict: str, note: str
    ) -> Feedback:
        if verdict not in ("accept", "reject"):
            raise ValueError("verdict must be accept or reject")

        def store(session: Session) -> Feedback:
            row = Feedback(
                run_id=run.id,
                rule=rule,
                stage_ids_json=json.dumps(list(stage_ids)),
                verdict=verdict,
                note=note,
                created_at=now(),
            )
            session.add(row)
            return row

        return self._write(store)

    def feedback(self, run_id: int | None = None) -> list[Feedback]:
        with self.session() as session:
            query = select(Feedback).order_by(Feedback.id)
            if run_id is not None:
                query = query.where(Feedback.run_id == run_id)
            return list(session.scalars(query).all())

    # Collector state.

    def collected_log(self, collector: str, location: str) -> CollectedLog | None:
        with self.session() as session:
            return session.scalars(
                select(CollectedLog).where(
                    CollectedLog.collector == collector, CollectedLog.location == location
                )
            ).one_or_none()

    def record_log(
        self,
        collector: str,
        location: str,
        signature: str,
        status: str,
        message: str = "",
        run_id: int | None = None,
    ) -> None:

        def store(session: Session) -> None:
            row = session.scalars(
                select(CollectedLog)
                .where(CollectedLog.collector == collector, CollectedLog.location == location)
                .with_for_update()
            ).one_or_none()
            if row is None:
                row = CollectedLog(collector=collector, location=location)
                session.add(row)
            row.signature = signature
            row.status = status
            row.message = message
            row.run_id = run_id
            row.collected_at = now()

        self._write(store)

    def file_heads(self, locations: Iterable[str]) -> dict[str, tuple[str, bytes]]:
        """location -> (signature, first bytes) for the files a collector has seen."""
        wanted = list(locations)
        found: dict[str, tuple[str, bytes]] = {}
        with self.session() as session:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                for row in session.scalars(
                    select(CollectedFile).where(CollectedFile.location.in_(batch))
                ):
                    found[row.location] = (row.signature, row.head)
        return found

    def record_file_heads(self, heads: dict[str, tuple[str, bytes]]) -> None:
        if not heads:
            return

        def store(session: Session) -> None:
            existing = {
                row.location: row
                for row in session.scalars(
                    select(CollectedFile)
                    .where(CollectedFile.location.in_(list(heads)))
                    .with_for_update()
                )
            }
            for location, (signature, head) in heads.items():
                row = existing.get(location)
                if row is None:
                    row = CollectedFile(location=location)
                    session.add(row)
                row.signature = signature
                row.head = head
                row.seen_at = now()

        self._write(store)


_ADVICE_COLUMNS = (
    Run.id,
    Run.job_key,
    Run.start_ms,
    Run.duration_ms,
    Run.settings_json,
    Run.report_json,
)


def _record_advice(session: Session, run: Run) -> None:
    """Records the advice outcomes of the run's pairs in its job: (the run before it, it) and
    (it, the run after it), in start order. What was recorded for the run, or between its two
    neighbours (now not consecutive), is replaced."""
    same_job = select(Run).options(load_only(*_ADVICE_COLUMNS)).where(Run.job_key == run.job_key)
    earlier = or_(Run.start_ms < run.start_ms, and_(Run.start_ms == run.start_ms, Run.id < run.id))
    later = or_(Run.start_ms > run.start_ms, and_(Run.start_ms == run.start_ms, Run.id > run.id))
    before = session.scalars(
        same_job.where(earlier).order_by(Run.start_ms.desc(), Run.id.desc()).limit(1)
    ).one_or_none()
    after = session.scalars(
        same_job.where(later).order_by(Run.start_ms, Run.id).limit(1)
    ).one_or_none()
    stale = [
        AdviceOutcomeRow.advised_run_id == run.id,
        AdviceOutcomeRow.applied_run_id == run.id,
    ]
    if before is not None:
        stale.append(AdviceOutcomeRow.advised_run_id == before.id)
    if after is not None:
        stale.append(AdviceOutcomeRow.applied_run_id == after.id)
    session.execute(delete(AdviceOutcomeRow).where(or_(*stale)))
    for advised, applied in ((before, run), (run, after)):
        if advised is None or applied is None:
            continue
        judged = advice_record.judge(_facts(advised), _facts(applied))
        for outcome in judged:
            session.add(
                AdviceOutcomeRow(
                    job_key=run.job_key,
                    advised_run_id=advised.id,
                    applied_run_id=applied.id,
                    **vars(outcome),
                )
            )


def _facts(run: Run) -> advice_record.RunFacts:
    return advice_record.facts(run.id, run.duration_ms, run.settings_json, run.report_json)


def _stage_row(stage: Stage) -> StageFigures:
    totals = stage.totals
    return StageFigures(
        stage_id=stage.stage_id,
        attempt=stage.attempt,
        name=stage.name,
        status=stage.status,
        num_tasks=stage.num_tasks,
        duration_ms=stage.duration_ms,
        task_p50_ms=stage.task_duration_ms.p50,
        task_p95_ms=stage.task_duration_ms.p95,
        task_max_ms=stage.task_duration_ms.maximum,
        failed_task_attempts=stage.failed_task_attempts,
        input_bytes=totals.input_bytes,
        output_bytes=totals.output_bytes,
        shuffle_read_bytes=totals.shuffle_read_bytes,
        shuffle_write_bytes=totals.shuffle_write_bytes,
        memory_bytes_spilled=totals.memory_bytes_spilled,
        disk_bytes_spilled=totals.disk_bytes_spilled,
        executor_run_time_ms=totals.executor_run_time_ms,
        jvm_gc_time_ms=totals.jvm_gc_time_ms,
    )


def _finding_row(position: int, finding: Finding) -> FindingRow:
    return FindingRow(
        position=position,
        rule=finding.rule,
        severity=finding.severity,
        stage_ids_json=json.dumps(finding.stage_ids),
        title=finding.title,
        cost_ms=finding.cost_ms,
        time_saved_low_ms=finding.expected_impact.time_saved_ms.low,
        time_saved_high_ms=finding.expected_impact.time_saved_ms.high,
        recipe=finding.recipe,
    )


def _sqlite_manual_transactions(connection: object, _record: object) -> None:
    # pysqlite's own transaction handling would BEGIN (deferred) only before the first write;
    # _sqlite_begin_immediate begins every transaction of the write engine instead.
    connection.isolation_level = None  # type: ignore[attr-defined]


def _sqlite_begin_immediate(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _sqlite_foreign_keys(connection: object, _record: object) -> None:
    cursor = connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
