"""An account's progress through /learn, in the database (:data:`koikoi.web.schema.learn_progress`): the
most stars earned in each lesson. Every method runs on a database thread."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from .schema import learn_progress
from .store import Store

__all__ = ["LearnStore"]


class LearnStore:
    def __init__(self, store: Store) -> None:
        self.engine = store.engine

    def stars_of(self, account_id: str) -> dict[str, int]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(learn_progress.c.lesson, learn_progress.c.stars).where(learn_progress.c.account_id == account_id)
            ).all()
        return {r.lesson: int(r.stars) for r in rows}

    def keep(self, account_id: str, stars: dict[str, int]) -> dict[str, int]:
        """Keep ``stars`` (lesson: 1 to 3) where they beat what the account has; a lesson's stars never go
        down (a lesson done again with more wrong moves keeps its best). Returns the account's stars."""
        now = datetime.now(UTC)
        for lesson, n in stars.items():
            better = (
                update(learn_progress)
                .where(
                    (learn_progress.c.account_id == account_id)
                    & (learn_progress.c.lesson == lesson)
                    & (learn_progress.c.stars < n)
                )
                .values(stars=n, updated=now)
            )
            with self.engine.begin() as conn:
                if conn.execute(better).rowcount:
                    continue
                here = conn.execute(
                    select(learn_progress.c.stars).where(
                        (learn_progress.c.account_id == account_id) & (learn_progress.c.lesson == lesson)
                    )
                ).first()
                if here is not None:
                    continue
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        insert(learn_progress).values(account_id=account_id, lesson=lesson, stars=n, updated=now)
                    )
            except IntegrityError:  # another tab kept this lesson meanwhile: the better of the two stays
                with self.engine.begin() as conn:
                    conn.execute(better)
        return self.stars_of(account_id)
