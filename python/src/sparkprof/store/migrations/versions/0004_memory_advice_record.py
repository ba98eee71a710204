"""Run history: the closed loop on memory advice -- each memory finding's recommendations are
recorded for the job's next run however they were taken (applied, partly, not applied), with both
runs' peak of what the setting bounds, its limit, the executors lost to memory, what each run died
of and the finding's prediction in words (advice_record.py). Rows recorded before keep their
values (``memory`` false) until either run is collected again.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_COLUMNS = (
    ("memory", sa.Boolean(), False, sa.false()),
    ("applied", sa.String(16), False, sa.text("'applied'")),
    ("applied_value", sa.Text(), True, None),
    ("bound", sa.String(16), True, None),
    ("peak_before_bytes", sa.BigInteger(), True, None),
    ("limit_before_bytes", sa.BigInteger(), True, None),
    ("limit_after_bytes", sa.BigInteger(), True, None),
    ("memory_losses_before", sa.Integer(), False, sa.text("0")),
    ("memory_losses_after", sa.Integer(), False, sa.text("0")),
    ("death_before", sa.Text(), True, None),
    ("death_after", sa.Text(), True, None),
    ("predicted_effect", sa.Text(), True, None),
    ("reason", sa.Text(), True, None),
)


def upgrade() -> None:
    with op.batch_alter_table("advice_outcomes") as table:
        for name, kind, nullable, default in _COLUMNS:
            table.add_column(sa.Column(name, kind, nullable=nullable, server_default=default))


def downgrade() -> None:
    with op.batch_alter_table("advice_outcomes") as table:
        for name, *_ in reversed(_COLUMNS):
            table.drop_column(name)
