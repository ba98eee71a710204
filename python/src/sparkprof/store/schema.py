"""The run history's tables. Alembic migrations (``migrations/versions``) create and change them;
a test checks that the migrated database matches these models exactly."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Run(Base):
    """One application attempt, identified by (app id, attempt id, start time)."""

    __tablename__ = "runs"
    __table_args__ = (
        UniqueConstraint("app_id", "attempt_id", "start_ms", name="uq_runs_identity"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    app_id: Mapped[str] = mapped_column(String(255))
    attempt_id: Mapped[str] = mapped_column(String(255))
    start_ms: Mapped[int] = mapped_column(BigInteger)
    job_key: Mapped[str] = mapped_column(String(512), index=True)
    app_name: Mapped[str] = mapped_column(Text)
    spark_user: Mapped[str] = mapped_column(String(255))
    spark_version: Mapped[str] = mapped_column(String(64))
    end_ms: Mapped[int] = mapped_column(BigInteger)
    duration_ms: Mapped[int] = mapped_column(BigInteger)
    complete: Mapped[bool] = mapped_column(Boolean)
    source: Mapped[str] = mapped_column(Text)  # where the log was read
    settings_json: Mapped[str] = mapped_column(Text)  # Spark properties from the log
    cluster_json: Mapped[str] = mapped_column(Text)  # executors, slots, sizes
    report_json: Mapped[str] = mapped_column(Text)  # the engine's report object, as written
    collected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    stages: Mapped[list[StageFigures]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="StageFigures.id"
    )
    findings: Mapped[list[FindingRow]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="FindingRow.position"
    )
    feedback: Mapped[list[Feedback]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="Feedback.id"
    )


class StageFigures(Base):
    """A stage attempt's figures, copied from the report's ``stages[]``."""

    __tablename__ = "stages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    stage_id: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32))
    num_tasks: Mapped[int] = mapped_column(Integer)
    duration_ms: Mapped[int] = mapped_column(BigInteger)
    task_p50_ms: Mapped[int] = mapped_column(BigInteger)
    task_p95_ms: Mapped[int] = mapped_column(BigInteger)
    task_max_ms: Mapped[int] = mapped_column(BigInteger)
    failed_task_attempts: Mapped[int] = mapped_column(Integer)
    input_bytes: Mapped[int] = mapped_column(BigInteger)
    output_bytes: Mapped[int] = mapped_column(BigInteger)
    shuffle_read_bytes: Mapped[int] = mapped_column(BigInteger)
    shuffle_write_bytes: Mapped[int] = mapped_column(BigInteger)
    memory_bytes_spilled: Mapped[int] = mapped_column(BigInteger)
    disk_bytes_spilled: Mapped[int] = mapped_column(BigInteger)
    executor_run_time_ms: Mapped[int] = mapped_column(BigInteger)
    jvm_gc_time_ms: Mapped[int] = mapped_column(BigInteger)

    run: Mapped[Run] = relationship(back_populates="stages")


class RunHtml(Base):
    """A run's self-contained HTML report as the engine rendered it when the run was stored
    (gzip), for the serve page's links; apart from ``runs`` so listing runs never loads it."""

    __tablename__ = "run_html"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    html_gzip: Mapped[bytes] = mapped_column(LargeBinary)


class RunMetricsRow(Base):
    """A run's live metrics as Prometheus held them (``collect --prometheus``): every series of
    its application id over its lifetime, as gzip JSON (collect/prometheus.py's RunMetrics)."""

    __tablename__ = "run_metrics"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    prometheus: Mapped[str] = mapped_column(Text)
    series: Mapped[int] = mapped_column(Integer)
    samples: Mapped[int] = mapped_column(Integer)
    metrics_gzip: Mapped[bytes] = mapped_column(LargeBinary)
    collected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class FindingRow(Base):
    """A diagnosis finding, copied from the report's ``findings[]`` (in its order)."""

    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    rule: Mapped[str] = mapped_column(String(64), index=True)
    severity: Mapped[str] = mapped_column(String(16))
    stage_ids_json: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    cost_ms: Mapped[int] = mapped_column(BigInteger)
    time_saved_low_ms: Mapped[float] = mapped_column(Float)
    time_saved_high_ms: Mapped[float] = mapped_column(Float)
    recipe: Mapped[str] = mapped_column(Text)

    run: Mapped[Run] = relationship(back_populates="findings")


class Feedback(Base):
    """A user's verdict on a finding of a run (``sparkprof feedback``)."""

    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    rule: Mapped[str] = mapped_column(String(64))
    stage_ids_json: Mapped[str] = mapped_column(Text)
    verdict: Mapped[str] = mapped_column(String(16))  # accept, reject
    note: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    run: Mapped[Run] = relationship(back_populates="feedback")


class CollectedFile(Base):
    """A file a collector has seen: its signature (size, modification) and first bytes, so an
    unchanged file is neither sniffed nor read again."""

    __tablename__ = "collected_files"
    __table_args__ = (UniqueConstraint("location", name="uq_collected_files_location"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    location: Mapped[str] = mapped_column(Text)
    signature: Mapped[str] = mapped_column(Text)
    head: Mapped[bytes] = mapped_column(LargeBinary)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class CollectedLog(Base):
    """An application log a collector has handled: what it looked like (its parts and sizes, or
    the History Server's lastUpdated) and what came of it."""

    __tablename__ = "collected_logs"
    __table_args__ = (UniqueConstraint("collector", "location", name="uq_collected_logs_location"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    collector: Mapped[str] = mapped_column(String(32))  # event-log-dir, history-server
    location: Mapped[str] = mapped_column(Text)
    signature: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32))  # stored, not-analysable, failed
    message: Mapped[str] = mapped_column(Text)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    collected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AdviceOutcomeRow(Base):
    """A recommendation an earlier run's finding made and the job's next run applied: what was
    predicted and what happened (advice_record.py: the pairing and the verdict's rule). Written
    when either run is stored; removed with either run."""

    __tablename__ = "advice_outcomes"
    __table_args__ = (
        UniqueConstraint(
            "advised_run_id", "applied_run_id", "rule", "setting", name="uq_advice_outcomes_pair"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_key: Mapped[str] = mapped_column(String(512), index=True)
    advised_run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), index=True
    )
    applied_run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), index=True
    )
    rule: Mapped[str] = mapped_column(String(64), index=True)
    setting: Mapped[str] = mapped_column(String(255))
    recommended: Mapped[str] = mapped_column(Text)
    previous: Mapped[str | None] = mapped_column(Text, nullable=True)
    predicted_low_ms: Mapped[float] = mapped_column(Float)
    predicted_high_ms: Mapped[float] = mapped_column(Float)
    before_ms: Mapped[int] = mapped_column(BigInteger)
    after_ms: Mapped[int] = mapped_column(BigInteger)
    input_ratio: Mapped[float | None] = mapped_column(Float, nullable=True)
    spill_before_bytes: Mapped[int] = mapped_column(BigInteger)
    spill_after_bytes: Mapped[int] = mapped_column(BigInteger)
    finding_gone: Mapped[bool] = mapped_column(Boolean)
    died_before: Mapped[bool] = mapped_column(Boolean)
    died_after: Mapped[bool] = mapped_column(Boolean)
    measured_peak_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    verdict: Mapped[str] = mapped_column(String(16))
    within_prediction: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # Memory findings (migration 0004; advice_record.py): recorded however they were taken.
    memory: Mapped[bool] = mapped_column(Boolean, server_default=false())
    applied: Mapped[str] = mapped_column(String(16), server_default=text("'applied'"))
    applied_value: Mapped[str | None] = mapped_column(Text, nullable=True)
    bound: Mapped[str | None] = mapped_column(String(16), nullable=True)
    peak_before_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    limit_before_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    limit_after_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    memory_losses_before: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    memory_losses_after: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    death_before: Mapped[str | None] = mapped_column(Text, nullable=True)
    death_after: Mapped[str | None] = mapped_column(Text, nullable=True)
    predicted_effect: Mapped[str | None] = mapped_column(Text, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
