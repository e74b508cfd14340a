"""The computer's worker processes (koikoi.web.workers): none until there is work, never more than asked
for, and a job that fails is the job's error, not the worker's end."""

from __future__ import annotations

import asyncio

import pytest

from koikoi.web.workers import JobError, ThinkPool


def test_workers_start_with_the_first_jobs_and_never_exceed_the_pool():
    async def go() -> None:
        pool = ThinkPool(2)
        await pool.start()
        try:
            assert pool.pids == []  # a server nobody asks to think starts no process
            # Six records at once that do not read: each an error of its own, on at most two workers.
            results = await asyncio.gather(
                *(pool.read_record(b"not a record") for _ in range(6)), return_exceptions=True
            )
            assert all(isinstance(r, JobError) for r in results), results
            assert len(pool.pids) == 2
            first = set(pool.pids)
            with pytest.raises(JobError, match="UTF-8"):
                await pool.read_record(b"\xff")
            assert set(pool.pids) == first  # the same workers, kept for the next jobs
        finally:
            await pool.close()
        assert pool.pids == []

    asyncio.run(go())
