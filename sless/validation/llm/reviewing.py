"""The LLM review stage: cache, collect, ask every part, map the answers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import openai

from sless.config import LLMSettings
from sless.validation.llm.asking import PartResult, review_part
from sless.validation.llm.caching import ReviewCache, ReviewKey, cache_get, cache_put
from sless.validation.llm.chunking import Chunk, Source, TooLarge, budget_chars, collect, parts
from sless.validation.llm.prompting import PROMPT_VERSION, trace_digest, trace_lines
from sless.validation.llm.verdicts import NO_KEY, STAGE, answer_findings, failed_stage, ms, scrub
from sless.validation.report import Finding, StageResult, strictest

#: requests above this many parts are not made; the failure policy applies instead
MAX_PARTS = 32
#: parts reviewed at the same time
CONCURRENCY = 4


async def review_with_llm(
    directory: Path,
    runtime: str,
    settings: LLMSettings,
    *,
    cache: ReviewCache | None = None,
    code_sha256: str,
    max_parts: int = MAX_PARTS,
    evidence: Sequence[Finding] = (),
) -> StageResult:
    """Review the extracted upload in ``directory``; see the package docstring.

    ``evidence``: what the detonation saw the code do, shown to the reviewer as facts."""
    started = time.perf_counter()
    if not settings.base_url or not settings.model:
        return StageResult(name=STAGE, status="skipped", detail="LLM review not configured")
    trace = trace_lines(evidence)
    key = ReviewKey(code_sha256 + trace_digest(evidence), settings.model, PROMPT_VERSION)
    if cache is not None:
        cached = await cache_get(cache, key)
        if cached is not None:
            return cached.model_copy(
                update={"detail": f"cached: {cached.detail}", "duration_ms": ms(started)}
            )
    loaded = await _load(directory, settings, max_parts, started)
    if isinstance(loaded, StageResult):
        return loaded
    sources, split = loaded
    stage = await _review(sources, split, runtime, settings, settings.model, started, trace)
    if cache is not None and stage.status == "ok":
        await cache_put(cache, key, stage)
    return stage


async def _load(
    directory: Path, settings: LLMSettings, max_parts: int, started: float
) -> tuple[list[Source], list[list[Chunk]]] | StageResult:
    """The upload's sources and parts, or the stage result that says why not."""
    # Stripping removes comments, so the raw code may be larger than what is sent; past
    # four times the most that can be sent it is not worth reading further.
    max_bytes = 4 * max_parts * budget_chars(settings.token_budget)
    try:
        sources = await asyncio.to_thread(collect, directory, max_bytes)
    except TooLarge:
        return failed_stage(
            settings, f"upload too large for LLM review (over {max_parts} parts)", [], started
        )
    except OSError as e:
        return failed_stage(
            settings, f"could not read the upload ({type(e).__name__})", [], started
        )
    if not sources:
        return StageResult(
            name=STAGE,
            status="skipped",
            detail="no code files to review",
            duration_ms=ms(started),
        )
    split = parts(sources, settings.token_budget)
    if len(split) > max_parts:
        return failed_stage(
            settings, f"upload too large for LLM review ({len(split)} parts)", [], started
        )
    return sources, split


async def _review(
    sources: list[Source],
    split: list[list[Chunk]],
    runtime: str,
    settings: LLMSettings,
    model: str,
    started: float,
    trace: tuple[str, ...] = (),
) -> StageResult:
    api_key = settings.api_key.get_secret_value() if settings.api_key else NO_KEY
    try:
        results = await _ask_all(split, runtime, settings, model, api_key, trace)
    except openai.OpenAIError as e:
        return failed_stage(settings, f"client error ({type(e).__name__})", [], started)
    by_path = {s.path: s for s in sources}
    findings: list[Finding] = []
    errors: list[str] = []
    for result in results:
        if result.answer is not None:
            findings.extend(answer_findings(result.answer, by_path, api_key))
        elif result.error is not None:
            errors.append(result.error)
    if errors:
        detail = f"{len(errors)} of {len(split)} parts failed: {errors[0]}"
        return failed_stage(settings, scrub(detail, api_key), findings, started)
    partial = sum(1 for s in sources if s.note)
    detail = (
        f"{len(sources)} files in {len(split)} parts reviewed by {model} "
        f"(prompt {PROMPT_VERSION})"
        + (f"; {partial} files only partly stripped" if partial else "")
    )
    return StageResult(
        name=STAGE,
        status="ok",
        detail=scrub(detail, api_key),
        findings=findings,
        verdict=strictest(findings),
        duration_ms=ms(started),
    )


async def _ask_all(
    split: list[list[Chunk]],
    runtime: str,
    settings: LLMSettings,
    model: str,
    api_key: str,
    trace: tuple[str, ...] = (),
) -> list[PartResult]:
    semaphore = asyncio.Semaphore(CONCURRENCY)
    async with openai.AsyncOpenAI(
        api_key=api_key,
        base_url=settings.base_url,
        timeout=settings.timeout_s,
        # one retry for a blip; more would let a failing model stall uploads
        max_retries=1,
    ) as client:

        async def one(part: list[Chunk]) -> PartResult:
            async with semaphore:
                return await review_part(client, settings, model, runtime, part, trace)

        return list(await asyncio.gather(*(one(part) for part in split)))
