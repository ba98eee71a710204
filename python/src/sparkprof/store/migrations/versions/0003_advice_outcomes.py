"""Run history: the advisor's own record -- recommendations a later run of the job applied, with
what was predicted and what happened (advice_record.py).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "advice_outcomes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job_key", sa.String(512), nullable=False),
        sa.Column(
            "advised_run_id",
            sa.Integer(),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "applied_run_id",
            sa.Integer(),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("setting", sa.String(255), nullable=False),
        sa.Column("recommended", sa.Text(), nullable=False),
        sa.Column("previous", sa.Text(), nullable=True),
        sa.Column("predicted_low_ms", sa.Float(), nullable=False),
        sa.Column("predicted_high_ms", sa.Float(), nullable=False),
        sa.Column("before_ms", sa.BigInteger(), nullable=False),
        sa.Column("after_ms", sa.BigInteger(), nullable=False),
        sa.Column("input_ratio", sa.Float(), nullable=True),
        sa.Column("spill_before_bytes", sa.BigInteger(), nullable=False),
        sa.Column("spill_after_bytes", sa.BigInteger(), nullable=False),
        sa.Column("finding_gone", sa.Boolean(), nullable=False),
        sa.Column("died_before", sa.Boolean(), nullable=False),
        sa.Column("died_after", sa.Boolean(), nullable=False),
        sa.Column("measured_peak_bytes", sa.BigInteger(), nullable=True),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("within_prediction", sa.Boolean(), nullable=True),
        sa.UniqueConstraint(
            "advised_run_id", "applied_run_id", "rule", "setting", name="uq_advice_outcomes_pair"
        ),
    )
    op.create_index("ix_advice_outcomes_job_key", "advice_outcomes", ["job_key"])
    op.create_index("ix_advice_outcomes_advised_run_id", "advice_outcomes", ["advised_run_id"])
    op.create_index("ix_advice_outcomes_applied_run_id", "advice_outcomes", ["applied_run_id"])
    op.create_index("ix_advice_outcomes_rule", "advice_outcomes", ["rule"])


def downgrade() -> None:
    op.drop_table("advice_outcomes")
