"""The validation pipeline: archive safety → entrypoint → static + manifests + LLM → verdict.

The archive stage runs first and alone: nothing else looks at an archive it refused.
The later stages read the extracted tree concurrently. The verdict is the strictest of the
stages (report.combine); the LLM stage can only add findings.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from sless.config import LLMSettings, ValidationSettings
from sless.validation.archive import extract_archive
from sless.validation.caching import StaticCache, analysis_fingerprint
from sless.validation.detonation import Detonation
from sless.validation.entrypoint import check_entrypoint
from sless.validation.report import Report, StageResult, Verdict, combine

if TYPE_CHECKING:
    from sless.validation.llm import ReviewCache
    from sless.validation.resident import ResidentSemgrep


@dataclass(frozen=True)
class Validator:
    settings: ValidationSettings
    llm: LLMSettings
    llm_cache: ReviewCache | None = None
    #: per-file static results, so a re-upload scans only what changed
    static_cache: StaticCache = field(default_factory=StaticCache)

    @cached_property
    def resident(self) -> ResidentSemgrep | None:
        """The resident semgrep for small re-uploads (started at its first scan)."""
        if not (self.settings.semgrep_resident and self.settings.static_enabled):
            return None
        from sless.validation.resident import ResidentSemgrep

        return ResidentSemgrep(self.settings)

    async def close(self) -> None:
        """Stop the resident semgrep, if one was started."""
        if "resident" in self.__dict__ and self.resident is not None:
            await self.resident.close()

    @cached_property
    def fingerprint(self) -> str:
        """What a cached report depends on besides the code: the rules and the reviewer.

        A report cached under another fingerprint (rules edited, another model, another
        detonation harness or budget) is stale.
        """
        from sless.validation.llm import PROMPT_VERSION

        digest = hashlib.sha256(analysis_fingerprint().encode())
        digest.update(f"static={self.settings.static_enabled}".encode())
        if self.settings.detonation_enabled:
            from sless.validation.detonation import fingerprint as detonation_fingerprint

            digest.update(f"detonation={detonation_fingerprint()}".encode())
            digest.update(f"budget={self.settings.detonation_budget_s:g}".encode())
        digest.update(f"npm_registry={self.settings.npm_registry}".encode())
        if self.llm.base_url and self.llm.model:
            digest.update(f"llm={self.llm.model}:{PROMPT_VERSION}".encode())
        return digest.hexdigest()[:16]

    async def validate_archive(
        self,
        data: bytes,
        dest: Path,
        *,
        sha256: str,
        runtime: str,
        entrypoint: str,
        detonation: Detonation | None = None,
    ) -> Report:
        """Extract ``data`` into ``dest`` (which must not exist) and validate it.

        ``detonation`` is what the spec declares (egress, secrets); None: nothing, so any
        network use of the code is held for review. A cached report depends on it
        (``Detonation.key``)."""
        started = time.perf_counter()
        extracted = await asyncio.to_thread(extract_archive, data, dest, self.settings.archive)
        if extracted.stage.verdict is Verdict.REJECT:
            return combine(sha256, runtime, [extracted.stage], _ms(started))
        stages = await self._check_tree(
            dest, sha256=sha256, runtime=runtime, entrypoint=entrypoint, detonation=detonation
        )
        return combine(sha256, runtime, [extracted.stage, *stages], _ms(started))

    async def validate_directory(
        self,
        directory: Path,
        *,
        sha256: str,
        runtime: str,
        entrypoint: str,
        detonation: Detonation | None = None,
    ) -> Report:
        started = time.perf_counter()
        stages = await self._check_tree(
            directory, sha256=sha256, runtime=runtime, entrypoint=entrypoint, detonation=detonation
        )
        return combine(sha256, runtime, stages, _ms(started))

    async def _check_tree(
        self,
        directory: Path,
        *,
        sha256: str,
        runtime: str,
        entrypoint: str,
        detonation: Detonation | None,
    ) -> list[StageResult]:
        # imported here: the openai client is slow to import, and `sless` commands that
        # never validate should not pay for it
        from sless.validation.llm import review_with_llm
        from sless.validation.manifests import check_manifests
        from sless.validation.static import run_static

        # static and manifests start with the entrypoint check rather than after it: for
        # a JavaScript handler that check is a `node --check` process. An entrypoint that
        # fails cancels them, and the report holds only that stage, as before. The LLM
        # review (a paid request) starts only once the entrypoint is known to be good.
        static: asyncio.Future[StageResult]
        if self.settings.static_enabled:
            static = asyncio.ensure_future(
                run_static(
                    directory,
                    runtime,
                    self.settings,
                    cache=self.static_cache,
                    resident=self.resident,
                )
            )
        else:
            static = asyncio.get_running_loop().create_future()
            static.set_result(
                StageResult(name="static", status="skipped", detail="static analysis disabled")
            )
        manifests = asyncio.ensure_future(
            asyncio.to_thread(check_manifests, directory, self.settings.npm_registry)
        )
        # the detonation starts with them too: it runs in the serving sandbox whatever the
        # code is, so an entrypoint that does not load costs a cancelled run, not a risk.
        # The LLM review gets its trace as evidence.
        detonated = asyncio.ensure_future(
            self._detonate(directory, runtime, entrypoint, detonation)
        )
        try:
            entry = await check_entrypoint(directory, runtime, entrypoint)
        except BaseException:
            await _cancel(static, manifests, detonated)
            raise
        if entry.verdict is Verdict.REJECT:
            await _cancel(static, manifests, detonated)
            return [entry]
        try:
            behaviour = await detonated
            llm = asyncio.ensure_future(
                review_with_llm(
                    directory,
                    runtime,
                    self.llm,
                    cache=self.llm_cache,
                    code_sha256=sha256,
                    evidence=behaviour.findings,
                )
            )
            return [entry, *await asyncio.gather(static, manifests, llm), behaviour]
        except BaseException:
            await _cancel(static, manifests, detonated)
            raise

    async def _detonate(
        self, directory: Path, runtime: str, entrypoint: str, plan: Detonation | None
    ) -> StageResult:
        from sless.validation.detonation import detonate

        if not self.settings.detonation_enabled:
            return StageResult(name="detonation", status="skipped", detail="detonation disabled")
        plan = plan or Detonation()
        budget = self.settings.detonation_budget_s
        return await detonate(directory, runtime, entrypoint, replace(plan, budget_s=budget))


async def _cancel(*futures: asyncio.Future[StageResult]) -> None:
    """Cancel ``futures`` and wait until they are done (semgrep killed, threads back)."""
    for future in futures:
        future.cancel()
    await asyncio.gather(*futures, return_exceptions=True)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
