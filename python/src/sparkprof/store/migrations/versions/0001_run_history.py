"""Run history: runs, stage figures, findings, feedback, collector state.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("app_id", sa.String(255), nullable=False),
        sa.Column("attempt_id", sa.String(255), nullable=False),
        sa.Column("start_ms", sa.BigInteger(), nullable=False),
        sa.Column("job_key", sa.String(512), nullable=False),
        sa.Column("app_name", sa.Text(), nullable=False),
        sa.Column("spark_user", sa.String(255), nullable=False),
        sa.Column("spark_version", sa.String(64), nullable=False),
        sa.Column("end_ms", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.Column("complete", sa.Boolean(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("settings_json", sa.Text(), nullable=False),
        sa.Column("cluster_json", sa.Text(), nullable=False),
        sa.Column("report_json", sa.Text(), nullable=False),
        sa.Column("collected_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("app_id", "attempt_id", "start_ms", name="uq_runs_identity"),
    )
    op.create_index("ix_runs_job_key", "runs", ["job_key"])

    op.create_table(
        "stages",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "run_id", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("stage_id", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("num_tasks", sa.Integer(), nullable=False),
        *(
            sa.Column(name, sa.BigInteger(), nullable=False)
            for name in ("duration_ms", "task_p50_ms", "task_p95_ms", "task_max_ms")
        ),
        sa.Column("failed_task_attempts", sa.Integer(), nullable=False),
        *(
            sa.Column(name, sa.BigInteger(), nullable=False)
            for name in (
                "input_bytes",
                "output_bytes",
                "shuffle_read_bytes",
                "shuffle_write_bytes",
                "memory_bytes_spilled",
                "disk_bytes_spilled",
                "executor_run_time_ms",
                "jvm_gc_time_ms",
            )
        ),
    )
    op.create_index("ix_stages_run_id", "stages", ["run_id"])

    op.create_table(
        "findings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "run_id", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("stage_ids_json", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("cost_ms", sa.BigInteger(), nullable=False),
        sa.Column("time_saved_low_ms", sa.Float(), nullable=False),
        sa.Column("time_saved_high_ms", sa.Float(), nullable=False),
        sa.Column("recipe", sa.Text(), nullable=False),
    )
    op.create_index("ix_findings_run_id", "findings", ["run_id"])
    op.create_index("ix_findings_rule", "findings", ["rule"])

    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "run_id", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("stage_ids_json", sa.Text(), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_feedback_run_id", "feedback", ["run_id"])

    op.create_table(
        "collected_files",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("head", sa.LargeBinary(), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("location", name="uq_collected_files_location"),
    )

    op.create_table(
        "collected_logs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("collector", sa.String(32), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column(
            "run_id", sa.Integer(), sa.ForeignKey("runs.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("collected_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("collector", "location", name="uq_collected_logs_location"),
    )


def downgrade() -> None:
    for table in ("collected_logs", "collected_files", "feedback", "findings", "stages", "runs"):
        op.drop_table(table)
